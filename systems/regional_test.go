package systems_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/pecs"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/testkit"
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/vfs"
)

var expect, must = testkit.Expect, testkit.Must

func regionalGame(t testing.TB, o gametest.Opts) *gametest.Game {
	t.Helper()
	prev := o.Prepare
	o.Prepare = func(w *ecs.World) {
		gametest.RegisterRegional(w)
		if prev != nil {
			prev(w)
		}
	}
	return gametest.New(t, o)
}

// storedBlock reads what the committed chunk store of dir keeps with pos.
func storedBlock(t testing.TB, fsys vfs.FS, dir string, pos chunkstore.Pos) chunkstore.EntityBlock {
	t.Helper()
	s, _ := gametest.OpenCommittedStore(t, fsys, dir)
	defer s.Close()
	blk, err := s.Entities(pos)
	must(t, err)
	return blk
}

// worldTypes lists the component types the committed world file of dir holds.
func worldTypes(t testing.TB, fsys vfs.FS, dir string) []string {
	t.Helper()
	d, err := savedir.OpenDirReadOnly(fsys, dir)
	must(t, err)
	data, err := d.ReadWorld(nil)
	must(t, err)
	info, err := pecs.ReadInfo(bytes.NewReader(data))
	must(t, err)
	var names []string
	for _, ty := range info.Types {
		names = append(names, ty.Name)
	}
	return names
}

func hasType(names []string, suffix string) bool {
	for _, n := range names {
		if len(n) >= len(suffix) && n[len(n)-len(suffix):] == suffix {
			return true
		}
	}
	return false
}

// A regional entity of any archetype lives in its chunk: it is not in the
// world file, it unloads (despawned) with its chunk and comes back with it,
// from memory before a save and from the store after one, and after a
// load, with its stable id and every component exact.
func TestRegionalEntityFollowsItsChunk(t *testing.T) {
	mem := vfs.NewMem()
	g := regionalGame(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 1})
	g.Settle(t)
	e := g.SpawnCrate(40, 45, 0, 7) // chunk (1,1)
	g.SpawnCrate(-5, 3, 0, 3)       // chunk (-1,0)
	g.Tick()
	want, _ := g.Crates(t)
	expect(t, len(want) == 2, "%d crates", len(want))
	for id := range want {
		expect(t, id != 0, "the plugin gives a stable id")
	}
	st := g.Pers.RegionStats()
	expect(t, st.Entities == 2 && st.Regions == 2 && st.Spawned == 2, "%+v", st)

	res := g.Pers.SaveNow()
	must(t, res.Err)
	expect(t, res.RegionsWritten == 2, "%d regions written, want 2", res.RegionsWritten)
	expect(t, !hasType(worldTypes(t, mem, "/save"), ".Crate"), "the world file holds crates")
	expect(t, len(storedBlock(t, mem, "/save", chunkstore.Pos{X: 1, Y: 1}).Sections) == 1, "no entity section with chunk 1,1")

	// Away: the crates unload with their chunks.
	g.MoveFocus(t, 20*gametest.ChunkSize, 0)
	got, _ := g.Crates(t)
	expect(t, len(got) == 0 && !g.W.Alive(e), "crates still loaded: %v", got)
	expect(t, g.Pers.RegionStats().Unloaded == 2, "%+v", g.Pers.RegionStats())
	// Back: from the store (nothing changed since the save).
	g.MoveFocus(t, 0, 0)
	got, _ = g.Crates(t)
	expect(t, fmt.Sprint(got) == fmt.Sprint(want), "crates after a reload: %v, want %v", got, want)

	// Change one, unload it before any save: it comes back from memory.
	_, ents := g.Crates(t)
	var id77 uint64
	for id, ce := range ents {
		if want[id].HP == 7 {
			ecs.NewMap1[gametest.Crate](g.W).Get(ce).HP = 77
			id77 = id
		}
	}
	must(t, g.Pers.MarkDirty(ents[id77]))
	v := want[id77]
	v.HP = 77
	want[id77] = v
	g.MoveFocus(t, 20*gametest.ChunkSize, 0)
	g.MoveFocus(t, 0, 0)
	got, _ = g.Crates(t)
	expect(t, fmt.Sprint(got) == fmt.Sprint(want), "crates from memory: %v, want %v", got, want)

	// Away, save, load in a new game: from the store.
	g.MoveFocus(t, 20*gametest.ChunkSize, 0)
	must(t, g.Pers.SaveNow().Err)
	g.Pers.Close()
	h := regionalGame(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
	h.MoveFocus(t, 0, 0)
	got, _ = h.Crates(t)
	expect(t, fmt.Sprint(got) == fmt.Sprint(want), "crates after a load: %v, want %v", got, want)
}

