package arksave_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"
	"github.com/pierrec/lz4/v4"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/conv"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/internal/testkit/terrain"
	"github.com/arksave/arksave/snapshot"
)

const benchChunk = 512

var benchGen = terrain.Generator{}

// benchWorld is a game world with n ECS entities and the chunks at the given
// positions loaded and dirty, without streaming (no Focus).
func benchWorld(b *testing.B, dir string, entities int, chunks []components.ChunkPos) (*ecs.World, []arksave.System, *arksave.Persistence) {
	b.Helper()
	w := ecs.NewWorld()
	systems, err := arksave.Plugin{
		Dir: dir, Overwrite: true, ChunkSize: benchChunk, Generator: benchGen, Seed: 1,
		Autosave: &autosave.Config{Enabled: false, MaxBackups: 0},
	}.Install(w)
	must(b, err)
	pm := ecs.NewMap2[gametest.Position, gametest.Player](w)
	for i := range entities {
		p := gametest.Player{}
		if i%10 == 0 {
			p.Name = fmt.Sprint("p", i)
		}
		pm.NewEntity(&gametest.Position{X: float64(i)}, &p)
	}
	ix := ecs.GetResource[components.ChunkIndex](w)
	cm := ecs.NewMap3[components.ChunkPos, components.Chunk, components.ChunkState](w)
	for _, pos := range chunks {
		pix := make([]uint32, benchChunk*benchChunk)
		benchGen.Generate(pos.X, pos.Y, 1, pix)
		c := components.NewChunk(benchChunk, conv.Pixels(pix))
		st := components.ChunkState{}
		e := cm.NewEntity(&pos, &c, &st)
		ix.Set(pos, e)
	}
	return w, systems, ecs.GetResource[arksave.Persistence](w)
}

// dirty makes every chunk its generated self with fraction of the pixels
// changed, and marks it dirty.
func dirty(w *ecs.World, fraction float64, rng *rand.Rand) {
	q := ecs.NewFilter3[components.ChunkPos, components.Chunk, components.ChunkState](w).Query()
	for q.Next() {
		pos, c, st := q.Get()
		pix := c.MutRect(0, 0, c.Size, c.Size)
		benchGen.Generate(pos.X, pos.Y, 1, conv.Uint32s(pix))
		for range int(fraction * float64(len(pix))) {
			pix[rng.IntN(len(pix))] = components.MakePixel(terrain.Water, uint8(rng.IntN(4)), 0, 0)
		}
		st.MarkDirty()
	}
}

func positions(n int) []components.ChunkPos {
	out := make([]components.ChunkPos, n)
	for i := range out {
		out[i] = components.ChunkPos{X: int32(i % 32), Y: int32(i / 32)}
	}
	return out
}

// BenchmarkSaveStall measures what a save costs the game loop: the tick in
// which the save system takes the snapshot and hands it to the writer, with
// 10,000 ECS entities and 5, 50 or 500 dirty 512x512 chunks. The peer is a
// snapshot that copies every dirty chunk's pixels on the game loop (the
// plain way, without copy-on-write); "stall-ms" and "copy-ms" come from the same run.
func BenchmarkSaveStall(b *testing.B) {
	for _, n := range []int{5, 50, 500} {
		b.Run(fmt.Sprintf("%dDirtyChunks_10kEntities", n), func(b *testing.B) {
			w, systems, pers := benchWorld(b, b.TempDir(), 10000, positions(n))
			defer pers.Close()
			rng := rand.New(rand.NewPCG(1, 2))
			var stall, copying time.Duration
			for range b.N {
				b.StopTimer()
				dirty(w, 0.01, rng)
				h := pers.Save()
				runtime.GC() // the benchmark's own garbage (the peer's copies) is not the save's
				b.StartTimer()
				start := time.Now()
				systems[1].Update(w) // the save system: snapshot and hand-off
				stall += time.Since(start)
				b.StopTimer()

				// The peer: copy every dirty chunk on the game loop.
				start = time.Now()
				copies := make([][]components.Pixel, 0, n)
				q := ecs.NewFilter1[components.Chunk](w).Query()
				for q.Next() {
					copies = append(copies, append([]components.Pixel(nil), q.Get().Pixels()...))
				}
				copying += time.Since(start)
				_ = copies
				for !h.IsComplete() {
					systems[1].Update(w)
					time.Sleep(100 * time.Microsecond)
				}
				must(b, h.Err())
				b.StartTimer()
			}
			b.ReportMetric(float64(stall.Microseconds())/1000/float64(b.N), "stall-ms")
			b.ReportMetric(float64(copying.Microseconds())/1000/float64(b.N), "copy-ms")
			b.ReportMetric(float64(copying)/float64(stall), "copy/stall")
		})
	}
}

