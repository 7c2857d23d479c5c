package sand_test

import (
	"testing"
	"time"

	"github.com/arksave/arksave/components"
)

// BenchmarkPixelAccess weighs the two ways a chunk's pixels can be stored
// for copy-on-write per tile, on the automaton's access pattern: a scan of
// a 512x512 chunk, tile by tile, row by row, reading each pixel and the one
// below it (the automaton's first look). "contiguous" is the chunk's one
// row-major slice, which arksave keeps (a save holds per-tile state beside
// it); "tiled" stores the chunk as 256 separate 32x32 tiles, each of which
// a save could share by reference, so that every read first finds its
// tile. Each iteration scans both ways; it reports ns per pixel for each
// and their ratio (tiled / contiguous).
func BenchmarkPixelAccess(b *testing.B) {
	const size, tile, side = 512, components.TileSize, 512 / components.TileSize
	flat := make([]components.Pixel, size*size)
	tiles := make([]*[tile * tile]components.Pixel, side*side)
	for t := range tiles {
		tiles[t] = new([tile * tile]components.Pixel)
	}
	for y := range size {
		for x := range size {
			p := components.Pixel((x*7 + y*13) % 5) // a few materials
			flat[y*size+x] = p
			tiles[y/tile*side+x/tile][y%tile*tile+x%tile] = p
		}
	}
	at := func(x, y int) components.Pixel { return tiles[y>>5*side+x>>5][(y&31)<<5|x&31] }
	var flatSum, tiledSum uint64
	var flatTime, tiledTime time.Duration
	for b.Loop() {
		start := time.Now()
		for ty := range side {
			for tx := range side {
				for y := ty * tile; y < (ty+1)*tile; y++ {
					below := min(y+1, size-1) * size
					for x := tx * tile; x < (tx+1)*tile; x++ {
						flatSum += uint64(flat[y*size+x]) + uint64(flat[below+x])
					}
				}
			}
		}
		flatTime += time.Since(start)

		start = time.Now()
		for ty := range side {
			for tx := range side {
				for y := ty * tile; y < (ty+1)*tile; y++ {
					below := min(y+1, size-1)
					for x := tx * tile; x < (tx+1)*tile; x++ {
						tiledSum += uint64(at(x, y)) + uint64(at(x, below))
					}
				}
			}
		}
		tiledTime += time.Since(start)
	}
	if flatSum != tiledSum {
		b.Fatal("the two layouts read different pixels")
	}
	px := float64(b.N) * size * size
	b.ReportMetric(float64(flatTime.Nanoseconds())/px, "ns/px-contiguous")
	b.ReportMetric(float64(tiledTime.Nanoseconds())/px, "ns/px-tiled")
	b.ReportMetric(float64(tiledTime)/float64(flatTime), "tiled/contiguous")
}
