package savedir_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/conv"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/snapshot"
	"github.com/arksave/arksave/vfs"
)

// BenchmarkSave_Rollover saves 5 dirty 512x512 chunks (2% of their
// pixels changed; other chunks each save, so that nothing turns dead and
// no compaction runs between saves) over and over into a save directory on
// disk whose data files take a few saves, and reports
// the saves whose chunk records started a new data file (rollover) beside
// the others: request to durable commit, and their ratio.
func BenchmarkSave_Rollover(b *testing.B) {
	const chunk = 512
	cfg := chunkstore.Options{ChunkSize: chunk, TileSize: 32, PixelSize: 4, Seed: 3, Generator: flatGen{}, DataFileSize: 400 << 10}
	w, err := savedir.OpenWriter(filepath.Join(b.TempDir(), "save"), savedir.Options{Store: cfg})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	rng := rand.New(rand.NewPCG(1, 1))
	snap := func(g int) *snapshot.Snapshot {
		xs := make([]int32, 5)
		for k := range xs {
			xs[k] = 5*int32(g) + int32(k) // new chunks each save: nothing dead, no compaction between saves
		}
		return deltaSnap(rng, chunk, g, xs)
	}
	var took [2]time.Duration
	var count [2]int
	g := 0
	last := ""
	for b.Loop() {
		g++
		if !w.Submit(savedir.Job{Snap: snap(g), MaxBackups: 1}) {
			b.Fatal("busy")
		}
		r := w.Wait()
		if r.Err != nil {
			b.Fatal(r.Err)
		}
		data := w.Manifest().Chunks.Data
		k := 0
		if newest := data[len(data)-1]; newest != last {
			k, last = 1, newest
		}
		took[k] += r.Duration
		count[k]++
	}
	if count[0] == 0 || count[1] == 0 {
		b.Skipf("%d normal and %d rollover saves: run longer", count[0], count[1])
	}
	normal := float64(took[0].Nanoseconds()) / float64(count[0])
	rollover := float64(took[1].Nanoseconds()) / float64(count[1])
	b.ReportMetric(normal, "ns/save")
	b.ReportMetric(rollover, "ns/rollover-save")
	b.ReportMetric(rollover/normal, "ratio-rollover/normal")
	b.ReportMetric(float64(count[1])/float64(count[0]+count[1]), "rollover-share")
}

// benchGB adds the world of about 1 GB of stored records to
// BenchmarkBytesPerSave (go test -bench BytesPerSave -args -gb): it takes
// a minute and 2 GB of disk to build.
var benchGB = flag.Bool("gb", false, "BenchmarkBytesPerSave: add a world of 1 GB of stored records")

// BenchmarkBytesPerSave measures the bytes written per save, everything a
// save costs included: its commit (records, page table, world file,
// manifest), the mirrors grown after it, compaction steps, backups at the
// defaults (MaxBackups 1), through vfs.Counting on disk. The world holds
// 40 or 1,600 stored 64x64 chunks (or, with -gb, 65,536: 1 GB of
// records), incompressible Full records; each save changes the same
// number of chunks, 5. It reports bytes/save and bytes/save divided by
// the record bytes of the 5 chunks, so that the worlds compare in one run.
func BenchmarkBytesPerSave(b *testing.B) {
	const chunk = 64
	worlds := []int{40, 1600}
	if *benchGB {
		worlds = append(worlds, 1<<30/(chunk*chunk*4))
	}
	for _, stored := range worlds {
		b.Run(fmt.Sprintf("stored=%d", stored), func(b *testing.B) {
			var written atomic.Int64
			fsys := vfs.Counting(vfs.OS, func(n int64, write bool) {
				if write {
					written.Add(n)
				}
			})
			cfg := chunkstore.Options{ChunkSize: chunk, TileSize: 32, PixelSize: 4, Seed: 3, Generator: flatGen{}, Encoding: chunkstore.EncodeDeltaFull}
			w, err := savedir.OpenWriter(filepath.Join(b.TempDir(), "save"), savedir.Options{FS: fsys, Store: cfg})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			defaults := autosave.DefaultConfig()
			rng := rand.New(rand.NewPCG(5, 5))
			save := func(g int, xs []int32) {
				if !w.Submit(savedir.Job{Snap: fullSnap(rng, chunk, g, xs), MaxBackups: defaults.MaxBackups}) {
					b.Fatal("busy")
				}
				if r := w.WaitIdle(); r == nil || r.Err != nil {
					b.Fatalf("save %d: %v", g, r)
				}
			}
			// The world, 4,096 chunks a save.
			g := 0
			for from := 0; from < stored; from += 4096 {
				xs := make([]int32, 0, 4096)
				for x := from; x < min(from+4096, stored); x++ {
					xs = append(xs, int32(x))
				}
				g++
				save(g, xs)
			}
			change := func() []int32 {
				xs := make([]int32, 5)
				for k := range xs {
					xs[k] = int32(rng.IntN(stored))
				}
				return xs
			}
			for range 3 { // the mirrors of the world are grown once, here
				g++
				save(g, change())
			}
			var total int64
			var each []int64
			for b.Loop() {
				g++
				written.Store(0)
				save(g, change())
				each = append(each, written.Load())
				total += each[len(each)-1]
			}
			// The mean counts the compaction steps, which run when dead
			// bytes pass 25% of the data files; the median is a save
			// without one.
			slices.Sort(each)
			records := float64(5 * chunk * chunk * 4)
			mean, median := float64(total)/float64(len(each)), float64(each[len(each)/2])
			b.ReportMetric(mean, "bytes/save")
			b.ReportMetric(mean/records, "bytes/record-byte")
			b.ReportMetric(median, "median-bytes/save")
			b.ReportMetric(median/records, "median-bytes/record-byte")
		})
	}
}

