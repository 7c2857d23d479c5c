package mapserve

import (
	"fmt"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
)

type benchLabel struct{ Text string }

// benchSection is a chunk's section of n regional crates with a label
// each (a raw column and a value column besides Regional).
func benchSection(b testing.TB, n int) []byte {
	b.Helper()
	w := ecs.NewWorld()
	m := ecs.NewMap3[testCrate, benchLabel, components.Regional](w)
	es := make([]ecs.Entity, n)
	for i := range es {
		es[i] = m.NewEntity(&testCrate{X: float64(i), Y: 2}, &benchLabel{Text: fmt.Sprint("crate ", i)}, &components.Regional{ID: uint64(i + 1)})
	}
	data, err := archetype.AppendEntities(nil, w, es)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// What a new generation costs the map per chunk whose entities changed:
// its section read without the game's types and its entities placed
// ("map"), against the map's former path through the whole JSON export
// ("export-json") and the game's own load of the same section
// (DecodeEntities into a world with the types), in the same run.
func BenchmarkRegionalsOf_100(b *testing.B) {
	sec := benchSection(b, 100)
	blk := chunkstore.EntityBlock{Sections: [][]byte{sec}}
	for _, path := range []struct {
		name string
		read func(chunkPos, int, *chunkstore.EntityBlock, func(Components) (float64, float64, bool)) ([]*regional, map[uint64]sectionEntity, error)
	}{{"map", regionalsOf}, {"export-json", regionalsOfJSON}} {
		b.Run(path.name, func(b *testing.B) {
			b.SetBytes(int64(len(sec)))
			b.ReportAllocs()
			for b.Loop() {
				if rs, _, err := path.read(chunkstore.Pos{}, 512, &blk, nil); err != nil || len(rs) != 100 {
					b.Fatal(len(rs), err)
				}
			}
		})
	}
	b.Run("DecodeEntities", func(b *testing.B) {
		b.SetBytes(int64(len(sec)))
		b.ReportAllocs()
		w := ecs.NewWorld()
		ecs.ComponentID[testCrate](w)
		ecs.ComponentID[benchLabel](w)
		ecs.ComponentID[components.Regional](w)
		for b.Loop() {
			es, err := archetype.DecodeEntities(sec, w)
			if err != nil || len(es) != 100 {
				b.Fatal(len(es), err)
			}
			for _, e := range es {
				w.RemoveEntity(e)
			}
		}
	})
}
