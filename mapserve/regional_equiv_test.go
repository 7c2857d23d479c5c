package mapserve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/sectionjson"
	"github.com/arksave/arksave/internal/testkit/savetest"
)

// Regional types of several kinds: raw columns, value columns (strings,
// slices, maps, non-finite floats), a zero-sized marker, entity
// references and a relation.
type (
	equivBeacon struct {
		At   [2]float64
		Name string
	}
	equivCargo struct {
		Items  []string
		Counts map[string]int
		Temp   float64
	}
	equivPos    struct{ x, y float32 } // lower-case fields, as the export shows them
	equivLower  struct{ X, Y int32 }
	equivMarker struct{}
	equivLink   struct{ To, Far ecs.Entity }
	equivChild  struct{ ecs.RelationMarker }
)

// equivSections writes sections of a world with the types above, pixel
// bodies with a Regional among them, and returns them with the body ids.
func equivSections(t *testing.T) ([][]byte, []chunkstore.Body) {
	t.Helper()
	w := ecs.NewWorld()
	far := ecs.NewMap1[equivMarker](w).NewEntity(&equivMarker{}) // not in any section: an exact reference
	beacons := ecs.NewMap2[equivBeacon, components.Regional](w)
	cargo := ecs.NewMap4[equivCargo, equivLink, equivMarker, components.Regional](w)
	lower := ecs.NewMap3[equivLower, equivPos, components.Regional](w)
	children := ecs.NewMap2[equivChild, components.Regional](w)
	bodies := ecs.NewMap2[components.PixelBody, components.Regional](w)
	plain := ecs.NewMap1[testCrate](w) // no Regional: left out
	var es []ecs.Entity
	b1 := beacons.NewEntity(&equivBeacon{At: [2]float64{3, 4}, Name: "north <&> \u00e9"}, &components.Regional{ID: 11})
	es = append(es, b1,
		beacons.NewEntity(&equivBeacon{Name: ""}, &components.Regional{ID: 12}),
		cargo.NewEntity(&equivCargo{Items: []string{"a", "b"}, Counts: map[string]int{"z": 1, "a": 2}, Temp: math.NaN()},
			&equivLink{To: b1, Far: far}, &equivMarker{}, &components.Regional{ID: 13}),
		cargo.NewEntity(&equivCargo{Temp: math.Inf(-1)}, &equivLink{}, &equivMarker{}, &components.Regional{ID: 14}),
		lower.NewEntity(&equivLower{X: -7, Y: 9}, &equivPos{1, 2}, &components.Regional{ID: 15}),
		children.NewEntity(&equivChild{}, &components.Regional{ID: 16}, ecs.Rel[equivChild](b1)),
		plain.NewEntity(&testCrate{X: 1, Y: 2}),
	)
	var bs []chunkstore.Body
	for i, id := range []uint64{21, 22} {
		es = append(es, bodies.NewEntity(&components.PixelBody{ID: components.BodyID(id), X: float32(i), Y: 3, Width: 1, Height: 1,
			Pixels: make([]components.Pixel, 1), Shape: []bool{true}}, &components.Regional{ID: id}))
		bs = append(bs, chunkstore.Body{ID: id})
	}
	var secs [][]byte
	for _, opts := range [][]archetype.Option{nil, {archetype.LZ4()}} {
		sec, err := archetype.AppendEntities(nil, w, es, opts...)
		if err != nil {
			t.Fatal(err)
		}
		secs = append(secs, sec)
	}
	// A later section with a new copy of 12 and one of its own.
	sec, err := archetype.AppendEntities(nil, w, []ecs.Entity{es[1], lower.NewEntity(&equivLower{X: 1}, &equivPos{}, &components.Regional{ID: 17})})
	if err != nil {
		t.Fatal(err)
	}
	return append(secs, sec), bs
}

// expectSameRead checks that the map reads sec as the JSON export shows
// it: every entity, in order, with its components and references byte for
// byte, and placed the same.
func expectSameRead(t *testing.T, what string, sec []byte, place func(Components) (float64, float64, bool)) int {
	t.Helper()
	type read struct {
		names     []string
		raw, refs string
		x, y      float64
		placed    string
		by        string
		ok        bool
	}
	var old, got []read
	errOld := eachEntityJSON(sec, func(names []string, raw json.RawMessage, e map[string]json.RawMessage, refs json.RawMessage) {
		r := read{names: names, raw: string(raw), refs: string(refs)}
		r.x, r.y, r.placed, r.by, r.ok = locateJSON(names, e, place)
		old = append(old, r)
	})
	errNew := eachEntity(sec, func(e *sectionjson.Entity, raw, refs json.RawMessage) {
		r := read{names: e.Names, raw: string(raw), refs: string(refs)}
		r.x, r.y, r.placed, r.by, r.ok = locate(e, place)
		got = append(got, r)
	})
	if fmt.Sprint(errOld) != fmt.Sprint(errNew) {
		t.Fatalf("%s: error %v, the export's %v", what, errNew, errOld)
	}
	if len(got) != len(old) {
		t.Fatalf("%s: %d entities, the export has %d", what, len(got), len(old))
	}
	for i := range got {
		g, o := got[i], old[i]
		if !slices.Equal(g.names, o.names) || g.raw != o.raw || g.refs != o.refs || g.x != o.x || g.y != o.y ||
			g.placed != o.placed || g.by != o.by || g.ok != o.ok {
			t.Errorf("%s: entity %d:\n got  %+v\n want %+v", what, i, g, o)
		}
	}
	return len(got)
}

