package arksave_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/vfs"
)

// Components of the test game's regional entities.
type (
	// Crate is not plain-old-data: it is saved as a msgpack value.
	Crate struct {
		HP   int
		Tags []string
		Link ecs.Entity
	}
	// Tether is plain-old-data holding an entity.
	Tether struct {
		To  ecs.Entity
		Len float32
	}
)

func registerRegional(w *ecs.World) {
	ecs.ComponentID[Crate](w)
	ecs.ComponentID[Tether](w)
}

func regionalGame(t testing.TB, o gameOpts) *game {
	t.Helper()
	prev := o.prepare
	o.prepare = func(w *ecs.World) {
		registerRegional(w)
		if prev != nil {
			prev(w)
		}
	}
	return newGame(t, o)
}

// spawnCrate makes a regional crate at (x, y); id 0 lets the plugin choose.
func (g *game) spawnCrate(x, y float64, id uint64, hp int) ecs.Entity {
	return ecs.NewMap3[Position, Crate, components.Regional](g.w).NewEntity(
		&Position{x, y}, &Crate{HP: hp, Tags: []string{"wood", fmt.Sprint(hp)}}, &components.Regional{ID: id})
}

// crateView is what a crate's components hold, comparable across loads.
type crateView struct {
	X, Y float64
	HP   int
	Tags string
}

// crates returns every loaded crate by stable id, with its entity.
func (g *game) crates(t testing.TB) (map[uint64]crateView, map[uint64]ecs.Entity) {
	t.Helper()
	views := map[uint64]crateView{}
	ents := map[uint64]ecs.Entity{}
	q := ecs.NewFilter3[components.Regional, Position, Crate](g.w).Query()
	for q.Next() {
		reg, p, c := q.Get()
		if _, dup := views[reg.ID]; dup {
			q.Close()
			t.Fatalf("stable id %d twice in the world", reg.ID)
		}
		views[reg.ID] = crateView{p.X, p.Y, c.HP, fmt.Sprint(c.Tags)}
		ents[reg.ID] = q.Entity()
	}
	return views, ents
}

// moveFocus moves the test game's focus and waits for the chunks around it.
func (g *game) moveFocus(t testing.TB, x, y float64) {
	t.Helper()
	q := ecs.NewFilter1[components.Focus](g.w).Query()
	for q.Next() {
		f := q.Get()
		f.X, f.Y = x, y
	}
	g.settle(t)
}

// storedBlock reads what the committed chunk store of dir keeps with pos.
func storedBlock(t testing.TB, fsys vfs.FS, dir string, pos chunkstore.Pos) chunkstore.EntityBlock {
	t.Helper()
	s, _ := openCommittedStore(t, fsys, dir)
	defer s.Close()
	blk, err := s.Entities(pos)
	must(t, err)
	return blk
}

// openCommittedStore opens the committed generation's chunk store in dir
// read-only, with the test game's generator, and returns it with the
// directory's manifest.
func openCommittedStore(t testing.TB, fsys vfs.FS, dir string) (*chunkstore.Store, *autosave.Manifest) {
	t.Helper()
	d, err := autosave.OpenDirReadOnly(fsys, dir)
	must(t, err)
	m := d.Manifest()
	expect(t, m != nil, "no manifest in %s", dir)
	p, err := d.File(m.Chunks.Name)
	must(t, err)
	s, err := chunkstore.Open(p, &chunkstore.Options{FS: fsys, ReadOnly: true, Root: m.Chunks.Root, Generator: gen{}})
	must(t, err)
	return s, m
}

