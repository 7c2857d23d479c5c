package archetype

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"
)

// Types of the internal fuzz world.
type (
	fzPos    struct{ X, Y float64 }
	fzName   struct{ S string }
	fzBag    struct{ M map[string][]int }
	fzMark   struct{}
	fzRel    struct{ ecs.RelationMarker }
	fzTarget struct{ E ecs.Entity }
	fzRes    struct{ N int }
	fzShape  interface{ Sides() int }
	fzSquare struct{ s int }
	fzAny    struct {
		V any
		S fzShape
		T time.Time
		p *fzAny
	}
)

func (q fzSquare) Sides() int { return q.s }

func init() { Register[fzSquare]() }

func fzRegister(w *ecs.World) {
	ecs.ComponentID[fzPos](w)
	ecs.ComponentID[fzName](w)
	ecs.ComponentID[fzBag](w)
	ecs.ComponentID[fzMark](w)
	ecs.ComponentID[fzRel](w)
	ecs.ComponentID[fzTarget](w)
	ecs.ComponentID[fzAny](w)
	ecs.AddResource(w, &fzRes{})
}

func fzWorld() *ecs.World {
	w := ecs.NewWorld()
	fzRegister(w)
	ecs.GetResource[fzRes](w).N = 3
	a := ecs.NewMap2[fzPos, fzName](w).NewEntity(&fzPos{1, 2}, &fzName{"a"})
	w.RemoveEntity(w.NewEntity())
	ecs.NewMap2[fzBag, fzMark](w).NewEntity(&fzBag{M: map[string][]int{"k": {1, 2}}}, &fzMark{})
	ecs.NewMap2[fzRel, fzTarget](w).NewEntity(&fzRel{}, &fzTarget{E: a}, ecs.Rel[fzRel](a))
	ecs.NewMap1[fzAny](w).NewEntity(&fzAny{V: []any{1, "x"}, S: fzSquare{4}, T: time.Unix(5, 6).In(time.FixedZone("Z", 60)), p: &fzAny{V: uint8(1)}})
	return w
}

// FuzzDecodeBehindChecksums switches checksum verification off, so that mutated files reach every
// parser and Ark itself: everything a file says must be checked on its own, and Decode, ReadInfo
// and ExportJSON must return errors, never panic.
func FuzzDecodeBehindChecksums(f *testing.F) {
	for _, lz4 := range []bool{false, true} {
		var buf bytes.Buffer
		opts := []Option{}
		if lz4 {
			opts = append(opts, LZ4(), CompactPool())
		}
		if err := Encode(&buf, fzWorld(), opts...); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		verifyChecksums = false
		defer func() { verifyChecksums = true }()
		_, _ = readInfo(bytes.NewReader(data))
		_ = ExportJSON(io.Discard, bytes.NewReader(data))
		w := ecs.NewWorld()
		fzRegister(w)
		err := Decode(bytes.NewReader(data), w)
		if err != nil && !isDamage(err) {
			t.Fatalf("unexpected error: %v", err)
		}
	})
}

// isDamage reports whether err is one of the errors bad input may cause.
func isDamage(err error) bool {
	for _, s := range []error{ErrCorrupt, ErrVersion, ErrUnknownType, ErrIncompatible} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// addSectionSeeds adds sections of fzWorld's entities but the first skip, with and without LZ4.
func addSectionSeeds(f *testing.F, skip int) {
	for _, lz4 := range []bool{false, true} {
		w := fzWorld()
		var all []ecs.Entity
		q := ecs.NewUnsafeFilter(w).Query()
		for q.Next() {
			all = append(all, q.Entity())
		}
		opts := []Option{StableRefs(func(ecs.Entity) (uint64, bool) { return 5, true }, nil)}
		if lz4 {
			opts = append(opts, LZ4())
		}
		data, err := AppendEntities(nil, w, all[skip:], opts...)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// FuzzDecodeEntitiesBehindChecksums is FuzzDecodeBehindChecksums for entity sections: mutated
// sections reach the reference table, the column readers and Ark, and are refused without a
// panic, leaving the world as it was.
func FuzzDecodeEntitiesBehindChecksums(f *testing.F) {
	addSectionSeeds(f, 1) // the first is a reference target outside
	f.Fuzz(func(t *testing.T, data []byte) {
		verifyChecksums = false
		defer func() { verifyChecksums = true }()
		_, _ = readInfo(bytes.NewReader(data))
		w := ecs.NewWorld()
		fzRegister(w)
		var js bytes.Buffer
		exportErr := ExportSectionJSON(&js, data)
		if exportErr == nil && !json.Valid(js.Bytes()) {
			t.Fatalf("ExportSectionJSON wrote invalid JSON: %s", js.Bytes())
		}
		own := w.NewEntity()
		got, err := DecodeEntities(data, w, StableRefs(nil, func(uint64) ecs.Entity { return own }))
		if exportErr != nil && !isDamage(exportErr) && (err == nil || isDamage(err)) {
			t.Fatalf("unexpected export error: %v", exportErr)
		}
		if err != nil && !isDamage(err) {
			t.Fatalf("unexpected error: %v", err)
		}
		if n := w.Stats().Entities.Used; n != len(got)+1 {
			t.Fatalf("%d entities returned, %d in the world besides its own", len(got), n-1)
		}
	})
}

// FuzzDecodeEntitiesKeeping is FuzzDecodeEntitiesBehindChecksums with [KeepUndecodable], into a
// world without one of the section's types: mutated sections are refused or split without a
// panic, the world holds only the entities returned, and what is kept reads into a world with every
// type, or is refused there, without a panic.
func FuzzDecodeEntitiesKeeping(f *testing.F) {
	addSectionSeeds(f, 0)
	f.Fuzz(func(t *testing.T, data []byte) {
		verifyChecksums = false
		defer func() { verifyChecksums = true }()
		w := ecs.NewWorld()
		ecs.ComponentID[fzPos](w)
		ecs.ComponentID[fzName](w)
		ecs.ComponentID[fzRel](w)
		ecs.ComponentID[fzTarget](w)
		var kept [][]byte
		got, err := DecodeEntities(data, w, StableRefs(func(ecs.Entity) (uint64, bool) { return 9, true }, nil),
			KeepUndecodable(func(rest []byte, cause error) {
				if cause == nil || errors.Is(cause, ErrCorrupt) {
					t.Fatalf("kept for %v", cause)
				}
				kept = append(kept, rest)
			}))
		if err != nil && (!errors.Is(err, ErrCorrupt) || len(kept) > 0) {
			t.Fatalf("error %v, %d kept", err, len(kept))
		}
		if n := w.Stats().Entities.Used; n != len(got) {
			t.Fatalf("%d entities returned, %d in the world", len(got), n)
		}
		for _, rest := range kept {
			full := ecs.NewWorld()
			fzRegister(full)
			if _, err := DecodeEntities(rest, full); err != nil && !isDamage(err) {
				t.Fatalf("kept section: %v", err)
			}
		}
	})
}