// The store for BenchmarkCommitLatency: 10,000 stored chunks, each 1% off
// the generator, built once per process (about 120 MB in the temporary
// directory; TestMain removes it).
var latencyOnce sync.Once
var latencyDir string

// TestMain removes the benchmarks' stores once every test and benchmark of
// the package has run.
func TestMain(m *testing.M) {
	code := m.Run()
	if latencyDir != "" {
		os.RemoveAll(filepath.Dir(latencyDir))
	}
	os.Exit(code)
}

func latencyStore(b *testing.B) string {
	latencyOnce.Do(func() {
		dir, err := os.MkdirTemp("", "arksave-bench-")
		must(b, err)
		latencyDir = filepath.Join(dir, "save")
		w, err := savedir.OpenWriter(latencyDir, savedir.Options{Store: chunkstoreConfig()})
		must(b, err)
		rng := rand.New(rand.NewPCG(3, 4))
		const total, batch = 10000, 500
		for start := 0; start < total; start += batch {
			snap := &snapshot.Snapshot{World: emptyWorld(b)}
			for i := start; i < start+batch; i++ {
				pos := components.ChunkPos{X: int32(i%100) + 10, Y: int32(i / 100)}
				pix := make([]uint32, benchChunk*benchChunk)
				benchGen.Generate(pos.X, pos.Y, 1, pix)
				for range len(pix) / 100 {
					pix[rng.IntN(len(pix))] = uint32(components.MakePixel(terrain.Water, 0, 0, 0))
				}
				c := components.NewChunk(benchChunk, conv.Pixels(pix))
				snap.Chunks = append(snap.Chunks, snapshot.Chunk{Pos: pos, Buf: c.Share()})
			}
			if !w.Submit(savedir.Job{Snap: snap}) {
				b.Fatal("writer busy")
			}
			must(b, w.Wait().Err)
		}
		must(b, w.Close())
	})
	return latencyDir
}

// BenchmarkCommitLatency measures the time from a save request to its
// durable commit with 5 dirty chunks (1% of their pixels changed) among
// 10,000 stored, against the plain copy-and-rename way in the same run,
// one file per chunk: write the dirty chunk files into a temporary copy of the save, copy every other chunk
// file, then swap the directories by renaming.
func BenchmarkCommitLatency(b *testing.B) {
	dir := latencyStore(b)
	b.Run("arksave_5Dirty_10kStored", func(b *testing.B) {
		// Loading the save (BenchmarkLoadLatency) is not part of a save:
		// the clock starts at the first request and stops at the last
		// commit.
		b.StopTimer()
		w, systems, pers := benchWorldAt(b, dir)
		defer pers.Close()
		rng := rand.New(rand.NewPCG(5, 6))
		var total time.Duration
		for range b.N {
			dirty(w, 0.01, rng)
			b.StartTimer()
			h := pers.Save()
			for !h.IsComplete() {
				systems[1].Update(w)
			}
			b.StopTimer()
			must(b, h.Err())
			total += h.Result().Duration
		}
		b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/save")
	})
	b.Run("copyAndRename_5Dirty_10kStored", func(b *testing.B) {
		root := b.TempDir()
		save := filepath.Join(root, "save")
		must(b, os.MkdirAll(filepath.Join(save, "chunks"), 0o755))
		// The same data as chunk files: one LZ4-compressed file per chunk.
		rng := rand.New(rand.NewPCG(3, 4))
		pix := make([]byte, benchChunk*benchChunk*4)
		comp := make([]byte, lz4.CompressBlockBound(len(pix)))
		var c lz4.Compressor
		for i := range 10000 {
			for j := range pix {
				pix[j] = byte(j % 7)
			}
			for range len(pix) / 400 {
				pix[rng.IntN(len(pix))] = 5
			}
			n, err := c.CompressBlock(pix, comp)
			must(b, err)
			must(b, os.WriteFile(filepath.Join(save, "chunks", fmt.Sprint(i, ".chunk")), comp[:n], 0o644))
		}
		b.ResetTimer()
		var total time.Duration
		for range b.N {
			start := time.Now()
			must(b, copyAndRenameSave(root, save, 5, pix, comp))
			total += time.Since(start)
		}
		b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/save")
	})
}

