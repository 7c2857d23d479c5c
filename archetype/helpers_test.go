package archetype_test

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/arksave/arksave/archetype"
	"github.com/mlange-42/ark/ecs"
)

// Component and resource types of the tests.
type (
	Position struct{ X, Y float64 }
	Velocity struct{ X, Y float64 }
	Health   struct{ HP, Max int32 }
	Name     struct{ S string }
	Marker   struct{}
	Frozen   struct{}

	// Grid is plain-old-data with nested structs, arrays and odd sizes (padding included).
	Grid struct {
		Cells  [3][2]uint8
		Origin Position
		Flag   bool
		Kind   int16
		C      complex64
		hidden uint16
	}
	// Target holds an entity inside plain-old-data.
	Target struct {
		E ecs.Entity
		W float32
	}
	// Bag is everything plain-old-data is not.
	Bag struct {
		Items   []string
		Counts  map[string]int
		Ptr     *Position
		Inner   Inner
		Friends map[string]ecs.Entity
		Best    ecs.Entity
	}
	Inner struct {
		A int
		B []float64
	}
	ChildOf struct{ ecs.RelationMarker }
	Likes   struct {
		ecs.RelationMarker
		Amount float32
	}

	Config struct {
		Title string
		Seed  int64
		Tags  []string
	}
	Tick struct{ N uint64 }
)

var testTime = time.UnixMilli(1_700_000_000_000)

// registerAll registers every test type in w, in a fixed order, and adds resource placeholders.
func registerAll(w *ecs.World) {
	ecs.ComponentID[Position](w)
	ecs.ComponentID[Velocity](w)
	ecs.ComponentID[Health](w)
	ecs.ComponentID[Name](w)
	ecs.ComponentID[Marker](w)
	ecs.ComponentID[Frozen](w)
	ecs.ComponentID[Grid](w)
	ecs.ComponentID[Target](w)
	ecs.ComponentID[Bag](w)
	ecs.ComponentID[ChildOf](w)
	ecs.ComponentID[Likes](w)
	ecs.ComponentID[Drawing](w)
	ecs.ComponentID[Anything](w)
	ecs.ComponentID[Stamp](w)
	ecs.ComponentID[Secretive](w)
	ecs.AddResource(w, &Config{})
	ecs.AddResource(w, &Tick{})
}

// richWorld builds a world with every kind of component, relations, resources, and dead and
// recycled entity slots.
func richWorld() *ecs.World {
	w := ecs.NewWorld()
	registerAll(w)
	*ecs.GetResource[Config](w) = Config{Title: "world", Seed: -42, Tags: []string{"a", "b"}}
	ecs.GetResource[Tick](w).N = 12345

	pv := ecs.NewMap2[Position, Velocity](w)
	pvh := ecs.NewMap3[Position, Velocity, Health](w)
	named := ecs.NewMap2[Position, Name](w)
	marked := ecs.NewMap2[Marker, Grid](w)
	bags := ecs.NewMap2[Bag, Target](w)
	child := ecs.NewMap2[Position, ChildOf](w)
	likes := ecs.NewMap3[Health, ChildOf, Likes](w)

	var all []ecs.Entity
	for i := range 40 {
		f := float64(i)
		all = append(all, pv.NewEntity(&Position{f, -f}, &Velocity{f / 2, 1}))
		all = append(all, pvh.NewEntity(&Position{f, f}, &Velocity{0, f}, &Health{int32(i), 100}))
		if i%3 == 0 {
			all = append(all, named.NewEntity(&Position{1, f}, &Name{fmt.Sprintf("n%02d", i)}))
		}
	}
	// Dead and recycled slots.
	for i := 0; i < len(all); i += 5 {
		w.RemoveEntity(all[i])
	}
	parents := []ecs.Entity{all[1], all[2], all[3]}
	for i := range 7 {
		marked.NewEntity(&Marker{}, &Grid{Cells: [3][2]uint8{{1, 2}, {3, uint8(i)}}, Origin: Position{1, 2}, Flag: i%2 == 0, Kind: -3, C: complex(1, float32(i)), hidden: 9})
	}
	for i := range 5 {
		p := Position{3, 4}
		bags.NewEntity(&Bag{
			Items:   []string{"x", fmt.Sprint(i)},
			Counts:  map[string]int{"a": i, "b": 2, "c": -7},
			Ptr:     &p,
			Inner:   Inner{A: i, B: []float64{1.5, float64(i)}},
			Friends: map[string]ecs.Entity{"p": parents[0], "q": parents[1]},
			Best:    parents[2],
		}, &Target{E: parents[i%3], W: 0.5})
	}
	for i := range 6 {
		child.NewEntity(&Position{float64(i), 0}, &ChildOf{}, ecs.Rel[ChildOf](parents[i%3]))
	}
	for i := range 4 {
		likes.NewEntity(&Health{1, 2}, &ChildOf{}, &Likes{Amount: float32(i)}, ecs.Rel[ChildOf](parents[i%2]), ecs.Rel[Likes](parents[2]))
	}
	// A parent created after its children's table exists: targets in later tables.
	late := ecs.NewMap1[Frozen](w).NewEntity(&Frozen{})
	child.NewEntity(&Position{9, 9}, &ChildOf{}, ecs.Rel[ChildOf](late))
	w.NewEntity() // an entity without components
	return w
}

