package cli

import (
	"bytes"
	"errors"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
)

// zstdChunk returns a chunk of the committed generation of dir whose
// record is stored as zstd, and the record.
func zstdChunk(t *testing.T, dir string) (chunkstore.Pos, storetool.Handle, *savetest.Layout) {
	t.Helper()
	l, err := savetest.LayoutOf(dir)
	must(t, err)
	s, err := chunkstore.Open(l.Store, &chunkstore.Options{ReadOnly: true})
	must(t, err)
	defer s.Close()
	var pos chunkstore.Pos
	var rec storetool.Handle
	storetool.Tool.Entries(s, func(e storetool.Entry) bool {
		if e.Type == chunkstore.BodyBlock || e.Handle.IsZero() {
			return true
		}
		ri, err := storetool.Tool.RecordInfo(s, e.Handle)
		must(t, err)
		if ri.Zstd {
			pos, rec = e.Pos, e.Handle
			return false
		}
		return true
	})
	expect(t, !rec.IsZero(), "no chunk record of %s is stored as zstd", dir)
	return pos, rec, l
}

// arksave compact --zstd stores the save's records as zstd: the save
// checks clean (check counts them), renders the same and loads the same;
// a damaged zstd record is reported by check under its chunk, and a load
// without a backup to fall back to skips it (the chunk regenerates) and
// reports it, as for an LZ4 record.
func TestCompactZstd(t *testing.T) {
	for _, whole := range []bool{false, true} {
		dir := fresh(t)
		before, score := renderPNG(t, dir), loadsScore(t, dir)
		// No backup: a load of the damaged generation has none to fall
		// back to, and skips the damaged chunk.
		args := []string{"compact", "--zstd", "--backups", "0", dir}
		if whole {
			args = []string{"compact", "--whole", "--zstd", "--backups", "0", dir}
		}
		code, stdout, stderr := arksave(args...)
		expectCode(t, 0, code, stderr)
		if !whole {
			expectContains(t, stdout, "records stored as zstd")
		}
		code, stdout, stderr = arksave("check", dir)
		expectCode(t, 0, code, stderr)
		expectContains(t, stdout, "no problems found", "records stored as zstd")
		expect(t, bytes.Equal(renderPNG(t, dir), before), "whole %v: the render differs after compact --zstd", whole)
		expect(t, loadsScore(t, dir) == score, "whole %v: the save loads another world after compact --zstd", whole)

		pos, rec, l := zstdChunk(t, dir)
		must(t, l.Flip(rec.Offset+int64(rec.Length)/2))
		code, stdout, stderr = arksave("check", dir)
		expectCode(t, 1, code, stderr)
		expectProblems(t, stdout, l.FileOf(rec.Offset))
		expectContains(t, stdout, "chunk "+pos.String())
		g, err := savetest.Open(dir, true)
		must(t, err)
		must(t, g.Settle())
		expect(t, ecs.GetResource[autosave.State](g.W).Fallback == nil, "whole %v: the load fell back: %v", whole, ecs.GetResource[autosave.State](g.W).Fallback)
		found := false
		for _, p := range g.Pers.Problems() {
			found = found || p.Pos != nil && *p.Pos == pos && errors.Is(p.Err, chunkstore.ErrCorrupt)
		}
		expect(t, found, "whole %v: the load does not report the damaged zstd chunk %v: %v", whole, pos, g.Pers.Problems())
		must(t, g.Close())
	}
}
