package archetype_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/internal/pecs"
	"github.com/mlange-42/ark/ecs"
)

// Types of the faithful-or-refused tests: each row of the issue "every save loads".
type (
	Shape  interface{ Area() float64 }
	Square struct{ Side float64 }
	Circle struct {
		R     float64
		label string
	}
	Drawing struct {
		Name  string
		Shape Shape
	}
	RandSource struct{ Src rand.Source }

	Anything struct {
		A, B, C, D any
		M          map[string]any
		L          []any
	}

	Secretive struct {
		Name   string
		secret int
		notes  []string
		Public int
	}
	AllHidden struct {
		a int
		b string
		c *int
	}
	PODHidden struct { // plain-old-data: raw memory
		X      float64
		secret int32
	}

	Node struct {
		V    int
		Next *Node
	}
	NodeRes struct{ Head *Node }

	Moving struct {
		*Velocity
		Name string
	}

	Stamp struct {
		At   time.Time
		When []time.Time
	}

	Enemy struct {
		Name string
		AI   EnemyAI
	}
	EnemyAI struct {
		Mode int
		//lint:ignore U1000 the field Check refuses
		target chan int
	}
	Callback   struct{ OnHit func() }
	RawPointer struct{ P unsafe.Pointer }
	PtrKeys    struct{ M map[*int]string }
)

func (s Square) Area() float64  { return s.Side * s.Side }
func (c *Circle) Area() float64 { return 3 * c.R * c.R }

func init() {
	archetype.Register[Square]()
	archetype.Register[Circle]()
	archetype.Register[Secretive]()
}

// valueWorld has values of every kind the msgpack codec writes: interfaces holding registered
// and built-in types, any, times with zones, unexported fields. A fuzz seed.
func valueWorld() *ecs.World {
	w := ecs.NewWorld()
	registerAll(w)
	ecs.NewMap2[Drawing, Secretive](w).NewEntity(&Drawing{Name: "d", Shape: &Circle{R: 1, label: "l"}}, &Secretive{secret: 3, notes: []string{}})
	ecs.NewMap1[Drawing](w).NewEntity(&Drawing{Shape: Square{2}})
	ecs.NewMap2[Anything, Stamp](w).NewEntity(
		&Anything{A: 1, B: []int{2}, C: Square{1}, M: map[string]any{"x": nil, "y": []any{int8(1)}}, L: []any{rand.NewPCG(1, 2)}},
		&Stamp{At: time.Unix(1e9, 5).In(time.FixedZone("ABC", 3600)), When: []time.Time{{}}})
	return w
}

// roundTrip saves world, checks the file as arksave check does, and loads it into a world that
// prepare readies.
func roundTrip(t *testing.T, world *ecs.World, prepare func(*ecs.World)) *ecs.World {
	t.Helper()
	data := encode(t, world)
	if _, err := pecs.ReadInfo(bytes.NewReader(data)); err != nil {
		t.Fatalf("ReadInfo (arksave check): %v", err)
	}
	loaded := ecs.NewWorld()
	prepare(loaded)
	if err := archetype.Decode(bytes.NewReader(data), loaded); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return loaded
}

// firstOf returns the component of the only entity with it.
func firstOf[T any](t *testing.T, w *ecs.World) *T {
	t.Helper()
	q := ecs.NewFilter1[T](w).Query()
	defer q.Close()
	if !q.Next() {
		t.Fatalf("no entity with %T", *new(T))
	}
	return q.Get()
}

