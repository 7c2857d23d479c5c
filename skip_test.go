package arksave_test

import (
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/vfs"
)

// Plugin.SkipComponents and SkipResources leave game types out of the save:
// a load gives the entities without the component and leaves the resource
// as the game set it.
func TestPluginSkipsTypes(t *testing.T) {
	type Velocity struct{ DX, DY float64 }
	type Cache struct{ Hits int }
	fsys := vfs.NewMem()
	open := func(load bool) (*ecs.World, *arksave.Persistence) {
		w := ecs.NewWorld()
		ecs.ComponentID[gametest.Position](w)
		ecs.ComponentID[Velocity](w)
		ecs.AddResource(w, &Cache{Hits: 1})
		_, err := arksave.Plugin{Dir: "/save", FS: fsys, Load: load, Overwrite: !load, ChunkSize: gametest.ChunkSize,
			SkipComponents: []ecs.Comp{ecs.C[Velocity]()}, SkipResources: []ecs.Comp{ecs.C[Cache]()}}.Install(w)
		must(t, err)
		p := ecs.GetResource[arksave.Persistence](w)
		t.Cleanup(func() { p.Close() })
		return w, p
	}
	w, p := open(false)
	ecs.NewMap2[gametest.Position, Velocity](w).NewEntity(&gametest.Position{X: 3}, &Velocity{DX: 1})
	ecs.GetResource[Cache](w).Hits = 42
	must(t, p.SaveNow().Err)
	must(t, p.Close())

	w2, _ := open(true)
	q := ecs.NewFilter1[gametest.Position](w2).Query()
	n := 0
	for q.Next() {
		n++
		expect(t, q.Get().X == 3, "position %+v", *q.Get())
		expect(t, !ecs.NewMap[Velocity](w2).Has(q.Entity()), "the skipped component came back")
	}
	expect(t, n == 1, "%d entities with a position", n)
	expect(t, ecs.GetResource[Cache](w2).Hits == 1, "the skipped resource was loaded: %+v", *ecs.GetResource[Cache](w2))
}
