package archetype_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/internal/pecs"
	"github.com/mlange-42/ark/ecs"
)

const pkg = "github.com/arksave/arksave/archetype_test."

func expectErrorIs(t testing.TB, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: want an error matching %v, got %v", what, target, err)
	}
}

func readInfo(t testing.TB, data []byte) *pecs.Info {
	t.Helper()
	info, err := pecs.ReadInfo(bytes.NewReader(data))
	expectNoError(t, err, "ReadInfo")
	return info
}

func countWith[T any](w *ecs.World) int {
	q := ecs.NewFilter1[T](w).Query()
	n := q.Count()
	q.Close()
	return n
}

func TestOptionTimestamp(t *testing.T) {
	w := richWorld()
	info := readInfo(t, encode(t, w)) // the helper passes Timestamp(testTime)
	expectEqual(t, testTime.UnixMilli(), info.Header.Timestamp, "fixed timestamp")

	var buf bytes.Buffer
	before := time.Now().UnixMilli()
	expectNoError(t, archetype.Encode(&buf, w), "Encode")
	ts := readInfo(t, buf.Bytes()).Header.Timestamp
	if ts < before || ts > time.Now().UnixMilli() {
		t.Errorf("default timestamp %d is not the current time", ts)
	}
}

func TestOptionSkipComponents(t *testing.T) {
	w := richWorld()
	got := decode(t, encode(t, w, archetype.SkipComponents(ecs.C[Name](), ecs.C[Likes]())))
	expectEqual(t, 0, countWith[Name](got), "entities with Name")
	expectEqual(t, 0, countWith[Likes](got), "entities with Likes")
	expectEqual(t, countWith[Position](w), countWith[Position](got), "entities with Position")
	expectEqual(t, countWith[ChildOf](w), countWith[ChildOf](got), "entities with ChildOf")
	expectEqual(t, w.Stats().Entities.Used, got.Stats().Entities.Used, "alive entities")

	// On Decode, stored columns are dropped.
	got = decode(t, encode(t, w), archetype.SkipComponents(ecs.C[Velocity](), ecs.C[Bag]()))
	expectEqual(t, 0, countWith[Velocity](got), "entities with Velocity after Decode")
	expectEqual(t, 0, countWith[Bag](got), "entities with Bag after Decode")
	expectEqual(t, countWith[Target](w), countWith[Target](got), "entities with Target after Decode")
}

// skipWorld has parents with a Marker, children pointing at them, and plain entities.
func skipWorld() (*ecs.World, []ecs.Entity) {
	w := ecs.NewWorld()
	registerAll(w)
	marked := ecs.NewMap2[Marker, Position](w)
	children := ecs.NewMap2[Position, ChildOf](w)
	plain := ecs.NewMap1[Velocity](w)
	var skipped []ecs.Entity
	for i := range 4 {
		p := marked.NewEntity(&Marker{}, &Position{float64(i), 0})
		skipped = append(skipped, p)
		children.NewEntity(&Position{}, &ChildOf{}, ecs.Rel[ChildOf](p))
		plain.NewEntity(&Velocity{1, 2})
	}
	return w, skipped
}

func TestOptionSkipEntitiesWith(t *testing.T) {
	w, skipped := skipWorld()
	got := decode(t, encode(t, w, archetype.SkipEntitiesWith(ecs.C[Marker]())))
	expectEqual(t, 0, countWith[Marker](got), "entities with Marker")
	for _, e := range skipped {
		expectEqual(t, false, got.Alive(e), fmt.Sprintf("old handle %v", e))
	}
	q := ecs.NewFilter1[ChildOf](got).Query()
	for q.Next() {
		expectEqual(t, ecs.Entity{}, q.GetRelation(0), "target of a skipped parent")
	}
	expectEqual(t, 4, countWith[ChildOf](got), "children")

	// The same as removing the skipped entities in table order.
	ref, _ := skipWorld()
	for _, e := range skipped {
		ref.RemoveEntity(e)
	}
	a, b := ref.Unsafe().DumpEntities(), got.Unsafe().DumpEntities()
	expectDeepEqual(t, a.Entities, b.Entities, "pool slots")
	expectEqual(t, a.Next, b.Next, "free list head")
	expectEqual(t, a.Available, b.Available, "free slots")
	// New entities recycle the skipped slots with bumped generations.
	e := got.NewEntity()
	expectEqual(t, skipped[3].ID(), e.ID(), "recycled id")
	expectEqual(t, skipped[3].Gen()+1, e.Gen(), "recycled generation")
}

