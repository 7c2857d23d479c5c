package systems_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/vfs"
)

// Lantern is a regional entity's component that one game registers and
// another does not (the game renamed it, or has not loaded the mod that
// brings it).
type Lantern struct {
	Glow  int
	Words []string
}

// lanternView is what a lantern entity holds, comparable across loads: its
// tether's target by stable id.
type lanternView struct {
	X, Y   float64
	Glow   int
	Words  string
	Tether uint64
	Len    float32
}

// lanternsOf returns every loaded lantern entity by stable id.
func lanternsOf(g *gametest.Game, t testing.TB) map[uint64]lanternView {
	t.Helper()
	out := map[uint64]lanternView{}
	regs := ecs.NewMap1[components.Regional](g.W)
	tethers := ecs.NewMap1[gametest.Tether](g.W)
	q := ecs.NewFilter3[components.Regional, gametest.Position, Lantern](g.W).Query()
	for q.Next() {
		reg, p, l := q.Get()
		v := lanternView{X: p.X, Y: p.Y, Glow: l.Glow, Words: fmt.Sprint(l.Words)}
		if e := q.Entity(); tethers.HasAll(e) {
			tt := tethers.Get(e)
			v.Len = tt.Len
			if g.W.Alive(tt.To) && regs.HasAll(tt.To) {
				v.Tether = regs.Get(tt.To).ID
			}
		}
		out[reg.ID] = v
	}
	return out
}

// A chunk whose stored regional entities hold a type this game does not
// register (or registers at another type version, without a migration)
// loads with the others; those it cannot read are reported once, naming
// the type and the chunk, kept as stored through the game's changes to the
// chunk (pixels, another entity moved, the chunk streamed out and back)
// and its saves, and come back exactly in a game that registers the type
// again.
func TestUnreadableEntitiesAreKept(t *testing.T) {
	withLanterns := func(w *ecs.World) { ecs.ComponentID[Lantern](w) }
	t.Run("unregistered", func(t *testing.T) {
		testUnreadableKept(t, gametest.Opts{}, archetype.ErrUnknownType)
	})
	t.Run("another type version", func(t *testing.T) {
		testUnreadableKept(t, gametest.Opts{Prepare: withLanterns, Plugin: func(p *arksave.Plugin) {
			p.WorldOptions = []archetype.Option{archetype.TypeVersion(ecs.C[Lantern](), 2)}
		}}, archetype.ErrVersion)
	})
}

