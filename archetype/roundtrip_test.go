package archetype_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/iotest"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/internal/pecs"
	"github.com/mlange-42/ark/ecs"
)

// creationPaths runs test with each way Decode can create entities: in one batch per table,
// and with Ark's public calls (where batch creation is not safe, or the world has observers).
func creationPaths(t *testing.T, test func(t *testing.T)) {
	t.Run("batch", test)
	t.Run("public", func(t *testing.T) {
		archetype.PublicCreation(t)
		test(t)
	})
}

func TestRoundTripRichWorld(t *testing.T) {
	creationPaths(t, func(t *testing.T) {
		for _, lz4 := range []bool{false, true} {
			t.Run(fmt.Sprintf("lz4=%v", lz4), func(t *testing.T) {
				var opts []archetype.Option
				if lz4 {
					opts = append(opts, archetype.LZ4())
				}
				w := richWorld()
				data := encode(t, w, opts...)
				got := decode(t, data)
				expectSameWorld(t, w, got)
				expectBytes(t, data, encode(t, got, opts...), "re-encoded file")
			})
		}
	})
}

func TestRoundTripEmptyWorld(t *testing.T) {
	w := ecs.NewWorld()
	registerAll(w)
	data := encode(t, w)
	got := decode(t, data)
	expectSameWorld(t, w, got)
	expectBytes(t, data, encode(t, got), "re-encoded file")
}

func TestRoundTripOnlyDeadEntities(t *testing.T) {
	w := ecs.NewWorld()
	registerAll(w)
	m := ecs.NewMap1[Position](w)
	var es []ecs.Entity
	for range 10 {
		es = append(es, m.NewEntity(&Position{}))
	}
	for _, e := range es {
		w.RemoveEntity(e)
	}
	data := encode(t, w)
	got := decode(t, data)
	expectSameWorld(t, w, got)
	expectBytes(t, data, encode(t, got), "re-encoded file")
}

// After Decode, both worlds must behave alike: new entities recycle the same ids, and removing
// a relation target cleans up the same tables (Decode must register targets with Ark).
func TestDecodedWorldBehavesAlike(t *testing.T) { creationPaths(t, decodedWorldBehavesAlike) }

func decodedWorldBehavesAlike(t *testing.T) {
	w := richWorld()
	got := decode(t, encode(t, w))
	for _, world := range []*ecs.World{w, got} {
		m := ecs.NewMap1[Position](world)
		for range 30 {
			m.NewEntity(&Position{1, 1})
		}
		// The parents of richWorld are the entities with ids 3, 5 and 6 (see its construction).
		q := ecs.NewFilter1[ChildOf](world).Query()
		var parents []ecs.Entity
		for q.Next() {
			parents = append(parents, q.GetRelation(0))
		}
		for _, p := range parents {
			if !p.IsZero() && world.Alive(p) {
				world.RemoveEntity(p)
			}
		}
	}
	expectSameWorld(t, w, got)
	q := ecs.NewFilter1[ChildOf](got).Query()
	for q.Next() {
		expectEqual(t, ecs.Entity{}, q.GetRelation(0), "relation target after its removal")
	}
}

// Entity values inside components stay valid: they point at the same entities after Decode.
func TestEntitiesInsideComponents(t *testing.T) {
	w := richWorld()
	got := decode(t, encode(t, w))
	q := ecs.NewFilter2[Bag, Target](got).Query()
	n := 0
	for q.Next() {
		bag, target := q.Get()
		for _, e := range []ecs.Entity{target.E, bag.Best, bag.Friends["p"], bag.Friends["q"]} {
			expectEqual(t, true, got.Alive(e), fmt.Sprintf("entity %v referenced from a component is alive", e))
			expectEqual(t, true, got.Unsafe().Has(e, ecs.ComponentID[Position](got)), "referenced entity has its components")
		}
		n++
	}
	expectEqual(t, 5, n, "entities with Bag")
}

