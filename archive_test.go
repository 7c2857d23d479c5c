package arksave_test

import (
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/gametest"
)

// paintBands paints the loaded chunks in bands of a few materials that
// shift with k: all of them at the first save, then two thirds of them at
// each save, so that records die (the writer compacts between saves) and
// others live on (compaction moves them).
func paintBands(t *testing.T, g *gametest.Game, k int) {
	t.Helper()
	var loaded []components.ChunkPos
	q := ecs.NewFilter1[components.ChunkPos](g.W).With(ecs.C[components.Chunk]()).Query()
	for q.Next() {
		loaded = append(loaded, *q.Get())
	}
	for _, p := range loaded {
		if k > 1 && ((int(p.X)+int(p.Y)+k)%3 == 0 || p == components.ChunkPos{X: -1, Y: -1}) {
			continue // cold this time; (-1, -1) after the first save
		}
		for py := range gametest.ChunkSize {
			for px := range gametest.ChunkSize {
				m := uint8(10 + (py/3+px/8+k+int(p.X))%6)
				g.Paint(t, p.X, p.Y, px, py, components.MakePixel(m, uint8((px*7+py*3+k)%5), 0, 0))
			}
		}
	}
}

// zstdRecords is how many live records of dir's current generation are
// stored as zstd, as arksave check counts them; the check must be clean.
func zstdRecords(t *testing.T, dir string) int {
	t.Helper()
	r, err := savetool.Check(dir, savetool.Options{})
	must(t, err)
	expect(t, r.OK(), "check: %v", r.Problems)
	return r.Zstd
}

// A game with Plugin.ArchiveZstd saves; the writer compacts between saves
// and stores what it moves as zstd; every kept generation reads exactly
// (pixels, bodies, regional entities, the world, the player) as it did
// when it was committed, and loads exactly into the game.
func TestArchiveZstdKeepsEveryGeneration(t *testing.T) {
	h := &history{dir: t.TempDir(), rec: map[uint64]string{}, at: map[uint64]time.Time{}}
	h.conf = autosave.Config{Interval: time.Hour, MaxBackups: 100, BackupCopyEvery: -1}
	archive := func(p *arksave.Plugin) { p.ArchiveZstd, p.DataFileSize = true, 32<<10 }
	g := gametest.New(t, gametest.Opts{Dir: h.dir, Radius: 1, Autosave: &h.conf, Prepare: gametest.RegisterPlayers, Plugin: archive})
	g.Settle(t)
	ids := ecs.GetResource[components.BodyIDs](g.W)
	body := g.Bodies.NewEntity(&components.PixelBody{ID: ids.New(), X: 10, Y: 12, Width: 2, Height: 2,
		Pixels: []components.Pixel{1, 2, 3, 4}, Shape: []bool{true, true, false, true}}, &components.Persistable{})
	crate := g.SpawnCrate(4, 20, 0, 1)
	g.Tick()
	compactions, archivedAt := 0, uint64(0)
	for gen := uint64(1); gen <= 30 && (gen <= 4 || archivedAt == 0 || gen <= archivedAt+2); gen++ {
		k := int(gen)
		paintBands(t, g, k)
		b, _ := g.Bodies.Get(body)
		b.X = 10 + float32(k%3)*12 // between chunks (0, 0) and (1, 0)
		c := ecs.NewMap1[gametest.Position](g.W).Get(crate)
		c.X = 4 + float64(k%4)*9
		must(t, g.Pers.MarkDirty(body))
		must(t, g.Pers.MarkDirty(crate))
		g.Tick()
		res := g.Pers.SaveNow()
		must(t, res.Err)
		g.Pers.WaitIdle()
		expect(t, res.Generation == gen, "save %d committed generation %d", gen, res.Generation)
		if res.Compacted {
			compactions++
		}
		h.rec[gen] = exportOf(t, h.dir, gen)
		if archivedAt == 0 && zstdRecords(t, h.dir) > 0 {
			archivedAt = gen
		}
	}
	must(t, g.Pers.Close())
	expect(t, compactions > 0 && archivedAt > 0, "after %d saves: %d compactions, no zstd record", len(h.rec), compactions)

	// Every kept generation reads as it did when it was committed.
	for gen, rec := range h.rec {
		got := exportOf(t, h.dir, gen)
		expect(t, got == rec, "generation %d changed: %s", gen, firstDiff(got, rec))
	}
	// And loads exactly: the first generation with zstd records, the one
	// before the newest (zstd records too), and the oldest (LZ4 only);
	// the game saves again exactly what it loaded.
	last := uint64(len(h.rec))
	g = gametest.New(t, gametest.Opts{Dir: h.dir, Load: true, Radius: 1, Autosave: &h.conf, Prepare: gametest.RegisterPlayers, Plugin: archive})
	for _, want := range []uint64{archivedAt, last - 1, 1} {
		must(t, g.Pers.LoadVersion(h.dir, arksave.Version{Generation: want}))
		h.expectLoaded(t, g, want)
	}
	must(t, g.Pers.Close())
	zstdRecords(t, h.dir) // and the directory checks clean
}