// testUnreadableKept is TestUnreadableEntitiesAreKept with the game that
// cannot read lanterns made with without (its fs, dir, load and radius
// set here), and the error its problem matches.
func testUnreadableKept(t *testing.T, without gametest.Opts, want error) {
	mem := vfs.NewMem()
	withLanterns := func(w *ecs.World) { ecs.ComponentID[Lantern](w) }
	g := regionalGame(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 1, Prepare: withLanterns})
	g.Settle(t)
	c1 := g.SpawnCrate(40, 45, 0, 7) // chunk (1,1)
	g.SpawnCrate(50, 50, 0, 8)       // chunk (1,1)
	g.Tick()
	lm := ecs.NewMap4[gametest.Position, Lantern, gametest.Tether, components.Regional](g.W)
	lm.NewEntity(&gametest.Position{X: 36, Y: 60}, &Lantern{Glow: 3, Words: []string{"hello"}}, &gametest.Tether{To: c1, Len: 2.5}, &components.Regional{})
	ecs.NewMap3[gametest.Position, Lantern, components.Regional](g.W).NewEntity(&gametest.Position{X: 60, Y: 34}, &Lantern{Glow: 9}, &components.Regional{})
	// A pixel body that is a lantern: its body record is kept with it.
	body := components.PixelBody{ID: ecs.GetResource[components.BodyIDs](g.W).New(), X: 45, Y: 40, Width: 2, Height: 1,
		Pixels: []components.Pixel{1, 2}, Shape: []bool{true, true}}
	ecs.NewMap1[Lantern](g.W).Add(g.Bodies.NewEntity(&body, &components.Persistable{}), &Lantern{Glow: 5})
	g.Tick()
	crates, _ := g.Crates(t)
	lanterns := lanternsOf(g, t)
	expect(t, len(crates) == 2 && len(lanterns) == 2, "%d crates, %d lanterns", len(crates), len(lanterns))
	bodyLantern := lanternBodies(g)
	expect(t, len(bodyLantern) == 1, "lantern bodies: %v", bodyLantern)
	must(t, g.Pers.SaveNow().Err)
	must(t, g.Pers.Close())

	// A game without Lantern: the crates come, the lanterns are reported.
	logs := &gametest.Records{}
	o := without
	o.FS, o.Dir, o.Load, o.Radius = mem, "/save", true, 1
	o.Plugin = func(p *arksave.Plugin) {
		p.Logger = slog.New(logs)
		if without.Plugin != nil {
			without.Plugin(p)
		}
	}
	h := regionalGame(t, o)
	h.MoveFocus(t, 0, 0)
	got, ents := h.Crates(t)
	expect(t, fmt.Sprint(got) == fmt.Sprint(crates), "crates in a game without lanterns: %v, want %v", got, crates)
	expect(t, gametest.CountBodies(h) == 0, "the lantern's body spawned without its lantern")
	probs := h.Pers.Problems()
	expect(t, len(probs) == 1 && probs[0].Pos != nil && probs[0].Pos.X == 1 && probs[0].Pos.Y == 1 &&
		errors.Is(probs[0].Err, want) && !errors.Is(probs[0].Err, arksave.ErrCorrupt) &&
		strings.Contains(probs[0].Err.Error(), "Lantern"), "problems: %v", probs)
	attrs, ok := logs.Find(slog.LevelWarn, "regional entities this game cannot read are kept as stored")
	expect(t, ok && strings.Contains(fmt.Sprint(attrs["err"].Any()), "Lantern") && fmt.Sprint(attrs["chunk"].Any()) == fmt.Sprint(components.ChunkPos{X: 1, Y: 1}),
		"not logged with the type and the chunk: %v", logs.Messages())

	// The game changes the chunk: a pixel, a crate moved within it.
	h.Paint(t, 1, 1, 3, 3, components.MakePixel(9, 0, 0, 0))
	var moved uint64
	for id, e := range ents {
		if crates[id].HP == 8 {
			moved = id
			ecs.NewMap1[gametest.Position](h.W).Get(e).X = 52
			must(t, h.Pers.MarkDirty(e))
		}
	}
	v := crates[moved]
	v.X = 52
	crates[moved] = v
	res := h.Pers.SaveNow()
	must(t, res.Err)
	expect(t, res.RegionsWritten >= 1, "the chunk's entities were not written: %+v", res)
	kept := storedBlock(t, mem, "/save", chunkstore.Pos{X: 1, Y: 1})
	expect(t, len(kept.Sections) == 2 && len(kept.Bodies) == 1, "stored with chunk 1,1: %d sections, %d bodies", len(kept.Sections), len(kept.Bodies))
	// Out and back before the next save, with another change: from memory.
	h.MoveFocus(t, 20*gametest.ChunkSize, 0)
	h.MoveFocus(t, 0, 0)
	_, ents = h.Crates(t)
	ecs.NewMap1[gametest.Crate](h.W).Get(ents[moved]).HP = 80
	must(t, h.Pers.MarkDirty(ents[moved]))
	v.HP = 80
	crates[moved] = v
	must(t, h.Pers.SaveNow().Err)
	again := storedBlock(t, mem, "/save", chunkstore.Pos{X: 1, Y: 1})
	expect(t, len(again.Sections) == 2 && bytes.Equal(again.Sections[0], kept.Sections[0]) && fmt.Sprint(again.Bodies) == fmt.Sprint(kept.Bodies),
		"the kept entities were not written again unchanged")
	probs = h.Pers.Problems()
	expect(t, len(probs) == 0, "reported again: the same entities of the same chunk: %v", probs)
	must(t, h.Pers.Close())

	// Again a game with Lantern: everything exact.
	k := regionalGame(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1, Prepare: withLanterns})
	k.MoveFocus(t, 0, 0)
	got, _ = k.Crates(t)
	expect(t, fmt.Sprint(got) == fmt.Sprint(crates), "crates: %v, want %v", got, crates)
	gotL := lanternsOf(k, t)
	expect(t, fmt.Sprint(gotL) == fmt.Sprint(lanterns), "lanterns: %v, want %v", gotL, lanterns)
	expect(t, fmt.Sprint(lanternBodies(k)) == fmt.Sprint(bodyLantern), "lantern bodies: %v, want %v", lanternBodies(k), bodyLantern)
	expect(t, len(k.Pers.Problems()) == 0, "problems: %v", k.Pers.Problems())
}

