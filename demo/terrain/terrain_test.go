package terrain_test

import (
	"sync"
	"testing"

	"github.com/arksave/arksave/demo/internal/testworld"
	"github.com/arksave/arksave/demo/sand"
	"github.com/arksave/arksave/demo/terrain"
)

var expect = testworld.Expect

func gen(x, y int32, seed uint64, size int) []uint32 {
	dst := make([]uint32, size*size)
	terrain.Generator{}.Generate(x, y, seed, dst)
	return dst
}

func TestGenerateDeterministic(t *testing.T) {
	a := gen(3, 0, 42, 256)
	b := gen(3, 0, 42, 256)
	for i := range a {
		expect(t, a[i] == b[i], "pixel %d differs: %08x != %08x", i, a[i], b[i])
	}
	c := gen(3, 0, 43, 256)
	same := 0
	for i := range a {
		if a[i] == c[i] {
			same++
		}
	}
	expect(t, same < len(a)*9/10, "another seed gives nearly the same chunk (%d of %d equal)", same, len(a))
}

// Concurrent calls (the save writer regenerates chunks beside the game) must
// agree with serial ones; run with -race.
func TestGenerateConcurrent(t *testing.T) {
	want := gen(0, 0, 7, 128)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := gen(0, 0, 7, 128)
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("pixel %d differs", i)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// Chunk size changes where chunk borders fall, never the world.
func TestGenerateSeamless(t *testing.T) {
	big := gen(0, 0, 9, 256)
	for cy := int32(0); cy < 2; cy++ {
		for cx := int32(0); cx < 2; cx++ {
			small := gen(cx, cy, 9, 128)
			for y := 0; y < 128; y++ {
				for x := 0; x < 128; x++ {
					bx, by := int(cx)*128+x, int(cy)*128+y
					expect(t, small[y*128+x] == big[by*256+bx], "world pixel (%d,%d) differs between chunk sizes", bx, by)
				}
			}
		}
	}
}

func TestGenerateNoFlagsAndKnownMaterials(t *testing.T) {
	for _, pos := range [][2]int32{{0, -1}, {0, 0}, {1, 1}, {-3, 2}} {
		for i, p := range gen(pos[0], pos[1], 5, 256) {
			expect(t, p>>16 == 0, "chunk %v pixel %d has damage or flags: %08x", pos, i, p)
			expect(t, sand.Material(p&0xff) < sand.NumMaterials, "chunk %v pixel %d: unknown material %d", pos, i, p&0xff)
		}
	}
}

// A band of chunks across the surface shows sky, the ground's layers, caves,
// ores, trees and water.
func TestGenerateVariety(t *testing.T) {
	counts := map[sand.Material]int{}
	for cx := int32(-16); cx < 16; cx++ {
		for cy := int32(-1); cy <= 3; cy++ {
			for _, p := range gen(cx, cy, 1, 256) {
				counts[sand.Material(p&0xff)]++
			}
		}
	}
	for _, m := range []sand.Material{sand.Air, sand.Stone, sand.Dirt, sand.Grass, sand.Sand, sand.Water, sand.Wood, sand.Leaf, sand.Coal, sand.Gold} {
		expect(t, counts[m] > 0, "no %s generated (counts %v)", sand.Materials[m].Name, counts)
	}
	sky := gen(0, -8, 1, 256)
	for _, p := range sky {
		expect(t, p == 0, "a chunk high in the sky must be all air")
	}
}

func TestGenerateRejectsBadSize(t *testing.T) {
	defer func() { expect(t, recover() != nil, "expected a panic") }()
	terrain.Generator{}.Generate(0, 0, 1, make([]uint32, 100))
}

func TestSurfaceMatchesGenerate(t *testing.T) {
	const size = 256
	pix := gen(0, 0, 3, size)
	top := gen(0, -1, 3, size)
	for x := 0; x < size; x++ {
		s := terrain.SurfaceY(x, 3)
		if s < 0 || s >= size {
			continue
		}
		p := pix[s*size+x]
		expect(t, p != 0 && sand.Material(p&0xff) != sand.Water, "column %d: surface pixel %d is %08x", x, s, p)
		_ = top
	}
}