func TestInterfaceFieldHoldingAConcreteType(t *testing.T) {
	w := ecs.NewWorld()
	m := ecs.NewMap1[Drawing](w)
	m.NewEntity(&Drawing{Name: "sq", Shape: Square{Side: 2}})
	m.NewEntity(&Drawing{Name: "ci", Shape: &Circle{R: 1, label: "round"}})
	m.NewEntity(&Drawing{Name: "none"})
	got := roundTrip(t, w, func(w *ecs.World) { ecs.ComponentID[Drawing](w) })
	expectSameWorld(t, w, got)
	q := ecs.NewFilter1[Drawing](got).Query()
	for q.Next() {
		d := q.Get()
		switch d.Name {
		case "sq":
			expectDeepEqual(t, Shape(Square{Side: 2}), d.Shape, "Square behind Shape")
		case "ci":
			expectDeepEqual(t, Shape(&Circle{R: 1, label: "round"}), d.Shape, "*Circle behind Shape")
		case "none":
			expectEqual(t, nil, d.Shape, "nil Shape")
		}
	}
}

// A concrete type nobody registered is refused at Encode, naming the type, the field and the
// way out; nothing is written.
func TestUnregisteredConcreteTypeIsRefused(t *testing.T) {
	type Triangle struct{ A, B, C float64 }
	type Holder struct{ V any }
	w := ecs.NewWorld()
	ecs.NewMap1[Holder](w).NewEntity(&Holder{V: Triangle{1, 2, 3}})
	var buf bytes.Buffer
	err := archetype.Encode(&buf, w)
	if !errors.Is(err, archetype.ErrUnsupportedType) {
		t.Fatalf("want ErrUnsupportedType, got %v", err)
	}
	for _, want := range []string{"Holder.V", "Triangle", "archetype.Register"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	expectEqual(t, 0, buf.Len(), "bytes written")
}

func TestRandSourceResource(t *testing.T) {
	for _, src := range []rand.Source{rand.NewPCG(1, 2), rand.NewChaCha8([32]byte{7})} {
		w := ecs.NewWorld()
		res := &RandSource{Src: src}
		ecs.AddResource(w, res)
		for range 5 {
			res.Src.Uint64() // move the state on from the seed
		}
		got := roundTrip(t, w, func(w *ecs.World) { ecs.AddResource(w, &RandSource{}) })
		loaded := ecs.GetResource[RandSource](got)
		expectEqual(t, reflect.TypeOf(src), reflect.TypeOf(loaded.Src), "concrete source type")
		for i := range 10 {
			if a, b := res.Src.Uint64(), loaded.Src.Uint64(); a != b {
				t.Fatalf("%T: draw %d after loading: %d, the original draws %d", src, i, b, a)
			}
		}
	}
}

// A map of more than 65,535 entries takes msgpack's 32-bit map head: it came back short before.
func TestMapOfMoreThan65535Entries(t *testing.T) {
	type Big struct{ M map[int32]bool }
	m := make(map[int32]bool, 70_000)
	for i := range int32(70_000) {
		m[i] = i%3 == 0
	}
	w := ecs.NewWorld()
	ecs.NewMap1[Big](w).NewEntity(&Big{M: m})
	got := roundTrip(t, w, func(w *ecs.World) { ecs.ComponentID[Big](w) })
	expectDeepEqual(t, m, firstOf[Big](t, got).M, "map of 70,000 entries")
}

func TestAnyFieldsKeepTheirTypes(t *testing.T) {
	w := ecs.NewWorld()
	want := Anything{
		A: 42,
		B: []int{1, 2, 3},
		C: Square{Side: 3},
		D: map[string][]float32{"x": {1.5}},
		M: map[string]any{"i8": int8(-3), "u": uint(7), "s": "str", "t": true, "nil": nil, "d": time.Second, "b": []byte("raw")},
		L: []any{1.5, float32(2.5), complex(1, 2), []any{"nested", int64(1)}, &Secretive{Name: "p", secret: 9}},
	}
	ecs.NewMap1[Anything](w).NewEntity(&want)
	ecs.AddResource(w, &Anything{A: uint16(5)})
	got := roundTrip(t, w, func(w *ecs.World) {
		ecs.ComponentID[Anything](w)
		ecs.AddResource(w, &Anything{})
	})
	expectDeepEqual(t, want, *firstOf[Anything](t, got), "component with any fields")
	expectDeepEqual(t, Anything{A: uint16(5)}, *ecs.GetResource[Anything](got), "resource with any fields")
}

func TestUnexportedFieldsRoundTrip(t *testing.T) {
	w := ecs.NewWorld()
	ecs.NewMap3[Secretive, AllHidden, PODHidden](w).NewEntity(
		&Secretive{Name: "n", secret: 42, notes: []string{"a"}, Public: 1},
		&AllHidden{a: 1, b: "two", c: new(int)},
		&PODHidden{X: 1, secret: 42})
	ecs.AddResource(w, &AllHidden{a: 5, b: "res"})
	got := roundTrip(t, w, func(w *ecs.World) {
		ecs.ComponentID[Secretive](w)
		ecs.ComponentID[AllHidden](w)
		ecs.ComponentID[PODHidden](w)
		ecs.AddResource(w, &AllHidden{})
	})
	expectSameWorld(t, w, got)
	expectEqual(t, 42, firstOf[Secretive](t, got).secret, "secret of a msgpack type")
	expectEqual(t, int32(42), firstOf[PODHidden](t, got).secret, "secret of a raw type")
	expectEqual(t, "two", firstOf[AllHidden](t, got).b, "type with only unexported fields")
	expectEqual(t, "res", ecs.GetResource[AllHidden](got).b, "resource with only unexported fields")
}

func TestPointerCycleIsAnError(t *testing.T) {
	cyclic := func() *Node {
		n := &Node{V: 1}
		n.Next = n
		return n
	}
	w := ecs.NewWorld()
	ecs.NewMap1[Node](w).NewEntity(cyclic())
	err := archetype.Encode(&bytes.Buffer{}, w)
	if !errors.Is(err, archetype.ErrCycle) || !errors.Is(err, archetype.ErrUnsupportedType) || !strings.Contains(err.Error(), "Node.Next") {
		t.Errorf("component: want ErrCycle naming Node.Next, got %v", err)
	}

	w = ecs.NewWorld()
	ecs.AddResource(w, &NodeRes{Head: &Node{V: 0, Next: cyclic()}})
	err = archetype.Encode(&bytes.Buffer{}, w)
	if !errors.Is(err, archetype.ErrCycle) || !strings.Contains(err.Error(), "resource") {
		t.Errorf("resource: want ErrCycle, got %v", err)
	}

	// Shared, acyclic pointers are fine: each place gets its own copy.
	shared := &Node{V: 7}
	w = ecs.NewWorld()
	ecs.AddResource(w, &NodeRes{Head: &Node{V: 1, Next: shared}})
	ecs.NewMap1[Node](w).NewEntity(&Node{V: 2, Next: shared})
	got := roundTrip(t, w, func(w *ecs.World) { ecs.ComponentID[Node](w); ecs.AddResource(w, &NodeRes{}) })
	expectSameWorld(t, w, got)
}

func TestNilEmbeddedPointerStaysNil(t *testing.T) {
	w := ecs.NewWorld()
	m := ecs.NewMap1[Moving](w)
	m.NewEntity(&Moving{Name: "still"})
	m.NewEntity(&Moving{Velocity: &Velocity{1, 2}, Name: "moving"})
	got := roundTrip(t, w, func(w *ecs.World) { ecs.ComponentID[Moving](w) })
	expectSameWorld(t, w, got)
	q := ecs.NewFilter1[Moving](got).Query()
	for q.Next() {
		if mv := q.Get(); mv.Name == "still" && mv.Velocity != nil {
			t.Errorf("nil embedded *Velocity came back as %v", *mv.Velocity)
		}
	}
}

func TestTimeKeepsItsZone(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skipf("no time zone database: %v", err)
	}
	fixed := time.FixedZone("XYZ", -(3*3600 + 1800))
	instant := time.Date(2024, 7, 1, 12, 30, 15, 123456789, time.UTC)
	want := Stamp{
		At:   instant.In(berlin),
		When: []time.Time{instant.In(fixed), instant, instant.In(time.Local), {}, time.Now()},
	}
	w := ecs.NewWorld()
	ecs.NewMap1[Stamp](w).NewEntity(&want)
	got := *firstOf[Stamp](t, roundTrip(t, w, func(w *ecs.World) { ecs.ComponentID[Stamp](w) }))
	all := append([]time.Time{want.At}, want.When...)
	gotAll := append([]time.Time{got.At}, got.When...)
	for i := range all {
		a, b := all[i], gotAll[i]
		za, oa := a.Zone()
		zb, ob := b.Zone()
		if !a.Equal(b) || za != zb || oa != ob || a.Location().String() != b.Location().String() {
			t.Errorf("time %d: saved %v (%s), loaded %v (%s)", i, a, a.Location(), b, b.Location())
		}
	}
	expectEqual(t, "Europe/Berlin", got.At.Location().String(), "loaded location")
	// Without the monotonic clock reading (not saved, as in encoding/gob), the values are equal.
	want.When[4] = want.When[4].Round(0)
	expectDeepEqual(t, want, got, "times")
}

