package bench

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/mlange-42/ark/ecs"
)

// The benchmark world: N entities that all have Position and Velocity, half of them Health,
// one in ten a Name.
type (
	Position struct{ X, Y float64 }
	Velocity struct{ X, Y float64 }
	Health   struct{ HP, Max int32 }
	Name     struct{ S string }
)

// Resource of the benchmark world, so that resources are part of every measurement.
type Settings struct {
	Seed  int64
	Title string
}

// newWorld builds the benchmark world with n entities.
func newWorld(n int) *ecs.World {
	w := ecs.NewWorld()
	ecs.AddResource(w, &Settings{Seed: 42, Title: "benchmark"})
	pv := ecs.NewMap2[Position, Velocity](w)
	pvh := ecs.NewMap3[Position, Velocity, Health](w)
	pvhn := ecs.NewMap4[Position, Velocity, Health, Name](w)
	for i := range n {
		f := float64(i)
		p, v := Position{f, -f}, Velocity{f * 0.5, 1}
		switch {
		case i%10 == 0:
			pvhn.NewEntity(&p, &v, &Health{int32(i), 100}, &Name{fmt.Sprintf("entity-%d", i)})
		case i%2 == 0:
			pvh.NewEntity(&p, &v, &Health{int32(i), 100})
		default:
			pv.NewEntity(&p, &v)
		}
	}
	return w
}

// prepare readies an empty world for loading, as ark-serde and arksave both require.
func prepare() *ecs.World {
	w := ecs.NewWorld()
	ecs.ComponentID[Position](w)
	ecs.ComponentID[Velocity](w)
	ecs.ComponentID[Health](w)
	ecs.ComponentID[Name](w)
	ecs.AddResource(w, &Settings{})
	return w
}

// column is the memory of one component column of one table.
type column []byte

// columns returns the memory of every component column of the world, found as the encoder finds
// it: the first row's address is the start of a contiguous column.
func columns(w *ecs.World) []column {
	var out []column
	u := w.Unsafe()
	q := ecs.NewUnsafeFilter(w).Query()
	var last []ecs.ID
	var first ecs.Entity
	count := 0
	flush := func() {
		for _, id := range last {
			info, _ := ecs.ComponentInfo(w, id)
			size := int(info.Type.Size())
			out = append(out, unsafe.Slice((*byte)(u.Get(first, id)), size*count))
		}
	}
	for q.Next() {
		ids := q.IDs()
		cur := make([]ecs.ID, ids.Len())
		for i := range cur {
			cur[i] = ids.Get(i)
		}
		if !reflect.DeepEqual(cur, last) {
			if count > 0 {
				flush()
			}
			last, first, count = cur, q.Entity(), 0
		}
		count++
	}
	if count > 0 {
		flush()
	}
	return out
}

// componentBytes is the size of all component columns.
func componentBytes(w *ecs.World) int {
	n := 0
	for _, c := range columns(w) {
		n += len(c)
	}
	return n
}