// Seed checklist: entity movement across a chunk border updates the right
// chunks: the one it left and the one it entered, and no other.
func TestRegionalMovementUpdatesTheRightChunks(t *testing.T) {
	mem := vfs.NewMem()
	g := regionalGame(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 1})
	g.Settle(t)
	e := g.SpawnCrate(10, 10, 5, 1) // chunk (0,0)
	g.SpawnCrate(-20, 10, 6, 1)     // chunk (-1,0): stays
	g.Tick()
	must(t, g.Pers.SaveNow().Err)
	expect(t, len(storedBlock(t, mem, "/save", chunkstore.Pos{X: 0, Y: 0}).Sections) == 1, "crate 5 not with chunk 0,0")

	ecs.NewMap1[gametest.Position](g.W).Get(e).X = gametest.ChunkSize + 10 // chunk (1,0), past the margin
	g.Tick()
	expect(t, g.Pers.RegionStats().Crossings == 1, "%+v", g.Pers.RegionStats())
	res := g.Pers.SaveNow()
	must(t, res.Err)
	expect(t, res.RegionsWritten == 2, "%d regions written, want 2 (left and entered)", res.RegionsWritten)
	expect(t, len(storedBlock(t, mem, "/save", chunkstore.Pos{X: 0, Y: 0}).Sections) == 0, "chunk 0,0 still keeps crate 5")
	entered := storedBlock(t, mem, "/save", chunkstore.Pos{X: 1, Y: 0})
	expect(t, len(entered.Sections) == 1, "chunk 1,0 keeps %d sections", len(entered.Sections))
	info, err := pecs.ReadInfo(bytes.NewReader(entered.Sections[0]))
	must(t, err)
	expect(t, info.Header.Entities == 1, "chunk 1,0 keeps %d entities", info.Header.Entities)
	expect(t, len(storedBlock(t, mem, "/save", chunkstore.Pos{X: -1, Y: 0}).Sections) == 1, "chunk -1,0 lost crate 6")

	// Into a chunk that is not loaded: the crate unloads into it.
	ecs.NewMap1[gametest.Position](g.W).Get(e).X = 5*gametest.ChunkSize + 3
	g.Tick()
	got, _ := g.Crates(t)
	_, loaded := got[5]
	expect(t, !loaded, "crate 5 stayed loaded in an unloaded chunk")
	res = g.Pers.SaveNow()
	must(t, res.Err)
	expect(t, len(storedBlock(t, mem, "/save", chunkstore.Pos{X: 5, Y: 0}).Sections) == 1, "chunk 5,0 does not keep crate 5")
	expect(t, len(storedBlock(t, mem, "/save", chunkstore.Pos{X: 1, Y: 0}).Sections) == 0, "chunk 1,0 still keeps crate 5")
	g.MoveFocus(t, 5*gametest.ChunkSize, 0)
	got, _ = g.Crates(t)
	expect(t, got[5].X == 5*gametest.ChunkSize+3, "crate 5 in chunk 5,0: %v", got)
}

