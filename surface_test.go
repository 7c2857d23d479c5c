package arksave_test

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/systems"
	"github.com/arksave/arksave/vfs"
)

// SaveHandle.Wait on the game loop finishes the save itself: it returns
// without a single tick, for a save not started yet and for one in flight.
func TestSaveHandleWaitOnTheGameLoop(t *testing.T) {
	g := gametest.New(t, gametest.Opts{FS: vfs.NewMem(), Dir: "/save", Radius: 1})
	g.Settle(t)

	h := g.Pers.Save() // not started: no tick ran since
	expect(t, !h.IsComplete(), "complete before any tick")
	must(t, h.Wait().Err)
	expect(t, h.IsComplete() && h.Result().Generation == 1 && g.Pers.Generation() == 1, "after Wait: %+v", h.Result())
	select {
	case <-h.Done():
	default:
		t.Fatal("Done not closed after Wait")
	}

	// In flight: one tick starts it, Wait finishes it.
	h = g.Pers.Save()
	g.Tick()
	must(t, h.Wait().Err)
	expect(t, g.Pers.Generation() == 2, "generation %d", g.Pers.Generation())

	// A second Wait, and Err, on a finished handle return at once.
	must(t, h.Wait().Err)
	must(t, h.Err())
}

// Another goroutine waits on Done while the game loop ticks.
func TestSaveHandleDoneFromAnotherGoroutine(t *testing.T) {
	g := gametest.New(t, gametest.Opts{FS: vfs.NewMem(), Dir: "/save", Radius: 1})
	g.Settle(t)
	h := g.Pers.Save()
	waited := make(chan error)
	go func() {
		<-h.Done()
		waited <- h.Err()
	}()
	for {
		g.Tick()
		select {
		case err := <-waited:
			must(t, err)
			expect(t, g.Pers.Generation() == 1, "generation %d", g.Pers.Generation())
			return
		default: // the game loop ticks on while the other goroutine waits
		}
	}
}

// Finalize saves only with SaveOnFinalize.
func TestFinalizeSavesOnlyWhenAsked(t *testing.T) {
	for _, on := range []bool{false, true} {
		w := ecs.NewWorld()
		systemsOf, err := arksave.Plugin{Dir: "/save", FS: vfs.NewMem(), ChunkSize: 32, SaveOnFinalize: on}.Install(w)
		must(t, err)
		pers := ecs.GetResource[arksave.Persistence](w)
		for _, s := range systemsOf {
			s.Initialize(w)
		}
		for range 3 {
			for _, s := range systemsOf {
				s.Update(w)
			}
		}
		for _, s := range systemsOf {
			s.Finalize(w)
		}
		want := uint64(0)
		if on {
			want = 1
		}
		expect(t, pers.Generation() == want, "SaveOnFinalize %v: generation %d after Finalize", on, pers.Generation())
		must(t, pers.Close())
	}
}

// The systems find the plugin in the world they are given; without one
// they panic with a message that says what to do.
func TestSystemsNeedThePlugin(t *testing.T) {
	defer func() {
		p := recover()
		expect(t, p != nil && strings.Contains(p.(string), "Plugin.Install"), "panic %v", p)
	}()
	(&systems.SaveSystem{}).Update(ecs.NewWorld())
}

