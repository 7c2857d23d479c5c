package sim_test

import (
	"cmp"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/demo/sand"
	"github.com/arksave/arksave/demo/sim"
	"github.com/arksave/arksave/demo/terrain"
	"github.com/mlange-42/ark/ecs"
)

// emitters is a player with many hands: every tick it rains sand, water and
// oil over two columns of chunks and keeps wooden beams burning, so that four
// 512-pixel chunks (two in the sky, two holding the surface) are busy. With
// paint set it also paints a dab of stone into every loaded chunk each tick,
// into the next tile of a walk over the chunk's tiles: a save's snapshot
// then holds nine chunks, all of which the game writes to, in tiles it has
// not written since the snapshot, while the save is written.
type emitters struct {
	s      *sim.Sim
	x0     int // world x of the left chunk column
	top    int // world y of the upper chunk row
	tick   int
	size   int
	chunks [4]components.ChunkPos
	paint  bool
	loaded []components.ChunkPos // the chunks paint paints into
}

func newEmitters(s *sim.Sim) *emitters {
	size := s.Config.ChunkSize
	f := s.Focus()
	cx := components.ChunkOf(f.X, 0, size).X
	surface := terrain.SurfaceY(int(f.X), s.Config.Seed)
	cy := components.ChunkOf(0, float64(surface), size).Y
	e := &emitters{s: s, x0: int(cx) * size, top: int(cy-1) * size, size: size}
	e.chunks = [4]components.ChunkPos{{X: cx, Y: cy - 1}, {X: cx + 1, Y: cy - 1}, {X: cx, Y: cy}, {X: cx + 1, Y: cy}}
	ecs.GetResource[components.ChunkIndex](s.World).All(func(pos components.ChunkPos, _ ecs.Entity) bool {
		e.loaded = append(e.loaded, pos)
		return true
	})
	slices.SortFunc(e.loaded, func(a, b components.ChunkPos) int { return cmp.Or(cmp.Compare(a.Y, b.Y), cmp.Compare(a.X, b.X)) })
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
	if e.paint {
		// a 4x4 dab 8 pixels into tile k of each loaded chunk; k walks the
		// tiles with a stride coprime to their count, so that consecutive
		// ticks write different tiles
		tiles := e.size / sand.TileSize
		k := e.tick * 37 % (tiles * tiles)
		for _, pos := range e.loaded {
			x := int(pos.X)*e.size + k%tiles*sand.TileSize + 8
			y := int(pos.Y)*e.size + k/tiles*sand.TileSize + 8
			for dy := range 4 {
				for dx := range 4 {
					f.Set(x+dx, y+dy, sand.Make(sand.Stone, uint8(e.tick)))
				}
			}
		}
	}
	f.End()
	e.tick++
}

