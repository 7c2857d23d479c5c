package arksave_test

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/vfs"
)

// callSafely runs a call that must not panic and returns its error (a panic
// becomes one).
func callSafely(call func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panicked: %v", p)
		}
	}()
	return call()
}

// resultErr is the error of a Result, which must be there.
func resultErr(r *autosave.Result) error {
	if r == nil {
		return errors.New("no result")
	}
	return r.Err
}

// handleErr is the error of a handle, which must be complete at once.
func handleErr(h *arksave.SaveHandle) error {
	if !h.IsComplete() {
		return errors.New("the handle is not complete")
	}
	<-h.Done()
	if h.Wait().Err != h.Err() || h.Result() == nil {
		return errors.New("Wait, Err and Result disagree")
	}
	return h.Err()
}

// After Close, every method of Persistence that can fail returns an error
// matching ErrClosed at once, naming the call: a Save or SaveAs handle is
// complete already, SaveNow, Wait and WaitIdle return a Result holding it;
// a save asked for before Close that had not started completes with it;
// the queries answer without panicking, the systems do nothing, and the
// directory is free for the next game.
func TestEveryCallAfterClose(t *testing.T) {
	mem := vfs.NewMem()
	g := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 1})
	g.Settle(t)
	must(t, g.WaitSave(t, g.Pers.Save()).Err)
	gen := g.Pers.Generation()
	pending := g.Pers.Save() // asked for, never started: no tick runs before Close
	p := g.Pers
	must(t, p.Close())
	expect(t, pending.IsComplete() && errors.Is(pending.Err(), arksave.ErrClosed), "a save asked for before Close: complete %v, %v", pending.IsComplete(), pending.Err())

	pos := components.ChunkPos{}
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"Save", func() error { return handleErr(p.Save()) }},
		{"SaveAs", func() error { return handleErr(p.SaveAs("/elsewhere")) }},
		{"SaveNow", func() error { return resultErr(p.SaveNow()) }},
		{"Wait", func() error { return resultErr(p.Wait()) }},
		{"WaitIdle", func() error { return resultErr(p.WaitIdle()) }},
		{"Load", func() error { return p.Load("/save") }},
		{"SavePlayer", func() error { _, err := p.SavePlayer("ada"); return err }},
		{"LoadPlayer", func() error { _, err := p.LoadPlayer("ada"); return err }},
		{"DeletePlayer", func() error { _, err := p.DeletePlayer("bob"); return err }},
		{"MarkDirty", func() error { return p.MarkDirty(g.Player) }},
		{"SetChunkData", func() error { return p.SetChunkData(pos, []byte("x")) }},
		{"ChunkData", func() error { _, err := p.ChunkData(pos); return err }},
		{"SetChunkValue", func() error { return arksave.SetChunkValue(p, pos, 1) }},
		{"ChunkValue", func() error { _, _, err := arksave.ChunkValue[int](p, pos); return err }},
		{"Close", p.Close},
	} {
		err := callSafely(c.call)
		expect(t, errors.Is(err, arksave.ErrClosed) && errors.Is(err, autosave.ErrClosed), "%s after Close: %v", c.name, err)
		expect(t, containsAll(err.Error(), "Close", "/save"), "%s after Close: the error does not say what and where: %v", c.name, err)
	}

	must(t, callSafely(func() error {
		expect(t, p.Dir() == "/save" && p.Generation() == gen, "Dir %q, Generation %d after Close", p.Dir(), p.Generation())
		_ = p.Seed()
		_ = p.DirtyChunks()
		_ = p.Problems()
		_ = p.Players()
		_, _ = p.Resolve(g.Player)
		_, _ = p.Entity(1)
		_ = p.RegionStats()
		for range 3 {
			g.Tick()
		}
		return nil
	}))
	expect(t, p.Generation() == gen, "a save committed after Close: generation %d, was %d", p.Generation(), gen)
	next := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Load: true})
	expect(t, next.Pers.Generation() == gen, "the next game loads generation %d, want %d", next.Pers.Generation(), gen)
}

// A second Install into a world whose plugin is installed is ErrInstalled,
// before anything is opened or locked: the other directory stays as it
// was and free, the first installation keeps its directory and saves on.
// Once its Persistence is closed, the world takes the plugin again.
func TestSecondInstallIntoOneWorld(t *testing.T) {
	mem := vfs.NewMem()
	g := gametest.New(t, gametest.Opts{FS: mem, Dir: "/a", Radius: 1})
	g.Settle(t)
	must(t, g.WaitSave(t, g.Pers.Save()).Err)
	for _, dir := range []string{"/b", "/a"} {
		_, err := arksave.Plugin{Dir: dir, FS: mem, ChunkSize: gametest.ChunkSize, TileSize: 8, Generator: gametest.Gen{}, LoadOrCreate: true}.Install(g.W)
		expect(t, errors.Is(err, arksave.ErrInstalled) && containsAll(err.Error(), "/a", "Persistence.Close"), "a second Install into %s: %v", dir, err)
	}
	_, err := mem.Stat("/b")
	expect(t, errors.Is(err, fs.ErrNotExist), "the second Install created its directory: %v", err)
	expect(t, ecs.GetResource[arksave.Persistence](g.W) == g.Pers && g.Pers.Dir() == "/a", "the world's Persistence changed")

	res := g.WaitSave(t, g.Pers.Save())
	must(t, res.Err)
	expect(t, res.Dir == "/a", "the first installation saved to %s", res.Dir)
	must(t, g.Pers.Close())

	b, err := savedir.OpenDir(mem, "/b")
	must(t, err)
	must(t, b.Close())
	systems, err := arksave.Plugin{Dir: "/a", FS: mem, ChunkSize: gametest.ChunkSize, TileSize: 8, Generator: gametest.Gen{}, Load: true}.Install(g.W)
	must(t, err)
	expect(t, len(systems) > 0 && g.Pers.Generation() == res.Generation, "installed again: generation %d, want %d", g.Pers.Generation(), res.Generation)
	must(t, g.Pers.Close())
}

// containsAll reports whether s contains every part.
func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
