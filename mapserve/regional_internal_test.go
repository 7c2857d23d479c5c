package mapserve

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/sectionjson"
)

// The documented ways to a position, in order: the game's Position, the
// first component with number fields X and Y (or x and y); values that
// are not finite, or beyond the map's coordinates, are no position.
func TestLocate(t *testing.T) {
	registered := func(x, y float64, ok bool) func(Components) (float64, float64, bool) {
		return func(Components) (float64, float64, bool) { return x, y, ok }
	}
	for _, tc := range []struct {
		name   string
		place  func(Components) (float64, float64, bool)
		comps  map[string]string // by type name, in the section's order
		x, y   float64
		placed string
		by     string
	}{
		{"registered", registered(7, 8, true), map[string]string{"a.Pos": `{"X":1,"Y":2}`}, 7, 8, placedRegistered, ""},
		{"the game does not know", registered(7, 8, false), map[string]string{"a.Pos": `{"X":1,"Y":2}`}, 1, 2, placedFields, "a.Pos"},
		{"the game says NaN", registered(math.NaN(), 8, true), map[string]string{"a.Pos": `{"X":1,"Y":2}`}, 1, 2, placedFields, "a.Pos"},
		{"lower case", nil, map[string]string{"a.Pos": `{"x":-3.5,"y":4}`}, -3.5, 4, placedFields, "a.Pos"},
		{"first with both", nil, map[string]string{"a.A": `{"X":1}`, "a.B": `{"X":"NaN","Y":2}`, "a.C": `{"X":5,"Y":6,"Z":7}`}, 5, 6, placedFields, "a.C"},
		{"too far", nil, map[string]string{"a.Pos": `{"X":1e300,"Y":0}`}, 0, 0, "", ""},
		{"not a struct", nil, map[string]string{"a.Pos": `[1,2]`, "a.Name": `"X"`}, 0, 0, "", ""},
		{"nothing", nil, map[string]string{"a.Mark": `null`}, 0, 0, "", ""},
	} {
		var e sectionjson.Entity
		for _, n := range []string{"a.A", "a.B", "a.C", "a.Mark", "a.Name", "a.Pos"} { // sorted, as a section's types are
			if v, ok := tc.comps[n]; ok {
				e.Names = append(e.Names, n)
				e.Values = append(e.Values, []byte(v))
			}
		}
		x, y, placed, by, ok := locate(&e, tc.place)
		if ok != (tc.placed != "") || x != tc.x || y != tc.y || placed != tc.placed || by != tc.by {
			t.Errorf("%s: %v,%v placed %q by %q (%v); want %v,%v placed %q by %q", tc.name, x, y, placed, by, ok, tc.x, tc.y, tc.placed, tc.by)
		}
	}
}

type testCrate struct{ X, Y float64 }

// section writes an entity section of crates with the given stable ids and
// positions.
func section(t *testing.T, ids []uint64, xs []float64) []byte {
	t.Helper()
	w := ecs.NewWorld()
	m := ecs.NewMap2[testCrate, components.Regional](w)
	var es []ecs.Entity
	for i, id := range ids {
		es = append(es, m.NewEntity(&testCrate{X: xs[i], Y: 1}, &components.Regional{ID: id}))
	}
	data, err := archetype.AppendEntities(nil, w, es)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A chunk's sections are read in order: a later copy of a stable id
// replaces an earlier one, a body's entity is the body's, and a damaged
// section is an error naming it, after the entities read before it.
func TestRegionalsOf(t *testing.T) {
	pos := chunkstore.Pos{X: 2, Y: -1}
	blk := chunkstore.EntityBlock{
		Bodies:   []chunkstore.Body{{ID: 9}},
		Sections: [][]byte{section(t, []uint64{1, 2, 9}, []float64{10, 20, 90}), section(t, []uint64{2}, []float64{25})},
	}
	rs, bodies, err := regionalsOf(pos, 32, &blk, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, fmt.Sprintf("%s@%g", r.ID, r.X))
	}
	if strings.Join(got, " ") != "1@10 2@25" {
		t.Errorf("entities %v, want 1@10 2@25 (2 from the later section)", got)
	}
	if b := bodies[9]; !strings.Contains(string(b.components), `"X":90`) || len(b.refs) == 0 {
		t.Errorf("the body's entity: %s %s", b.components, b.refs)
	}

	damaged := append([]byte(nil), blk.Sections[1]...)
	damaged[len(damaged)/2] ^= 0x40
	blk.Sections = append(blk.Sections[:1], damaged)
	rs, _, err = regionalsOf(pos, 32, &blk, nil)
	if !errors.Is(err, archetype.ErrCorrupt) || !strings.Contains(err.Error(), "entity section 1 of chunk") {
		t.Errorf("damaged section: %v", err)
	}
	if len(rs) != 2 || rs[1].X != 20 {
		t.Errorf("entities before the damage: %+v", rs)
	}
}