func TestOptionTransient(t *testing.T) {
	w := richWorld()
	data := encode(t, w, archetype.Transient(ecs.C[Health](), ecs.C[Bag]()))
	info := readInfo(t, data)
	for _, ti := range info.Types {
		if ti.Name == pkg+"Health" || ti.Name == pkg+"Bag" {
			expectEqual(t, archetype.TypeTransient, ti.Flags&archetype.TypeTransient, ti.Name+" flags")
			expectEqual(t, "transient", ti.Encoding, ti.Name+" encoding")
		}
	}
	if len(data) >= len(encode(t, w)) {
		t.Errorf("transient data was written: %d bytes", len(data))
	}
	got := decode(t, data)
	expectEqual(t, countWith[Health](w), countWith[Health](got), "entities keep Health")
	q := ecs.NewFilter2[Health, Bag](got).Query()
	for q.Next() {
		h, b := q.Get()
		expectDeepEqual(t, Health{}, *h, "transient Health")
		expectDeepEqual(t, Bag{}, *b, "transient Bag")
	}
	q2 := ecs.NewFilter1[Position](got).Query()
	nonZero := 0
	for q2.Next() {
		if *q2.Get() != (Position{}) {
			nonZero++
		}
	}
	if nonZero == 0 {
		t.Error("other components lost their data")
	}
}

func TestOptionSkipResources(t *testing.T) {
	w := richWorld()
	got := decode(t, encode(t, w, archetype.SkipResources(ecs.C[Config]())))
	expectDeepEqual(t, Config{}, *ecs.GetResource[Config](got), "skipped resource keeps its placeholder")
	expectEqual(t, uint64(12345), ecs.GetResource[Tick](got).N, "other resource")

	got = decode(t, encode(t, w, archetype.WithoutResources()))
	expectEqual(t, uint64(0), ecs.GetResource[Tick](got).N, "no resources written")
	expectEqual(t, uint32(0), readInfo(t, encode(t, w, archetype.WithoutResources())).Header.Resources, "resource count")

	// On Decode.
	data := encode(t, w)
	got = decode(t, data, archetype.SkipResources(ecs.C[Tick]()))
	expectEqual(t, uint64(0), ecs.GetResource[Tick](got).N, "Tick skipped on Decode")
	expectEqual(t, "world", ecs.GetResource[Config](got).Title, "Config read")
	got = decode(t, data, archetype.WithoutResources())
	expectEqual(t, "", ecs.GetResource[Config](got).Title, "no resources read")

	// A resource type registered but not added is added.
	bare := ecs.NewWorld()
	registerAll(bare)
	bare.Reset() // removes the resources, keeps their registration
	ecs.ComponentID[Position](bare)
	expectNoError(t, archetype.Decode(bytes.NewReader(data), bare), "Decode")
	expectEqual(t, uint64(12345), ecs.GetResource[Tick](bare).N, "resource added by Decode")
}

func TestOptionLZ4(t *testing.T) {
	w := ecs.NewWorld()
	registerAll(w)
	m := ecs.NewMap2[Position, Name](w)
	for i := range 2000 {
		m.NewEntity(&Position{float64(i % 10), 1}, &Name{"the same name for everybody"})
	}
	plain := encode(t, w)
	packed := encode(t, w, archetype.LZ4())
	expectEqual(t, archetype.FlagLZ4, readInfo(t, packed).Header.Flags&archetype.FlagLZ4, "header flag")
	if len(packed)*3 > len(plain) {
		t.Errorf("LZ4 file has %d bytes, plain %d", len(packed), len(plain))
	}
	expectSameWorld(t, w, decode(t, packed))
}

// OldPos and NewPos stand for one type before and after a rename.
type (
	OldPos struct{ X, Y float64 }
	NewPos struct{ X, Y float64 }
)