// worldTypes lists the component types the committed world file of dir holds.
func worldTypes(t testing.TB, fsys vfs.FS, dir string) []string {
	t.Helper()
	d, err := autosave.OpenDirReadOnly(fsys, dir)
	must(t, err)
	data, err := d.ReadWorld(nil)
	must(t, err)
	info, err := archetype.ReadInfo(bytes.NewReader(data))
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
	g := regionalGame(t, gameOpts{fs: mem, dir: "/save", radius: 1})
	g.settle(t)
	e := g.spawnCrate(40, 45, 0, 7) // chunk (1,1)
	g.spawnCrate(-5, 3, 0, 3)       // chunk (-1,0)
	g.tick()
	want, _ := g.crates(t)
	expect(t, len(want) == 2, "%d crates", len(want))
	for id := range want {
		expect(t, id != 0, "the plugin gives a stable id")
	}
	st := g.pers.RegionStats()
	expect(t, st.Entities == 2 && st.Regions == 2 && st.Spawned == 2, "%+v", st)

	res := g.pers.SaveNow()
	must(t, res.Err)
	expect(t, res.RegionsWritten == 2, "%d regions written, want 2", res.RegionsWritten)
	expect(t, !hasType(worldTypes(t, mem, "/save"), ".Crate"), "the world file holds crates")
	expect(t, len(storedBlock(t, mem, "/save", chunkstore.Pos{X: 1, Y: 1}).Sections) == 1, "no entity section with chunk 1,1")

	// Away: the crates unload with their chunks.
	g.moveFocus(t, 20*testChunk, 0)
	got, _ := g.crates(t)
	expect(t, len(got) == 0 && !g.w.Alive(e), "crates still loaded: %v", got)
	expect(t, g.pers.RegionStats().Unloaded == 2, "%+v", g.pers.RegionStats())
	// Back: from the store (nothing changed since the save).
	g.moveFocus(t, 0, 0)
	got, _ = g.crates(t)
	expect(t, fmt.Sprint(got) == fmt.Sprint(want), "crates after a reload: %v, want %v", got, want)

	// Change one, unload it before any save: it comes back from memory.
	_, ents := g.crates(t)
	var id77 uint64
	for id, ce := range ents {
		if want[id].HP == 7 {
			ecs.NewMap1[Crate](g.w).Get(ce).HP = 77
			id77 = id
		}
	}
	must(t, g.pers.MarkDirty(ents[id77]))
	v := want[id77]
	v.HP = 77
	want[id77] = v
	g.moveFocus(t, 20*testChunk, 0)
	g.moveFocus(t, 0, 0)
	got, _ = g.crates(t)
	expect(t, fmt.Sprint(got) == fmt.Sprint(want), "crates from memory: %v, want %v", got, want)

	// Away, save, load in a new game: from the store.
	g.moveFocus(t, 20*testChunk, 0)
	must(t, g.pers.SaveNow().Err)
	g.pers.Close()
	h := regionalGame(t, gameOpts{fs: mem, dir: "/save", load: true, radius: 1})
	h.moveFocus(t, 0, 0)
	got, _ = h.crates(t)
	expect(t, fmt.Sprint(got) == fmt.Sprint(want), "crates after a load: %v, want %v", got, want)
}

// Seed checklist: entity movement across a chunk border updates the right
// chunks: the one it left and the one it entered, and no other.
func TestRegionalMovementUpdatesTheRightChunks(t *testing.T) {
	mem := vfs.NewMem()
	g := regionalGame(t, gameOpts{fs: mem, dir: "/save", radius: 1})
	g.settle(t)
	e := g.spawnCrate(10, 10, 5, 1) // chunk (0,0)
	g.spawnCrate(-20, 10, 6, 1)     // chunk (-1,0): stays
	g.tick()
	must(t, g.pers.SaveNow().Err)
	expect(t, len(storedBlock(t, mem, "/save", chunkstore.Pos{X: 0, Y: 0}).Sections) == 1, "crate 5 not with chunk 0,0")

	ecs.NewMap1[Position](g.w).Get(e).X = testChunk + 10 // chunk (1,0), past the margin
	g.tick()
	expect(t, g.pers.RegionStats().Crossings == 1, "%+v", g.pers.RegionStats())
	res := g.pers.SaveNow()
	must(t, res.Err)
	expect(t, res.RegionsWritten == 2, "%d regions written, want 2 (left and entered)", res.RegionsWritten)
	expect(t, len(storedBlock(t, mem, "/save", chunkstore.Pos{X: 0, Y: 0}).Sections) == 0, "chunk 0,0 still keeps crate 5")
	entered := storedBlock(t, mem, "/save", chunkstore.Pos{X: 1, Y: 0})
	expect(t, len(entered.Sections) == 1, "chunk 1,0 keeps %d sections", len(entered.Sections))
	info, err := archetype.ReadInfo(bytes.NewReader(entered.Sections[0]))
	must(t, err)
	expect(t, info.Header.Entities == 1, "chunk 1,0 keeps %d entities", info.Header.Entities)
	expect(t, len(storedBlock(t, mem, "/save", chunkstore.Pos{X: -1, Y: 0}).Sections) == 1, "chunk -1,0 lost crate 6")

	// Into a chunk that is not loaded: the crate unloads into it.
	ecs.NewMap1[Position](g.w).Get(e).X = 5*testChunk + 3
	g.tick()
	got, _ := g.crates(t)
	_, loaded := got[5]
	expect(t, !loaded, "crate 5 stayed loaded in an unloaded chunk")
	res = g.pers.SaveNow()
	must(t, res.Err)
	expect(t, len(storedBlock(t, mem, "/save", chunkstore.Pos{X: 5, Y: 0}).Sections) == 1, "chunk 5,0 does not keep crate 5")
	expect(t, len(storedBlock(t, mem, "/save", chunkstore.Pos{X: 1, Y: 0}).Sections) == 0, "chunk 1,0 still keeps crate 5")
	g.moveFocus(t, 5*testChunk, 0)
	got, _ = g.crates(t)
	expect(t, got[5].X == 5*testChunk+3, "crate 5 in chunk 5,0: %v", got)
}