// expectSameRegionals checks that regionalsOf reads a block as the JSON
// export's path does: the same entities, ids, positions, components,
// references and bodies' entities.
func expectSameRegionals(t *testing.T, what string, pos chunkPos, blk *chunkstore.EntityBlock, place func(Components) (float64, float64, bool)) int {
	t.Helper()
	old, oldBodies, errOld := regionalsOfJSON(pos, 32, blk, place)
	got, gotBodies, errNew := regionalsOf(pos, 32, blk, place)
	if (errOld == nil) != (errNew == nil) {
		t.Fatalf("%s: error %v, the export's %v", what, errNew, errOld)
	}
	if len(got) != len(old) {
		t.Fatalf("%s: %d regionals, the export's path %d", what, len(got), len(old))
	}
	for i := range got {
		g, o := got[i], old[i]
		if g.stable != o.stable || g.ID != o.ID || g.Kind != o.Kind || g.X != o.X || g.Y != o.Y || g.Placed != o.Placed ||
			g.PlacedBy != o.PlacedBy || g.Bounds != o.Bounds || g.Chunk != o.Chunk ||
			!bytes.Equal(g.Components, o.Components) || !bytes.Equal(g.Refs, o.Refs) {
			t.Errorf("%s: regional %d:\n got  %+v %s %s\n want %+v %s %s", what, i, g.entity, g.Components, g.Refs, o.entity, o.Components, o.Refs)
		}
	}
	if len(gotBodies) != len(oldBodies) {
		t.Fatalf("%s: %d bodies, the export's path %d", what, len(gotBodies), len(oldBodies))
	}
	for id, o := range oldBodies {
		if g, ok := gotBodies[id]; !ok || !g.same(o) {
			t.Errorf("%s: body %d: got %s %s, want %s %s", what, id, g.components, g.refs, o.components, o.refs)
		}
	}
	return len(got)
}

// The map reads sections through the codec's own reader: the same
// entities, ids, positions, components and references as through the
// JSON export, for a world of several regional types with pixel bodies,
// and the same errors for damaged sections.
func TestSectionReadMatchesExport(t *testing.T) {
	secs, bs := equivSections(t)
	places := map[string]func(Components) (float64, float64, bool){
		"heuristic":  nil,
		"registered": PositionFields(fullTypeName[equivBeacon](), "Name", "At"), // never numbers: falls through
		"beacon": func(c Components) (float64, float64, bool) {
			var b equivBeacon
			if json.Unmarshal(c[fullTypeName[equivBeacon]()], &b) != nil {
				return 0, 0, false
			}
			return b.At[0], b.At[1], true
		},
	}
	for name, place := range places {
		for i, sec := range secs {
			if n := expectSameRead(t, fmt.Sprintf("%s section %d", name, i), sec, place); n == 0 {
				t.Fatalf("section %d read no entity", i)
			}
		}
		blk := chunkstore.EntityBlock{Bodies: bs, Sections: secs}
		if n := expectSameRegionals(t, name, chunkstore.Pos{X: -1, Y: 2}, &blk, place); n != 7 {
			t.Errorf("%s: %d regionals, want 7 (11 to 17)", name, n)
		}
	}
	for _, sec := range secs[:2] {
		for _, at := range []int{0, 10, 45, 70, len(sec) / 3, len(sec) / 2, len(sec) - 20, len(sec) - 1} {
			damaged := bytes.Clone(sec)
			damaged[at] ^= 0x5a
			expectSameRead(t, fmt.Sprintf("byte %d damaged", at), damaged, nil)
			expectSameRead(t, fmt.Sprintf("cut at %d", at), sec[:at], nil)
		}
	}
}

// fullTypeName is the full name of T, as a section names it.
func fullTypeName[T any]() string {
	t := reflect.TypeFor[T]()
	return t.PkgPath() + "." + t.Name()
}

