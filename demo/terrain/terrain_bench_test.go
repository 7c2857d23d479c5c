package terrain_test

import (
	"testing"

	"github.com/arksave/arksave/demo/terrain"
)

func benchmarkGenerate(b *testing.B, x, y int32) {
	dst := make([]uint32, 512*512)
	b.SetBytes(int64(len(dst) * 4))
	b.ReportAllocs()
	for b.Loop() {
		terrain.Generator{}.Generate(x, y, 1, dst)
	}
}

// The chunk that holds the surface: sky, trees, layers and the first caves.
func BenchmarkGenerate_512_Surface(b *testing.B) { benchmarkGenerate(b, 0, 0) }

// A chunk deep underground: stone, caves and ores in every pixel.
func BenchmarkGenerate_512_Underground(b *testing.B) { benchmarkGenerate(b, 0, 3) }

// A chunk of sky: the fast path.
func BenchmarkGenerate_512_Sky(b *testing.B) { benchmarkGenerate(b, 0, -3) }