func TestOptionAlias(t *testing.T) {
	w := ecs.NewWorld()
	ecs.NewMap1[OldPos](w).NewEntity(&OldPos{1, 2})
	data := encode(t, w)

	got := ecs.NewWorld()
	ecs.ComponentID[NewPos](got)
	err := archetype.Decode(bytes.NewReader(data), got)
	expectErrorIs(t, err, archetype.ErrUnknownType, "without alias")
	if !strings.Contains(err.Error(), pkg+"OldPos") {
		t.Errorf("error does not name the type: %v", err)
	}

	got = ecs.NewWorld()
	ecs.ComponentID[NewPos](got)
	expectNoError(t, archetype.Decode(bytes.NewReader(data), got, archetype.Alias(pkg+"OldPos", ecs.C[NewPos]())), "Decode with alias")
	q := ecs.NewFilter1[NewPos](got).Query()
	for q.Next() {
		expectEqual(t, NewPos{1, 2}, *q.Get(), "renamed component")
	}
}

// Version 1 of a raw type, and version 2 that changed its layout.
type (
	StatsV1 struct{ HP, Max int32 }
	StatsV2 struct {
		HP     float64
		Max    float64
		Shield float64
	}
	// Version 0 of a msgpack type, and version 3.
	LabelV0 struct{ Text string }
	LabelV3 struct {
		Words []string
		Len   int
	}
)

func (StatsV2) PECSVersion() uint32 { return 2 }
func (LabelV3) PECSVersion() uint32 { return 3 }

func TestOptionMigrate(t *testing.T) {
	w := ecs.NewWorld()
	m := ecs.NewMap2[StatsV1, LabelV0](w)
	for i := range 3 {
		m.NewEntity(&StatsV1{HP: int32(i), Max: 10}, &LabelV0{Text: fmt.Sprintf("label number %d", i)})
	}
	ecs.AddResource(w, &LabelV0{Text: "a resource"})
	data := encode(t, w, archetype.TypeVersion(ecs.C[StatsV1](), 1))
	for _, ti := range readInfo(t, data).Types {
		if ti.Name == pkg+"StatsV1" {
			expectEqual(t, uint32(1), ti.Version, "stored version")
		}
	}

	aliases := []archetype.Option{
		archetype.Alias(pkg+"StatsV1", ecs.C[StatsV2]()),
		archetype.Alias(pkg+"LabelV0", ecs.C[LabelV3]()),
	}
	target := func() *ecs.World {
		got := ecs.NewWorld()
		ecs.ComponentID[StatsV2](got)
		ecs.ComponentID[LabelV3](got)
		ecs.AddResource(got, &LabelV3{})
		return got
	}
	err := archetype.Decode(bytes.NewReader(data), target(), aliases...)
	expectErrorIs(t, err, archetype.ErrVersion, "without migration")

	got := target()
	opts := append(aliases,
		archetype.Migrate(1, func(old map[string]any) (StatsV2, error) {
			return StatsV2{HP: float64(old["HP"].(int64)), Max: float64(old["Max"].(int64)), Shield: 5}, nil
		}),
		archetype.Migrate(0, func(old map[string]any) (LabelV3, error) {
			words := strings.Fields(old["Text"].(string))
			return LabelV3{Words: words, Len: len(words)}, nil
		}),
	)
	expectNoError(t, archetype.Decode(bytes.NewReader(data), got, opts...), "Decode with migrations")
	q := ecs.NewFilter2[StatsV2, LabelV3](got).Query()
	n := 0
	for q.Next() {
		s, l := q.Get()
		expectEqual(t, StatsV2{HP: float64(n), Max: 10, Shield: 5}, *s, "migrated raw value")
		expectDeepEqual(t, LabelV3{Words: []string{"label", "number", fmt.Sprint(n)}, Len: 3}, *l, "migrated msgpack value")
		n++
	}
	expectEqual(t, 3, n, "migrated entities")
	expectDeepEqual(t, LabelV3{Words: []string{"a", "resource"}, Len: 2}, *ecs.GetResource[LabelV3](got), "migrated resource")

	// An error from a migration stops Decode.
	boom := errors.New("boom")
	opts = append(aliases[:1:1], archetype.Migrate(1, func(map[string]any) (StatsV2, error) { return StatsV2{}, boom }))
	err = archetype.Decode(bytes.NewReader(data), target(), append(opts, archetype.IgnoreUnknownTypes(), archetype.SkipComponents(ecs.C[LabelV3]()))...)
	expectErrorIs(t, err, boom, "failing migration")
}

