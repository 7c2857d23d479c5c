package arksave_test

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/vfs"
)

func TestOnlyDirtyChunksAreWritten(t *testing.T) {
	mem := vfs.NewMem()
	g := newGame(t, gameOpts{fs: mem, dir: "/save", radius: 2})
	g.settle(t)
	res := g.waitSave(t, g.pers.Save())
	must(t, res.Err)
	expect(t, res.ChunksWritten == 0, "a save of an untouched world wrote %d chunks", res.ChunksWritten)
	base := res.BytesWritten

	g.paint(t, 0, 0, 1, 1, components.MakePixel(9, 1, 0, 0))
	g.paint(t, 1, 1, 2, 2, components.MakePixel(9, 1, 0, 0))
	g.paint(t, 1, 1, 2, 2, components.MakePixel(9, 1, 0, 0)) // no change: no new version
	res = g.waitSave(t, g.pers.Save())
	must(t, res.Err)
	expect(t, res.ChunksWritten == 2, "wrote %d chunks, want the 2 dirty ones", res.ChunksWritten)
	expect(t, res.BytesWritten < base+2*int64(testChunk*testChunk*4), "2 small deltas cost %d bytes (empty save %d)", res.BytesWritten, base)
	_, st := g.chunk(t, 0, 0)
	expect(t, st.Status == components.Persisted, "committed chunk is %v", st.Status)

	res = g.waitSave(t, g.pers.Save())
	must(t, res.Err)
	expect(t, res.ChunksWritten == 0, "persisted chunks written again: %d", res.ChunksWritten)
}

func TestChangeDuringSaveStaysDirty(t *testing.T) {
	g := newGame(t, gameOpts{fs: vfs.NewMem(), dir: "/save", radius: 1})
	g.settle(t)
	g.paint(t, 0, 0, 1, 1, components.MakePixel(9, 1, 0, 0))
	h := g.pers.Save()
	g.tick() // the snapshot is taken
	expect(t, g.state().InProgress, "save not started")
	g.paint(t, 0, 0, 1, 1, components.MakePixel(10, 1, 0, 0)) // changed after the snapshot
	res := g.waitSave(t, h)
	must(t, res.Err)
	_, st := g.chunk(t, 0, 0)
	expect(t, st.IsDirty(), "a chunk changed during its save must stay dirty, is %v", st.Status)
	res = g.waitSave(t, g.pers.Save())
	must(t, res.Err)
	expect(t, res.ChunksWritten == 1, "the next save must write it: %d", res.ChunksWritten)
}

func TestRequestsDuringSaveAreCoalesced(t *testing.T) {
	g := newGame(t, gameOpts{fs: vfs.NewMem(), dir: "/save", radius: 1})
	g.settle(t)
	first := g.pers.Save()
	g.tick()
	expect(t, g.state().InProgress, "save not started")
	a, b, c := g.pers.Save(), g.pers.Save(), g.pers.Save()
	g.waitSave(t, first)
	saves := g.state().Saves
	g.waitSave(t, c)
	expect(t, a.IsComplete() && b.IsComplete(), "coalesced handles not complete")
	expect(t, a.Result() == c.Result(), "requests made during one save must share the next")
	expect(t, g.state().Saves == saves+1, "three requests during a save made %d saves", g.state().Saves-saves)
}

func TestAutosaveTimer(t *testing.T) {
	conf := &arksave.AutosaveConfig{Interval: arksave.Ticks(10), Enabled: true, MaxBackups: 0}
	g := newGame(t, gameOpts{fs: vfs.NewMem(), dir: "/save", radius: 0, autosave: conf})
	for i := 0; i < 9; i++ {
		g.tick()
	}
	expect(t, g.state().Saves == 0 && !g.state().InProgress, "saved before the interval")
	g.tick()
	g.tick()
	expect(t, g.state().InProgress || g.state().Saves == 1, "no save at the interval")
	ecs.GetResource[arksave.AutosaveConfig](g.w).Enabled = false
	// Let the running save finish (on wall time: the writer is a goroutine).
	for deadline := time.Now().Add(10 * time.Second); g.state().InProgress; {
		expect(t, time.Now().Before(deadline), "the autosave did not finish")
		g.tick()
		time.Sleep(100 * time.Microsecond)
	}
	n := g.state().Saves
	for i := 0; i < 50; i++ {
		g.tick()
	}
	expect(t, g.state().Saves == n, "autosave ran while disabled")
}

