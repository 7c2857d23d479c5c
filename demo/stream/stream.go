// Package stream is the demo's STAND-IN for arksave's chunk streaming: it
// keeps the chunks around every [components.Focus] loaded by generating them,
// and unloads the far ones. It persists nothing: a chunk that unloads loses
// its changes, and pixel bodies are left alone (the body system freezes a
// body whose chunk is gone and redraws it when the chunk comes back).
//
// arksave's streaming system replaces it one for one: it has the same shape
// (Initialize, Update, Finalize), honours the same contract (chunk entities
// with ChunkPos, Chunk and ChunkState, the ChunkIndex resource, load within
// Radius of a Focus, unload beyond Radius+1), and additionally loads saved
// chunks and saves and restores the bodies of the chunks it unloads.
package stream

import (
	"slices"
	"unsafe"

	"github.com/arksave/arksave/components"
	"github.com/mlange-42/ark/ecs"
)

// Generator makes the pixels of a chunk nobody has changed.
type Generator interface {
	Version() uint32
	Generate(x, y int32, seed uint64, dst []uint32)
}

// Stats counts chunk loads and unloads since the start; a resource.
type Stats struct {
	Loaded   uint64
	Unloaded uint64
}

// System loads and unloads chunks around every Focus.
type System struct {
	Generator Generator
	Seed      uint64
	Size      int // chunk edge in pixels
	// MaxLoadsPerTick bounds how many chunks one tick generates, nearest
	// first, so that panning never stalls a frame; the first tick loads
	// everything in range. Zero means 2.
	MaxLoadsPerTick int

	index  ecs.Resource[components.ChunkIndex]
	stats  ecs.Resource[Stats]
	chunks *ecs.Map3[components.ChunkPos, components.Chunk, components.ChunkState]
	focus  *ecs.Filter1[components.Focus]
	foci   []components.Focus
	drop   []components.ChunkPos
	want   []want
	warm   bool
}

type want struct {
	pos  components.ChunkPos
	dist int32
}

// Initialize adds the ChunkIndex and Stats resources if the world has none.
func (s *System) Initialize(w *ecs.World) {
	s.index = ecs.NewResource[components.ChunkIndex](w)
	if !s.index.Has() {
		s.index.Add(components.NewChunkIndex())
	}
	s.stats = ecs.NewResource[Stats](w)
	if !s.stats.Has() {
		s.stats.Add(&Stats{})
	}
	s.chunks = ecs.NewMap3[components.ChunkPos, components.Chunk, components.ChunkState](w)
	s.focus = ecs.NewFilter1[components.Focus](w).Register()
	if s.MaxLoadsPerTick == 0 {
		s.MaxLoadsPerTick = 2
	}
}

// Update unloads the chunks beyond every focus's Radius+1 and loads missing
// chunks within a focus's Radius.
func (s *System) Update(w *ecs.World) {
	s.foci = s.foci[:0]
	q := s.focus.Query()
	for q.Next() {
		s.foci = append(s.foci, *q.Get())
	}
	index, stats := s.index.Get(), s.stats.Get()

	s.drop = s.drop[:0]
	index.All(func(pos components.ChunkPos, _ ecs.Entity) bool {
		if s.beyond(pos) > 1 {
			s.drop = append(s.drop, pos)
		}
		return true
	})
	slices.SortFunc(s.drop, comparePos)
	for _, pos := range s.drop {
		e, _ := index.Get(pos)
		w.RemoveEntity(e)
		index.Delete(pos)
		stats.Unloaded++
	}

	s.want = s.want[:0]
	for _, f := range s.foci {
		c := components.ChunkOf(f.X, f.Y, s.Size)
		for y := c.Y - f.Radius; y <= c.Y+f.Radius; y++ {
			for x := c.X - f.Radius; x <= c.X+f.Radius; x++ {
				pos := components.ChunkPos{X: x, Y: y}
				if _, ok := index.Get(pos); !ok {
					s.want = append(s.want, want{pos, s.beyond(pos)})
				}
			}
		}
	}
	slices.SortFunc(s.want, func(a, b want) int {
		if a.dist != b.dist {
			return int(a.dist - b.dist)
		}
		return comparePos(a.pos, b.pos)
	})
	s.want = slices.CompactFunc(s.want, func(a, b want) bool { return a.pos == b.pos })
	limit := s.MaxLoadsPerTick
	if !s.warm {
		limit, s.warm = len(s.want), true
	}
	for _, wt := range s.want[:min(limit, len(s.want))] {
		s.load(wt.pos, index)
		stats.Loaded++
	}
}

// Finalize does nothing: the stand-in has nothing to flush.
func (s *System) Finalize(w *ecs.World) {}

func (s *System) load(pos components.ChunkPos, index *components.ChunkIndex) {
	pix := make([]components.Pixel, s.Size*s.Size)
	s.Generator.Generate(pos.X, pos.Y, s.Seed, unsafe.Slice((*uint32)(unsafe.Pointer(&pix[0])), len(pix)))
	chunk := components.NewChunkFrom(s.Size, pix)
	e := s.chunks.NewEntity(&pos, &chunk, &components.ChunkState{})
	index.Set(pos, e)
}

// beyond returns how many chunks pos lies outside the radius of the nearest
// focus (Chebyshev distance minus radius): zero or less inside.
func (s *System) beyond(pos components.ChunkPos) int32 {
	best := int32(1 << 30)
	for _, f := range s.foci {
		c := components.ChunkOf(f.X, f.Y, s.Size)
		best = min(best, max(abs(pos.X-c.X), abs(pos.Y-c.Y))-f.Radius)
	}
	return best
}

func abs(v int32) int32 {
	if v < 0 {
		return -v
	}
	return v
}

func comparePos(a, b components.ChunkPos) int {
	if a.Y != b.Y {
		return int(a.Y - b.Y)
	}
	return int(a.X - b.X)
}