// busyWorld returns a world of 512-pixel chunks (nine loaded) whose four
// chunks around the surface are busy, autosaving every interval (0: off).
func busyWorld(b *testing.B, interval time.Duration, paint bool) (*sim.Sim, *emitters) {
	s, err := sim.New(sim.Config{Seed: 1, ChunkSize: 512, Radius: 1,
		Save: sim.SaveConfig{Dir: filepath.Join(b.TempDir(), "world"), Autosave: interval, MaxBackups: 1}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	e := newEmitters(s)
	e.paint = paint
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
	s.Persistence.WaitIdle()
	return s, e
}

// BenchmarkTick_4ActiveChunks measures one headless tick of the whole game
// (tools, arksave's streaming, bodies, sand, arksave's save system) while
// four 512-pixel chunks are busy with falling sand, flowing water and oil,
// and fire, nine loaded; without autosave and with autosave every 2 s of
// game time. It reports ms/tick and the headroom against the 16.7 ms that
// 60 ticks a second allow.
func BenchmarkTick_4ActiveChunks(b *testing.B) {
	for _, interval := range []time.Duration{0, 2 * time.Second} {
		name := "autosave=off"
		if interval > 0 {
			name = "autosave=" + interval.String()
		}
		b.Run(name, func(b *testing.B) {
			s, e := busyWorld(b, interval, false)
			saves := s.Persistence.Status().Saves
			tiles := 0
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				e.Update()
				s.Step()
				tiles += s.Sand.Stats().Tiles
			}
			b.StopTimer()
			per := float64(b.Elapsed().Microseconds()) / 1000 / float64(b.N)
			b.ReportMetric(per, "ms/tick")
			b.ReportMetric(1000.0/60/per, "headroom_x")
			b.ReportMetric(float64(tiles)/float64(b.N), "tiles/tick")
			b.ReportMetric(float64(s.Persistence.Status().Saves-saves), "saves")
		})
	}
}

// BenchmarkAutosaveP99 compares the tick times of two identical busy worlds
// (BenchmarkTick_4ActiveChunks's, painting into all nine loaded chunks as
// well), one autosaving every 2 s of game time, one not, in one run. The
// worlds take turns of 130 ticks (a little over one autosave interval, so
// that each turn of the first holds a save), and a turn of the second starts
// only when the first's save has finished: both see the same machine, and
// neither sees the other's writer. Each iteration is one turn of each.
//
// It reports the longest tick of the first world while a save was in
// progress (from the tick that took the snapshot to the one that saw the
// commit) beside the longest tick of the second (maxtick_ratio: during a
// save / without saves), both p99s and their ratio, the median of the
// first ticks after a snapshot (where the game's writes meet the chunks the
// save holds: first_p50_ratio is it over the median tick without saves),
// the saves, the tiles the game copied per save for the running save
// (copy-on-write), and arksave's autosave.State.LongestStall over the turns
// (the longest a tick spent on saving: snapshot and copies). Run it with
// -benchtime 30x for 3900 ticks of each (about 30 saves).
func BenchmarkAutosaveP99(b *testing.B) {
	const block = 130
	on, eOn := busyWorld(b, 2*time.Second, true)
	off, eOff := busyWorld(b, 0, true)
	var tOn, tOff, tFirst sim.TickTimes
	var maxSave, maxOff time.Duration
	first := false                          // the next tick is the first after a snapshot
	on.Persistence.State().LongestStall = 0 // measure the turns, not the warm-up
	saves, copied := on.Persistence.Status().Saves, on.Persistence.Status().CopiedTiles
	for b.Loop() {
		for range block {
			eOn.Update()
			saving := on.Persistence.State().InProgress
			on.Step()
			if saving || on.Persistence.State().InProgress {
				maxSave = max(maxSave, on.LastTick)
			}
			if first {
				tFirst.Add(on.LastTick)
			}
			first = !saving && on.Persistence.State().InProgress
			tOn.Add(on.LastTick)
		}
		on.Persistence.WaitIdle()
		for range block {
			eOff.Update()
			off.Step()
			maxOff = max(maxOff, off.LastTick)
			tOff.Add(off.LastTick)
		}
	}
	st := on.Persistence.Status()
	b.ReportMetric(ms(maxSave), "maxtick_save_ms")
	b.ReportMetric(ms(maxOff), "maxtick_nosave_ms")
	b.ReportMetric(ms(maxSave)/ms(maxOff), "maxtick_ratio")
	b.ReportMetric(tOn.Percentile(99), "p99_on_ms")
	b.ReportMetric(tOff.Percentile(99), "p99_off_ms")
	b.ReportMetric(tOn.Percentile(99)/tOff.Percentile(99), "p99_ratio")
	b.ReportMetric(tOn.Percentile(50), "p50_on_ms")
	b.ReportMetric(tOff.Percentile(50), "p50_off_ms")
	b.ReportMetric(tFirst.Percentile(50), "first_p50_ms")
	b.ReportMetric(tFirst.Percentile(50)/tOff.Percentile(50), "first_p50_ratio")
	b.ReportMetric(float64(st.Saves-saves), "saves")
	b.ReportMetric(float64(st.CopiedTiles-copied)/float64(st.Saves-saves), "copied_tiles/save")
	b.ReportMetric(ms(st.SnapshotStall), "stall_ms")
	if st.Failed > 0 {
		b.Fatalf("%d saves failed: %s", st.Failed, st.LastError)
	}
	if st.CopiedTiles == copied {
		b.Fatal("no write met a tile a save held: copy-on-write never happened")
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkTick_AtRest measures a tick of a loaded world (nine 512-pixel
// chunks, two bodies lying still) where nothing moves.
func BenchmarkTick_AtRest(b *testing.B) {
	s, err := sim.New(sim.Config{Seed: 1, ChunkSize: 512, Radius: 1, Save: sim.SaveConfig{Dir: filepath.Join(b.TempDir(), "world")}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
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