// ENOSPC or EIO at any call of a save leaves the previous generation
// loadable, the game running, and a later save succeeds.
func TestFaultsAtEveryCall(t *testing.T) {
	for _, fault := range []error{syscall.ENOSPC, syscall.EIO} {
		for n := 0; ; n++ {
			mem := vfs.NewMem()
			cd := &vfs.Countdown{N: 1 << 30, Err: fault}
			fsys := vfs.Faulty(mem, cd)
			// Without the store copy that runs between saves for the backups (its
			// faults: autosave's TestBackupCopyFails), the nth call is one of the save's.
			g := newGame(t, gameOpts{fs: fsys, dir: "/save", radius: 1, autosave: noBackupCopy()})
			g.settle(t)
			g.paint(t, 0, 0, 3, 3, components.MakePixel(9, 0, 0, 0))
			must(t, g.waitSave(t, g.pers.Save()).Err)
			digests := map[uint64]uint64{1: g.chunkDigest(t, 0, 0)}

			g.paint(t, 0, 0, 4, 4, components.MakePixel(9, 0, 0, 0))
			digests[2] = g.chunkDigest(t, 0, 0)
			cd.N = cd.Calls() + n // fail the nth call of the next save
			res := g.waitSave(t, g.pers.Save())
			if !cd.Fired() {
				must(t, res.Err)
				g.pers.Close()
				break
			}
			// Whatever happened, the directory loads a committed generation,
			// exactly: the one before the failed save, or (when the failure
			// came after the commit point) the new one. (Another process
			// would see the files as they are: a copy of them, while g holds
			// the directory.)
			h := newGame(t, gameOpts{fs: mem.Crash(1, nil), dir: "/save", load: true, radius: 1})
			h.settle(t)
			gen := h.pers.Generation()
			if res.Err == nil {
				expect(t, gen == 2, "%v at call %d: save reported success, directory at generation %d", fault, n, gen)
			} else {
				expect(t, errors.Is(res.Err, fault), "%v at call %d: error %v does not wrap the fault", fault, n, res.Err)
				expect(t, gen == 1 || gen == 2, "%v at call %d: generation %d", fault, n, gen)
			}
			expect(t, h.chunkDigest(t, 0, 0) == digests[gen], "%v at call %d: generation %d loads other pixels", fault, n, gen)
			h.pers.Close()

			// The fault is gone: the next save commits the change.
			res = g.waitSave(t, g.pers.Save())
			must(t, res.Err)
			g.pers.Close()
			k := newGame(t, gameOpts{fs: mem, dir: "/save", load: true, radius: 1})
			k.settle(t)
			expect(t, k.chunkDigest(t, 0, 0) == digests[2], "%v at call %d: the retry did not save the change", fault, n)
			k.pers.Close()
		}
	}
}

func TestStreamingKeepsChangesAndBodies(t *testing.T) {
	g := newGame(t, gameOpts{fs: vfs.NewMem(), dir: "/save", radius: 1})
	g.settle(t)
	g.paint(t, 1, 1, 5, 6, components.MakePixel(12, 3, 0, 0))
	want := g.chunkDigest(t, 1, 1)
	ids := ecs.GetResource[components.BodyIDs](g.w)
	body := components.PixelBody{ID: ids.New(), X: 40, Y: 45, Rotation: 0.5, VX: 1, VY: -2, AngularVelocity: 0.25,
		Width: 3, Height: 2, Pixels: []components.Pixel{1, 2, 3, 4, 5, 6}, Shape: []bool{true, false, true, true, true, false}}
	g.bodies.NewEntity(&body, &components.Persistable{})

	// Move far away: chunk (1,1) and the body unload, then a save runs.
	focus := ecs.NewFilter1[components.Focus](g.w)
	move := func(x, y float64) {
		q := focus.Query()
		for q.Next() {
			f := q.Get()
			f.X, f.Y = x, y
		}
		g.settle(t)
	}
	move(20*testChunk, 0)
	_, ok := ecs.GetResource[components.ChunkIndex](g.w).Get(components.ChunkPos{X: 1, Y: 1})
	expect(t, !ok, "chunk 1,1 still loaded")
	expect(t, countBodies(g) == 0, "body not unloaded")
	// Coming back before any save: restored from memory.
	move(0, 0)
	expect(t, g.chunkDigest(t, 1, 1) == want, "unsaved change lost on reload")
	expect(t, countBodies(g) == 1, "body not restored from memory")

	// Away, save, back: restored from the store.
	move(20*testChunk, 0)
	must(t, g.waitSave(t, g.pers.Save()).Err)
	move(0, 0)
	expect(t, g.chunkDigest(t, 1, 1) == want, "saved change lost on reload")
	q := ecs.NewFilter1[components.PixelBody](g.w).Query()
	n := 0
	for q.Next() {
		b := q.Get()
		n++
		expect(t, b.ID == body.ID && b.X == body.X && b.Y == body.Y && b.Rotation == body.Rotation &&
			b.VX == body.VX && b.VY == body.VY && b.AngularVelocity == body.AngularVelocity, "body restored as %+v", *b)
		expect(t, len(b.Pixels) == 6 && b.Pixels[5] == 6 && b.Shape[1] == false && b.Shape[4], "body pixels %v shape %v", b.Pixels, b.Shape)
	}
	expect(t, n == 1, "%d bodies after reload", n)
}

func countBodies(g *game) int {
	q := ecs.NewFilter1[components.PixelBody](g.w).Query()
	defer q.Close()
	return q.Count()
}

