package components_test

import (
	"testing"
	"time"

	"github.com/arksave/arksave/components"
)

// BenchmarkFirstWriteToSharedChunk measures what the game loop pays, besides
// the snapshot, when it writes into a 512x512 chunk that a running save
// holds and has not read: the first write into a tile copies that tile
// (32x32 pixels, 4 KiB). Each iteration shares the chunk (as a snapshot
// does), writes one pixel (timed), then reads the share and releases it (as
// the writer does); then, in the same iteration, it times the copy of the
// whole chunk (1 MiB into a new buffer) that the first write cost before
// copy-on-write went per tile. It reports both, in µs, and their ratio.
func BenchmarkFirstWriteToSharedChunk(b *testing.B) {
	const size = 512
	c := components.NewChunk(size, nil)
	var tile, chunk time.Duration
	var sink []components.Pixel
	read := make([]components.Pixel, size*size)
	v := components.Pixel(0)
	b.ReportAllocs()
	for b.Loop() {
		held := c.Share()
		v++
		start := time.Now()
		c.Set(100, 100, v)
		tile += time.Since(start)
		if err := held.CopyTo(read); err != nil || read[100*size+100] != v-1 {
			b.Fatalf("the save did not read the pixels at Share: %v", err)
		}
		held.Release()

		start = time.Now()
		sink = make([]components.Pixel, size*size)
		copy(sink, c.Pixels())
		chunk += time.Since(start)
	}
	if sink[100*size+100] != v {
		b.Fatal("the copy missed the write")
	}
	n := float64(b.N)
	b.ReportMetric(float64(tile.Nanoseconds())/1000/n, "us/tile-write")
	b.ReportMetric(float64(chunk.Nanoseconds())/1000/n, "us/chunk-copy")
	b.ReportMetric(float64(chunk)/float64(tile), "chunk/tile")
}