// A type that cannot be saved is refused by Check before anything is written, naming the type,
// the field path, why and the ways out.
func TestRefusedTypes(t *testing.T) {
	for _, tc := range []struct {
		register func(*ecs.World)
		path     string
		why      string
	}{
		{func(w *ecs.World) { ecs.ComponentID[Enemy](w) }, "Enemy.AI.target", "channel"},
		{func(w *ecs.World) { ecs.ComponentID[Callback](w) }, "Callback.OnHit", "function"},
		{func(w *ecs.World) { ecs.ComponentID[RawPointer](w) }, "RawPointer.P", "unsafe.Pointer"},
		{func(w *ecs.World) { ecs.ComponentID[PtrKeys](w) }, "PtrKeys.M[key]", "map key"},
		{func(w *ecs.World) { ecs.AddResource(w, &Enemy{}) }, "Enemy.AI.target", "SkipResources"},
	} {
		w := ecs.NewWorld()
		tc.register(w)
		err := archetype.Check(w)
		if !errors.Is(err, archetype.ErrUnsupportedType) {
			t.Errorf("%s: Check: want ErrUnsupportedType, got %v", tc.path, err)
			continue
		}
		for _, want := range []string{tc.path, tc.why, "BinaryMarshaler", "archetype.Register"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error lacks %q: %v", tc.path, want, err)
			}
		}
		// The ways out work: leaving the type out.
		if err := archetype.Check(w, archetype.Transient(ecs.C[Enemy](), ecs.C[Callback](), ecs.C[RawPointer](), ecs.C[PtrKeys]()),
			archetype.SkipResources(ecs.C[Enemy]())); err != nil {
			t.Errorf("%s: with the type left out: %v", tc.path, err)
		}
	}
	// Encode refuses too, writing nothing, when an entity has the type.
	w := ecs.NewWorld()
	ecs.NewMap1[Enemy](w).NewEntity(&Enemy{Name: "e"})
	var buf bytes.Buffer
	if err := archetype.Encode(&buf, w); !errors.Is(err, archetype.ErrUnsupportedType) || buf.Len() != 0 {
		t.Errorf("Encode: want ErrUnsupportedType and nothing written, got %v and %d bytes", err, buf.Len())
	}
	// Transient: membership saved, data not.
	if err := archetype.Encode(&buf, w, archetype.Transient(ecs.C[Enemy]())); err != nil {
		t.Errorf("Encode with Transient: %v", err)
	}
}