func encode(t testing.TB, w *ecs.World, opts ...archetype.Option) []byte {
	t.Helper()
	var buf bytes.Buffer
	opts = append([]archetype.Option{archetype.Timestamp(testTime)}, opts...)
	if err := archetype.Encode(&buf, w, opts...); err != nil {
		t.Fatalf("Encode: %v", err)
	}
	return buf.Bytes()
}

func decode(t testing.TB, data []byte, opts ...archetype.Option) *ecs.World {
	t.Helper()
	w := ecs.NewWorld()
	registerAll(w)
	if err := archetype.Decode(bytes.NewReader(data), w, opts...); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return w
}

func expectNoError(t testing.TB, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func expectEqual[T comparable](t testing.TB, want, got T, what string) {
	t.Helper()
	if want != got {
		t.Errorf("%s: want %v, got %v", what, want, got)
	}
}

func expectDeepEqual(t testing.TB, want, got any, what string) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		t.Errorf("%s:\nwant %#v\n got %#v", what, want, got)
	}
}

func expectBytes(t testing.TB, want, got []byte, what string) {
	t.Helper()
	if !bytes.Equal(want, got) {
		i := 0
		for i < len(want) && i < len(got) && want[i] == got[i] {
			i++
		}
		t.Errorf("%s: %d and %d bytes, first difference at offset %d", what, len(want), len(got), i)
	}
}

// snapshot is a world's content, comparable across worlds.
type snapshot struct {
	Pool      ecs.EntityDump
	Entities  map[ecs.Entity]map[string]any // component values by type name
	Relations map[ecs.Entity]map[string]ecs.Entity
	Resources map[string]any
}

func snapshotOf(w *ecs.World) snapshot {
	u := w.Unsafe()
	s := snapshot{
		Pool:      u.DumpEntities(),
		Entities:  map[ecs.Entity]map[string]any{},
		Relations: map[ecs.Entity]map[string]ecs.Entity{},
		Resources: map[string]any{},
	}
	q := ecs.NewUnsafeFilter(w).Query()
	for q.Next() {
		e := q.Entity()
		comps := map[string]any{}
		ids := q.IDs()
		for i := range ids.Len() {
			id := ids.Get(i)
			info, _ := ecs.ComponentInfo(w, id)
			comps[info.Type.String()] = reflect.NewAt(info.Type, q.Get(id)).Elem().Interface()
			if info.IsRelation {
				if s.Relations[e] == nil {
					s.Relations[e] = map[string]ecs.Entity{}
				}
				s.Relations[e][info.Type.String()] = q.GetRelation(id)
			}
		}
		s.Entities[e] = comps
	}
	for _, id := range ecs.ResourceIDs(w) {
		if w.Resources().Has(id) {
			tp, _ := ecs.ResourceType(w, id)
			s.Resources[tp.String()] = reflect.ValueOf(w.Resources().Get(id)).Elem().Interface()
		}
	}
	return s
}

// expectSameWorld compares pools (every slot, next, available, alive ids in order), components,
// relation targets and resources.
func expectSameWorld(t testing.TB, want, got *ecs.World) {
	t.Helper()
	a, b := snapshotOf(want), snapshotOf(got)
	expectDeepEqual(t, a.Pool, b.Pool, "entity pool")
	expectEqual(t, len(a.Entities), len(b.Entities), "alive entities")
	for e, comps := range a.Entities {
		expectDeepEqual(t, comps, b.Entities[e], fmt.Sprintf("components of %v", e))
	}
	expectDeepEqual(t, a.Relations, b.Relations, "relation targets")
	expectDeepEqual(t, a.Resources, b.Resources, "resources")
}
