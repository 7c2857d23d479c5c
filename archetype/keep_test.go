package archetype_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/archetype"
)

// registerAllButBag registers every test type in w but Bag.
func registerAllButBag(w *ecs.World) {
	ecs.ComponentID[Position](w)
	ecs.ComponentID[Velocity](w)
	ecs.ComponentID[Health](w)
	ecs.ComponentID[Name](w)
	ecs.ComponentID[Marker](w)
	ecs.ComponentID[Target](w)
	ecs.ComponentID[ChildOf](w)
}

// With KeepUndecodable, a section with a type the world has not registered reads the tables the
// world can take and hands the others over as a section of their own, which a world that has the
// type reads back exactly; references across the two parts go by stable id one way and are zero
// the other way.
func TestKeepUndecodableSplitsByTable(t *testing.T) {
	for _, lz4 := range []bool{false, true} {
		fx := newSectionFixture()
		data := appendSection(t, fx, lz4Option(lz4)...)

		// A world without Bag: c and d (Bag, Target) are kept.
		dst := ecs.NewWorld()
		registerAllButBag(dst)
		_, err := archetype.DecodeEntities(data, dst)
		expectEqual(t, true, errors.Is(err, archetype.ErrUnknownType), "without the option: "+errString(err))
		var rest []byte
		var cause error
		calls := 0
		got, err := archetype.DecodeEntities(data, dst,
			archetype.StableRefs(func(ecs.Entity) (uint64, bool) { return 0, false }, nil),
			archetype.KeepUndecodable(func(r []byte, c error) { rest, cause = r, c; calls++ }))
		expectNoError(t, err, "DecodeEntities keeping")
		expectEqual(t, 1, calls, "keep calls")
		expectEqual(t, true, errors.Is(cause, archetype.ErrUnknownType), "cause: "+errString(cause))
		expectEqual(t, 4, len(got), "entities read (a, b, e, f)")
		a := got[0]
		expectEqual(t, Position{1, 2}, *ecs.NewMap1[Position](dst).Get(a), "a's position")
		expectEqual(t, Health{9, 10}, *ecs.NewMap1[Health](dst).Get(got[1]), "b's health")
		expectEqual(t, got[1], ecs.NewMap1[ChildOf](dst).GetRelation(got[2], 0), "e's relation to b")

		// toStable knows no entity here: references to a are kept as a is.
		full := ecs.NewWorld()
		registerAll(full)
		for range 3 {
			full.NewEntity()
		}
		moved := ecs.NewMap1[Position](full).NewEntity(&Position{7, 7})
		back, err := archetype.DecodeEntities(rest, full, fx.refs(moved))
		expectNoError(t, err, "DecodeEntities of the kept part")
		expectEqual(t, 2, len(back), "kept entities")
		bag := ecs.NewMap1[Bag](full).Get(back[0])
		expectDeepEqual(t, []string{"x"}, bag.Items, "c's bag")
		expectEqual(t, Position{3, 4}, *bag.Ptr, "c's pointer")
		expectEqual(t, moved, bag.Friends["out"], "stable reference kept")
		expectEqual(t, fx.global, bag.Friends["g"], "exact reference kept")
		expectEqual(t, a, bag.Friends["a"], "a reference to an entity read: that entity as it is")
		expectEqual(t, Target{E: a, W: 0.5}, *ecs.NewMap1[Target](full).Get(back[0]), "c's target")
		expectEqual(t, moved, ecs.NewMap1[Bag](full).Get(back[1]).Best, "d's stable reference")
	}
}

