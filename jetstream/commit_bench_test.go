package jetstream_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/conv"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/terrain"
	"github.com/arksave/arksave/jetstream"
	"github.com/arksave/arksave/snapshot"
	"github.com/arksave/arksave/vfs"
)

// The benchmarks put the same save on three backends in one process and
// time them against each other, call by call: the directory on the local
// disk, a world on one local JetStream server (replication 1) and a world
// on a local cluster of three (replication 3).

const benchChunk = 512

var benchGen = terrain.Generator{}

func benchStore(size int) chunkstore.Options {
	return chunkstore.Options{ChunkSize: uint16(size), TileSize: 32, PixelSize: 4, Seed: 1,
		Generator: benchGen, Layers: arksave.DefaultLayers()}
}

func emptyWorld(b *testing.B) []byte {
	b.Helper()
	var buf bytes.Buffer
	must(b, archetype.Encode(&buf, ecs.NewWorld()))
	return buf.Bytes()
}

// offGenerator is chunk pos as generated with a fraction of its pixels
// turned to water, at places rng picks.
func offGenerator(pos components.ChunkPos, size int, fraction float64, rng *rand.Rand) []uint32 {
	pix := make([]uint32, size*size)
	benchGen.Generate(pos.X, pos.Y, 1, pix)
	for range int(fraction * float64(len(pix))) {
		pix[rng.IntN(len(pix))] = uint32(components.MakePixel(terrain.Water, uint8(rng.IntN(4)), 0, 0))
	}
	return pix
}

// The directory save of 10,000 stored 512x512 chunks, each 1% off the
// generator (stored as deltas), built once per run and copied to each
// backend byte for byte.
var (
	save10kOnce sync.Once
	save10kDir  string
)

func save10k(b *testing.B) string {
	save10kOnce.Do(func() {
		root, err := os.MkdirTemp("", "arksave-jetstream-bench-")
		must(b, err)
		save10kDir = filepath.Join(root, "save")
		w, err := savedir.OpenWriter(save10kDir, savedir.Options{Store: benchStore(benchChunk)})
		must(b, err)
		rng := rand.New(rand.NewPCG(3, 4))
		const total, batch = 10_000, 500
		for start := 0; start < total; start += batch {
			snap := &snapshot.Snapshot{World: emptyWorld(b)}
			for i := start; i < start+batch; i++ {
				pos := components.ChunkPos{X: int32(i%100) + 10, Y: int32(i / 100)}
				c := components.NewChunk(benchChunk, conv.Pixels(offGenerator(pos, benchChunk, 0.01, rng)))
				snap.Chunks = append(snap.Chunks, snapshot.Chunk{Pos: pos, Buf: c.Share()})
			}
			if !w.Submit(savedir.Job{Snap: snap}) {
				b.Fatal("writer busy")
			}
			must(b, w.Wait().Err)
		}
		must(b, w.Close())
	})
	return save10kDir
}

// backend is one place for the save.
type backend struct {
	name string
	fsys vfs.FS
	path string
}

// backends returns the directory save of 10,000 chunks and its copies on a
// local server (R1) and a local cluster of three (R3).
func backends(b *testing.B) []backend {
	b.Helper()
	src := save10k(b)
	one := startServer(b)
	three := startCluster(b, 3)
	out := []backend{{"dir", vfs.OS, filepath.Join(b.TempDir(), "save")}}
	_, err := savetool.Copy(src, out[0].path, savetool.CopyOptions{})
	must(b, err)
	for _, c := range []struct {
		name string
		url  string
		r    int
	}{{"R1", one.ClientURL(), 1}, {"R3", three.urls()[0], 3}} {
		fsys := connectFS(b, c.url, jetstream.Options{Replicas: c.r})
		_, err := savetool.Copy(src, "bench", savetool.CopyOptions{DstFS: fsys})
		must(b, err)
		out = append(out, backend{c.name, fsys, "bench"})
	}
	return out
}

// dirtySnapshot is a save of 5 chunks, each 1% off the generator again at
// other places, among the stored ones.
func dirtySnapshot(world []byte, rng *rand.Rand) *snapshot.Snapshot {
	snap := &snapshot.Snapshot{World: world}
	for i := range 5 {
		pos := components.ChunkPos{X: int32(10 + i*17), Y: int32(i * 13)}
		c := components.NewChunk(benchChunk, conv.Pixels(offGenerator(pos, benchChunk, 0.01, rng)))
		snap.Chunks = append(snap.Chunks, snapshot.Chunk{Pos: pos, Buf: c.Share()})
	}
	return snap
}