// An intact file whose types no longer match the program's is ErrIncompatible, naming the type
// and field, not ErrCorrupt.
func TestIncompatibleTypes(t *testing.T) {
	type ScoreV1 struct {
		Name  string
		Value int
	}
	type ScoreV2 struct {
		Name  string
		Value string
	}
	type ScoreV3 struct { // compatible: a wider integer, a new field, a dropped one
		Value int64
		Extra []string
	}
	type Small struct{ Value int8 }
	w := ecs.NewWorld()
	ecs.NewMap1[ScoreV1](w).NewEntity(&ScoreV1{Name: "a", Value: 300})
	data := encode(t, w)
	old := "github.com/arksave/arksave/archetype_test.ScoreV1"

	load := func(comp ecs.Comp) error {
		l := ecs.NewWorld()
		ecs.TypeID(l, comp.Type())
		return archetype.Decode(bytes.NewReader(data), l, archetype.Alias(old, comp))
	}
	err := load(ecs.C[ScoreV2]())
	if !errors.Is(err, archetype.ErrIncompatible) || errors.Is(err, archetype.ErrCorrupt) || !strings.Contains(err.Error(), "ScoreV2.Value") {
		t.Errorf("string for int: want ErrIncompatible naming ScoreV2.Value, got %v", err)
	}
	if err := load(ecs.C[ScoreV3]()); err != nil {
		t.Errorf("compatible change: %v", err)
	}
	err = load(ecs.C[Small]())
	if !errors.Is(err, archetype.ErrIncompatible) || !strings.Contains(err.Error(), "Small.Value") || !strings.Contains(err.Error(), "300") {
		t.Errorf("300 into an int8: want ErrIncompatible naming Small.Value, got %v", err)
	}
}

