package sim_test

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/demo/sim"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/mlange-42/ark/ecs"
)

// The demo's save through the JSON converter both ways: export then import gives the world file
// byte for byte; decoded with the demo's own types, the file and the import give the same world;
// committed into the save directory as a new generation, the game loads it and goes on from the
// same tick, camera, chunks and bodies.
func TestExportImportDemoSave(t *testing.T) {
	cfg := config(t, 5)
	cfg.SyncStreaming = true
	var before world
	var types *ecs.World
	_, err := sim.RunHeadless(sim.HeadlessOptions{
		Config: cfg, Ticks: 660, Out: &bytes.Buffer{},
		Finished: func(s *sim.Sim) { before, types = capture(s), typesOf(s.World) },
	})
	expect(t, err == nil, "headless run: %v", err)

	d, err := savedir.OpenDirReadOnly(nil, cfg.Save.Dir)
	expect(t, err == nil, "open: %v", err)
	file, err := d.ReadWorld(d.Manifest())
	expect(t, err == nil, "world file: %v", err)
	var js, again bytes.Buffer
	expect(t, archetype.ExportJSON(&js, bytes.NewReader(file)) == nil, "export")
	err = archetype.ImportJSON(&again, bytes.NewReader(js.Bytes()))
	expect(t, err == nil, "import: %v", err)
	expect(t, bytes.Equal(again.Bytes(), file), "imported %d bytes differ from the %d exported", again.Len(), len(file))

	a, b := decodeLike(t, types, file), decodeLike(t, types, again.Bytes())
	// The demo's crates, rocks and bodies are saved with their chunks and its camera in the
	// players file: its world file holds the resources and the compact pool.
	expect(t, len(a.Resources) > 0 && len(a.Pool.Entities) > 2, "the demo's world file holds no resource or pool: %+v", a)
	expect(t, reflect.DeepEqual(a, b), "the decoded worlds differ:\n%+v\n%+v", a, b)

	var dirJSON bytes.Buffer
	expect(t, savetool.ExportJSON(&dirJSON, cfg.Save.Dir, 0, savetool.Options{}) == nil, "export the save directory")
	rep, err := savetool.ImportInto(cfg.Save.Dir, &dirJSON, savetool.ImportOptions{})
	expect(t, err == nil && rep.Generation == rep.Previous+1, "import into the save: %v, %+v", err, rep)

	cfg.Save.Load = true
	var after world
	st, err := sim.RunHeadless(sim.HeadlessOptions{Config: cfg, Ticks: 1, Out: &bytes.Buffer{}, Started: func(s *sim.Sim) { after = capture(s) }})
	expect(t, err == nil && st.Loaded && st.StartTick == 660 && st.Problems == 0, "load after the import: %v, %+v", err, st)
	before.same(t, after)
}

// typesOf returns a world with w's component and resource types, resources as placeholders: what
// decoding a world file of w needs.
func typesOf(w *ecs.World) *ecs.World {
	out := ecs.NewWorld()
	for _, id := range ecs.ComponentIDs(w) {
		if info, ok := ecs.ComponentInfo(w, id); ok {
			ecs.TypeID(out, info.Type)
		}
	}
	for _, id := range ecs.ResourceIDs(w) {
		if tp, ok := ecs.ResourceType(w, id); ok && w.Resources().Has(id) {
			out.Resources().Add(ecs.ResourceTypeID(out, tp), reflect.New(tp).Interface())
		}
	}
	return out
}

// decoded is a decoded world's content: the pool, every entity's components and every resource.
type decoded struct {
	Pool      ecs.EntityDump
	Entities  map[ecs.Entity]map[string]any
	Resources map[string]any
}

// decodeLike decodes a world file into a fresh world with the types of like.
func decodeLike(t *testing.T, like *ecs.World, file []byte) decoded {
	t.Helper()
	w := typesOf(like)
	err := archetype.Decode(bytes.NewReader(file), w)
	expect(t, err == nil, "decode: %v", err)
	d := decoded{Pool: w.Unsafe().DumpEntities(), Entities: map[ecs.Entity]map[string]any{}, Resources: map[string]any{}}
	q := ecs.NewUnsafeFilter(w).Query()
	for q.Next() {
		comps := map[string]any{}
		ids := q.IDs()
		for i := range ids.Len() {
			info, _ := ecs.ComponentInfo(w, ids.Get(i))
			key := info.Type.String()
			if info.IsRelation {
				key += fmt.Sprintf(" -> %v", q.GetRelation(ids.Get(i)))
			}
			comps[key] = reflect.NewAt(info.Type, q.Get(ids.Get(i))).Elem().Interface()
		}
		d.Entities[q.Entity()] = comps
	}
	for _, id := range ecs.ResourceIDs(w) {
		if tp, ok := ecs.ResourceType(w, id); ok && w.Resources().Has(id) {
			d.Resources[tp.String()] = reflect.ValueOf(w.Resources().Get(id)).Elem().Interface()
		}
	}
	return d
}
