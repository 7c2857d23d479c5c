package sand_test

import (
	"testing"

	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/demo/internal/testworld"
	"github.com/arksave/arksave/demo/sand"
	"github.com/arksave/arksave/demo/terrain"
)

var (
	expect = testworld.Expect
	stone  = testworld.Stone
	wood   = testworld.Wood
	box    = testworld.Box
)

type testWorld = testworld.World

func newTestWorld(t *testing.T, size int, seed uint64) *testWorld {
	return testworld.New(t, size, seed)
}

func TestSandFallsAndPiles(t *testing.T) {
	tw := newTestWorld(t, 64, 1)
	tw.AddChunk(0, 0, box(0, 0, 63, 63))
	tw.Paint(func(set func(x, y int, p components.Pixel)) {
		for y := 2; y < 22; y++ {
			for x := 30; x < 34; x++ {
				set(x, y, sand.Make(sand.Sand, 7))
			}
		}
	})
	tw.Settle(400, nil)
	expect(t, tw.Count(sand.Sand) == 80, "sand not conserved: %d", tw.Count(sand.Sand))
	height := func(x int) int {
		h := 0
		for y := 62; y > 0 && sand.MaterialOf(tw.At(x, y)) == sand.Sand; y-- {
			h++
		}
		return h
	}
	expect(t, sand.MaterialOf(tw.At(31, 2)) == sand.Air, "sand did not fall")
	mid, edge := height(31)+height(32), height(20)+height(43)
	expect(t, mid >= 8 && edge == 0, "expected a pile: centre %d, edges %d", mid, edge)
	// a pile: no step of more than one pixel between neighbouring columns
	for x := 2; x < 62; x++ {
		d := height(x) - height(x+1)
		expect(t, d >= -1 && d <= 1, "pile too steep between columns %d and %d: %d", x, x+1, d)
	}
}

func TestWaterLevels(t *testing.T) {
	tw := newTestWorld(t, 64, 2)
	tw.AddChunk(0, 0, box(4, 10, 59, 62))
	// a tall column of water at the left wall of the basin
	tw.Paint(func(set func(x, y int, p components.Pixel)) {
		for y := 12; y < 60; y++ {
			for x := 5; x < 9; x++ {
				set(x, y, sand.Make(sand.Water, 3))
			}
		}
	})
	want := tw.Count(sand.Water)
	ticks := tw.Settle(3000, nil)
	expect(t, tw.Count(sand.Water) == want, "water not conserved: %d != %d", tw.Count(sand.Water), want)
	// 192 pixels over 54 columns: three full rows and a part
	depth := func(x int) int {
		h := 0
		for y := 61; y > 10 && sand.MaterialOf(tw.At(x, y)) == sand.Water; y-- {
			h++
		}
		return h
	}
	lo, hi := 99, 0
	for x := 5; x < 59; x++ {
		lo, hi = min(lo, depth(x)), max(hi, depth(x))
	}
	expect(t, hi-lo <= 1, "surface not level after %d ticks: depths %d..%d", ticks, lo, hi)
	// at rest: further ticks change nothing and simulate nothing
	before := tw.State(0, 0).Version
	tw.Tick(10)
	expect(t, tw.State(0, 0).Version == before, "a level basin kept changing")
}

func TestFireBurnsWoodOut(t *testing.T) {
	tw := newTestWorld(t, 64, 3)
	tw.AddChunk(0, 0, func(x, y int) components.Pixel {
		switch {
		case y == 63:
			return stone
		case x >= 20 && x < 44 && y >= 50 && y < 63:
			return wood
		}
		return 0
	})
	tw.Paint(func(set func(x, y int, p components.Pixel)) {
		for x := 28; x < 34; x++ {
			set(x, 49, sand.Make(sand.Fire, 0))
		}
	})
	ticks := tw.Settle(6000, nil)
	expect(t, tw.Count(sand.Wood) == 0, "%d wood left after %d ticks", tw.Count(sand.Wood), ticks)
	expect(t, tw.Count(sand.Fire) == 0 && tw.Count(sand.Smoke) == 0, "fire or smoke left at rest")
	expect(t, tw.Count(sand.Stone) == 64, "the stone floor burned")
}