// An entity oscillating around a border for 1,000 ticks marks chunks dirty
// only on real crossings (past the margin) and checkpoints: within the
// margin, never more than a checkpoint per 10 s of game time; past it,
// exactly once per crossing. Autosaves every tick write exactly that.
func TestRegionalHysteresis(t *testing.T) {
	for _, amp := range []float64{0.15, 0.4} { // chunk widths around the border x = testChunk
		t.Run(fmt.Sprint(amp), func(t *testing.T) {
			every := &autosave.Config{Interval: arksave.DefaultTickDuration, Enabled: true, MaxBackups: 1}
			g := regionalGame(t, gametest.Opts{FS: vfs.NewMem(), Dir: "/save", Radius: 1, Autosave: every})
			g.Settle(t)
			e := g.SpawnCrate(gametest.ChunkSize-1, 10, 9, 1)
			g.Tick()
			must(t, g.Pers.SaveNow().Err)
			base := g.Pers.RegionStats()
			written := 0
			crossings := 0
			home := 0 // chunk x the crate is saved with
			const ticks = 1000
			for i := range ticks {
				// Swing by amp widths to either side every 10 ticks, jittering in between.
				side := 1.0
				if i/10%2 == 1 {
					side = -1
				}
				x := gametest.ChunkSize + side*amp*gametest.ChunkSize + float64(i%3)*0.01
				ecs.NewMap1[gametest.Position](g.W).Get(e).X = x
				g.Tick()
				margin := arksaveHysteresis * gametest.ChunkSize
				if x > float64(home+1)*gametest.ChunkSize+margin {
					home++
					crossings++
				} else if x < float64(home)*gametest.ChunkSize-margin {
					home--
					crossings++
				}
				res := g.Pers.Wait() // the autosave this tick started
				expect(t, res != nil, "tick %d started no autosave", i)
				must(t, res.Err)
				written += res.RegionsWritten
			}
			st := g.Pers.RegionStats()
			gotCross := st.Crossings - base.Crossings
			checks := st.Checkpoints - base.Checkpoints
			// 1,000 ticks of 1/60 s are 16.7 s: a chunk is checked once per 10 s.
			maxChecks := ticks/600 + 1
			expect(t, gotCross == crossings, "%d crossings counted, %d real", gotCross, crossings)
			expect(t, checks <= maxChecks, "%d checkpoints, at most %d", checks, maxChecks)
			expect(t, written == 2*crossings+checks, "%d entity sets written for %d crossings and %d checkpoints", written, crossings, checks)
			if amp < arksaveHysteresis {
				expect(t, crossings == 0, "swinging inside the margin crossed %d times", crossings)
			} else {
				expect(t, crossings >= ticks/10-1, "swinging past the margin crossed only %d times", crossings)
			}
		})
	}
}

// arksaveHysteresis is the plugin's default margin, in chunk widths.
const arksaveHysteresis = 0.20