// A file written in format 1.0 (msgpack's reflection) still loads.
func TestFormat1FileLoads(t *testing.T) {
	data, err := os.ReadFile("testdata/v1-valid.pecs")
	expectNoError(t, err, "reading the 1.0 file")
	info, err := pecs.ReadInfo(bytes.NewReader(data))
	expectNoError(t, err, "ReadInfo")
	expectEqual(t, uint16(1), info.Header.VersionMajor, "major version of the fixture")
	expectSameWorld(t, smallWorld(), decode(t, data))
}

// arksave check decodes every value against the types the file records: a value behind an
// interface that names a type the file does not describe fails the check, although every
// checksum is right.
func TestCheckReadsValuesAgainstTheStoredTypes(t *testing.T) {
	w := ecs.NewWorld()
	ecs.NewMap1[Drawing](w).NewEntity(&Drawing{Name: "sq", Shape: Square{Side: 2}})
	data := encode(t, w)
	name := []byte("archetype_test.Square")
	// In the column (after the registry), not in the registry entry.
	l := layoutOf(t, data)
	at := bytes.Index(data[l.data:], name)
	if at < 0 {
		t.Fatal("type name not found in the column")
	}
	bad := bytes.Clone(data)
	copy(bad[l.data+at:], "archetype_test.Sqxxxx")
	// Fix the column's CRC (the only column: its blob ends where the resources start) and the
	// file's checksums, so that only the mismatch remains.
	le := binary.LittleEndian
	le.PutUint32(bad[l.resources-4:], crc32.Checksum(bad[l.data:l.resources-4], crc32.MakeTable(crc32.Castagnoli)))
	bad = fixSums(bad)
	_, err := pecs.ReadInfo(bytes.NewReader(bad))
	if !errors.Is(err, archetype.ErrCorrupt) || !strings.Contains(err.Error(), "Drawing.Shape") || !strings.Contains(err.Error(), "Sqxxxx") {
		t.Errorf("ReadInfo: want ErrCorrupt naming Drawing.Shape and the type, got %v", err)
	}
	l2 := ecs.NewWorld()
	ecs.ComponentID[Drawing](l2)
	if err := archetype.Decode(bytes.NewReader(bad), l2); !errors.Is(err, archetype.ErrCorrupt) {
		t.Errorf("Decode: want ErrCorrupt, got %v", err)
	}
}
