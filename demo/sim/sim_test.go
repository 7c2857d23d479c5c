package sim_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/demo/internal/testworld"
	"github.com/arksave/arksave/demo/sand"
	"github.com/arksave/arksave/demo/sim"
)

var expect = testworld.Expect

// A headless run of one round of the script: it paints, digs, drops bodies,
// pans away so that home unloads, and back so that it reloads, and prints
// one JSON line with the stats.
func TestRunHeadless(t *testing.T) {
	var out bytes.Buffer
	st, err := sim.RunHeadless(sim.HeadlessOptions{
		Config: sim.Config{Seed: 3, ChunkSize: 128, Radius: 1}, Ticks: sim.ScriptPeriod, Out: &out,
	})
	expect(t, err == nil, "run: %v", err)
	expect(t, bytes.Count(out.Bytes(), []byte("\n")) == 1, "want one line, got %q", out.String())
	var fields map[string]any
	expect(t, json.Unmarshal(out.Bytes(), &fields) == nil, "not JSON: %q", out.String())
	for _, k := range []string{"ticks", "saves", "chunks_written", "bytes_written", "tick_ms_p50", "tick_ms_p99", "tick_ms_max", "longest_save_stall_ms", "chunks_loaded", "chunks_unloaded", "bodies"} {
		_, ok := fields[k]
		expect(t, ok, "stats lack %q: %s", k, out.String())
	}
	expect(t, st.Ticks == sim.ScriptPeriod, "ticks %d", st.Ticks)
	expect(t, st.ChunksUnloaded > 0, "no chunk unloaded: %+v", st)
	expect(t, st.ChunksLoaded >= uint64(st.ChunksResident)+st.ChunksUnloaded && st.ChunksLoaded > 9+st.ChunksUnloaded/2, "home never reloaded: %+v", st)
	expect(t, st.Bodies == 3, "want the script's 3 bodies, got %d", st.Bodies)
	expect(t, st.TickMsP50 <= st.TickMsP99 && st.TickMsP99 <= st.TickMsMax, "percentiles out of order: %+v", st)
}

func run(seed uint64, ticks int) *sim.Sim {
	s := sim.New(sim.Config{Seed: seed, ChunkSize: 128, Radius: 1})
	script := sim.NewScript(s)
	for range ticks {
		script.Plan(s.Ticks, s.Commands())
		s.Step()
	}
	return s
}

func pixels(s *sim.Sim) map[components.ChunkPos][]components.Pixel { return testworld.Pixels(s.World) }

// The same seed and the same input give the same world, bodies included.
func TestDeterministic(t *testing.T) {
	a, b := run(5, 300), run(5, 300)
	pa, pb := pixels(a), pixels(b)
	expect(t, len(pa) == len(pb), "different chunks loaded")
	changed := 0
	for pos, pix := range pa {
		other, ok := pb[pos]
		expect(t, ok, "chunk %v only in one run", pos)
		for i := range pix {
			expect(t, pix[i] == other[i], "chunk %v pixel %d differs", pos, i)
		}
	}
	_, dirty := a.Chunks()
	changed += dirty
	expect(t, changed > 0, "the script changed nothing")
}

// A world nobody touches is at rest from its first tick: nothing simulates,
// nothing is dirty.
func TestUntouchedWorldAtRest(t *testing.T) {
	s := sim.New(sim.Config{Seed: 9, ChunkSize: 128, Radius: 2})
	s.Step() // loads and examines every chunk once
	s.Step()
	loaded, dirty := s.Chunks()
	expect(t, loaded == 25 && dirty == 0, "loaded %d, dirty %d", loaded, dirty)
	for range 10 {
		s.Step()
	}
	expect(t, s.Sand.Stats().Tiles == 0, "%d tiles simulated at rest", s.Sand.Stats().Tiles)
}

// The brush only writes where the material belongs; erasing leaves bodies.
func TestToolsBrush(t *testing.T) {
	s := sim.New(sim.Config{Seed: 2, ChunkSize: 128, Radius: 1})
	s.Step()
	f := s.Focus()
	x, y := int(f.X), int(f.Y)-100 // in the sky
	s.Commands().Brush = sim.Brush{Active: true, X: x, Y: y, Radius: 6, Material: sand.Stone}
	s.Step()
	s.Field.Begin()
	p, _ := s.Field.At(x, y)
	s.Field.End()
	expect(t, sand.MaterialOf(p) == sand.Stone, "stone brush painted %v", p)
	s.Commands().Brush = sim.Brush{Active: true, X: x, Y: y, Radius: 3, Erase: true}
	s.Step()
	s.Field.Begin()
	p, _ = s.Field.At(x, y)
	s.Field.End()
	expect(t, p == 0, "erase left %v", p)
	s.Commands().Drop = sim.Drop{Active: true, X: x, Y: y}
	s.Step()
	expect(t, s.Bodies.Stats().Bodies == 1, "drop made %d bodies", s.Bodies.Stats().Bodies)
}