// BenchmarkCommit_5Dirty_10kStored commits a generation of 5 dirty chunks
// (and the world file, the manifest, two backups kept) into the save of
// 10,000 stored chunks on each backend in turn, the order rotating, and
// reports each backend's time per commit and its ratio to the directory's.
func BenchmarkCommit_5Dirty_10kStored(b *testing.B) {
	bs := backends(b)
	writers := make([]*savedir.Writer, len(bs))
	for i, be := range bs {
		w, err := savedir.OpenWriter(be.path, savedir.Options{FS: be.fsys, Store: benchStore(benchChunk)})
		must(b, err)
		defer w.Close()
		writers[i] = w
	}
	world := emptyWorld(b)
	rng := rand.New(rand.NewPCG(5, 6))
	took := make([]time.Duration, len(bs))
	iter := 0
	for b.Loop() {
		for k := range bs {
			k = (k + iter) % len(bs) // no backend always goes first
			snap := dirtySnapshot(world, rng)
			start := time.Now()
			if !writers[k].Submit(savedir.Job{Snap: snap, MaxBackups: 2}) {
				b.Fatal("writer busy")
			}
			r := writers[k].Wait()
			took[k] += time.Since(start)
			must(b, r.Err)
			if r.ChunksWritten != 5 {
				b.Fatalf("%s: %d chunks written", bs[k].name, r.ChunksWritten)
			}
		}
		iter++
	}
	reportRatios(b, bs, took, iter, "commit")
}

// reportRatios reports each backend's mean time per op and its ratio to
// the first backend's (the directory).
func reportRatios(b *testing.B, bs []backend, took []time.Duration, n int, op string) {
	for k, be := range bs {
		b.ReportMetric(float64(took[k].Microseconds())/1000/float64(n), "ms/"+op+"@"+be.name)
		if k > 0 {
			b.ReportMetric(float64(took[k])/float64(took[0]), be.name+"/dir")
		}
	}
}

// BenchmarkGet_10kStored loads one chunk (a delta: read its record,
// decompress, generate, apply) from the save of 10,000 chunks on each
// backend in turn, every time another chunk, through a store opened
// read-only as a reader beside the game opens it.
func BenchmarkGet_10kStored(b *testing.B) {
	bs := backends(b)
	stores := make([]*chunkstore.Store, len(bs))
	for i, be := range bs {
		d, err := savedir.OpenDirReadOnly(be.fsys, be.path)
		must(b, err)
		m := d.Manifest()
		p, err := d.File(m.Chunks.Name)
		must(b, err)
		o := benchStore(benchChunk)
		o.FS, o.ReadOnly, o.Root = be.fsys, true, m.Chunks.Root
		st, err := chunkstore.Open(p, &o)
		must(b, err)
		defer st.Close()
		stores[i] = st
	}
	order := rand.New(rand.NewPCG(7, 8)).Perm(10_000)
	dst := make([]uint32, benchChunk*benchChunk)
	took := make([]time.Duration, len(bs))
	iter := 0
	for b.Loop() {
		i := order[iter%len(order)]
		pos := chunkstore.Pos{X: int32(i%100) + 10, Y: int32(i / 100)}
		for k := range bs {
			k = (k + iter) % len(bs)
			start := time.Now()
			stored, err := stores[k].Get(pos, dst)
			took[k] += time.Since(start)
			must(b, err)
			if !stored {
				b.Fatalf("%s: chunk %v is not stored", bs[k].name, pos)
			}
		}
		iter++
	}
	reportRatios(b, bs, took, iter, "get")
}

