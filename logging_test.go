package arksave_test

import (
	"errors"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/vfs"
)

// num returns an integer attribute's value, signed or not; -1 for
// anything else.
func num(v slog.Value) int64 {
	switch v.Kind() {
	case slog.KindInt64:
		return v.Int64()
	case slog.KindUint64:
		return int64(v.Uint64())
	}
	return -1
}

// Tag is a plain component of the game's, saved in the world file.
type Tag struct{ N int }

// TestSaveStatsAndLog: a save's Result counts the entities of its world
// file, the chunks written and stored, the bodies and the bytes, and the
// plugin's Logger gets the save's start and outcome with them as
// attributes; a failed save is logged as an error, a load as Info, and a
// directory held by another writer as an error naming the holder.
func TestSaveStatsAndLog(t *testing.T) {
	mem := vfs.NewMem()
	var log gametest.Records
	var fail atomic.Bool
	faulty := vfs.Faulty(mem, vfs.InjectorFunc(func(op vfs.Op, _ string) error {
		if fail.Load() && op == vfs.OpSync {
			return errors.New("disk on fire")
		}
		return nil
	}))

	withLog := func(p *arksave.Plugin) { p.Logger = slog.New(&log) }
	g := gametest.New(t, gametest.Opts{FS: faulty, Dir: "/save", Radius: 1, Plugin: withLog,
		Prepare: func(w *ecs.World) { ecs.ComponentID[Tag](w) }})
	g.Settle(t)
	tags := ecs.NewMap1[Tag](g.W)

	res := g.WaitSave(t, g.Pers.Save())
	must(t, res.Err)
	base := res.WorldEntities // the player, and what else the game saves
	expect(t, base >= 1 && res.ChunksWritten == 0 && res.ChunksStored == 0, "first save: %v", res)

	for i := range 5 {
		tags.NewEntity(&Tag{N: i})
	}
	g.Paint(t, 0, 0, 1, 1, components.MakePixel(9, 0, 0, 0))
	g.Paint(t, 1, 0, 1, 1, components.MakePixel(9, 0, 0, 0))
	ids := ecs.GetResource[components.BodyIDs](g.W)
	g.Bodies.NewEntity(&components.PixelBody{ID: ids.New(), X: 3, Y: 3, Width: 1, Height: 1,
		Pixels: []components.Pixel{components.MakePixel(4, 0, 0, components.FlagPixelBody)}, Shape: []bool{true}}, &components.Persistable{})
	res = g.WaitSave(t, g.Pers.Save())
	must(t, res.Err)
	expect(t, res.WorldEntities == base+5, "world file entities %d, want %d", res.WorldEntities, base+5)
	expect(t, res.ChunksWritten == 2 && res.ChunksStored == 2 && res.BodiesWritten == 1, "second save: %v", res)
	expect(t, res.BytesWritten > res.WorldBytes && res.WorldBytes > 0, "bytes %d, world file %d", res.BytesWritten, res.WorldBytes)
	expect(t, g.State().LastResult == res, "autosave.State.LastResult is not the save's result")

	attrs, ok := log.Find(slog.LevelInfo, "save committed")
	expect(t, ok, "no \"save committed\" in %v", log.Messages())
	for key, want := range map[string]int64{"generation": int64(res.Generation), "chunks": 2, "chunks_stored": 2, "bodies": 1,
		"entities": int64(base + 5), "bytes": res.BytesWritten} {
		expect(t, num(attrs[key]) == want, "save committed: %s=%v, want %d", key, attrs[key], want)
	}
	expect(t, attrs["duration"].Kind() == slog.KindDuration && attrs["duration"].Duration() == res.Duration, "duration %v", attrs["duration"])
	attrs, ok = log.Find(slog.LevelInfo, "save started")
	expect(t, ok && num(attrs["generation"]) == int64(res.Generation) && num(attrs["chunks"]) == 2, "save started: %v", attrs)

	// A save that fails.
	fail.Store(true)
	g.Paint(t, 0, 0, 2, 2, components.MakePixel(9, 0, 0, 0))
	res = g.WaitSave(t, g.Pers.Save())
	expect(t, res.Err != nil, "the save did not fail")
	attrs, ok = log.Find(slog.LevelError, "save failed")
	expect(t, ok && attrs["err"].Any().(error) == res.Err && num(attrs["generation"]) == 2, "save failed: %v", attrs)
	fail.Store(false)

	// Another writer on the same directory.
	var second gametest.Records
	_, err := gametest.Install(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1,
		Plugin: func(p *arksave.Plugin) { p.Logger = slog.New(&second) }})
	expect(t, errors.Is(err, arksave.ErrLocked), "second Install: %v", err)
	attrs, ok = second.Find(slog.LevelError, "save directory locked")
	expect(t, ok && attrs["dir"].String() == "/save" && attrs["holder"].String() != "", "locked: %v (%v)", attrs, second.Messages())

	// A load.
	must(t, g.Pers.Close())
	var third gametest.Records
	h := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1,
		Prepare: func(w *ecs.World) { ecs.ComponentID[Tag](w) }, Plugin: func(p *arksave.Plugin) { p.Logger = slog.New(&third) }})
	attrs, ok = third.Find(slog.LevelInfo, "save loaded")
	expect(t, ok && num(attrs["generation"]) == 2 && num(attrs["entities"]) == int64(base+5), "save loaded: %v (%v)", attrs, third.Messages())
	_ = h
}

// TestFallbackIsLogged: a load that falls back to a backup says so at
// Warn, with the generations.
func TestFallbackIsLogged(t *testing.T) {
	mem, _ := gametest.ThreeGenerations(t)
	gametest.FlipAt(t, mem, "/save/world-3.pecs", 40)
	var log gametest.Records
	g := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1,
		Autosave: &autosave.Config{Interval: time.Hour, MaxBackups: 2},
		Plugin:   func(p *arksave.Plugin) { p.Logger = slog.New(&log) }})
	attrs, ok := log.Find(slog.LevelWarn, "damaged generation: loaded the newest intact backup")
	expect(t, ok && num(attrs["damaged"]) == 3 && num(attrs["loaded"]) == 2 && num(attrs["generation"]) == 4,
		"fallback: %v (%v)", attrs, log.Messages())
	msgs := log.Messages()
	expect(t, slices.Index(msgs, "save loaded") > slices.Index(msgs, "damaged generation: loaded the newest intact backup"), "order %v", msgs)
	expect(t, g.State().Fallback != nil, "no Fallback in autosave.State")
}