// One corruption marker: arksave.ErrCorrupt matches the damage every layer
// reports, and each layer's own sentinel and detail stay in the chain.
func TestErrCorruptMatchesEveryLayer(t *testing.T) {
	// A damaged PECS file.
	var buf bytes.Buffer
	must(t, archetype.Encode(&buf, ecs.NewWorld()))
	data := buf.Bytes()
	data[len(data)/2] ^= 0xff
	err := archetype.Decode(bytes.NewReader(data), ecs.NewWorld())
	expect(t, errors.Is(err, arksave.ErrCorrupt) && errors.Is(err, archetype.ErrCorrupt), "archetype: %v", err)
	expect(t, !errors.Is(err, chunkstore.ErrCorrupt) && !errors.Is(err, autosave.ErrCorrupt), "archetype's damage matches another layer's: %v", err)

	// A damaged chunk record: the chunk store's checksum error, found while
	// loading, reported as a Problem of the store file naming the chunk.
	mem := vfs.NewMem()
	// No copy of the store for a backup: the damaged record is read.
	g := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 0, Autosave: gametest.NoBackupCopy()})
	g.Settle(t)
	for i := range gametest.ChunkSize {
		g.Paint(t, 0, 0, i, i, components.MakePixel(9, 9, 0, 0))
	}
	must(t, g.Pers.SaveNow().Err)
	must(t, g.Pers.Close())
	gametest.DropMirrors(t, mem) // nor mirrors
	s, err := chunkstore.Open("/save/chunks.pxsw", &chunkstore.Options{FS: mem, ReadOnly: true})
	must(t, err)
	var rec storetool.Handle
	storetool.Tool.Entries(s, func(e storetool.Entry) bool {
		if e.Pos == (chunkstore.Pos{}) && e.Type != chunkstore.Empty {
			rec = e.Handle
		}
		return true
	})
	must(t, s.Close())
	expect(t, rec.Length > 0, "chunk (0, 0) has no record")
	f, err := mem.OpenRW(storetool.Tool.DataFileName("/save/chunks.pxsw", rec.File()))
	must(t, err)
	b := []byte{0}
	off := rec.FileOffset() + int64(rec.Length) - 1
	_, err = f.ReadAt(b, off)
	must(t, err)
	b[0] ^= 0x55
	_, err = f.WriteAt(b, off)
	must(t, err)
	must(t, f.Close())
	g = gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 0})
	g.Settle(t)
	ps := g.Pers.Problems()
	expect(t, len(ps) == 1, "problems %v", ps)
	p := ps[0]
	expect(t, errors.Is(p.Err, arksave.ErrCorrupt) && errors.Is(p.Err, chunkstore.ErrChecksum) && !errors.Is(p.Err, archetype.ErrCorrupt),
		"chunk record: %v", p.Err)
	expect(t, p.File == "chunks.pxsw" && p.Section == chunkstore.SectionChunk && p.Pos != nil && *p.Pos == (chunkstore.Pos{}), "problem %+v", p)
	expect(t, strings.Count(p.String(), "chunkstore:") == 1, "the package is named more than once: %s", p)

	// A manifest that fails its checksum: the save directory's.
	fsys := vfs.NewMem()
	must(t, fsys.MkdirAll("/bad"))
	must(t, vfs.WriteFileAtomic(fsys, "/bad/manifest", []byte(`{"format":"arksave-save","version":2,"generation":1,"crc32c":1}`+"\n")))
	_, err = arksave.Plugin{Dir: "/bad", FS: fsys, Load: true}.Install(ecs.NewWorld())
	expect(t, errors.Is(err, arksave.ErrCorrupt) && errors.Is(err, autosave.ErrCorrupt) && !errors.Is(err, chunkstore.ErrCorrupt), "manifest: %v", err)

	// The chunk store's, with its checksum sentinel and its section.
	err = chunkstore.ErrChecksum
	expect(t, errors.Is(err, arksave.ErrCorrupt) && errors.Is(err, chunkstore.ErrCorrupt), "chunkstore.ErrChecksum: %v", err)
}

// Imports point one way: autosave (what a game sees of saving) knows
// nothing of the save directory, the snapshot or the world file codec, the
// codecs know nothing of the plugin, and components (the game's
// vocabulary) nothing of the storage layers.
func TestImportsPointOneWay(t *testing.T) {
	for pkg, banned := range map[string][]string{
		"./autosave":   {"/archetype", "/internal/savetool", "/systems", "/internal/savedir", "/snapshot", "/components"},
		"./archetype":  {"/chunkstore", "/autosave", "/components", "/systems", "/snapshot"},
		"./chunkstore": {"/archetype", "/autosave", "/components", "/systems", "/snapshot"},
		"./systems":    {"/internal/savetool"},
		"./components": {"/chunkstore", "/archetype", "/autosave", "/snapshot", "/systems", "/vfs", "/internal/persist"},
	} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		must(t, err)
		for _, dep := range strings.Fields(string(out)) {
			for _, b := range banned {
				if dep == "github.com/arksave/arksave"+b {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
