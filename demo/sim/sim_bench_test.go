package sim_test

import (
	"testing"

	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/demo/sand"
	"github.com/arksave/arksave/demo/sim"
	"github.com/arksave/arksave/demo/terrain"
	"github.com/mlange-42/ark/ecs"
)

// emitters is a player with many hands: every tick it rains sand, water and
// oil over two columns of chunks and keeps wooden beams burning, so that four
// 512-pixel chunks (two in the sky, two holding the surface) are busy.
type emitters struct {
	s      *sim.Sim
	x0     int // world x of the left chunk column
	top    int // world y of the upper chunk row
	tick   int
	size   int
	chunks [4]components.ChunkPos
}

func newEmitters(s *sim.Sim) *emitters {
	size := s.Config.ChunkSize
	f := s.Focus()
	cx := components.ChunkOf(f.X, 0, size).X
	surface := terrain.SurfaceY(int(f.X), s.Config.Seed)
	cy := components.ChunkOf(0, float64(surface), size).Y
	e := &emitters{s: s, x0: int(cx) * size, top: int(cy-1) * size, size: size}
	e.chunks = [4]components.ChunkPos{{X: cx, Y: cy - 1}, {X: cx + 1, Y: cy - 1}, {X: cx, Y: cy}, {X: cx + 1, Y: cy}}
	return e
}

func (e *emitters) Update() {
	f := e.s.Field
	f.Begin()
	mats := [...]sand.Material{sand.Sand, sand.Water, sand.Sand, sand.Oil}
	for k := 0; k < 8; k++ {
		x := e.x0 + e.size/8 + k*e.size/4
		y := e.top + e.size/4
		m := mats[k%len(mats)]
		for dx := -3; dx <= 3; dx++ {
			if (dx+e.tick+k)%2 == 0 {
				if p, ok := f.At(x+dx, y); ok && p == 0 {
					f.Set(x+dx, y, sand.Make(m, uint8(dx*20+e.tick)))
				}
			}
		}
		if e.tick%120 == k*10 { // a beam of wood in the sky, set alight
			for dx := -20; dx <= 20; dx++ {
				f.Set(x+dx, y+120, sand.Make(sand.Wood, 120))
			}
			f.Set(x, y+119, sand.Make(sand.Fire, 0))
		}
	}
	f.End()
	e.tick++
}

// BenchmarkTick_4ActiveChunks measures one headless tick of the whole
// simulation (tools, streamer, bodies, sand) while four 512-pixel chunks are
// busy with falling sand, flowing water and oil, and fire, nine loaded. It
// reports ms/tick; 60 ticks a second leave 16.7 ms.
func BenchmarkTick_4ActiveChunks(b *testing.B) {
	s := sim.New(sim.Config{Seed: 1, ChunkSize: 512, Radius: 1})
	e := newEmitters(s)
	for range 300 { // let the piles and pools build up
		e.Update()
		s.Step()
	}
	busy := 0
	for _, pos := range e.chunks {
		if tilesAwake(s, pos) > 0 {
			busy++
		}
	}
	if busy != 4 {
		b.Fatalf("only %d of the 4 chunks are active", busy)
	}
	tiles := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		e.Update()
		s.Step()
		tiles += s.Sand.Stats().Tiles
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/tick")
	b.ReportMetric(float64(tiles)/float64(b.N), "tiles/tick")
}

// BenchmarkTick_AtRest measures a tick of a loaded world (nine 512-pixel
// chunks, two bodies lying still) where nothing moves.
func BenchmarkTick_AtRest(b *testing.B) {
	s := sim.New(sim.Config{Seed: 1, ChunkSize: 512, Radius: 1})
	s.Step()
	f := s.Focus()
	s.Commands().Drop = sim.Drop{Active: true, X: int(f.X) - 30, Y: int(f.Y)}
	s.Step()
	s.Commands().Drop = sim.Drop{Active: true, X: int(f.X) + 30, Y: int(f.Y), Kind: 2}
	for range 600 {
		s.Step()
	}
	if s.Sand.Stats().Tiles != 0 || s.Bodies.Stats().Awake != 0 {
		b.Fatalf("the world is not at rest: %d tiles, %d bodies awake", s.Sand.Stats().Tiles, s.Bodies.Stats().Awake)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s.Step()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1000/float64(b.N), "us/tick")
}

func tilesAwake(s *sim.Sim, pos components.ChunkPos) int {
	e, ok := ecs.GetResource[components.ChunkIndex](s.World).Get(pos)
	if !ok {
		return 0
	}
	return ecs.NewMap[sand.Tiles](s.World).Get(e).Awake()
}
