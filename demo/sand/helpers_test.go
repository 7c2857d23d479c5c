package sand_test

import (
	"testing"

	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/demo/sand"
	"github.com/mlange-42/ark/ecs"
)

func expect(t *testing.T, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Fatalf(format, args...)
	}
}

// testWorld is a few chunks, the field and the automaton, without streaming.
type testWorld struct {
	t      *testing.T
	w      *ecs.World
	size   int
	field  *sand.Field
	sys    *sand.System
	index  *components.ChunkIndex
	chunks *ecs.Map3[components.ChunkPos, components.Chunk, components.ChunkState]
	tiles  *ecs.Map[sand.Tiles]
}

func newTestWorld(t *testing.T, size int, seed uint64) *testWorld {
	w := ecs.NewWorld()
	tw := &testWorld{t: t, w: w, size: size, index: components.NewChunkIndex()}
	ecs.AddResource(w, tw.index)
	tw.field = sand.NewField(w, size)
	ecs.AddResource(w, tw.field)
	tw.chunks = ecs.NewMap3[components.ChunkPos, components.Chunk, components.ChunkState](w)
	tw.tiles = ecs.NewMap[sand.Tiles](w)
	tw.sys = &sand.System{Seed: seed}
	tw.sys.Initialize(w)
	return tw
}

// addChunk loads chunk (cx, cy) with pixels from fill(world x, world y).
func (tw *testWorld) addChunk(cx, cy int32, fill func(x, y int) components.Pixel) {
	n := tw.size
	pix := make([]components.Pixel, n*n)
	if fill != nil {
		for y := 0; y < n; y++ {
			for x := 0; x < n; x++ {
				pix[y*n+x] = fill(int(cx)*n+x, int(cy)*n+y)
			}
		}
	}
	pos := components.ChunkPos{X: cx, Y: cy}
	c := components.NewChunkFrom(n, pix)
	e := tw.chunks.NewEntity(&pos, &c, &components.ChunkState{})
	tw.index.Set(pos, e)
}

func (tw *testWorld) entity(x, y int) (ecs.Entity, int, int) {
	n := tw.size
	pos := components.ChunkOf(float64(x), float64(y), n)
	e, ok := tw.index.Get(pos)
	if !ok {
		tw.t.Fatalf("pixel (%d, %d) is not loaded", x, y)
	}
	return e, x - int(pos.X)*n, y - int(pos.Y)*n
}

func (tw *testWorld) at(x, y int) components.Pixel {
	e, lx, ly := tw.entity(x, y)
	_, c, _ := tw.chunks.Get(e)
	return c.At(lx, ly)
}

// paint writes pixels through the field, as the game's tools do.
func (tw *testWorld) paint(fn func(set func(x, y int, p components.Pixel))) {
	tw.field.Begin()
	fn(func(x, y int, p components.Pixel) { tw.field.Set(x, y, p) })
	tw.field.End()
}

func (tw *testWorld) tick(n int) {
	for range n {
		tw.sys.Update(tw.w)
	}
}

// settle ticks until no tile is awake and returns the ticks it took.
func (tw *testWorld) settle(limit int) int {
	for i := 1; i <= limit; i++ {
		tw.tick(1)
		if tw.awake() == 0 {
			return i
		}
	}
	tw.t.Fatalf("world not at rest after %d ticks (%d tiles awake)", limit, tw.awake())
	return limit
}

// awake counts the tiles that will simulate next tick.
func (tw *testWorld) awake() int {
	n := 0
	q := ecs.NewFilter1[sand.Tiles](tw.w).Query()
	for q.Next() {
		n += q.Get().Awake()
	}
	return n
}

func (tw *testWorld) state(cx, cy int32) components.ChunkState {
	e, ok := tw.index.Get(components.ChunkPos{X: cx, Y: cy})
	expect(tw.t, ok, "chunk (%d, %d) not loaded", cx, cy)
	_, _, s := tw.chunks.Get(e)
	return *s
}

// count counts the pixels of material m in all loaded chunks.
func (tw *testWorld) count(m sand.Material) int {
	n := 0
	q := ecs.NewFilter1[components.Chunk](tw.w).Query()
	for q.Next() {
		for _, p := range q.Get().Pixels() {
			if sand.MaterialOf(p) == m {
				n++
			}
		}
	}
	return n
}

// snapshot copies every chunk's pixels, keyed by position.
func (tw *testWorld) snapshot() map[components.ChunkPos][]components.Pixel {
	out := map[components.ChunkPos][]components.Pixel{}
	q := ecs.NewFilter2[components.ChunkPos, components.Chunk](tw.w).Query()
	for q.Next() {
		pos, c := q.Get()
		out[*pos] = append([]components.Pixel(nil), c.Pixels()...)
	}
	return out
}

var (
	stone = sand.Make(sand.Stone, 100)
	wood  = sand.Make(sand.Wood, 100)
)

// box returns a fill: stone floor at the bottom row of the world rectangle
// and walls at its sides, air inside.
func box(x0, y0, x1, y1 int) func(x, y int) components.Pixel {
	return func(x, y int) components.Pixel {
		if y == y1 || x == x0 || x == x1 {
			if y >= y0 && y <= y1 && x >= x0 && x <= x1 {
				return stone
			}
		}
		return 0
	}
}