// fullSnap returns a snapshot of generation g with the chunks at xs (on
// row 0) of random pixels: incompressible Full records.
func fullSnap(rng *rand.Rand, chunk, g int, xs []int32) *snapshot.Snapshot {
	s := &snapshot.Snapshot{World: []byte(fmt.Sprintf("world %d", g))}
	for _, x := range xs {
		pix := make([]uint32, chunk*chunk)
		for i := range pix {
			pix[i] = rng.Uint32() | 1
		}
		c := components.NewChunk(chunk, conv.Pixels(pix))
		s.Chunks = append(s.Chunks, snapshot.Chunk{Pos: components.ChunkPos{X: x}, Buf: c.Share(), Version: uint64(g)})
	}
	return s
}

// record.
func deltaSnap(rng *rand.Rand, chunk, g int, xs []int32) *snapshot.Snapshot {
	s := &snapshot.Snapshot{World: []byte(fmt.Sprintf("world %d", g))}
	for _, x := range xs {
		pix := make([]uint32, chunk*chunk)
		flatGen{}.Generate(x, 0, 3, pix)
		for range chunk * chunk / 50 {
			pix[rng.IntN(len(pix))] = uint32(1 + rng.IntN(200))
		}
		c := components.NewChunk(chunk, conv.Pixels(pix))
		s.Chunks = append(s.Chunks, snapshot.Chunk{Pos: components.ChunkPos{X: x}, Buf: c.Share(), Version: uint64(g)})
	}
	return s
}

// BenchmarkLoad_Verify measures what verifying the committed generation
// costs a load (Dir.LoadIntact: the world file, and the chunk store read
// whole, every live record decoded) against what a load did before it
// (Dir.ReadWorld and opening the store through its root), on a store of
// 64 or 256 512x512 delta chunks on disk, the two interleaved.
func BenchmarkLoad_Verify(b *testing.B) {
	const chunk = 512
	for _, stored := range []int{64, 256} {
		b.Run(fmt.Sprintf("stored=%d", stored), func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "save")
			cfg := chunkstore.Options{ChunkSize: chunk, TileSize: 32, PixelSize: 4, Seed: 3, Generator: flatGen{}}
			w, err := savedir.OpenWriter(dir, savedir.Options{Store: cfg})
			if err != nil {
				b.Fatal(err)
			}
			all := make([]int32, stored)
			for i := range all {
				all[i] = int32(i)
			}
			w.Submit(savedir.Job{Snap: deltaSnap(rand.New(rand.NewPCG(1, 1)), chunk, 1, all)})
			if r := w.Wait(); r.Err != nil {
				b.Fatal(r.Err)
			}
			w.Close()
			d, err := savedir.OpenDir(nil, dir)
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			var verify, plain time.Duration
			for b.Loop() {
				start := time.Now()
				if _, fb, err := d.LoadIntact(nil); err != nil || fb != nil {
					b.Fatal(err, fb)
				}
				verify += time.Since(start)
				start = time.Now()
				if _, err := d.ReadWorld(nil); err != nil {
					b.Fatal(err)
				}
				m := d.Manifest()
				p, _ := d.File(m.Chunks.Name)
				o := cfg
				o.Root, o.ReadOnly = m.Chunks.Root, true
				s, err := chunkstore.Open(p, &o)
				if err != nil {
					b.Fatal(err)
				}
				s.Close()
				plain += time.Since(start)
			}
			n := float64(b.N)
			b.ReportMetric(float64(verify.Nanoseconds())/n, "ns/verified-load")
			b.ReportMetric(float64(plain.Nanoseconds())/n, "ns/plain-load")
			b.ReportMetric(float64(verify)/float64(plain), "ratio")
		})
	}
}
