package autosave_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
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
	w, err := autosave.OpenWriter(filepath.Join(b.TempDir(), "save"), autosave.Options{Store: cfg})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	rng := rand.New(rand.NewPCG(1, 1))
	snap := func(g int) *snapshot.Snapshot {
		s := &snapshot.Snapshot{World: []byte(fmt.Sprintf("world %d", g))}
		for k := range int32(5) {
			x := 5*int32(g) + k // new chunks each save: nothing dead, no compaction between saves
			pix := make([]uint32, chunk*chunk)
			flatGen{}.Generate(x, 0, 3, pix)
			for range chunk * chunk / 50 {
				pix[rng.IntN(len(pix))] = uint32(1 + rng.IntN(200))
			}
			c := components.NewChunkFrom(chunk, snapshot.Pixels(pix))
			s.Chunks = append(s.Chunks, snapshot.Chunk{Pos: components.ChunkPos{X: x}, Buf: c.Share(), Version: uint64(g)})
		}
		return s
	}
	var took [2]time.Duration
	var count [2]int
	g := 0
	last := ""
	for b.Loop() {
		g++
		if !w.Submit(autosave.Job{Snap: snap(g), MaxBackups: 1}) {
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