// BenchmarkLoadLatency measures a game's load of the save of
// BenchmarkCommitLatency (10,000 stored chunks, about 120 MB of records):
// Plugin.Install with Load, which verifies the generation it loads (the
// world file, the page table, the checksums of every live record) before
// it trusts it, against opening the chunk store alone, read-only, which
// reads its page table and nothing else, in the same run. Each iteration
// closes the plugin again (outside the clock).
func BenchmarkLoadLatency(b *testing.B) {
	dir := latencyStore(b)
	b.Run("arksave_10kStored", func(b *testing.B) {
		for range b.N {
			_, _, pers := benchWorldAt(b, dir)
			b.StopTimer()
			must(b, pers.Close())
			b.StartTimer()
		}
	})
	b.Run("storeOpenOnly_10kStored", func(b *testing.B) {
		d, err := savedir.OpenDirReadOnly(nil, dir)
		must(b, err)
		m := d.Manifest()
		p, err := d.File(m.Chunks.Name)
		must(b, err)
		for range b.N {
			o := chunkstoreConfig()
			o.ReadOnly, o.Root = true, m.Chunks.Root
			s, err := chunkstore.Open(p, &o)
			must(b, err)
			must(b, s.Close())
		}
	})
}

// copyAndRenameSave saves the plain way, one file per chunk: dirty chunks
// into a temp directory, every other chunk file copied, then the current
// save renamed to a backup and the temp directory renamed into place.
func copyAndRenameSave(root, save string, dirtyN int, pix, comp []byte) error {
	tmp := filepath.Join(root, "saving_tmp")
	backup := filepath.Join(root, "backup")
	if err := os.MkdirAll(filepath.Join(tmp, "chunks"), 0o755); err != nil {
		return err
	}
	var c lz4.Compressor
	dirty := map[string]bool{}
	for i := range dirtyN {
		n, err := c.CompressBlock(pix, comp)
		if err != nil {
			return err
		}
		name := fmt.Sprint(i, ".chunk")
		dirty[name] = true
		if err := os.WriteFile(filepath.Join(tmp, "chunks", name), comp[:n], 0o644); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(filepath.Join(save, "chunks"))
	if err != nil {
		return err
	}
	for _, e := range entries {
		if dirty[e.Name()] {
			continue
		}
		data, err := os.ReadFile(filepath.Join(save, "chunks", e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(tmp, "chunks", e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(backup); err != nil {
		return err
	}
	if err := os.Rename(save, backup); err != nil {
		return err
	}
	return os.Rename(tmp, save)
}

// benchWorldAt loads the save at dir with five chunks loaded around a focus.
func benchWorldAt(b *testing.B, dir string) (*ecs.World, []arksave.System, *arksave.Persistence) {
	w := ecs.NewWorld()
	systems, err := arksave.Plugin{
		Dir: dir, Load: true, ChunkSize: benchChunk, Generator: benchGen, Seed: 1,
		Autosave: &autosave.Config{Enabled: false, MaxBackups: 0},
	}.Install(w)
	must(b, err)
	// A focus of radius 1 loads nine chunks; dirty() touches all loaded ones,
	// so load exactly five by placing them by hand instead.
	ix := ecs.GetResource[components.ChunkIndex](w)
	cm := ecs.NewMap3[components.ChunkPos, components.Chunk, components.ChunkState](w)
	for i := range 5 {
		pos := components.ChunkPos{X: int32(10 + i), Y: 0}
		pix := make([]uint32, benchChunk*benchChunk)
		benchGen.Generate(pos.X, pos.Y, 1, pix)
		c := components.NewChunk(benchChunk, conv.Pixels(pix))
		st := components.ChunkState{}
		ix.Set(pos, cm.NewEntity(&pos, &c, &st))
	}
	return w, systems, ecs.GetResource[arksave.Persistence](w)
}

func chunkstoreConfig() chunkstore.Options {
	return chunkstore.Options{ChunkSize: benchChunk, TileSize: 32, PixelSize: 4, Seed: 1,
		Generator: benchGen, Layers: arksave.DefaultLayers()}
}

func emptyWorld(b *testing.B) []byte {
	var buf bytes.Buffer
	must(b, archetype.Encode(&buf, ecs.NewWorld()))
	return buf.Bytes()
}