// A reference of a kept entity to an entity that was read goes by the stable id toStable gives.
func TestKeepUndecodableRefersByStableID(t *testing.T) {
	fx := newSectionFixture()
	data := appendSection(t, fx)
	dst := ecs.NewWorld()
	registerAllButBag(dst)
	posMap := ecs.NewMap1[Position](dst)
	var rest []byte
	_, err := archetype.DecodeEntities(data, dst,
		archetype.StableRefs(func(e ecs.Entity) (uint64, bool) {
			return 5, posMap.HasAll(e) && *posMap.Get(e) == Position{1, 2}
		}, nil),
		archetype.KeepUndecodable(func(r []byte, _ error) { rest = r }))
	expectNoError(t, err, "DecodeEntities keeping")
	full := ecs.NewWorld()
	registerAll(full)
	five := ecs.NewMap1[Velocity](full).NewEntity(&Velocity{5, 5})
	back, err := archetype.DecodeEntities(rest, full, archetype.StableRefs(nil, func(id uint64) ecs.Entity {
		if id == 5 {
			return five
		}
		return ecs.Entity{}
	}))
	expectNoError(t, err, "DecodeEntities of the kept part")
	expectEqual(t, five, ecs.NewMap1[Target](full).Get(back[0]).E, "c's target, by stable id")
	expectEqual(t, five, ecs.NewMap1[Bag](full).Get(back[0]).Friends["a"], "c's friend, by stable id")
}

