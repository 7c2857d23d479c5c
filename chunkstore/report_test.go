package chunkstore_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/arksave/arksave/chunkstore"
)

// A problem reads as one line, each place named once.
func TestProblemString(t *testing.T) {
	bad := errors.New("bad")
	pos := chunkstore.Pos{X: 1, Y: -2}
	for _, c := range []struct {
		p    chunkstore.Problem
		want string
	}{
		{chunkstore.Problem{File: "chunks.pxsw", Section: chunkstore.SectionHeader, Offset: 64, Err: bad}, "chunks.pxsw: header at offset 64: bad"},
		{chunkstore.Problem{Section: chunkstore.SectionTable, Offset: 10, Err: bad}, "page table at offset 10: bad"},
		{chunkstore.Problem{File: "f", Section: chunkstore.SectionChunk, Offset: 7, Pos: &pos, Err: bad}, "f: at offset 7, chunk (1, -2): bad"},
		{chunkstore.Problem{File: "f", Section: chunkstore.SectionChunk, Offset: -1, Pos: &pos, Err: bad}, "f: chunk (1, -2): bad"},
		// The error names the offset: it is not repeated.
		{chunkstore.Problem{File: "chunks-data-1.pxsd", Section: chunkstore.SectionChunk, Offset: 6347, Pos: &pos,
			Err: fmt.Errorf("%w: full chunk at offset 6347 of data file 1", chunkstore.ErrCorrupt)},
			"chunks-data-1.pxsd: chunk (1, -2): chunkstore: corrupt data: full chunk at offset 6347 of data file 1"},
		{chunkstore.Problem{File: "f", Section: chunkstore.SectionRecord, Offset: 64, Err: errors.New("record at offset 64")}, "f: data region: record at offset 64"},
	} {
		if got := c.p.String(); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}
