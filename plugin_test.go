package arksave_test

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/testkit"
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/vfs"
)

var expect, must = testkit.Expect, testkit.Must

func TestOnlyDirtyChunksAreWritten(t *testing.T) {
	mem := vfs.NewMem()
	g := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 2})
	g.Settle(t)
	res := g.WaitSave(t, g.Pers.Save())
	must(t, res.Err)
	expect(t, res.ChunksWritten == 0, "a save of an untouched world wrote %d chunks", res.ChunksWritten)
	base := res.BytesWritten

	g.Paint(t, 0, 0, 1, 1, components.MakePixel(9, 1, 0, 0))
	g.Paint(t, 1, 1, 2, 2, components.MakePixel(9, 1, 0, 0))
	g.Paint(t, 1, 1, 2, 2, components.MakePixel(9, 1, 0, 0)) // no change: no new version
	res = g.WaitSave(t, g.Pers.Save())
	must(t, res.Err)
	expect(t, res.ChunksWritten == 2, "wrote %d chunks, want the 2 dirty ones", res.ChunksWritten)
	expect(t, res.BytesWritten < base+2*int64(gametest.ChunkSize*gametest.ChunkSize*4), "2 small deltas cost %d bytes (empty save %d)", res.BytesWritten, base)
	_, st := g.Chunk(t, 0, 0)
	expect(t, st.Status == components.Persisted, "committed chunk is %v", st.Status)

	res = g.WaitSave(t, g.Pers.Save())
	must(t, res.Err)
	expect(t, res.ChunksWritten == 0, "persisted chunks written again: %d", res.ChunksWritten)
}

func TestChangeDuringSaveStaysDirty(t *testing.T) {
	g := gametest.New(t, gametest.Opts{FS: vfs.NewMem(), Dir: "/save", Radius: 1})
	g.Settle(t)
	g.Paint(t, 0, 0, 1, 1, components.MakePixel(9, 1, 0, 0))
	h := g.Pers.Save()
	g.Tick() // the snapshot is taken
	expect(t, g.State().InProgress, "save not started")
	g.Paint(t, 0, 0, 1, 1, components.MakePixel(10, 1, 0, 0)) // changed after the snapshot
	res := g.WaitSave(t, h)
	must(t, res.Err)
	_, st := g.Chunk(t, 0, 0)
	expect(t, st.IsDirty(), "a chunk changed during its save must stay dirty, is %v", st.Status)
	res = g.WaitSave(t, g.Pers.Save())
	must(t, res.Err)
	expect(t, res.ChunksWritten == 1, "the next save must write it: %d", res.ChunksWritten)
}

func TestRequestsDuringSaveAreCoalesced(t *testing.T) {
	g := gametest.New(t, gametest.Opts{FS: vfs.NewMem(), Dir: "/save", Radius: 1})
	g.Settle(t)
	first := g.Pers.Save()
	g.Tick()
	expect(t, g.State().InProgress, "save not started")
	a, b, c := g.Pers.Save(), g.Pers.Save(), g.Pers.Save()
	g.WaitSave(t, first)
	saves := g.State().Saves
	g.WaitSave(t, c)
	expect(t, a.IsComplete() && b.IsComplete(), "coalesced handles not complete")
	expect(t, a.Result() == c.Result(), "requests made during one save must share the next")
	expect(t, g.State().Saves == saves+1, "three requests during a save made %d saves", g.State().Saves-saves)
}