// A real save of the regional game (crates, beacons, links, pixel bodies):
// every chunk's entity block reads the same through both paths.
func TestSaveReadMatchesExport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "save")
	g, err := savetest.OpenRegional(nil, dir, 32, savetest.Generator)
	if err != nil {
		t.Fatal(err)
	}
	a := g.Crate(101, 10, 12, "first", ecs.Entity{})
	g.Crate(102, 40, 5, "second <>", a)
	g.Beacon(103, -20, 20)
	g.Body(20, 40)
	g.Body(-30, 8)
	if err := g.Save(); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	o := Options{}.withDefaults()
	v, err := openView(dir, 0, &o, maphash.MakeSeed(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer v.release()
	entities, bodies := 0, 0
	for pos := range v.chunks {
		blk, err := v.store.Entities(pos)
		if err != nil {
			t.Fatal(err)
		}
		bodies += len(blk.Bodies)
		for i, sec := range blk.Sections {
			expectSameRead(t, fmt.Sprintf("chunk %v section %d", pos, i), sec, nil)
		}
		entities += expectSameRegionals(t, fmt.Sprint("chunk ", pos), pos, &blk, nil)
	}
	if entities != 3 || bodies != 2 {
		t.Errorf("%d regional entities and %d bodies, want 3 and 2", entities, bodies)
	}
}

// The map's own reading of a component's fields finds the numbers
// encoding/json finds, for every shape a value can take.
func TestObjectFieldsMatchJSON(t *testing.T) {
	for _, v := range []string{
		`{"X":1,"Y":2}`, `{ "X" : 1.5e3 , "Y" : -2 }`, "{\n\t\"x\": 3,\r\n\"y\": 4\n}",
		`{"A":{"X":9,"Y":9},"X":1,"B":[{"Y":7}],"Y":2}`, `{"S":"}{\"X\":5,","X":6,"Y":"7"}`,
		`{"X":1,"Y":2,"X":3}`, `{"\u0058":8,"Y":9}`, `{"X\\":1,"Y":2}`, `{"X":null,"Y":true}`,
		`{"X":"NaN","Y":1}`, `{}`, `[1,2]`, `"X"`, `null`, `{"X":1,"Y":2`, `{"X":1,"Y":2}x`, `{"X":01,"Y":2}`,
		`{"X":1e400,"Y":0}`, `{"é":1,"X":-0,"Y":0.0}`,
	} {
		for _, f := range heuristicFields {
			x, y, ok := fieldsXY(objectFields(json.RawMessage(v)), f[0], f[1])
			wx, wy, wok := fieldsXYJSON(objectFieldsJSON(json.RawMessage(v)), f[0], f[1])
			if x != wx || y != wy || ok != wok {
				t.Errorf("%s fields %v: %v,%v %v; encoding/json reads %v,%v %v", v, f, x, y, ok, wx, wy, wok)
			}
		}
	}
}

// A Regional's stable id reads as encoding/json reads it.
func TestStableIDMatchesJSON(t *testing.T) {
	for _, v := range []string{`{"ID":11}`, `{"ID": 0}`, `{"ID":18446744073709551615}`, `{"ID":18446744073709551616}`,
		`{"ID":1.5}`, `{"ID":-1}`, `{"id":3}`, `{"ID":"5"}`, `{}`, `null`, `{"ID":1,"ID":2}`, `{"ID":1e2}`, `{"ID":00}`, `[1]`, `{"ID":1,"X":2}`} {
		var want components.Regional
		wantOK := json.Unmarshal([]byte(v), &want) == nil
		got, ok := stableID(json.RawMessage(v))
		if got != want || ok != wantOK {
			t.Errorf("%s: %v %v; encoding/json reads %v %v", v, got, ok, want, wantOK)
		}
	}
}

// Placing a chunk's entities reads their section once, in place: not as
// a JSON document parsed back into maps, which cost the map about 47
// allocations an entity (and 20 times the time of the game's own load).
func TestRegionalsOfReadsInPlace(t *testing.T) {
	sec := benchSection(t, 100)
	blk := chunkstore.EntityBlock{Sections: [][]byte{sec}}
	allocs := func(read func(chunkPos, int, *chunkstore.EntityBlock, func(Components) (float64, float64, bool)) ([]*regional, map[uint64]sectionEntity, error)) float64 {
		return testing.AllocsPerRun(20, func() {
			if rs, _, err := read(chunkstore.Pos{}, 512, &blk, nil); err != nil || len(rs) != 100 {
				t.Fatal(len(rs), err)
			}
		})
	}
	got, export := allocs(regionalsOf), allocs(regionalsOfJSON)
	if got > 10*100 || got > export/4 {
		t.Errorf("%v allocations for 100 entities, the JSON export's path %v: want at most 10 an entity and a quarter of the export's", got, export)
	}
}

// What the game's Position does to the components it is handed changes
// neither the entity's components the map serves nor the next entity's.
func TestPositionGetsCopies(t *testing.T) {
	secs, bs := equivSections(t)
	blk := chunkstore.EntityBlock{Bodies: bs, Sections: secs[:1]}
	want, _, err := regionalsOf(chunkstore.Pos{}, 32, &blk, nil)
	if err != nil {
		t.Fatal(err)
	}
	scribble := func(c Components) (float64, float64, bool) {
		for name, v := range c {
			for i := range v {
				v[i] = 'x'
			}
			c[name] = append(v, "garbage"...)
		}
		return 0, 0, false
	}
	got, _, err := regionalsOf(chunkstore.Pos{}, 32, &blk, scribble)
	if err != nil || len(got) != len(want) {
		t.Fatalf("%d entities (%v), want %d", len(got), err, len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i].Components, want[i].Components) || got[i].X != want[i].X || got[i].Placed != want[i].Placed {
			t.Errorf("entity %s: %s at %v placed %q; want %s at %v placed %q", got[i].ID, got[i].Components, got[i].X, got[i].Placed,
				want[i].Components, want[i].X, want[i].Placed)
		}
	}
}