// K is instantiated with many type arguments to make many component types; it also checks
// that generic type names round-trip.
type K[T any] struct{ V T }

func TestManyArchetypes(t *testing.T) {
	w := ecs.NewWorld(16)
	ids := []ecs.ID{
		ecs.ComponentID[K[int8]](w), ecs.ComponentID[K[int16]](w), ecs.ComponentID[K[int32]](w),
		ecs.ComponentID[K[int64]](w), ecs.ComponentID[K[uint8]](w), ecs.ComponentID[K[uint16]](w),
		ecs.ComponentID[K[uint32]](w), ecs.ComponentID[K[float32]](w), ecs.ComponentID[K[string]](w),
	}
	for mask := range 1 << len(ids) {
		var comps []ecs.ID
		for i, id := range ids {
			if mask&(1<<i) != 0 {
				comps = append(comps, id)
			}
		}
		for range 1 + mask%3 {
			e := w.Unsafe().NewEntity(comps...)
			if mask&(1<<8) != 0 {
				(*K[string])(w.Unsafe().Get(e, ids[8])).V = fmt.Sprint(mask)
			}
			if mask&1 != 0 {
				(*K[int8])(w.Unsafe().Get(e, ids[0])).V = int8(mask)
			}
		}
	}
	data := encode(t, w)
	info, err := pecs.ReadInfo(bytes.NewReader(data))
	expectNoError(t, err, "ReadInfo")
	expectEqual(t, 512, len(info.Tables), "tables")

	got := ecs.NewWorld(16)
	ecs.ComponentID[K[string]](got) // a different registration order
	ecs.ComponentID[K[float32]](got)
	ecs.ComponentID[K[uint32]](got)
	ecs.ComponentID[K[uint16]](got)
	ecs.ComponentID[K[uint8]](got)
	ecs.ComponentID[K[int64]](got)
	ecs.ComponentID[K[int32]](got)
	ecs.ComponentID[K[int16]](got)
	ecs.ComponentID[K[int8]](got)
	expectNoError(t, archetype.Decode(bytes.NewReader(data), got), "Decode")
	expectSameWorld(t, w, got)
	expectBytes(t, data, encode(t, got), "re-encoded file")
}

// Decode reads from any reader: one byte at a time, short reads, a reader with an error at EOF.
func TestDecodeFromAwkwardReaders(t *testing.T) {
	w := richWorld()
	data := encode(t, w, archetype.LZ4())
	for name, wrap := range map[string]func(io.Reader) io.Reader{
		"one byte":      iotest.OneByteReader,
		"half":          iotest.HalfReader,
		"data with EOF": iotest.DataErrReader,
	} {
		got := ecs.NewWorld()
		registerAll(got)
		expectNoError(t, archetype.Decode(wrap(bytes.NewReader(data)), got), name)
		expectSameWorld(t, w, got)
	}
}

func TestDecodeNeedsEmptyWorld(t *testing.T) {
	data := encode(t, richWorld())
	w := ecs.NewWorld()
	registerAll(w)
	e := w.NewEntity()
	err := archetype.Decode(bytes.NewReader(data), w)
	expectEqual(t, true, errors.Is(err, archetype.ErrWorldNotEmpty), fmt.Sprintf("error %v is ErrWorldNotEmpty", err))

	w.RemoveEntity(e) // a recycled slot is not empty either
	err = archetype.Decode(bytes.NewReader(data), w)
	expectEqual(t, true, errors.Is(err, archetype.ErrWorldNotEmpty), "recycled slot")

	w.Reset()
	registerAll(w) // Reset removes resources
	expectNoError(t, archetype.Decode(bytes.NewReader(data), w), "Decode after Reset")
}

func TestDecodeLockedWorld(t *testing.T) {
	data := encode(t, richWorld())
	w := ecs.NewWorld()
	registerAll(w)
	q := ecs.NewFilter0(w).Query()
	err := archetype.Decode(bytes.NewReader(data), w)
	q.Close()
	if err == nil {
		t.Fatal("Decode into a locked world succeeded")
	}
}