func TestAutosaveTimer(t *testing.T) {
	conf := &autosave.Config{Interval: 10 * arksave.DefaultTickDuration, Enabled: true, MaxBackups: 0}
	g := gametest.New(t, gametest.Opts{FS: vfs.NewMem(), Dir: "/save", Radius: 0, Autosave: conf})
	for i := 0; i < 9; i++ {
		g.Tick()
	}
	expect(t, g.State().Saves == 0 && !g.State().InProgress, "saved before the interval")
	g.Tick()
	g.Tick()
	expect(t, g.State().InProgress || g.State().Saves == 1, "no save at the interval")
	ecs.GetResource[autosave.Config](g.W).Enabled = false
	// Let the running save finish (on wall time: the writer is a goroutine).
	for deadline := time.Now().Add(10 * time.Second); g.State().InProgress; {
		expect(t, time.Now().Before(deadline), "the autosave did not finish")
		g.Tick()
		time.Sleep(100 * time.Microsecond)
	}
	n := g.State().Saves
	for i := 0; i < 50; i++ {
		g.Tick()
	}
	expect(t, g.State().Saves == n, "autosave ran while disabled")
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
			// faults: internal/savedir's TestBackupCopyFails), the nth call is one of the save's.
			g := gametest.New(t, gametest.Opts{FS: fsys, Dir: "/save", Radius: 1, Autosave: gametest.NoBackupCopy()})
			g.Settle(t)
			g.Paint(t, 0, 0, 3, 3, components.MakePixel(9, 0, 0, 0))
			must(t, g.WaitSave(t, g.Pers.Save()).Err)
			digests := map[uint64]uint64{1: g.ChunkDigest(t, 0, 0)}

			g.Paint(t, 0, 0, 4, 4, components.MakePixel(9, 0, 0, 0))
			digests[2] = g.ChunkDigest(t, 0, 0)
			g.Pers.WaitIdle()     // the writer's work after the first save is done
			cd.N = cd.Calls() + n // fail the nth call of the next save
			res := g.WaitSave(t, g.Pers.Save())
			g.Pers.WaitIdle() // and after this one (the save's description): the count is settled
			if !cd.Fired() {
				must(t, res.Err)
				g.Pers.Close()
				break
			}
			// Whatever happened, the directory loads a committed generation,
			// exactly: the one before the failed save, or (when the failure
			// came after the commit point) the new one. (Another process
			// would see the files as they are: a copy of them, while g holds
			// the directory.)
			h := gametest.New(t, gametest.Opts{FS: mem.Crash(1, nil), Dir: "/save", Load: true, Radius: 1})
			h.Settle(t)
			gen := h.Pers.Generation()
			if res.Err == nil {
				expect(t, gen == 2, "%v at call %d: save reported success, directory at generation %d", fault, n, gen)
			} else {
				expect(t, errors.Is(res.Err, fault), "%v at call %d: error %v does not wrap the fault", fault, n, res.Err)
				expect(t, gen == 1 || gen == 2, "%v at call %d: generation %d", fault, n, gen)
			}
			expect(t, h.ChunkDigest(t, 0, 0) == digests[gen], "%v at call %d: generation %d loads other pixels", fault, n, gen)
			h.Pers.Close()

			// The fault is gone: the next save commits the change.
			res = g.WaitSave(t, g.Pers.Save())
			must(t, res.Err)
			g.Pers.Close()
			k := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
			k.Settle(t)
			expect(t, k.ChunkDigest(t, 0, 0) == digests[2], "%v at call %d: the retry did not save the change", fault, n)
			k.Pers.Close()
		}
	}
}

func TestStreamingKeepsChangesAndBodies(t *testing.T) {
	g := gametest.New(t, gametest.Opts{FS: vfs.NewMem(), Dir: "/save", Radius: 1})
	g.Settle(t)
	g.Paint(t, 1, 1, 5, 6, components.MakePixel(12, 3, 0, 0))
	want := g.ChunkDigest(t, 1, 1)
	ids := ecs.GetResource[components.BodyIDs](g.W)
	body := components.PixelBody{ID: ids.New(), X: 40, Y: 45, Rotation: 0.5, VX: 1, VY: -2, AngularVelocity: 0.25,
		Width: 3, Height: 2, Pixels: []components.Pixel{1, 2, 3, 4, 5, 6}, Shape: []bool{true, false, true, true, true, false}}
	g.Bodies.NewEntity(&body, &components.Persistable{})

	// Move far away: chunk (1,1) and the body unload, then a save runs.
	focus := ecs.NewFilter1[components.Focus](g.W)
	move := func(x, y float64) {
		q := focus.Query()
		for q.Next() {
			f := q.Get()
			f.X, f.Y = x, y
		}
		g.Settle(t)
	}
	move(20*gametest.ChunkSize, 0)
	_, ok := ecs.GetResource[components.ChunkIndex](g.W).Get(components.ChunkPos{X: 1, Y: 1})
	expect(t, !ok, "chunk 1,1 still loaded")
	expect(t, gametest.CountBodies(g) == 0, "body not unloaded")
	// Coming back before any save: restored from memory.
	move(0, 0)
	expect(t, g.ChunkDigest(t, 1, 1) == want, "unsaved change lost on reload")
	expect(t, gametest.CountBodies(g) == 1, "body not restored from memory")

	// Away, save, back: restored from the store.
	move(20*gametest.ChunkSize, 0)
	must(t, g.WaitSave(t, g.Pers.Save()).Err)
	move(0, 0)
	expect(t, g.ChunkDigest(t, 1, 1) == want, "saved change lost on reload")
	q := ecs.NewFilter1[components.PixelBody](g.W).Query()
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

func TestLoadRestoresWorldExactly(t *testing.T) {
	mem := vfs.NewMem()
	g := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 1})
	g.Settle(t)
	posMap := ecs.NewMap1[gametest.Position](g.W)
	posMap.Get(g.Player).X = 12.5
	extra := ecs.NewMap1[gametest.Player](g.W).NewEntity(&gametest.Player{Name: "bob"})
	ecs.GetResource[gametest.Score](g.W).Points = 42
	ids := ecs.GetResource[components.BodyIDs](g.W)
	ids.New()
	g.Paint(t, 0, 0, 1, 2, components.MakePixel(9, 9, 9, 0))
	want := g.ChunkDigest(t, 0, 0)
	must(t, g.WaitSave(t, g.Pers.Save()).Err)
	session := ids.Session

	// Change everything, then load the save back.
	posMap.Get(g.Player).X = -1
	g.W.RemoveEntity(extra)
	ecs.GetResource[gametest.Score](g.W).Points = 0
	g.Paint(t, 0, 0, 1, 2, components.MakePixel(1, 1, 1, 0))
	must(t, g.Pers.Load("/save"))
	g.Settle(t)
	expect(t, g.W.Alive(g.Player) && posMap.Get(g.Player).X == 12.5, "player not restored exactly")
	expect(t, g.W.Alive(extra) && ecs.NewMap1[gametest.Player](g.W).Get(extra).Name == "bob", "removed entity not restored with its id")
	expect(t, ecs.GetResource[gametest.Score](g.W).Points == 42, "resource not restored")
	expect(t, g.ChunkDigest(t, 0, 0) == want, "chunk not restored")
	expect(t, ids.Session == session+1 && uint32(ids.New()>>32) == session+1, "body ids must continue in a new session: %d", ids.Session)
}

