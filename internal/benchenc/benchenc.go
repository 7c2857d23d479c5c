// Package benchenc measures chunk encodings against each other for the
// benchmarks of the chunk store and of the demo: bytes per chunk and load
// time of the same chunks in a store of each encoding, in the same run.
package benchenc

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/arksave/arksave/chunkstore"
)

// Chunk is one chunk to store: its position and pixels.
type Chunk struct {
	Pos chunkstore.Pos
	Pix []uint32
}

// Compare writes chunks into a store made with cfg and each of
// EncodeDeltaFull (as stores of format 2 chose records) and EncodeSmallest,
// then loads them at random, alternating between the stores so that both
// see the same machine load. It reports bytes per chunk, load time and the
// ratios of both, and the ratio of the time of the one commit that wrote
// the chunks into each store (smallest/deltafull: what trying every
// encoding costs the writer; one sample each, so noisy).
func Compare(b *testing.B, cfg chunkstore.Options, chunks []Chunk) {
	b.Helper()
	if len(chunks) == 0 {
		b.Fatal("benchenc: no chunks")
	}
	encodings := []chunkstore.Encoding{chunkstore.EncodeDeltaFull, chunkstore.EncodeSmallest}
	stores := make([]*chunkstore.Store, len(encodings))
	var bytes [2]int64
	var kinds [2]string
	var commit [2]time.Duration
	for k, enc := range encodings {
		c := cfg
		c.Encoding = enc
		s, err := chunkstore.Create(filepath.Join(b.TempDir(), fmt.Sprintf("w%d.pxsw", k)), &c)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		batch := s.NewBatch()
		for _, ch := range chunks {
			batch.PutChunk(ch.Pos, ch.Pix)
		}
		t0 := time.Now()
		st, err := s.Commit(batch)
		commit[k] = time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		bytes[k], stores[k] = st.RecordBytes, s
		kinds[k] = fmt.Sprintf("%d delta, %d full, %d palette", st.Delta, st.Full, st.Palette)
	}
	dst := make([]uint32, int(cfg.ChunkSize)*int(cfg.ChunkSize))
	rng := rand.New(rand.NewPCG(1, 1))
	var took [2]time.Duration
	iter := 0
	b.ReportAllocs()
	for b.Loop() {
		iter++
		p := chunks[rng.IntN(len(chunks))].Pos
		for _, k := range [][]int{{0, 1}, {1, 0}}[iter%2] {
			t0 := time.Now()
			if _, err := stores[k].Get(p, dst); err != nil {
				b.Fatal(err)
			}
			took[k] += time.Since(t0)
		}
	}
	n := float64(len(chunks))
	b.ReportMetric(float64(bytes[0])/n, "B/chunk-deltafull")
	b.ReportMetric(float64(bytes[1])/n, "B/chunk-smallest")
	b.ReportMetric(float64(bytes[0])/float64(bytes[1]), "size-ratio")
	b.ReportMetric(float64(took[0].Nanoseconds())/float64(iter), "ns/load-deltafull")
	b.ReportMetric(float64(took[1].Nanoseconds())/float64(iter), "ns/load-smallest")
	b.ReportMetric(float64(took[1])/float64(took[0]), "load-ratio")
	b.ReportMetric(float64(commit[1])/float64(commit[0]), "commit-ratio")
	b.Logf("%d chunks stored as: deltafull %s; smallest %s", len(chunks), kinds[0], kinds[1])
}

// Paint paints 40 blobs of six colours of material 7 over pix, a chunk of
// size pixels a side, as a player with a brush would.
func Paint(pix []uint32, size int, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 8))
	for range 40 {
		cx, cy, r := rng.IntN(size), rng.IntN(size), 20+rng.IntN(60)
		colour := uint32(rng.IntN(6))
		for y := max(0, cy-r); y < min(size, cy+r); y++ {
			for x := max(0, cx-r); x < min(size, cx+r); x++ {
				if (x-cx)*(x-cx)+(y-cy)*(y-cy) < r*r {
					pix[y*size+x] = 7 | (colour*4+uint32(rng.IntN(3)))<<8
				}
			}
		}
	}
}