func TestWaterPutsOutFire(t *testing.T) {
	tw := newTestWorld(t, 64, 4)
	tw.AddChunk(0, 0, box(0, 0, 63, 63))
	tw.Paint(func(set func(x, y int, p components.Pixel)) {
		for x := 10; x < 50; x++ {
			set(x, 62, sand.Make(sand.Water, 0))
		}
		set(30, 61, sand.Make(sand.Fire, 0))
	})
	tw.Settle(1000, nil)
	expect(t, tw.Count(sand.Fire) == 0, "fire survived on water")
	expect(t, tw.Count(sand.Water) < 40, "no water turned to steam")
}

func TestCrossChunkFall(t *testing.T) {
	tw := newTestWorld(t, 64, 5)
	tw.AddChunk(0, 0, nil)
	tw.AddChunk(1, 0, nil)
	tw.AddChunk(0, 1, func(x, y int) components.Pixel {
		if y == 127 {
			return stone
		}
		return 0
	})
	tw.AddChunk(1, 1, func(x, y int) components.Pixel {
		if y == 127 {
			return stone
		}
		return 0
	})
	tw.Settle(2, nil) // fresh chunks are awake for one tick, then sleep
	// sand at the bottom of chunk (0,0), on the vertical border, falls into
	// (0,1) and piles across the border into (1,1)
	tw.Paint(func(set func(x, y int, p components.Pixel)) {
		for y := 40; y < 64; y++ {
			for x := 62; x < 66; x++ {
				set(x, y, sand.Make(sand.Sand, 1))
			}
		}
	})
	tw.Settle(500, nil)
	expect(t, sand.MaterialOf(tw.At(63, 126)) == sand.Sand && sand.MaterialOf(tw.At(64, 126)) == sand.Sand, "sand did not land on the floor of the chunks below")
	below := 0
	for x := 0; x < 128; x++ {
		for y := 64; y < 127; y++ {
			if sand.MaterialOf(tw.At(x, y)) == sand.Sand {
				below++
			}
		}
	}
	expect(t, below == 96, "all 96 sand pixels must end in the lower chunks, got %d", below)
	for _, c := range [][2]int32{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
		expect(t, tw.State(c[0], c[1]).Status == components.Dirty, "chunk %v changed but is not dirty", c)
	}
}

// Pixels at the edge of the loaded world treat the unloaded side as a wall.
func TestUnloadedNeighbourIsWall(t *testing.T) {
	tw := newTestWorld(t, 64, 6)
	tw.AddChunk(0, 0, nil)
	tw.Settle(2, nil)
	tw.Paint(func(set func(x, y int, p components.Pixel)) { set(10, 63, sand.Make(sand.Sand, 0)) })
	tw.Settle(10, nil)
	expect(t, sand.MaterialOf(tw.At(10, 63)) == sand.Sand, "sand fell out of the loaded world")
}

// Generated terrain is at rest: after the first tick of freshly loaded
// chunks, nothing is awake, nothing changed, every chunk is clean, and
// further ticks simulate no tile.
func TestTerrainAtRest(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		tw := newTestWorld(t, 128, seed)
		for cy := int32(-1); cy <= 2; cy++ {
			for cx := int32(-3); cx <= 3; cx++ {
				pix := make([]uint32, 128*128)
				terrain.Generator{}.Generate(cx, cy, seed, pix)
				tw.AddChunk(cx, cy, func(x, y int) components.Pixel {
					return components.Pixel(pix[(y-int(cy)*128)*128+x-int(cx)*128])
				})
			}
		}
		tw.Tick(1)
		expect(t, tw.Sand.Stats().Tiles > 0, "fresh chunks must be simulated once")
		expect(t, tw.Awake() == 0, "seed %d: generated terrain is not at rest: %d tiles awake", seed, tw.Awake())
		for cy := int32(-1); cy <= 2; cy++ {
			for cx := int32(-3); cx <= 3; cx++ {
				s := tw.State(cx, cy)
				expect(t, s.Status == components.Clean && s.Version == 0, "seed %d chunk (%d,%d) is %v after a tick at rest", seed, cx, cy, s.Status)
			}
		}
		tw.Tick(5)
		expect(t, tw.Sand.Stats().Tiles == 0, "a world at rest still simulates %d tiles", tw.Sand.Stats().Tiles)
	}
}