// An entity oscillating around a border for 1,000 ticks marks chunks dirty
// only on real crossings (past the margin) and checkpoints: within the
// margin, never more than a checkpoint per 10 s of game time; past it,
// exactly once per crossing. Autosaves every tick write exactly that.
func TestRegionalHysteresis(t *testing.T) {
	for _, amp := range []float64{0.15, 0.4} { // chunk widths around the border x = testChunk
		t.Run(fmt.Sprint(amp), func(t *testing.T) {
			every := &arksave.AutosaveConfig{Interval: arksave.Ticks(1), Enabled: true, MaxBackups: 1}
			g := regionalGame(t, gameOpts{fs: vfs.NewMem(), dir: "/save", radius: 1, autosave: every})
			g.settle(t)
			e := g.spawnCrate(testChunk-1, 10, 9, 1)
			g.tick()
			must(t, g.pers.SaveNow().Err)
			base := g.pers.RegionStats()
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
				x := testChunk + side*amp*testChunk + float64(i%3)*0.01
				ecs.NewMap1[Position](g.w).Get(e).X = x
				g.tick()
				margin := arksaveHysteresis * testChunk
				if x > float64(home+1)*testChunk+margin {
					home++
					crossings++
				} else if x < float64(home)*testChunk-margin {
					home--
					crossings++
				}
				res := g.pers.Wait() // the autosave this tick started
				expect(t, res != nil, "tick %d started no autosave", i)
				must(t, res.Err)
				written += res.RegionsWritten
			}
			st := g.pers.RegionStats()
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
	g := regionalGame(t, gameOpts{fs: mem, dir: "/save", radius: 1})
	g.settle(t)
	a := g.spawnCrate(5, 5, 100, 1)           // chunk (0,0)
	b := g.spawnCrate(6, 6, 101, 2)           // chunk (0,0)
	d := g.spawnCrate(testChunk+5, 5, 103, 4) // chunk (1,0)
	ecs.NewMap1[Crate](g.w).Get(a).Link = b   // same chunk
	ecs.NewMap1[Crate](g.w).Get(d).Link = a   // across chunks
	ecs.NewMap1[Tether](g.w).Add(d, &Tether{To: b, Len: 2})
	g.tick()
	must(t, g.pers.SaveNow().Err)
	g.pers.Close()

	h := regionalGame(t, gameOpts{fs: mem, dir: "/save", load: true, radius: 1})
	h.moveFocus(t, 0, 0)
	_, ents := h.crates(t)
	crates := ecs.NewMap1[Crate](h.w)
	expect(t, crates.Get(ents[100]).Link == ents[101], "a's link: %v, want %v", crates.Get(ents[100]).Link, ents[101])
	expect(t, crates.Get(ents[103]).Link == ents[100], "d's link across chunks: %v, want %v", crates.Get(ents[103]).Link, ents[100])
	expect(t, ecs.NewMap1[Tether](h.w).Get(ents[103]).To == ents[101], "d's tether (raw memory) across chunks")

	// Chunk (0,0) unloads, (1,0) stays: d's link is a dead handle that
	// resolves again once (0,0) is back.
	h.moveFocus(t, 3*testChunk+5, 5) // loads 2..4, keeps 1..5
	_, ents2 := h.crates(t)
	dd := ents2[103]
	expect(t, h.w.Alive(dd), "crate d unloaded")
	link := crates.Get(dd).Link
	expect(t, !h.w.Alive(link), "the link to an unloaded crate is alive")
	_, ok := h.pers.Resolve(link)
	expect(t, !ok, "Resolve found an unloaded crate")
	must(t, h.pers.SaveNow().Err) // d's chunk is saved with the handle: it must stay the stable id
	h.moveFocus(t, 0, 0)
	_, ents3 := h.crates(t)
	now, ok := h.pers.Resolve(link)
	expect(t, ok && now == ents3[100], "Resolve: %v %v, want %v", now, ok, ents3[100])
	got, ok := h.pers.Entity(100)
	expect(t, ok && got == ents3[100], "Entity(100): %v", got)
	h.pers.Close()

	k := regionalGame(t, gameOpts{fs: mem, dir: "/save", load: true, radius: 1})
	k.moveFocus(t, 0, 0)
	_, ents4 := k.crates(t)
	expect(t, ecs.NewMap1[Crate](k.w).Get(ents4[103]).Link == ents4[100], "a link saved while its target was unloaded")
}

// A persistable pixel body is a regional entity: the plugin gives it
// Regional with its id, and its other components travel with it.
func TestPixelBodyIsRegional(t *testing.T) {
	mem := vfs.NewMem()
	g := regionalGame(t, gameOpts{fs: mem, dir: "/save", radius: 1})
	g.settle(t)
	ids := ecs.GetResource[components.BodyIDs](g.w)
	body := components.PixelBody{ID: ids.New(), X: 40, Y: 45, Width: 2, Height: 1,
		Pixels: []components.Pixel{1, 2}, Shape: []bool{true, true}}
	e := g.bodies.NewEntity(&body, &components.Persistable{})
	ecs.NewMap1[Crate](g.w).Add(e, &Crate{HP: 12, Tags: []string{"body"}})
	g.tick()
	reg := ecs.NewMap1[components.Regional](g.w)
	expect(t, reg.HasAll(e) && reg.Get(e).ID == uint64(body.ID), "no Regional with the body's id")
	g.moveFocus(t, 20*testChunk, 0)
	expect(t, countBodies(g) == 0, "body not unloaded")
	g.moveFocus(t, 0, 0)
	q := ecs.NewFilter3[components.PixelBody, Crate, components.Persistable](g.w).Query()
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
	g := regionalGame(t, gameOpts{fs: vfs.Faulty(mem, inj), dir: "/save", radius: 1})
	g.settle(t)
	for i := range 6 {
		g.spawnCrate(float64(i*9-20), 5, uint64(200+i), i)
	}
	g.tick()
	must(t, g.pers.SaveNow().Err)
	want, _ := g.crates(t)

	// Change every crate, start a save that blocks in the writer, unload
	// the crates' chunks and change nothing more.
	for _, e := range func() []ecs.Entity { _, m := g.crates(t); return values(m) }() {
		ecs.NewMap1[Crate](g.w).Get(e).HP += 100
		must(t, g.pers.MarkDirty(e))
	}
	for id, v := range want {
		v.HP += 100
		want[id] = v
	}
	block.Store(true)
	h := g.pers.Save()
	g.tick() // takes the snapshot, hands it to the writer
	<-blocked
	q := ecs.NewFilter1[components.Focus](g.w).Query()
	for q.Next() {
		q.Get().X = 20 * testChunk
	}
	for range 5 {
		g.tick() // the crates' chunks unload while the save is stuck
	}
	got, _ := g.crates(t)
	expect(t, len(got) == 0, "crates still loaded")
	close(gate)
	must(t, g.waitSave(t, h).Err)
	must(t, g.pers.SaveNow().Err)
	g.pers.Close()

	k := regionalGame(t, gameOpts{fs: mem, dir: "/save", load: true, radius: 1})
	k.moveFocus(t, 0, 0)
	got, _ = k.crates(t)
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
	registerRegional(w)
	systems, err := arksave.Plugin{Dir: "/save", FS: mem, ChunkSize: testChunk, TileSize: 8, Positions: []arksave.RegionalPosition{position}}.Install(w)
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
	registerRegional(v)
	_, err = arksave.Plugin{Dir: "/save", FS: mem, Load: true, ChunkSize: testChunk, TileSize: 8}.Install(v)
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
// copies for backups: with them, the load falls back to the copies.)
func TestCorruptedRecordsSurface(t *testing.T) {
	mem := vfs.NewMem()
	g := regionalGame(t, gameOpts{fs: mem, dir: "/save", radius: 1, autosave: noBackupCopy()})
	g.settle(t)
	g.spawnCrate(40, 45, 300, 1)
	ecs.NewMap2[components.Player, Crate](g.w).NewEntity(&components.Player{ID: "ada"}, &Crate{HP: 9})
	g.tick()
	must(t, g.pers.SaveNow().Err)
	g.pers.Close()

	d, err := autosave.OpenDirReadOnly(mem, "/save")
	must(t, err)
	m := d.Manifest()
	// Flip a byte inside the entity section of chunk (1,1) and inside the players data.
	blk := storedBlock(t, mem, "/save", chunkstore.Pos{X: 1, Y: 1})
	flipInside(t, mem, blk.Sections[0][len(blk.Sections[0])/2:][:16], storeFiles(t, mem)...)
	dataPath, _ := d.File(m.Players.Data)
	raw, err := vfs.ReadFile(mem, dataPath)
	must(t, err)
	flipAt(t, mem, dataPath, int64(len(raw)-10))

	h := regionalGame(t, gameOpts{fs: mem, dir: "/save", load: true, radius: 1})
	h.moveFocus(t, 0, 0)
	got, _ := h.crates(t)
	expect(t, len(got) == 0, "crates from a damaged block: %v", got)
	probs := h.pers.Problems()
	found := false
	for _, p := range probs {
		if p.Pos != nil && p.Pos.X == 1 && p.Pos.Y == 1 && errors.Is(p.Err, arksave.ErrCorrupt) {
			found = true
		}
	}
	expect(t, found, "the damaged block is not reported: %v", probs)
	_, err = h.pers.LoadPlayer("ada")
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
			flipAt(t, fsys, path, int64(i))
			return
		}
	}
	t.Fatalf("probe not found in %v", paths)
}

func flipAt(t testing.TB, fsys vfs.FS, path string, off int64) {
	t.Helper()
	f, err := fsys.OpenRW(path)
	must(t, err)
	b := make([]byte, 1)
	_, err = f.ReadAt(b, off)
	must(t, err)
	b[0] ^= 0xff
	_, err = f.WriteAt(b, off)
	must(t, err)
	must(t, f.Sync())
	must(t, f.Close())
}

// Changes that mark nothing dirty reach the store anyway: an autosave
// writes them once a checkpoint finds them (within Checkpoint of game
// time), a save the game asks for at once; MarkDirty makes the next
// autosave write them.
func TestRegionalChangesReachTheSave(t *testing.T) {
	every := &arksave.AutosaveConfig{Interval: arksave.Ticks(1), Enabled: true, MaxBackups: 1}
	g := regionalGame(t, gameOpts{fs: vfs.NewMem(), dir: "/save", radius: 1, autosave: every})
	g.settle(t)
	e := g.spawnCrate(10, 10, 700, 1)
	g.tick()
	must(t, g.pers.SaveNow().Err)
	autosaves := func(ticks int) (written, first int) {
		first = -1
		for i := range ticks {
			g.tick()
			res := g.pers.Wait()
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
	ecs.NewMap1[Position](g.w).Get(e).X = 12
	written, first := autosaves(620)
	expect(t, written == 1 && first >= 0 && first < 601, "a move inside the chunk: %d writes, first at tick %d", written, first)
	// A changed component, then a save the game asks for: written at once.
	ecs.NewMap1[Crate](g.w).Get(e).HP = 2
	res := g.pers.SaveNow()
	must(t, res.Err)
	expect(t, res.RegionsWritten == 1, "SaveNow wrote %d regions for a changed crate", res.RegionsWritten)
	res = g.pers.SaveNow()
	must(t, res.Err)
	expect(t, res.RegionsWritten == 0, "SaveNow wrote %d regions with nothing changed", res.RegionsWritten)
	// MarkDirty: the next autosave.
	ecs.NewMap1[Crate](g.w).Get(e).HP = 3
	must(t, g.pers.MarkDirty(e))
	written, first = autosaves(1)
	expect(t, written == 1 && first == 0, "after MarkDirty: %d writes", written)
}

// A copy of a regional entity (ecs.World.CopyEntity copies its stable id)
// gets an id of its own, and the problem is reported; both are saved.
func TestRegionalCopyGetsItsOwnID(t *testing.T) {
	mem := vfs.NewMem()
	g := regionalGame(t, gameOpts{fs: mem, dir: "/save", radius: 1})
	g.settle(t)
	e := g.spawnCrate(10, 10, 800, 1)
	g.tick()
	g.w.CopyEntity(e)
	g.tick()
	got, _ := g.crates(t)
	expect(t, len(got) == 2, "crates after a copy: %v", got)
	probs := g.pers.Problems()
	expect(t, len(probs) == 1 && strings.Contains(probs[0].Err.Error(), "800"), "problems: %v", probs)
	must(t, g.pers.SaveNow().Err)
	g.pers.Close()
	h := regionalGame(t, gameOpts{fs: mem, dir: "/save", load: true, radius: 1})
	h.moveFocus(t, 0, 0)
	back, _ := h.crates(t)
	expect(t, len(back) == 2, "crates after a load: %v", back)
}