// A section none of whose tables the world can take is kept byte for byte, nothing is created;
// a damaged one is refused as without the option.
func TestKeepUndecodableWholeAndDamaged(t *testing.T) {
	src := ecs.NewWorld()
	registerAll(src)
	m := ecs.NewMap1[Bag](src)
	data, err := archetype.AppendEntities(nil, src, []ecs.Entity{m.NewEntity(&Bag{Items: []string{"y"}}), m.NewEntity(&Bag{})})
	expectNoError(t, err, "AppendEntities")
	dst := ecs.NewWorld()
	registerAllButBag(dst)
	var rest []byte
	got, err := archetype.DecodeEntities(data, dst, archetype.KeepUndecodable(func(r []byte, _ error) { rest = r }))
	expectNoError(t, err, "DecodeEntities keeping")
	expectEqual(t, 0, len(got), "entities created")
	expectEqual(t, true, bytes.Equal(rest, data), "kept byte for byte")

	bad := bytes.Clone(data)
	bad[len(bad)/2] ^= 0xff
	rest = nil
	_, err = archetype.DecodeEntities(bad, dst, archetype.KeepUndecodable(func(r []byte, _ error) { rest = r }))
	expectEqual(t, true, errors.Is(err, archetype.ErrCorrupt) && rest == nil, "damaged: "+errString(err))
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// A table with a value the world's type cannot take (300 for an int8) is kept like a table with
// an unknown type; the others are read.
func TestKeepUndecodableValueRefusal(t *testing.T) {
	type Score struct {
		Name  string
		Value int
	}
	type Small struct{ Value int8 }
	src := ecs.NewWorld()
	registerAll(src)
	es := []ecs.Entity{
		ecs.NewMap1[Score](src).NewEntity(&Score{Name: "a", Value: 300}),
		ecs.NewMap1[Position](src).NewEntity(&Position{1, 2}),
		ecs.NewMap1[Score](src).NewEntity(&Score{Name: "b", Value: 4}),
	}
	data, err := archetype.AppendEntities(nil, src, es)
	expectNoError(t, err, "AppendEntities")

	dst := ecs.NewWorld()
	registerAll(dst)
	ecs.ComponentID[Small](dst)
	alias := archetype.Alias("github.com/arksave/arksave/archetype_test.Score", ecs.C[Small]())
	_, err = archetype.DecodeEntities(data, dst, alias)
	expectEqual(t, true, errors.Is(err, archetype.ErrIncompatible), "without the option: "+errString(err))
	var rest []byte
	var cause error
	got, err := archetype.DecodeEntities(data, dst, alias, archetype.KeepUndecodable(func(r []byte, c error) { rest, cause = r, c }))
	expectNoError(t, err, "DecodeEntities keeping")
	expectEqual(t, 1, len(got), "entities read")
	expectEqual(t, Position{1, 2}, *ecs.NewMap1[Position](dst).Get(got[0]), "the position")
	expectEqual(t, true, errors.Is(cause, archetype.ErrIncompatible), "cause: "+errString(cause))

	full := ecs.NewWorld()
	ecs.ComponentID[Score](full)
	back, err := archetype.DecodeEntities(rest, full)
	expectNoError(t, err, "DecodeEntities of the kept part")
	expectEqual(t, 2, len(back), "kept entities")
	expectEqual(t, Score{Name: "a", Value: 300}, *ecs.NewMap1[Score](full).Get(back[0]), "a")
	expectEqual(t, Score{Name: "b", Value: 4}, *ecs.NewMap1[Score](full).Get(back[1]), "b")
}

// An entity read into the world cannot hold a reference to a kept entity, so its table is kept
// with it, and so is a table that refers to that one: stored again and read by a world that has
// every type, each reference points to the right entity. Tables that refer to no kept entity are
// read.
func TestKeepUndecodableKeepsWhatRefersToKept(t *testing.T) {
	src := ecs.NewWorld()
	registerAll(src)
	bag := ecs.NewMap1[Bag](src).NewEntity(&Bag{Items: []string{"kept"}})
	a := ecs.NewMap2[Position, Target](src).NewEntity(&Position{1, 1}, &Target{E: bag, W: 1})
	x := ecs.NewMap2[Name, Target](src).NewEntity(&Name{"x"}, &Target{E: a, W: 2})
	r := ecs.NewMap2[Position, ChildOf](src).NewEntity(&Position{2, 2}, &ChildOf{}, ecs.Rel[ChildOf](bag))
	p := ecs.NewMap1[Velocity](src).NewEntity(&Velocity{3, 3})
	data, err := archetype.AppendEntities(nil, src, []ecs.Entity{a, x, bag, r, p})
	expectNoError(t, err, "AppendEntities")

	dst := ecs.NewWorld()
	registerAllButBag(dst)
	var rest []byte
	var cause error
	got, err := archetype.DecodeEntities(data, dst, archetype.KeepUndecodable(func(b []byte, c error) { rest, cause = b, c }))
	expectNoError(t, err, "DecodeEntities keeping")
	expectEqual(t, true, errors.Is(cause, archetype.ErrUnknownType), "cause: "+errString(cause))
	if len(got) != 1 {
		t.Fatalf("entities read: %d, want 1 (p alone)", len(got))
	}
	expectEqual(t, Velocity{3, 3}, *ecs.NewMap1[Velocity](dst).Get(got[0]), "p's velocity")
	q := ecs.NewFilter0(dst).Query()
	expectEqual(t, 1, q.Count(), "entities in the world")
	q.Close()

	// Read again by a world without Bag, the kept part is kept whole.
	again := ecs.NewWorld()
	registerAllButBag(again)
	var rest2 []byte
	got, err = archetype.DecodeEntities(rest, again, archetype.KeepUndecodable(func(b []byte, _ error) { rest2 = b }))
	expectNoError(t, err, "DecodeEntities of the kept part keeping")
	expectEqual(t, 0, len(got), "entities read from the kept part")
	expectEqual(t, true, bytes.Equal(rest, rest2), "kept part kept byte for byte")

	full := ecs.NewWorld()
	registerAll(full)
	back, err := archetype.DecodeEntities(rest, full)
	expectNoError(t, err, "DecodeEntities of the kept part")
	expectEqual(t, 4, len(back), "kept entities (bag, a, x, r)")
	var gotBag, gotA, gotX, gotR ecs.Entity
	bags, names, childs := ecs.NewMap1[Bag](full), ecs.NewMap1[Name](full), ecs.NewMap1[ChildOf](full)
	targets := ecs.NewMap1[Target](full)
	for _, e := range back {
		switch {
		case bags.HasAll(e):
			gotBag = e
		case names.HasAll(e):
			gotX = e
		case childs.HasAll(e):
			gotR = e
		case targets.HasAll(e):
			gotA = e
		}
	}
	expectEqual(t, false, gotBag.IsZero() || gotA.IsZero() || gotX.IsZero() || gotR.IsZero(), "every kept entity found")
	expectDeepEqual(t, []string{"kept"}, bags.Get(gotBag).Items, "the bag")
	expectEqual(t, Target{E: gotBag, W: 1}, *targets.Get(gotA), "a's reference to the bag")
	expectEqual(t, Target{E: gotA, W: 2}, *targets.Get(gotX), "x's reference to a")
	expectEqual(t, gotBag, childs.GetRelation(gotR, 0), "r's relation to the bag")
}