// Activity in one chunk leaves the others clean; a chunk is marked dirty once
// per tick however many of its pixels change.
func TestDirtyOnlyOnChange(t *testing.T) {
	tw := newTestWorld(t, 64, 7)
	tw.AddChunk(0, 0, box(0, 0, 63, 63))
	tw.AddChunk(2, 0, box(128, 0, 191, 63))
	tw.Settle(2, nil)
	tw.Paint(func(set func(x, y int, p components.Pixel)) {
		for x := 20; x < 40; x++ {
			set(x, 5, sand.Make(sand.Sand, 0))
		}
	})
	v := tw.State(0, 0).Version
	tw.Tick(1)
	expect(t, tw.State(0, 0).Version == v+1, "one tick of falling sand must mark the chunk once: %d -> %d", v, tw.State(0, 0).Version)
	tw.Settle(200, nil)
	expect(t, tw.State(2, 0).Status == components.Clean, "an untouched chunk became %v", tw.State(2, 0).Status)
}

// The simulation writes a chunk a save holds while the save reads it: the
// save gets the pixels as they were when it took them, tiles copied for it
// where the simulation wrote first, and the live chunk moves on.
func TestSimulationRespectsSharedBuffers(t *testing.T) {
	tw := newTestWorld(t, 64, 8)
	tw.AddChunk(0, 0, box(0, 0, 63, 63))
	tw.Settle(2, nil)
	tw.Paint(func(set func(x, y int, p components.Pixel)) { set(30, 5, sand.Make(sand.Sand, 0)) })
	c, _, _, _ := tw.Chunk(0, 0)
	saved := append([]components.Pixel(nil), c.Pixels()...)
	held := c.Share()
	tw.Settle(100, nil)
	tiles, _ := held.CopyCost()
	expect(t, tiles > 0 && tiles < 4, "the falling sand crossed %d of the four tiles before the save read them", tiles)
	got := make([]components.Pixel, 64*64)
	expect(t, held.CopyTo(got) == nil, "read the held pixels")
	for i := range saved {
		expect(t, got[i] == saved[i], "the simulation wrote into the save's pixels at %d", i)
	}
	held.Release()
	expect(t, sand.MaterialOf(tw.At(30, 62)) == sand.Sand, "the sand did not fall in the live chunk")
}

func scene(tw *testWorld) {
	tw.AddChunk(0, 0, box(0, 0, 63, 63))
	tw.AddChunk(1, 0, box(64, 0, 127, 63))
	tw.Paint(func(set func(x, y int, p components.Pixel)) {
		for y := 5; y < 30; y++ {
			for x := 10; x < 120; x += 3 {
				set(x, y, sand.Make(sand.Sand, uint8(x)))
				set(x+1, y, sand.Make(sand.Water, uint8(y)))
			}
		}
		for x := 70; x < 110; x++ {
			set(x, 50, wood)
		}
		set(90, 49, sand.Make(sand.Fire, 0))
	})
}

func TestDeterministic(t *testing.T) {
	a, b, c := newTestWorld(t, 64, 11), newTestWorld(t, 64, 11), newTestWorld(t, 64, 12)
	for _, tw := range []*testWorld{a, b, c} {
		scene(tw)
		tw.Tick(150)
	}
	sa, sb, sc := a.Snapshot(), b.Snapshot(), c.Snapshot()
	differs := false
	for pos, pix := range sa {
		for i := range pix {
			expect(t, pix[i] == sb[pos][i], "same seed, different pixel at chunk %v index %d", pos, i)
			differs = differs || pix[i] != sc[pos][i]
		}
	}
	expect(t, differs, "another seed gave exactly the same world")
}