// lanternBodies returns the pixel bodies that are lanterns, with their
// lantern, by id.
func lanternBodies(g *gametest.Game) map[components.BodyID]string {
	out := map[components.BodyID]string{}
	q := ecs.NewFilter2[components.PixelBody, Lantern](g.W).Query()
	for q.Next() {
		b, l := q.Get()
		out[b.ID] = fmt.Sprintf("%+v %+v", *b, *l)
	}
	return out
}

// A regional entity that refers to an entity this game cannot read, in the
// same chunk, is kept with it rather than loaded with a reference lost: a
// game with the type again finds the reference pointing to the right
// entity. Entities of the chunk that refer to none of them load.
func TestUnreadableEntitiesKeepWhatRefersToThem(t *testing.T) {
	mem := vfs.NewMem()
	withLanterns := func(w *ecs.World) { ecs.ComponentID[Lantern](w) }
	g := regionalGame(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 1, Prepare: withLanterns})
	g.Settle(t)
	lantern := ecs.NewMap3[gametest.Position, Lantern, components.Regional](g.W).NewEntity(&gametest.Position{X: 36, Y: 60}, &Lantern{Glow: 3}, &components.Regional{})
	tied := g.SpawnCrate(40, 45, 0, 7) // chunk (1,1), as the lantern
	ecs.NewMap1[gametest.Tether](g.W).Add(tied, &gametest.Tether{To: lantern, Len: 1.5})
	g.SpawnCrate(50, 50, 0, 8)
	g.Tick()
	regs := ecs.NewMap1[components.Regional](g.W)
	lanternID, tiedID := regs.Get(lantern).ID, regs.Get(tied).ID
	expect(t, lanternID != 0 && tiedID != 0, "stable ids not given: %d, %d", lanternID, tiedID)
	must(t, g.Pers.SaveNow().Err)
	must(t, g.Pers.Close())

	// Without Lantern: the tied crate is kept with the lantern; the other loads.
	h := regionalGame(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
	h.MoveFocus(t, 0, 0)
	got, ents := h.Crates(t)
	_, tiedLoaded := got[tiedID]
	expect(t, len(got) == 1 && !tiedLoaded, "crates in a game without lanterns: %v (the tied one is %d)", got, tiedID)
	for _, e := range ents {
		ecs.NewMap1[gametest.Position](h.W).Get(e).X = 52
		must(t, h.Pers.MarkDirty(e))
	}
	res := h.Pers.SaveNow()
	must(t, res.Err)
	expect(t, res.RegionsWritten >= 1, "the chunk's entities were not written: %+v", res)
	must(t, h.Pers.Close())

	// With Lantern again: the tether points to the lantern.
	k := regionalGame(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1, Prepare: withLanterns})
	k.MoveFocus(t, 0, 0)
	got, ents = k.Crates(t)
	expect(t, len(got) == 2, "crates: %v", got)
	e, ok := ents[tiedID]
	expect(t, ok, "the tied crate is lost: %v", got)
	tether := ecs.NewMap1[gametest.Tether](k.W).Get(e)
	kregs := ecs.NewMap1[components.Regional](k.W)
	expect(t, k.W.Alive(tether.To) && kregs.HasAll(tether.To) && kregs.Get(tether.To).ID == lanternID &&
		ecs.NewMap1[Lantern](k.W).HasAll(tether.To) && tether.Len == 1.5,
		"the tether does not point to the lantern %d: %+v", lanternID, *tether)
}
