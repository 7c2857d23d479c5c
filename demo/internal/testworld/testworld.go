// Package testworld builds small pixel worlds for the demo's tests: a few
// chunks, the sand field and whichever systems a test runs, without
// streaming or a window.
package testworld

import (
	"testing"

	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/demo/sand"
	"github.com/mlange-42/ark/ecs"
)

// Expect fails the test with the message unless ok.
func Expect(t testing.TB, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Fatalf(format, args...)
	}
}

// System is an ECS system as the demo's systems are.
type System interface {
	Initialize(w *ecs.World)
	Update(w *ecs.World)
	Finalize(w *ecs.World)
}

// World is a test world.
type World struct {
	T       testing.TB
	W       *ecs.World
	Size    int
	Field   *sand.Field
	Sand    *sand.System
	Systems []System // run in order by Tick; Sand is the last
	Index   *components.ChunkIndex
	chunks  *ecs.Map3[components.ChunkPos, components.Chunk, components.ChunkState]
}

// New returns a world of chunks of size pixels whose automaton has the given
// seed; systems run before the automaton each tick.
func New(t testing.TB, size int, seed uint64, systems ...System) *World {
	w := ecs.NewWorld()
	tw := &World{T: t, W: w, Size: size, Index: components.NewChunkIndex()}
	ecs.AddResource(w, tw.Index)
	ecs.AddResource(w, &components.BodyIDs{Session: 1})
	tw.Field = sand.NewField(w, size)
	ecs.AddResource(w, tw.Field)
	tw.chunks = ecs.NewMap3[components.ChunkPos, components.Chunk, components.ChunkState](w)
	tw.Sand = &sand.System{Seed: seed}
	tw.Systems = append(systems, tw.Sand)
	for _, s := range tw.Systems {
		s.Initialize(w)
	}
	return tw
}

// AddChunk loads chunk (cx, cy) with pixels from fill(world x, world y);
// a nil fill leaves it air.
func (tw *World) AddChunk(cx, cy int32, fill func(x, y int) components.Pixel) ecs.Entity {
	n := tw.Size
	pix := make([]components.Pixel, n*n)
	if fill != nil {
		for y := 0; y < n; y++ {
			for x := 0; x < n; x++ {
				pix[y*n+x] = fill(int(cx)*n+x, int(cy)*n+y)
			}
		}
	}
	pos := components.ChunkPos{X: cx, Y: cy}
	c := components.NewChunk(n, pix)
	e := tw.chunks.NewEntity(&pos, &c, &components.ChunkState{})
	tw.Index.Set(pos, e)
	return e
}

// RemoveChunk unloads chunk (cx, cy).
func (tw *World) RemoveChunk(cx, cy int32) {
	pos := components.ChunkPos{X: cx, Y: cy}
	e, ok := tw.Index.Get(pos)
	Expect(tw.T, ok, "chunk %v is not loaded", pos)
	tw.W.RemoveEntity(e)
	tw.Index.Delete(pos)
}

// Chunk returns the chunk holding world pixel (x, y) and the pixel's
// coordinates in it.
func (tw *World) Chunk(x, y int) (*components.Chunk, *components.ChunkState, int, int) {
	n := tw.Size
	pos := components.ChunkOf(float64(x), float64(y), n)
	e, ok := tw.Index.Get(pos)
	Expect(tw.T, ok, "pixel (%d, %d) is not loaded", x, y)
	_, c, s := tw.chunks.Get(e)
	return c, s, x - int(pos.X)*n, y - int(pos.Y)*n
}

// At returns the pixel at world (x, y).
func (tw *World) At(x, y int) components.Pixel {
	c, _, lx, ly := tw.Chunk(x, y)
	return c.At(lx, ly)
}

// Paint writes pixels through the field, as the game's tools do.
func (tw *World) Paint(fn func(set func(x, y int, p components.Pixel))) {
	tw.Field.Begin()
	fn(func(x, y int, p components.Pixel) { tw.Field.Set(x, y, p) })
	tw.Field.End()
}

// Tick runs every system n times.
func (tw *World) Tick(n int) {
	for range n {
		for _, s := range tw.Systems {
			s.Update(tw.W)
		}
	}
}

// Settle ticks until no tile is awake and done (if not nil) reports true,
// and returns the ticks it took.
func (tw *World) Settle(limit int, done func() bool) int {
	tw.T.Helper()
	for i := 1; i <= limit; i++ {
		tw.Tick(1)
		if tw.Awake() == 0 && (done == nil || done()) {
			return i
		}
	}
	tw.T.Fatalf("world not at rest after %d ticks (%d tiles awake)", limit, tw.Awake())
	return limit
}

// Awake counts the tiles that will simulate next tick.
func (tw *World) Awake() int {
	n := 0
	q := ecs.NewFilter1[sand.Tiles](tw.W).Query()
	for q.Next() {
		n += q.Get().Awake()
	}
	return n
}

// State returns the persistence state of chunk (cx, cy).
func (tw *World) State(cx, cy int32) components.ChunkState {
	e, ok := tw.Index.Get(components.ChunkPos{X: cx, Y: cy})
	Expect(tw.T, ok, "chunk (%d, %d) not loaded", cx, cy)
	_, _, s := tw.chunks.Get(e)
	return *s
}

// Count counts the pixels of material m in all loaded chunks.
func (tw *World) Count(m sand.Material) int {
	n := 0
	q := ecs.NewFilter1[components.Chunk](tw.W).Query()
	for q.Next() {
		for _, p := range q.Get().Pixels() {
			if sand.MaterialOf(p) == m {
				n++
			}
		}
	}
	return n
}

// CountFlag counts the pixels that carry FlagPixelBody.
func (tw *World) CountFlag() int {
	n := 0
	q := ecs.NewFilter1[components.Chunk](tw.W).Query()
	for q.Next() {
		for _, p := range q.Get().Pixels() {
			if p.Flags()&components.FlagPixelBody != 0 {
				n++
			}
		}
	}
	return n
}

// Snapshot copies every chunk's pixels, keyed by position.
func (tw *World) Snapshot() map[components.ChunkPos][]components.Pixel { return Pixels(tw.W) }

// Pixels copies the pixels of every chunk of w, keyed by position.
func Pixels(w *ecs.World) map[components.ChunkPos][]components.Pixel {
	out := map[components.ChunkPos][]components.Pixel{}
	q := ecs.NewFilter2[components.ChunkPos, components.Chunk](w).Query()
	for q.Next() {
		pos, c := q.Get()
		out[*pos] = append([]components.Pixel(nil), c.Pixels()...)
	}
	return out
}

// Stone and Wood are plain pixels for building test scenes.
var (
	Stone = sand.Make(sand.Stone, 100)
	Wood  = sand.Make(sand.Wood, 100)
)

// Box returns a fill: a stone floor on row y1 and walls on columns x0 and x1
// from row y0 down, air elsewhere.
func Box(x0, y0, x1, y1 int) func(x, y int) components.Pixel {
	return func(x, y int) components.Pixel {
		if y >= y0 && y <= y1 && x >= x0 && x <= x1 && (y == y1 || x == x0 || x == x1) {
			return Stone
		}
		return 0
	}
}