// BenchmarkCommit_5Dirty_10kVs1M commits 5 dirty 64x64 chunks into a world
// of 10,000 stored chunks and one of 1,000,000, on the local disk and on a
// local server (R1), all four in turn, and reports the times and the
// ratio 1M/10k of each backend: a commit costs what changed, not what the
// world holds. The stored chunks are all air (a page-table entry each and
// no record: what a commit could have to rewrite is the page table), so
// that a million of them build in seconds; the dirty ones are deltas
// against the generator. Each world starts from a checkpoint of its page
// table, compacted, as a game's world does after a compaction.
func BenchmarkCommit_5Dirty_10kVs1M(b *testing.B) {
	const size = 64
	s := startServer(b)
	type world struct {
		backend string
		n       int
		w       *savedir.Writer
	}
	var worlds []world
	for _, be := range []backend{
		{"dir", vfs.OS, b.TempDir()},
		{"R1", connectFS(b, s.ClientURL(), jetstream.Options{}), ""},
	} {
		for _, n := range []int{10_000, 1_000_000} {
			path := fmt.Sprintf("stored%d", n)
			if be.path != "" {
				path = filepath.Join(be.path, path)
			}
			buildAir(b, be.fsys, path, size, n)
			// Compaction is not a commit's: it comes when a world's dead bytes
			// pass a quarter of it, every few commits of a small world and
			// rarely of a big one, rewriting what lives; left out here.
			o := benchStore(size)
			o.CompactionThreshold = 0.99
			w, err := savedir.OpenWriter(path, savedir.Options{FS: be.fsys, Store: o})
			must(b, err)
			defer w.Close()
			worlds = append(worlds, world{be.name, n, w})
		}
	}
	empty := emptyWorld(b)
	rng := rand.New(rand.NewPCG(9, 10))
	took := make([]time.Duration, len(worlds))
	iter := 0
	for b.Loop() {
		for k := range worlds {
			k = (k + iter) % len(worlds)
			snap := dirtySmall(empty, size, rng)
			start := time.Now()
			if !worlds[k].w.Submit(savedir.Job{Snap: snap, MaxBackups: 2}) {
				b.Fatal("writer busy")
			}
			r := worlds[k].w.Wait()
			took[k] += time.Since(start)
			must(b, r.Err)
		}
		iter++
	}
	for k, w := range worlds {
		b.ReportMetric(float64(took[k].Microseconds())/1000/float64(iter), fmt.Sprintf("ms/commit@%s-%d", w.backend, w.n))
		if k%2 == 1 {
			b.ReportMetric(float64(took[k])/float64(took[k-1]), "ratio-1M/10k@"+w.backend)
		}
	}
}

// dirtySmall is a save of 5 size x size chunks, each 5% off the generator.
func dirtySmall(world []byte, size int, rng *rand.Rand) *snapshot.Snapshot {
	snap := &snapshot.Snapshot{World: world}
	for i := range 5 {
		pos := components.ChunkPos{X: int32(i * 3), Y: 0}
		c := components.NewChunk(size, conv.Pixels(offGenerator(pos, size, 0.05, rng)))
		snap.Chunks = append(snap.Chunks, snapshot.Chunk{Pos: pos, Buf: c.Share()})
	}
	return snap
}

// buildAir makes a save at path holding n stored all-air chunks of size x
// size, and then writes a checkpoint of its page table (a commit with a
// tiny CheckpointRatio), compacting the store if that leaves it mostly dead.
func buildAir(b *testing.B, fsys vfs.FS, path string, size, n int) {
	b.Helper()
	world := emptyWorld(b)
	air := conv.Pixels(make([]uint32, size*size)) // every stored chunk's pixels: nobody writes them
	w, err := savedir.OpenWriter(path, savedir.Options{FS: fsys, Store: benchStore(size)})
	must(b, err)
	const batch = 20_000
	for start := 0; start < n; start += batch {
		snap := &snapshot.Snapshot{World: world}
		for i := start; i < min(n, start+batch); i++ {
			c := components.NewChunk(size, air)
			snap.Chunks = append(snap.Chunks, snapshot.Chunk{Pos: components.ChunkPos{X: int32(i % 1000), Y: int32(10 + i/1000)}, Buf: c.Share()})
		}
		if !w.Submit(savedir.Job{Snap: snap}) {
			b.Fatal("writer busy")
		}
		must(b, w.Wait().Err)
	}
	must(b, w.Close())
	o := benchStore(size)
	o.CheckpointRatio = 1e-9
	w, err = savedir.OpenWriter(path, savedir.Options{FS: fsys, Store: o})
	must(b, err)
	defer w.Close()
	if !w.Submit(savedir.Job{Snap: dirtySmall(world, size, rand.New(rand.NewPCG(1, 2)))}) {
		b.Fatal("writer busy")
	}
	must(b, w.Wait().Err)
}