func TestLoadOfDamagedSaveLeavesWorld(t *testing.T) {
	mem := vfs.NewMem()
	g := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 0})
	must(t, g.WaitSave(t, g.Pers.Save()).Err)
	ecs.GetResource[gametest.Score](g.W).Points = 5
	f, err := mem.OpenRW("/save/world-1.pecs")
	must(t, err)
	_, err = f.WriteAt([]byte{0xFF}, 70)
	must(t, err)
	err = g.Pers.Load("/save")
	expect(t, err != nil, "loading a damaged world succeeded")
	expect(t, ecs.GetResource[gametest.Score](g.W).Points == 5 && g.W.Alive(g.Player), "failed load changed the world")
	must(t, g.WaitSave(t, g.Pers.Save()).Err) // and the game goes on saving
}

func TestSaveToContinuesThere(t *testing.T) {
	mem := vfs.NewMem()
	g := gametest.New(t, gametest.Opts{FS: mem, Dir: "/a", Radius: 1})
	g.Settle(t)
	g.Paint(t, 0, 0, 1, 1, components.MakePixel(9, 0, 0, 0))
	must(t, g.WaitSave(t, g.Pers.Save()).Err)
	g.Paint(t, 1, 0, 1, 1, components.MakePixel(9, 0, 0, 0))
	res := g.WaitSave(t, g.Pers.SaveAs("/b"))
	must(t, res.Err)
	expect(t, g.Pers.Dir() == "/b", "continues in %s", g.Pers.Dir())
	a := gametest.New(t, gametest.Opts{FS: mem, Dir: "/a", Load: true, Radius: 1})
	a.Settle(t)
	_, st := a.Chunk(t, 1, 0)
	expect(t, st.Status == components.Clean && a.Pers.Generation() == 1, "/a changed by Save As")
	d0, d1 := g.ChunkDigest(t, 0, 0), g.ChunkDigest(t, 1, 0)
	must(t, g.Pers.Close()) // the game holds /b now
	b := gametest.New(t, gametest.Opts{FS: mem, Dir: "/b", Load: true, Radius: 1})
	b.Settle(t)
	expect(t, b.ChunkDigest(t, 0, 0) == d0 && b.ChunkDigest(t, 1, 0) == d1, "/b lacks the world")
}

func TestInstallRefusesToOverwriteSilently(t *testing.T) {
	mem := vfs.NewMem()
	g := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save"})
	must(t, g.WaitSave(t, g.Pers.Save()).Err)
	g.Pers.Close()
	_, err := arksave.Plugin{Dir: "/save", FS: mem, ChunkSize: gametest.ChunkSize, TileSize: 8}.Install(ecs.NewWorld())
	expect(t, errors.Is(err, arksave.ErrSaveExists), "install over a save: %v", err)
}

func TestPauseDuringSave(t *testing.T) {
	conf := &autosave.Config{Interval: time.Hour, Enabled: false, PauseDuringSave: true}
	g := gametest.New(t, gametest.Opts{FS: vfs.NewMem(), Dir: "/save", Radius: 0, Autosave: conf})
	sim := ecs.GetResource[autosave.SimulationState](g.W)
	h := g.Pers.Save()
	g.Tick()
	expect(t, g.State().InProgress && sim.Paused, "simulation not paused while saving (in progress %v)", g.State().InProgress)
	g.WaitSave(t, h)
	expect(t, !sim.Paused, "simulation still paused after the save")

	conf2 := ecs.GetResource[autosave.Config](g.W)
	conf2.PauseDuringSave = false
	h = g.Pers.Save()
	g.Tick()
	expect(t, !sim.Paused, "paused although PauseDuringSave is off")
	g.WaitSave(t, h)
}