// References between regional entities come back by stable id: inside a
// chunk at once, across chunks whichever chunk loads first, and a handle
// to an unloaded entity resolves once it is loaded again.
func TestRegionalReferences(t *testing.T) {
	mem := vfs.NewMem()
	g := regionalGame(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 1})
	g.Settle(t)
	a := g.SpawnCrate(5, 5, 100, 1)                    // chunk (0,0)
	b := g.SpawnCrate(6, 6, 101, 2)                    // chunk (0,0)
	d := g.SpawnCrate(gametest.ChunkSize+5, 5, 103, 4) // chunk (1,0)
	ecs.NewMap1[gametest.Crate](g.W).Get(a).Link = b   // same chunk
	ecs.NewMap1[gametest.Crate](g.W).Get(d).Link = a   // across chunks
	ecs.NewMap1[gametest.Tether](g.W).Add(d, &gametest.Tether{To: b, Len: 2})
	g.Tick()
	must(t, g.Pers.SaveNow().Err)
	g.Pers.Close()

	h := regionalGame(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
	h.MoveFocus(t, 0, 0)
	_, ents := h.Crates(t)
	crates := ecs.NewMap1[gametest.Crate](h.W)
	expect(t, crates.Get(ents[100]).Link == ents[101], "a's link: %v, want %v", crates.Get(ents[100]).Link, ents[101])
	expect(t, crates.Get(ents[103]).Link == ents[100], "d's link across chunks: %v, want %v", crates.Get(ents[103]).Link, ents[100])
	expect(t, ecs.NewMap1[gametest.Tether](h.W).Get(ents[103]).To == ents[101], "d's tether (raw memory) across chunks")

	// Chunk (0,0) unloads, (1,0) stays: d's link is a dead handle that
	// resolves again once (0,0) is back.
	h.MoveFocus(t, 3*gametest.ChunkSize+5, 5) // loads 2..4, keeps 1..5
	_, ents2 := h.Crates(t)
	dd := ents2[103]
	expect(t, h.W.Alive(dd), "crate d unloaded")
	link := crates.Get(dd).Link
	expect(t, !h.W.Alive(link), "the link to an unloaded crate is alive")
	_, ok := h.Pers.Resolve(link)
	expect(t, !ok, "Resolve found an unloaded crate")
	must(t, h.Pers.SaveNow().Err) // d's chunk is saved with the handle: it must stay the stable id
	h.MoveFocus(t, 0, 0)
	_, ents3 := h.Crates(t)
	now, ok := h.Pers.Resolve(link)
	expect(t, ok && now == ents3[100], "Resolve: %v %v, want %v", now, ok, ents3[100])
	got, ok := h.Pers.Entity(100)
	expect(t, ok && got == ents3[100], "Entity(100): %v", got)
	h.Pers.Close()

	k := regionalGame(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
	k.MoveFocus(t, 0, 0)
	_, ents4 := k.Crates(t)
	expect(t, ecs.NewMap1[gametest.Crate](k.W).Get(ents4[103]).Link == ents4[100], "a link saved while its target was unloaded")
}

// A persistable pixel body is a regional entity: the plugin gives it
// Regional with its id, and its other components travel with it.
func TestPixelBodyIsRegional(t *testing.T) {
	mem := vfs.NewMem()
	g := regionalGame(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 1})
	g.Settle(t)
	ids := ecs.GetResource[components.BodyIDs](g.W)
	body := components.PixelBody{ID: ids.New(), X: 40, Y: 45, Width: 2, Height: 1,
		Pixels: []components.Pixel{1, 2}, Shape: []bool{true, true}}
	e := g.Bodies.NewEntity(&body, &components.Persistable{})
	ecs.NewMap1[gametest.Crate](g.W).Add(e, &gametest.Crate{HP: 12, Tags: []string{"body"}})
	g.Tick()
	reg := ecs.NewMap1[components.Regional](g.W)
	expect(t, reg.HasAll(e) && reg.Get(e).ID == uint64(body.ID), "no Regional with the body's id")
	g.MoveFocus(t, 20*gametest.ChunkSize, 0)
	expect(t, gametest.CountBodies(g) == 0, "body not unloaded")
	g.MoveFocus(t, 0, 0)
	q := ecs.NewFilter3[components.PixelBody, gametest.Crate, components.Persistable](g.W).Query()
	n := 0
	for q.Next() {
		b, c, _ := q.Get()
		n++
		expect(t, b.ID == body.ID && c.HP == 12 && b.Pixels[1] == 2, "body back as %+v %+v", *b, *c)
	}
	expect(t, n == 1, "%d bodies with their crate component", n)
}