// A raw layout that changed without a new type version is refused: a field that changed type is
// ErrIncompatible naming it, other changes of layout (a field added) ErrVersion.
type (
	Wide   struct{ X, Y float64 }
	Narrow struct{ X, Y float32 }
	Deep   struct{ X, Y, Z float64 }
)

func TestLayoutChangeNeedsVersion(t *testing.T) {
	w := ecs.NewWorld()
	ecs.NewMap1[Wide](w).NewEntity(&Wide{1, 2})
	data := encode(t, w)
	got := ecs.NewWorld()
	ecs.ComponentID[Narrow](got)
	err := archetype.Decode(bytes.NewReader(data), got, archetype.Alias(pkg+"Wide", ecs.C[Narrow]()))
	expectErrorIs(t, err, archetype.ErrIncompatible, "changed field types")
	expectEqual(t, 0, got.Stats().Entities.Total, "world untouched")
	got = ecs.NewWorld()
	ecs.ComponentID[Deep](got)
	err = archetype.Decode(bytes.NewReader(data), got, archetype.Alias(pkg+"Wide", ecs.C[Deep]()))
	expectErrorIs(t, err, archetype.ErrVersion, "a field added")
	expectEqual(t, 0, got.Stats().Entities.Total, "world untouched")

	// TypeVersion on Decode says the registered type is newer; a migration then bridges.
	got = ecs.NewWorld()
	ecs.ComponentID[Narrow](got)
	expectNoError(t, archetype.Decode(bytes.NewReader(data), got,
		archetype.Alias(pkg+"Wide", ecs.C[Narrow]()),
		archetype.TypeVersion(ecs.C[Narrow](), 1),
		archetype.Migrate(0, func(old map[string]any) (Narrow, error) {
			return Narrow{X: float32(old["X"].(float64)), Y: float32(old["Y"].(float64))}, nil
		})), "Decode with TypeVersion and Migrate")
	expectEqual(t, 1, countWith[Narrow](got), "migrated entities")
}

// A relation component aliased to a non-relation type is refused.
func TestRelationMismatch(t *testing.T) {
	w := richWorld()
	data := encode(t, w)
	got := ecs.NewWorld()
	registerAll(got)
	ecs.ComponentID[NewPos](got)
	err := archetype.Decode(bytes.NewReader(data), got, archetype.Alias(pkg+"Likes", ecs.C[NewPos]()))
	expectErrorIs(t, err, archetype.ErrVersion, "relation aliased to a plain component")
}

func TestOptionIgnoreUnknownTypes(t *testing.T) {
	w := richWorld()
	data := encode(t, w)
	partial := func() *ecs.World {
		got := ecs.NewWorld()
		for _, reg := range []func(*ecs.World) ecs.ID{
			ecs.ComponentID[Position], ecs.ComponentID[Velocity], ecs.ComponentID[Health], ecs.ComponentID[Name],
			ecs.ComponentID[Marker], ecs.ComponentID[Frozen], ecs.ComponentID[Grid], ecs.ComponentID[Target],
		} {
			reg(got)
		}
		ecs.AddResource(got, &Tick{})
		return got
	}
	err := archetype.Decode(bytes.NewReader(data), partial())
	expectErrorIs(t, err, archetype.ErrUnknownType, "unknown types")

	got := partial()
	expectNoError(t, archetype.Decode(bytes.NewReader(data), got, archetype.IgnoreUnknownTypes()), "Decode ignoring unknown types")
	expectEqual(t, w.Stats().Entities.Used, got.Stats().Entities.Used, "every entity is created")
	expectEqual(t, countWith[Target](w), countWith[Target](got), "entities with Target")
	expectEqual(t, uint64(12345), ecs.GetResource[Tick](got).N, "known resource")
	a, b := w.Unsafe().DumpEntities(), got.Unsafe().DumpEntities()
	expectDeepEqual(t, a.Entities, b.Entities, "pool")
	slices.Sort(a.Alive)
	slices.Sort(b.Alive)
	expectDeepEqual(t, a.Alive, b.Alive, "alive entities")
}

// Options and their nil value are harmless in both directions.
func TestNilOption(t *testing.T) {
	w := richWorld()
	data := encode(t, w, nil)
	got := decode(t, data, nil, archetype.Timestamp(time.Now()), archetype.LZ4())
	expectSameWorld(t, w, got)
}
