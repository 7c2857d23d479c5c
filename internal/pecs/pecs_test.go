package pecs_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/internal/pecs"
)

type pos struct{ X, Y float64 }

// The codec registers its readers: a file it wrote is described whole, and
// its header alone gives the same counts.
func TestReadsWhatTheCodecWrites(t *testing.T) {
	w := ecs.NewWorld()
	m := ecs.NewMap1[pos](w)
	for i := range 5 {
		m.NewEntity(&pos{X: float64(i)})
	}
	var file bytes.Buffer
	if err := archetype.Encode(&file, w); err != nil {
		t.Fatal(err)
	}
	h, err := pecs.ReadHeader(file.Bytes())
	if err != nil || h.Entities != 5 || h.FileSize != uint64(file.Len()) {
		t.Fatalf("ReadHeader: %+v, %v", h, err)
	}
	info, err := pecs.ReadInfo(bytes.NewReader(file.Bytes()))
	if err != nil || info.Header != h || !info.Checksum.OK || info.Pool.Alive != 5 || len(info.Tables) != 1 || info.Section != nil {
		t.Fatalf("ReadInfo: %+v, %v", info, err)
	}
	if ti := info.Types[0]; ti.Encoding != "raw" || ti.Layout != "{X float64 @0, Y float64 @8}" {
		t.Errorf("type %+v", ti)
	}

	// Damage is the codec's error, with what was read so far.
	damaged := bytes.Clone(file.Bytes())
	damaged[len(damaged)-40] ^= 0xff
	info, err = pecs.ReadInfo(bytes.NewReader(damaged))
	if !errors.Is(err, archetype.ErrCorrupt) || info == nil || info.Header.Entities != 5 {
		t.Errorf("damaged: %+v, %v", info, err)
	}
	if _, err := pecs.ReadHeader(file.Bytes()[:10]); !errors.Is(err, archetype.ErrCorrupt) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short header: %v", err)
	}
}

type link struct{ To ecs.Entity }

// An entity section's references are counted.
func TestSectionInfo(t *testing.T) {
	w := ecs.NewWorld()
	m := ecs.NewMap1[link](w)
	e := m.NewEntity(&link{})
	m.Get(e).To = e
	sec, err := archetype.AppendEntities(nil, w, []ecs.Entity{e})
	if err != nil {
		t.Fatal(err)
	}
	info, err := pecs.ReadInfo(bytes.NewReader(sec))
	if err != nil || info.Section == nil || info.Section.Refs != 1 || info.Section.Local != 1 {
		t.Fatalf("section: %+v, %v", info, err)
	}
	if got, want := info.Section.String(), "1 references (1 local)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