func TestEncodeIsDeterministic(t *testing.T) {
	w := richWorld()
	first := encode(t, w)
	for range 10 {
		expectBytes(t, first, encode(t, w), "second encoding")
	}
}

func TestEncodeWriteError(t *testing.T) {
	if err := archetype.Encode(failingWriter{}, richWorld()); err == nil || !errors.Is(err, errWrite) {
		t.Fatalf("want the writer's error, got %v", err)
	}
}

var errWrite = errors.New("disk full")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errWrite }

// Component types msgpack cannot encode make Encode fail with an error, not a panic.
func TestEncodeUnencodableComponent(t *testing.T) {
	type Callback struct{ F func() }
	w := ecs.NewWorld()
	ecs.NewMap1[Callback](w).NewEntity(&Callback{F: func() {}})
	if err := archetype.Encode(&bytes.Buffer{}, w); err == nil {
		t.Fatal("Encode of a func field succeeded")
	}
}

// Relation targets may be the entity itself, or entities of tables created later, in a cycle.
func TestRelationCycles(t *testing.T) {
	w := ecs.NewWorld()
	registerAll(w)
	a := ecs.NewMap1[Position](w).NewEntity(&Position{1, 1})
	b := ecs.NewMap1[Velocity](w).NewEntity(&Velocity{2, 2})
	ecs.NewMap1[ChildOf](w).Add(a, &ChildOf{}, ecs.Rel[ChildOf](b))
	ecs.NewMap1[ChildOf](w).Add(b, &ChildOf{}, ecs.Rel[ChildOf](a))
	self := ecs.NewMap1[Likes](w).NewEntity(&Likes{Amount: 1}, ecs.Rel[Likes](ecs.Entity{}))
	ecs.NewMap1[Likes](w).SetRelations(self, ecs.Rel[Likes](self))
	data := encode(t, w)
	got := decode(t, data)
	expectSameWorld(t, w, got)
	expectBytes(t, data, encode(t, got), "re-encoded file")
	for _, world := range []*ecs.World{w, got} {
		world.RemoveEntity(a)
	}
	expectSameWorld(t, w, got)
}

// Observers of the target world see every created entity (before its data is written).
func TestDecodeFiresCreateObservers(t *testing.T) {
	w := richWorld()
	data := encode(t, w)
	got := ecs.NewWorld()
	registerAll(got)
	created := 0
	ecs.Observe(ecs.OnCreateEntity).Do(func(ecs.Entity) { created++ }).Register(got)
	expectNoError(t, archetype.Decode(bytes.NewReader(data), got), "Decode")
	expectEqual(t, w.Stats().Entities.Used, created, "create events")
	expectSameWorld(t, w, got)
}

// Skipping a component on Decode can put two stored tables into one Ark table (here the
// entities with Health join those without): the second table's entities are appended, each
// with its own values.
func TestDecodeMergesTables(t *testing.T) {
	creationPaths(t, func(t *testing.T) {
		w := richWorld()
		got := decode(t, encode(t, w), archetype.SkipComponents(ecs.C[Health]()))
		expectEqual(t, 0, countWith[Health](got), "entities with Health")
		q := ecs.NewFilter2[Position, Velocity](w).Query()
		m := ecs.NewMap2[Position, Velocity](got)
		n := 0
		for q.Next() {
			p, v := q.Get()
			gp, gv := m.Get(q.Entity())
			expectEqual(t, *p, *gp, fmt.Sprintf("Position of %v", q.Entity()))
			expectEqual(t, *v, *gv, fmt.Sprintf("Velocity of %v", q.Entity()))
			n++
		}
		expectEqual(t, n, countWith[Velocity](got), "entities with Velocity")
		expectEqual(t, w.Stats().Entities.Used, got.Stats().Entities.Used, "alive entities")
	})
}
