package savedir_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/conv"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/snapshot"
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

// BenchmarkSave_BackupCopy measures what a backup with a chunk store of its
// own costs: a store of 64 or 256 stored 512x512 chunks (2% of their pixels
// changed: delta records) in a save directory on disk, saves of 5 of them
// changed, and after each save the copy of the store into backups/ that
// the next save's backup names (Config.BackupCopyEvery 1). It reports a
// save (request to durable commit, without the copy before it, which the
// save waited for), the copy between two saves and the bytes it wrote,
// and their ratio.
func BenchmarkSave_BackupCopy(b *testing.B) {
	const chunk = 512
	for _, stored := range []int{64, 256} {
		b.Run(fmt.Sprintf("stored=%d", stored), func(b *testing.B) {
			cfg := chunkstore.Options{ChunkSize: chunk, TileSize: 32, PixelSize: 4, Seed: 3, Generator: flatGen{}}
			w, err := savedir.OpenWriter(filepath.Join(b.TempDir(), "save"), savedir.Options{Store: cfg})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			rng := rand.New(rand.NewPCG(1, 1))
			snap := func(g int, xs []int32) *snapshot.Snapshot { return deltaSnap(rng, chunk, g, xs) }
			save := func(j savedir.Job) *autosave.Result {
				if !w.Submit(j) {
					b.Fatal("busy")
				}
				r := w.Wait()
				if r.Err != nil {
					b.Fatal(r.Err)
				}
				return r
			}
			all := make([]int32, stored)
			for i := range all {
				all[i] = int32(i)
			}
			save(savedir.Job{Snap: snap(0, all), MaxBackups: 1, BackupCopyEvery: 1})
			var saves, copies time.Duration
			var copied int64
			n := 0
			g := 0
			for b.Loop() {
				g++
				xs := make([]int32, 5)
				for k := range xs {
					xs[k] = int32(rng.IntN(stored))
				}
				r := save(savedir.Job{Snap: snap(g, xs), MaxBackups: 1, BackupCopyEvery: 1})
				if r.BackupChunks == "" || r.BackupCopyErr != nil {
					b.Fatalf("save %d: no copy of the store for the backup (%v)", g, r.BackupCopyErr)
				}
				saves += r.Duration - r.BackupCopyDuration // the save waited for the copy
				copies += r.BackupCopyDuration
				copied += r.BackupCopyBytes
				n++
			}
			b.ReportMetric(float64(saves.Nanoseconds())/float64(n), "ns/save")
			b.ReportMetric(float64(copies.Nanoseconds())/float64(n), "ns/copy")
			b.ReportMetric(float64(copied)/float64(n), "copy-bytes")
			b.ReportMetric(float64(copies)/float64(saves), "ratio-copy/save")
		})
	}
}

// deltaSnap is save g of the chunks at xs (row 0): each the generated
// chunk with 2% of its pixels changed at random, so that it takes a Delta
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