// Regional entities are never duplicated nor lost when their chunk unloads
// while a save runs: the unloaded set waits in memory, the running save
// commits what it took, the next save the rest.
func TestRegionalUnloadDuringSave(t *testing.T) {
	mem := vfs.NewMem()
	gate := make(chan struct{})
	blocked := make(chan struct{}, 1)
	var block atomic.Bool
	inj := vfs.InjectorFunc(func(op vfs.Op, name string) error {
		if op == vfs.OpSync && block.CompareAndSwap(true, false) {
			blocked <- struct{}{}
			<-gate
		}
		return nil
	})
	g := regionalGame(t, gametest.Opts{FS: vfs.Faulty(mem, inj), Dir: "/save", Radius: 1})
	g.Settle(t)
	for i := range 6 {
		g.SpawnCrate(float64(i*9-20), 5, uint64(200+i), i)
	}
	g.Tick()
	must(t, g.Pers.SaveNow().Err)
	want, _ := g.Crates(t)

	// Change every crate, start a save that blocks in the writer, unload
	// the crates' chunks and change nothing more.
	for _, e := range func() []ecs.Entity { _, m := g.Crates(t); return values(m) }() {
		ecs.NewMap1[gametest.Crate](g.W).Get(e).HP += 100
		must(t, g.Pers.MarkDirty(e))
	}
	for id, v := range want {
		v.HP += 100
		want[id] = v
	}
	block.Store(true)
	h := g.Pers.Save()
	g.Tick() // takes the snapshot, hands it to the writer
	<-blocked
	q := ecs.NewFilter1[components.Focus](g.W).Query()
	for q.Next() {
		q.Get().X = 20 * gametest.ChunkSize
	}
	for range 5 {
		g.Tick() // the crates' chunks unload while the save is stuck
	}
	got, _ := g.Crates(t)
	expect(t, len(got) == 0, "crates still loaded")
	close(gate)
	must(t, g.WaitSave(t, h).Err)
	must(t, g.Pers.SaveNow().Err)
	g.Pers.Close()

	k := regionalGame(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
	k.MoveFocus(t, 0, 0)
	got, _ = k.Crates(t)
	expect(t, fmt.Sprint(got) == fmt.Sprint(want), "after the save that ran while they unloaded: %v, want %v", got, want)
}

func values[K comparable, V any](m map[K]V) []V {
	out := make([]V, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// Seed checklist: an empty world (no chunk touched, no entity, no player)
// saves and loads back as empty.
func TestEmptyWorldRoundTrip(t *testing.T) {
	mem := vfs.NewMem()
	w := ecs.NewWorld()
	gametest.RegisterRegional(w)
	systems, err := arksave.Plugin{Dir: "/save", FS: mem, ChunkSize: gametest.ChunkSize, TileSize: 8, Positions: []arksave.RegionalPosition{gametest.PositionOf}}.Install(w)
	must(t, err)
	for _, s := range systems {
		s.Update(w)
	}
	p := ecs.GetResource[arksave.Persistence](w)
	res := p.SaveNow()
	must(t, res.Err)
	expect(t, res.ChunksWritten == 0 && res.RegionsWritten == 0 && res.PlayersWritten == 0, "%v", res)
	must(t, p.Close())

	v := ecs.NewWorld()
	gametest.RegisterRegional(v)
	_, err = arksave.Plugin{Dir: "/save", FS: mem, Load: true, ChunkSize: gametest.ChunkSize, TileSize: 8}.Install(v)
	must(t, err)
	q := v.Unsafe().DumpEntities()
	expect(t, len(q.Alive) == 0, "%d entities after loading an empty world", len(q.Alive))
	lp := ecs.GetResource[arksave.Persistence](v)
	expect(t, lp.Generation() == 1 && len(lp.Players()) == 0, "generation %d, players %v", lp.Generation(), lp.Players())
	must(t, lp.Close())
}

// Seed checklist: a corrupted record is detected and surfaced: a damaged
// entity block is reported (its entities are dropped, the chunk loads), a
// damaged player record fails LoadPlayer with ErrCorrupt. (Without the
// copies for backups or mirrors: with them, the load falls back to them.)
func TestCorruptedRecordsSurface(t *testing.T) {
	mem := vfs.NewMem()
	g := regionalGame(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 1, Autosave: gametest.NoBackupCopy()})
	g.Settle(t)
	g.SpawnCrate(40, 45, 300, 1)
	ecs.NewMap2[components.Player, gametest.Crate](g.W).NewEntity(&components.Player{ID: "ada"}, &gametest.Crate{HP: 9})
	g.Tick()
	must(t, g.Pers.SaveNow().Err)
	g.Pers.Close()
	gametest.DropMirrors(t, mem) // nor mirrors

	d, err := savedir.OpenDirReadOnly(mem, "/save")
	must(t, err)
	m := d.Manifest()
	// Flip a byte inside the entity section of chunk (1,1) and inside the players data.
	blk := storedBlock(t, mem, "/save", chunkstore.Pos{X: 1, Y: 1})
	flipInside(t, mem, blk.Sections[0][len(blk.Sections[0])/2:][:16], gametest.StoreFiles(t, mem)...)
	dataPath, _ := d.File(m.Players.Data)
	raw, err := vfs.ReadFile(mem, dataPath)
	must(t, err)
	gametest.FlipAt(t, mem, dataPath, int64(len(raw)-10))

	h := regionalGame(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
	h.MoveFocus(t, 0, 0)
	got, _ := h.Crates(t)
	expect(t, len(got) == 0, "crates from a damaged block: %v", got)
	probs := h.Pers.Problems()
	found := false
	for _, p := range probs {
		if p.Pos != nil && p.Pos.X == 1 && p.Pos.Y == 1 && errors.Is(p.Err, arksave.ErrCorrupt) {
			found = true
		}
	}
	expect(t, found, "the damaged block is not reported: %v", probs)
	_, err = h.Pers.LoadPlayer("ada")
	expect(t, errors.Is(err, arksave.ErrCorrupt), "damaged player record: %v", err)
}

// flipInside flips a byte of the file at path where it holds probe.
// flipInside flips the first byte of probe in the first of paths that holds it.
func flipInside(t testing.TB, fsys vfs.FS, probe []byte, paths ...string) {
	t.Helper()
	for _, path := range paths {
		raw, err := vfs.ReadFile(fsys, path)
		must(t, err)
		if i := bytes.Index(raw, probe); i >= 0 {
			gametest.FlipAt(t, fsys, path, int64(i))
			return
		}
	}
	t.Fatalf("probe not found in %v", paths)
}

// Changes that mark nothing dirty reach the store anyway: an autosave
// writes them once a checkpoint finds them (within Checkpoint of game
// time), a save the game asks for at once; MarkDirty makes the next
// autosave write them.
func TestRegionalChangesReachTheSave(t *testing.T) {
	every := &autosave.Config{Interval: arksave.DefaultTickDuration, Enabled: true, MaxBackups: 1}
	g := regionalGame(t, gametest.Opts{FS: vfs.NewMem(), Dir: "/save", Radius: 1, Autosave: every})
	g.Settle(t)
	e := g.SpawnCrate(10, 10, 700, 1)
	g.Tick()
	must(t, g.Pers.SaveNow().Err)
	autosaves := func(ticks int) (written, first int) {
		first = -1
		for i := range ticks {
			g.Tick()
			res := g.Pers.Wait()
			expect(t, res != nil, "no autosave")
			must(t, res.Err)
			if res.RegionsWritten > 0 && first < 0 {
				first = i
			}
			written += res.RegionsWritten
		}
		return written, first
	}
	// Within the margin: a checkpoint writes it, within 10 s (600 ticks).
	ecs.NewMap1[gametest.Position](g.W).Get(e).X = 12
	written, first := autosaves(620)
	expect(t, written == 1 && first >= 0 && first < 601, "a move inside the chunk: %d writes, first at tick %d", written, first)
	// A changed component, then a save the game asks for: written at once.
	ecs.NewMap1[gametest.Crate](g.W).Get(e).HP = 2
	res := g.Pers.SaveNow()
	must(t, res.Err)
	expect(t, res.RegionsWritten == 1, "SaveNow wrote %d regions for a changed crate", res.RegionsWritten)
	res = g.Pers.SaveNow()
	must(t, res.Err)
	expect(t, res.RegionsWritten == 0, "SaveNow wrote %d regions with nothing changed", res.RegionsWritten)
	// MarkDirty: the next autosave.
	ecs.NewMap1[gametest.Crate](g.W).Get(e).HP = 3
	must(t, g.Pers.MarkDirty(e))
	written, first = autosaves(1)
	expect(t, written == 1 && first == 0, "after MarkDirty: %d writes", written)
}

// A copy of a regional entity (ecs.World.CopyEntity copies its stable id)
// gets an id of its own, and the problem is reported; both are saved.
func TestRegionalCopyGetsItsOwnID(t *testing.T) {
	mem := vfs.NewMem()
	g := regionalGame(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 1})
	g.Settle(t)
	e := g.SpawnCrate(10, 10, 800, 1)
	g.Tick()
	g.W.CopyEntity(e)
	g.Tick()
	got, _ := g.Crates(t)
	expect(t, len(got) == 2, "crates after a copy: %v", got)
	probs := g.Pers.Problems()
	expect(t, len(probs) == 1 && strings.Contains(probs[0].Err.Error(), "800"), "problems: %v", probs)
	must(t, g.Pers.SaveNow().Err)
	g.Pers.Close()
	h := regionalGame(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
	h.MoveFocus(t, 0, 0)
	back, _ := h.Crates(t)
	expect(t, len(back) == 2, "crates after a load: %v", back)
}