func TestLoadRestoresWorldExactly(t *testing.T) {
	mem := vfs.NewMem()
	g := newGame(t, gameOpts{fs: mem, dir: "/save", radius: 1})
	g.settle(t)
	posMap := ecs.NewMap1[Position](g.w)
	posMap.Get(g.player).X = 12.5
	extra := ecs.NewMap1[Player](g.w).NewEntity(&Player{Name: "bob"})
	ecs.GetResource[Score](g.w).Points = 42
	ids := ecs.GetResource[components.BodyIDs](g.w)
	ids.New()
	g.paint(t, 0, 0, 1, 2, components.MakePixel(9, 9, 9, 0))
	want := g.chunkDigest(t, 0, 0)
	must(t, g.waitSave(t, g.pers.Save()).Err)
	session := ids.Session

	// Change everything, then load the save back.
	posMap.Get(g.player).X = -1
	g.w.RemoveEntity(extra)
	ecs.GetResource[Score](g.w).Points = 0
	g.paint(t, 0, 0, 1, 2, components.MakePixel(1, 1, 1, 0))
	must(t, g.pers.Load("/save"))
	g.settle(t)
	expect(t, g.w.Alive(g.player) && posMap.Get(g.player).X == 12.5, "player not restored exactly")
	expect(t, g.w.Alive(extra) && ecs.NewMap1[Player](g.w).Get(extra).Name == "bob", "removed entity not restored with its id")
	expect(t, ecs.GetResource[Score](g.w).Points == 42, "resource not restored")
	expect(t, g.chunkDigest(t, 0, 0) == want, "chunk not restored")
	expect(t, ids.Session == session+1 && ids.New().Session() == session+1, "body ids must continue in a new session: %d", ids.Session)
}

func TestLoadOfDamagedSaveLeavesWorld(t *testing.T) {
	mem := vfs.NewMem()
	g := newGame(t, gameOpts{fs: mem, dir: "/save", radius: 0})
	must(t, g.waitSave(t, g.pers.Save()).Err)
	ecs.GetResource[Score](g.w).Points = 5
	f, err := mem.OpenRW("/save/world-1.pecs")
	must(t, err)
	_, err = f.WriteAt([]byte{0xFF}, 70)
	must(t, err)
	err = g.pers.Load("/save")
	expect(t, err != nil, "loading a damaged world succeeded")
	expect(t, ecs.GetResource[Score](g.w).Points == 5 && g.w.Alive(g.player), "failed load changed the world")
	must(t, g.waitSave(t, g.pers.Save()).Err) // and the game goes on saving
}

func TestSaveToContinuesThere(t *testing.T) {
	mem := vfs.NewMem()
	g := newGame(t, gameOpts{fs: mem, dir: "/a", radius: 1})
	g.settle(t)
	g.paint(t, 0, 0, 1, 1, components.MakePixel(9, 0, 0, 0))
	must(t, g.waitSave(t, g.pers.Save()).Err)
	g.paint(t, 1, 0, 1, 1, components.MakePixel(9, 0, 0, 0))
	res := g.waitSave(t, g.pers.SaveAs("/b"))
	must(t, res.Err)
	expect(t, g.pers.Dir() == "/b", "continues in %s", g.pers.Dir())
	a := newGame(t, gameOpts{fs: mem, dir: "/a", load: true, radius: 1})
	a.settle(t)
	_, st := a.chunk(t, 1, 0)
	expect(t, st.Status == components.Clean && a.pers.Generation() == 1, "/a changed by Save As")
	d0, d1 := g.chunkDigest(t, 0, 0), g.chunkDigest(t, 1, 0)
	must(t, g.pers.Close()) // the game holds /b now
	b := newGame(t, gameOpts{fs: mem, dir: "/b", load: true, radius: 1})
	b.settle(t)
	expect(t, b.chunkDigest(t, 0, 0) == d0 && b.chunkDigest(t, 1, 0) == d1, "/b lacks the world")
}

func TestInstallRefusesToOverwriteSilently(t *testing.T) {
	mem := vfs.NewMem()
	g := newGame(t, gameOpts{fs: mem, dir: "/save"})
	must(t, g.waitSave(t, g.pers.Save()).Err)
	g.pers.Close()
	_, err := arksave.Plugin{Dir: "/save", FS: mem, ChunkSize: testChunk, TileSize: 8}.Install(ecs.NewWorld())
	expect(t, errors.Is(err, arksave.ErrSaveExists), "install over a save: %v", err)
}

func TestPauseDuringSave(t *testing.T) {
	conf := &arksave.AutosaveConfig{Interval: time.Hour, Enabled: false, PauseDuringSave: true}
	g := newGame(t, gameOpts{fs: vfs.NewMem(), dir: "/save", radius: 0, autosave: conf})
	sim := ecs.GetResource[arksave.SimulationState](g.w)
	h := g.pers.Save()
	g.tick()
	expect(t, g.state().InProgress && sim.Paused, "simulation not paused while saving (in progress %v)", g.state().InProgress)
	g.waitSave(t, h)
	expect(t, !sim.Paused, "simulation still paused after the save")

	conf2 := ecs.GetResource[arksave.AutosaveConfig](g.w)
	conf2.PauseDuringSave = false
	h = g.pers.Save()
	g.tick()
	expect(t, !sim.Paused, "paused although PauseDuringSave is off")
	g.waitSave(t, h)
}
