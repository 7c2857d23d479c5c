package sim_test

import (
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/demo/sim"
	"github.com/arksave/arksave/demo/terrain"
	"github.com/arksave/arksave/internal/benchenc"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/storetool"
)

// demoSave runs the demo headless with its scripted player for ticks ticks
// (autosaving every 2 s of game time) and returns the save directory.
func demoSave(tb testing.TB, ticks int) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "world")
	cfg := sim.Config{Seed: 1, ChunkSize: 512, Save: sim.SaveConfig{Dir: dir, Autosave: 2e9, MaxBackups: 1}}
	if _, err := sim.RunHeadless(sim.HeadlessOptions{Config: cfg, Ticks: ticks, Out: io.Discard}); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// storeOf opens the committed chunk store generation of the save in dir,
// read-only, with the demo's generator.
func storeOf(tb testing.TB, dir string) *chunkstore.Store {
	tb.Helper()
	d, err := savedir.OpenDirReadOnly(nil, dir)
	if err != nil {
		tb.Fatal(err)
	}
	m := d.Manifest()
	p, err := d.File(m.Chunks.Name)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := chunkstore.Open(p, &chunkstore.Options{ReadOnly: true, Root: m.Chunks.Root, Generator: terrain.Generator{},
		Layers: arksave.DefaultLayers()})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// BenchmarkDictionary_DemoSave plays the demo for 1,800 ticks (30 s of game
// time) and writes the chunks and bodies of its last save into stores with
// the chunk dictionary off, as format 1 had it (Full records of at most 16
// KiB) and covering every record, reporting the record bytes each writes.
func BenchmarkDictionary_DemoSave(b *testing.B) {
	src := storeOf(b, demoSave(b, 1800))
	defer src.Close()
	cfg := src.Options()
	pix := make([]uint32, int(cfg.ChunkSize)*int(cfg.ChunkSize))
	type chunk struct {
		pos    chunkstore.Pos
		pix    []uint32
		bodies []chunkstore.Body
	}
	var chunks []chunk
	src.Entries(func(e chunkstore.Entry) bool {
		if e.Type == chunkstore.BodyBlock {
			bodies, err := src.Bodies(e.Pos)
			if err != nil {
				b.Fatal(err)
			}
			chunks = append(chunks, chunk{pos: e.Pos, bodies: bodies})
			return true
		}
		if _, err := src.Get(e.Pos, pix); err != nil {
			b.Fatal(err)
		}
		chunks = append(chunks, chunk{pos: e.Pos, pix: append([]uint32(nil), pix...)})
		return true
	})
	modes := []struct {
		name string
		d    chunkstore.Dictionary
	}{{"off", chunkstore.DictionaryOff}, {"format1", chunkstore.DictionarySmallFull}, {"all", chunkstore.DictionaryAll}}
	bytes := make([]int64, len(modes))
	shared := make([]int, len(modes))
	for b.Loop() {
		for i, m := range modes {
			c := cfg
			c.ReadOnly, c.Dictionary = false, m.d
			s, err := chunkstore.Create(filepath.Join(b.TempDir(), fmt.Sprintf("w-%d.pxsw", i)), &c)
			if err != nil {
				b.Fatal(err)
			}
			batch := s.NewBatch()
			for _, ch := range chunks {
				if ch.pix != nil {
					batch.PutChunk(ch.pos, ch.pix)
				} else {
					batch.PutEntities(ch.pos, chunkstore.EntityBlock{Bodies: ch.bodies})
				}
			}
			st, err := s.Commit(batch)
			if err != nil {
				b.Fatal(err)
			}
			bytes[i], shared[i] = st.RecordBytes, st.Shared
			s.Close()
		}
	}
	for i, m := range modes {
		b.ReportMetric(float64(bytes[i]), "B-"+m.name)
		b.ReportMetric(float64(shared[i]), "shared-"+m.name)
	}
	b.ReportMetric(float64(len(chunks)), "records")
	b.ReportMetric(float64(bytes[0])/float64(bytes[2]), "ratio-off/all")
}

// A small demo save is not left mostly dead (a floor of four raw chunks of
// dead bytes before compaction left it 75% dead and more): the writer
// compacts between saves, so that what is dead after the last save is
// what that save superseded, and the store stays under 75% dead.
func TestDemoSaveNotMostlyDead(t *testing.T) {
	s := storeOf(t, demoSave(t, 1800))
	defer s.Close()
	var size, dead int64
	for _, f := range storetool.Tool.Files(s) {
		if f.Number != 0 {
			size += f.Size
			dead += f.Dead
		}
	}
	if size == 0 || float64(dead) >= 0.75*float64(size) {
		t.Fatalf("the demo's store is %d of %d bytes dead; files %+v", dead, size, storetool.Tool.Files(s))
	}
	t.Logf("%d of %d bytes dead (%.1f%%)", dead, size, 100*float64(dead)/float64(size))
}

// BenchmarkPalette_DemoTerrain stores chunks of the demo's terrain in two
// stores, one choosing records as stores of format 2 did (a delta under
// 75% changed, else full) and one the smallest of delta, palette and full,
// and loads them at random, alternating between the stores so that both
// see the same machine load: bytes per chunk, load time and their ratios.
// "save": the chunks of the demo's save after 30 s of its scripted player;
// "terrain-whole": demo terrain kept whole (a store without the
// generator); "painted": demo terrain chunks a player painted.
func BenchmarkPalette_DemoTerrain(b *testing.B) {
	const size = 512
	cfg := chunkstore.Options{ChunkSize: size, TileSize: 32, Seed: 1, Generator: terrain.Generator{}, Layers: arksave.DefaultLayers()}
	demoChunks := func(paint bool) []benchenc.Chunk {
		var chunks []benchenc.Chunk
		for i := range 8 {
			p := chunkstore.Pos{X: int32(i - 4), Y: int32(i % 3)}
			pix := make([]uint32, size*size)
			terrain.Generator{}.Generate(p.X, p.Y, 1, pix)
			if paint {
				benchenc.Paint(pix, size, uint64(i))
			}
			chunks = append(chunks, benchenc.Chunk{Pos: p, Pix: pix})
		}
		return chunks
	}
	b.Run("save", func(b *testing.B) {
		src := storeOf(b, demoSave(b, 1800))
		defer src.Close()
		var chunks []benchenc.Chunk
		src.Entries(func(e chunkstore.Entry) bool {
			if e.Type != chunkstore.BodyBlock && e.Type != chunkstore.Empty {
				pix := make([]uint32, size*size)
				if _, err := src.Get(e.Pos, pix); err != nil {
					b.Fatal(err)
				}
				chunks = append(chunks, benchenc.Chunk{Pos: e.Pos, Pix: pix})
			}
			return true
		})
		benchenc.Compare(b, cfg, chunks)
	})
	b.Run("terrain-whole", func(b *testing.B) {
		whole := cfg
		whole.Generator = nil
		benchenc.Compare(b, whole, demoChunks(false))
	})
	b.Run("painted", func(b *testing.B) { benchenc.Compare(b, cfg, demoChunks(true)) })
}
