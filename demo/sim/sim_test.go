package sim_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/demo/internal/testworld"
	"github.com/arksave/arksave/demo/sand"
	"github.com/arksave/arksave/demo/sim"
	"github.com/arksave/arksave/internal/pecs"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/mlange-42/ark/ecs"
)

var expect = testworld.Expect

// config is a small world (128-pixel chunks, a 3x3 window) saving to a
// fresh directory.
func config(t testing.TB, seed uint64) sim.Config {
	return sim.Config{Seed: seed, ChunkSize: 128, Radius: 1, Save: sim.SaveConfig{Dir: filepath.Join(t.TempDir(), "world"), MaxBackups: 1}}
}

// newSim builds a Sim and closes it (with its final save) when the test ends.
func newSim(t testing.TB, cfg sim.Config) *sim.Sim {
	t.Helper()
	s, err := sim.New(cfg)
	expect(t, err == nil, "sim.New: %v", err)
	t.Cleanup(func() { s.Close() })
	return s
}

// A headless run of one round of the script: it paints, digs, drops bodies,
// pans away so that home unloads, and back so that it reloads, autosaves,
// makes a final save and prints one JSON line with the stats.
func TestRunHeadless(t *testing.T) {
	var out bytes.Buffer
	cfg := config(t, 3)
	cfg.Save.Autosave = 2 * time.Second
	st, err := sim.RunHeadless(sim.HeadlessOptions{Config: cfg, Ticks: sim.ScriptPeriod, Out: &out})
	expect(t, err == nil, "run: %v", err)
	expect(t, bytes.Count(out.Bytes(), []byte("\n")) == 1, "want one line, got %q", out.String())
	var fields map[string]any
	expect(t, json.Unmarshal(out.Bytes(), &fields) == nil, "not JSON: %q", out.String())
	for _, k := range []string{"ticks", "saves", "chunks_written", "bytes_written", "tick_ms_p50", "tick_ms_p99", "tick_ms_max",
		"longest_save_stall_ms", "longest_tick_during_save_ms", "chunks_loaded", "chunks_unloaded", "bodies", "generation"} {
		_, ok := fields[k]
		expect(t, ok, "stats lack %q: %s", k, out.String())
	}
	expect(t, st.Ticks == sim.ScriptPeriod && st.WorldTick == sim.ScriptPeriod && st.StartTick == 0, "ticks %+v", st)
	expect(t, st.ChunksUnloaded > 0, "no chunk unloaded: %+v", st)
	expect(t, st.ChunksLoaded >= uint64(st.ChunksResident)+st.ChunksUnloaded && st.ChunksLoaded > 9+st.ChunksUnloaded/2, "home never reloaded: %+v", st)
	expect(t, st.Bodies == 3, "want the script's 3 bodies, got %d", st.Bodies)
	expect(t, st.TickMsP50 <= st.TickMsP99 && st.TickMsP99 <= st.TickMsMax, "percentiles out of order: %+v", st)
	// 12 s of game time with an autosave due every 2 s (the timer waits
	// while a save runs, so how many fit depends on the disk), and the final save
	expect(t, st.Saves >= 2 && st.FailedSaves == 0 && st.Generation == st.Saves, "saves: %+v", st)
	expect(t, st.ChunksWritten > 0 && st.BytesWritten > 0 && st.FinalSaveBytes > 0, "nothing written: %+v", st)
	expect(t, st.DirtyChunks == 0, "%d chunks dirty after the final save", st.DirtyChunks)
	expect(t, st.LongestSaveStallMs > 0, "no snapshot stall measured: %+v", st)
}

// What a headless run leaves, a -load run starts from: the world's tick,
// the camera, every pixel of the chunks around it, and the bodies with
// their ids and blitted transforms. (Both runs wait for their chunks, so
// that the first one's last tick saw every chunk around the camera.)
func TestLoadContinuesHeadlessRun(t *testing.T) {
	cfg := config(t, 4)
	cfg.SyncStreaming = true
	var before, after world
	_, err := sim.RunHeadless(sim.HeadlessOptions{
		Config: cfg, Ticks: 660, Out: &bytes.Buffer{}, // home again, after the third body
		Finished: func(s *sim.Sim) { before = capture(s) },
	})
	expect(t, err == nil, "first run: %v", err)
	expect(t, len(before.bodies) == 3, "the first run ends with %d bodies in view, want the script's 3", len(before.bodies))

	cfg.Save.Load = true
	cfg.Seed = 99 // a loaded save brings its own seed
	var ids []components.BodyID
	st, err := sim.RunHeadless(sim.HeadlessOptions{
		Config: cfg, Ticks: 120, Out: &bytes.Buffer{},
		Started: func(s *sim.Sim) {
			after = capture(s)
			s.Commands().Drop = sim.Drop{Active: true, X: int(s.Focus().X), Y: int(s.Focus().Y) - 60}
			s.Step()
			ids = capture(s).ids()
		},
	})
	expect(t, err == nil, "second run: %v", err)
	expect(t, st.Seed == 4 && st.StartTick == 660 && st.WorldTick == 781 && st.Loaded, "second run: %+v", st)
	before.same(t, after)
	// Bodies made after the load never collide with saved ones: a new session.
	expect(t, len(ids) == 4 && ids[3]>>32 == ids[0]>>32+1, "ids after a load: %x", ids)
}

// world is what a test compares of a Sim: tick, camera, the persisted
// layers of the chunks within the camera's radius, and the bodies.
type world struct {
	tick   uint64
	camera components.Focus
	pixels map[components.ChunkPos][]components.Pixel
	bodies []components.PixelBody
}

func capture(s *sim.Sim) world {
	w := world{tick: s.Tick(), camera: *s.Focus(), pixels: map[components.ChunkPos][]components.Pixel{}}
	c := components.ChunkOf(w.camera.X, w.camera.Y, s.Config.ChunkSize)
	for pos, pix := range testworld.Pixels(s.World) {
		if max(abs(pos.X-c.X), abs(pos.Y-c.Y)) > w.camera.Radius {
			continue
		}
		for i := range pix {
			pix[i] &= components.PersistMask
		}
		w.pixels[pos] = pix
	}
	q := ecs.NewFilter1[components.PixelBody](s.World).Query()
	for q.Next() {
		b := q.Get()
		if _, ok := w.pixels[components.ChunkOf(float64(b.X), float64(b.Y), s.Config.ChunkSize)]; ok {
			w.bodies = append(w.bodies, *b)
		}
	}
	slices.SortFunc(w.bodies, func(a, b components.PixelBody) int { return cmp.Compare(a.ID, b.ID) })
	return w
}

func (a world) same(t *testing.T, b world) {
	t.Helper()
	expect(t, a.tick == b.tick, "tick %d, then %d", a.tick, b.tick)
	expect(t, a.camera == b.camera, "camera %+v, then %+v", a.camera, b.camera)
	expect(t, len(a.pixels) == len(b.pixels) && len(a.pixels) == 9, "chunks around the camera: %d, then %d", len(a.pixels), len(b.pixels))
	for pos, pix := range a.pixels {
		other, ok := b.pixels[pos]
		expect(t, ok, "chunk %v missing after the load", pos)
		for i := range pix {
			expect(t, pix[i] == other[i], "chunk %v pixel %d: %08x, then %08x", pos, i, uint32(pix[i]), uint32(other[i]))
		}
	}
	expect(t, len(a.bodies) == len(b.bodies), "bodies around the camera: %d, then %d", len(a.bodies), len(b.bodies))
	for i := range a.bodies {
		x, y := a.bodies[i], b.bodies[i]
		expect(t, x.ID == y.ID && x.X == y.X && x.Y == y.Y && x.Rotation == y.Rotation, "body %d: %x at %v,%v,%v, then %x at %v,%v,%v",
			i, uint64(x.ID), x.X, x.Y, x.Rotation, uint64(y.ID), y.X, y.Y, y.Rotation)
	}
}

func (w world) ids() []components.BodyID {
	var ids []components.BodyID
	for _, b := range w.bodies {
		ids = append(ids, b.ID)
	}
	return ids
}

func abs(v int32) int32 {
	if v < 0 {
		return -v
	}
	return v
}

func run(t *testing.T, seed uint64, ticks int) *sim.Sim {
	cfg := config(t, seed)
	cfg.SyncStreaming = true
	s := newSim(t, cfg)
	script := sim.NewScript(s)
	for range ticks {
		script.Plan(s.Tick(), s.Commands())
		s.Step()
	}
	return s
}

func pixels(s *sim.Sim) map[components.ChunkPos][]components.Pixel { return testworld.Pixels(s.World) }

// The same seed and the same input give the same world, bodies included,
// when every tick waits for its chunks (SyncStreaming).
func TestDeterministic(t *testing.T) {
	a, b := run(t, 5, 300), run(t, 5, 300)
	pa, pb := pixels(a), pixels(b)
	expect(t, len(pa) == len(pb), "different chunks loaded")
	for pos, pix := range pa {
		other, ok := pb[pos]
		expect(t, ok, "chunk %v only in one run", pos)
		for i := range pix {
			expect(t, pix[i] == other[i], "chunk %v pixel %d differs", pos, i)
		}
	}
	_, dirty := a.Chunks()
	expect(t, dirty > 0, "the script changed nothing")
}

// A world nobody touches is at rest from its first tick: nothing simulates,
// nothing is dirty, and a save writes no chunk.
func TestUntouchedWorldAtRest(t *testing.T) {
	cfg := config(t, 9)
	cfg.Radius = 2
	s := newSim(t, cfg)
	s.Step() // examines every chunk once
	s.Step()
	loaded, dirty := s.Chunks()
	expect(t, loaded == 25 && dirty == 0, "loaded %d, dirty %d", loaded, dirty)
	for range 10 {
		s.Step()
	}
	expect(t, s.Sand.Stats().Tiles == 0, "%d tiles simulated at rest", s.Sand.Stats().Tiles)
	res := waitSave(t, s, s.Persistence.Save())
	expect(t, res.Err == nil && res.ChunksWritten == 0 && res.Generation == 1, "save of an untouched world: %v", res)
}

// The brush only writes where the material belongs; erasing leaves bodies.
func TestToolsBrush(t *testing.T) {
	s := newSim(t, config(t, 2))
	s.Step()
	x, y := skyAbove(s)
	s.Commands().Brush = sim.Brush{Active: true, X: x, Y: y, Radius: 6, Material: sand.Stone}
	s.Step()
	expect(t, sand.MaterialOf(at(s, x, y)) == sand.Stone, "stone brush painted %v", at(s, x, y))
	s.Commands().Brush = sim.Brush{Active: true, X: x, Y: y, Radius: 3, Erase: true}
	s.Step()
	expect(t, at(s, x, y) == 0, "erase left %v", at(s, x, y))
	s.Commands().Drop = sim.Drop{Active: true, X: x, Y: y}
	s.Step()
	expect(t, s.Bodies.Stats().Bodies == 1, "drop made %d bodies", s.Bodies.Stats().Bodies)
	var b *components.PixelBody
	var reg *components.Regional
	q := ecs.NewFilter2[components.PixelBody, components.Regional](s.World).Query()
	for q.Next() {
		b, reg = q.Get()
	}
	expect(t, b != nil && b.ID == 1<<32|1 && reg.ID == uint64(b.ID),
		"a dropped body is a regional entity with the first id of session 1: %+v", b)
}

func skyAbove(s *sim.Sim) (int, int) {
	f := s.Focus()
	return int(f.X), int(f.Y) - 100
}

func at(s *sim.Sim, x, y int) components.Pixel {
	s.Field.Begin()
	defer s.Field.End()
	p, _ := s.Field.At(x, y)
	return p
}

// waitSave ticks until the handle completes.
func waitSave(t testing.TB, s *sim.Sim, h *arksave.SaveHandle) *autosave.Result {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !h.IsComplete() && time.Now().Before(deadline) {
		s.Step()
		time.Sleep(100 * time.Microsecond)
	}
	expect(t, h.IsComplete(), "save did not complete")
	return h.Result()
}

// F9: Sim.Load goes back to the last save, whatever happened since, and
// the game runs on: the systems were initialized again (Ark's Reset drops
// their registered filters), the camera was found, chunks stream.
func TestLoadReloadsLastSave(t *testing.T) {
	cfg := config(t, 6)
	cfg.SyncStreaming = true
	s := newSim(t, cfg)
	err := s.Load()
	expect(t, err != nil && s.Tick() == 0, "loading before the first save: %v", err)

	x, y := skyAbove(s)
	s.Commands().Brush = sim.Brush{Active: true, X: x, Y: y, Radius: 5, Material: sand.Stone}
	s.Step()
	s.Commands().Drop = sim.Drop{Active: true, X: x, Y: y - 30}
	s.Step()
	h := s.Persistence.Save()
	s.Step() // the snapshot is taken at the end of this tick
	saved := capture(s)
	waitSave(t, s, h)

	s.Commands().Brush = sim.Brush{Active: true, X: x + 40, Y: y, Radius: 5, Material: sand.Stone}
	s.Step()
	s.Commands().Drop = sim.Drop{Active: true, X: x + 40, Y: y - 30}
	s.Step()
	expect(t, s.Bodies.Stats().Bodies == 2, "%d bodies before the load", s.Bodies.Stats().Bodies)
	s.Focus().X += 1000 // the camera moves off; home unloads
	for range 5 {
		s.Step()
	}

	expect(t, s.Load() == nil, "load")
	saved.same(t, capture(s))
	expect(t, at(s, x+40, y) == 0 && sand.MaterialOf(at(s, x, y)) == sand.Stone, "the load kept what came after the save")

	// The game runs on: tools, sand, bodies, streaming, saving.
	s.Commands().Brush = sim.Brush{Active: true, X: x - 40, Y: y, Radius: 4, Material: sand.Sand}
	s.Step()
	s.Commands().Drop = sim.Drop{Active: true, X: x + 40, Y: y - 30}
	for range 30 {
		s.Step()
	}
	expect(t, s.Bodies.Stats().Bodies == 2, "%d bodies after a drop following the load", s.Bodies.Stats().Bodies)
	expect(t, sand.MaterialOf(at(s, x-40, y)) != sand.Sand, "painted sand did not fall after the load")
	loaded, _ := s.Streamed()
	s.Focus().X += 3 * 128
	for range 3 {
		s.Step()
	}
	s.Focus().X -= 3 * 128
	s.Step()
	again, unloaded := s.Streamed()
	expect(t, again > loaded && unloaded > 0, "streaming stopped after the load: %d -> %d loaded, %d unloaded", loaded, again, unloaded)
	expect(t, sand.MaterialOf(at(s, x, y)) == sand.Stone, "the stone did not come back with its chunk")
	res := waitSave(t, s, s.Persistence.Save())
	expect(t, res.Err == nil && res.Generation == 2, "saving after the load: %v", res)
}

// F6: SaveAs writes a complete save into another directory, which the game
// saves to from then on; the first directory keeps its last save.
func TestSaveAs(t *testing.T) {
	cfg := config(t, 7)
	s := newSim(t, cfg)
	x, y := skyAbove(s)
	s.Commands().Brush = sim.Brush{Active: true, X: x, Y: y, Radius: 5, Material: sand.Stone}
	s.Step()
	expect(t, waitSave(t, s, s.Persistence.Save()).Err == nil, "save")
	other := filepath.Join(t.TempDir(), "copy")
	res := waitSave(t, s, s.Persistence.SaveAs(other))
	expect(t, res.Err == nil && res.Dir == other && res.Generation == 1, "save as: %v", res)
	expect(t, s.Persistence.Dir() == other, "saving to %s after a save as", s.Persistence.Dir())
	expect(t, waitSave(t, s, s.Persistence.Save()).Generation == 2, "the next save goes to the copy")
	_, err := s.Close() // it holds the copy now
	expect(t, err == nil, "close: %v", err)

	cfg.Save = sim.SaveConfig{Dir: other, Load: true}
	c, err := sim.New(cfg)
	expect(t, err == nil, "loading the copy: %v", err)
	defer c.Close()
	expect(t, sand.MaterialOf(at(c, x, y)) == sand.Stone, "the copy lacks the painted stone")
}

// -load of a directory without a save is an error, not a new world.
func TestLoadWithoutSave(t *testing.T) {
	cfg := config(t, 8)
	cfg.Save.Load = true
	_, err := sim.New(cfg)
	expect(t, errors.Is(err, arksave.ErrNoSave) && strings.Contains(err.Error(), "without -load"), "loading an empty directory must fail: %v", err)
}

// -load of a directory that lost its manifest names the repair, with and
// without -load, and starts no new world over the save.
func TestLoadManifestLost(t *testing.T) {
	cfg := config(t, 9)
	s := newSim(t, cfg)
	for range 2 {
		s.Step()
		expect(t, waitSave(t, s, s.Persistence.Save()).Err == nil, "save")
	}
	_, err := s.Close()
	expect(t, err == nil, "close: %v", err)
	expect(t, os.Remove(filepath.Join(cfg.Save.Dir, "manifest")) == nil, "remove the manifest")
	for _, load := range []bool{true, false} {
		cfg.Save.Load = load
		_, err = sim.New(cfg)
		expect(t, errors.Is(err, arksave.ErrManifestLost) && strings.Contains(err.Error(), "arksave repair "+cfg.Save.Dir),
			"load=%v of a save without its manifest: %v", load, err)
	}
	_, err = os.Stat(filepath.Join(cfg.Save.Dir, "manifest"))
	expect(t, errors.Is(err, os.ErrNotExist), "a manifest was written over the lost save: %v", err)
}

// With PauseDuringSave, sand and bodies stand still while a save is
// written (arksave's SimulationState), and move again after it.
func TestPauseDuringSave(t *testing.T) {
	cfg := config(t, 10)
	cfg.Save.PauseDuringSave = true
	s := newSim(t, cfg)
	x, y := skyAbove(s)
	s.Commands().Brush = sim.Brush{Active: true, X: x, Y: y, Radius: 6, Material: sand.Sand}
	s.Step()
	h := s.Persistence.Save()
	s.Step() // the save starts at the end of this tick
	expect(t, s.Persistence.State().InProgress, "save not started")
	before := testworld.Pixels(s.World)
	s.Step()
	after := testworld.Pixels(s.World)
	for pos, pix := range before {
		expect(t, slices.Equal(pix, after[pos]), "chunk %v changed while the game was paused for a save", pos)
	}
	waitSave(t, s, h)
	moved := false
	for range 5 {
		s.Step()
	}
	for pos, pix := range testworld.Pixels(s.World) {
		moved = moved || !slices.Equal(pix, after[pos])
	}
	expect(t, moved, "the sand did not move again after the save")
}

// The overlay reads the save status every frame, saves or not (run with
// -race: the writer commits on its own goroutine meanwhile).
func TestStatusWhileSaving(t *testing.T) {
	cfg := config(t, 11)
	cfg.Save.Autosave = 100 * time.Millisecond
	s := newSim(t, cfg)
	script := sim.NewScript(s)
	seen := 0
	deadline := time.Now().Add(20 * time.Second)
	for s.Persistence.Status().Saves < 3 && time.Now().Before(deadline) {
		script.Plan(s.Tick(), s.Commands())
		s.Step()
		st := s.Persistence.Status()
		if st.InProgress {
			seen++
		}
		expect(t, st.Failed == 0, "a save failed: %s", st.LastError)
		expect(t, st.Generation >= uint64(st.Saves) && st.Generation <= uint64(st.Saves)+1, "generation %d after %d saves", st.Generation, st.Saves)
	}
	s.Persistence.WaitIdle() // the writer commits before the game loop hears of it
	st := s.Persistence.Status()
	expect(t, seen > 0 && st.Saves >= 3 && st.Generation == uint64(st.Saves), "saves %d, generation %d, %d ticks saw one running", st.Saves, st.Generation, seen)
}

// The demo's spawned objects are regional entities, saved with their chunk
// and not in the world file; its camera is its one player, saved in the
// players file and loaded by the next run.
func TestBodiesRegionalCameraInPlayersFile(t *testing.T) {
	cfg := config(t, 4)
	s, err := sim.New(cfg)
	expect(t, err == nil, "sim.New: %v", err)
	s.Step()
	x, y := skyAbove(s)
	s.Commands().Drop = sim.Drop{Active: true, X: x, Y: y}
	s.Step()
	s.Commands().PanX = 37
	s.Step()
	want := *s.Focus()
	res, err := s.Close()
	expect(t, err == nil && res.RegionsWritten == 1 && res.PlayersWritten == 1, "final save: %v %v", res, err)

	d, err := savedir.OpenDirReadOnly(nil, cfg.Save.Dir)
	expect(t, err == nil, "open: %v", err)
	m := d.Manifest()
	expect(t, m.Players != nil, "the save has no players")
	world, err := d.ReadWorld(nil)
	expect(t, err == nil, "read world: %v", err)
	info, err := pecs.ReadInfo(bytes.NewReader(world))
	expect(t, err == nil, "world file: %v", err)
	for _, ty := range info.Types {
		expect(t, !strings.HasSuffix(ty.Name, "components.Focus") && !strings.HasSuffix(ty.Name, "components.Regional"),
			"the world file holds %s", ty.Name)
	}
	p, err := d.ReadPlayers(nil)
	expect(t, err == nil && slices.Equal(p.IDs(), []string{sim.PlayerID}), "players %v %v", p.IDs(), err)

	cfg.Save.Load = true
	l := newSim(t, cfg)
	expect(t, *l.Focus() == want, "camera after a load: %+v, want %+v", *l.Focus(), want)
	l.Step()
	expect(t, l.Bodies.Stats().Bodies == 1, "bodies after a load: %d", l.Bodies.Stats().Bodies)
}

// Every save of the demo leaves its description and a thumbnail of the
// world around the camera, which a load menu lists (arksave.ListSaves).
func TestSaveHasThumbnail(t *testing.T) {
	cfg := config(t, 11)
	s := newSim(t, cfg)
	s.Step()
	expect(t, waitSave(t, s, s.Persistence.Save()).Err == nil, "save")
	_, err := s.Close()
	expect(t, err == nil, "close: %v", err)
	saves, err := arksave.ListSaves(filepath.Dir(cfg.Save.Dir))
	expect(t, err == nil && len(saves) == 1 && saves[0].Dir == cfg.Save.Dir && saves[0].Thumbnail != "", "slots: %+v, %v", saves, err)
	f, err := os.Open(saves[0].Thumbnail)
	expect(t, err == nil, "open the thumbnail: %v", err)
	defer f.Close()
	img, err := png.Decode(f)
	expect(t, err == nil && img.Bounds().Dx() == 192 && img.Bounds().Dy() == 108, "thumbnail: %v, %v", img, err)
	colours := map[color.Color]bool{}
	for y := 0; y < 108; y += 4 {
		for x := 0; x < 192; x += 4 {
			colours[img.At(x, y)] = true
		}
	}
	expect(t, len(colours) > 3, "the thumbnail shows %d colours: not the world", len(colours))
}

// The load menu's choice: LoadFrom loads another slot's save, and the game
// saves there from then on.
func TestLoadFromAnotherSlot(t *testing.T) {
	cfg := config(t, 12)
	other := filepath.Join(filepath.Dir(cfg.Save.Dir), "other")
	oc := cfg
	oc.Save.Dir = other
	o := newSim(t, oc)
	x, y := skyAbove(o)
	o.Commands().Brush = sim.Brush{Active: true, X: x, Y: y, Radius: 5, Material: sand.Stone}
	o.Step()
	expect(t, waitSave(t, o, o.Persistence.Save()).Err == nil, "save the other slot")
	_, err := o.Close()
	expect(t, err == nil, "close: %v", err)

	s := newSim(t, cfg)
	expect(t, s.LoadFrom(other) == nil, "load the other slot")
	expect(t, s.Persistence.Dir() == other && sand.MaterialOf(at(s, x, y)) == sand.Stone, "after LoadFrom: dir %s, the painted stone missing", s.Persistence.Dir())
	gen := s.Persistence.Generation()
	res := waitSave(t, s, s.Persistence.Save())
	expect(t, res.Err == nil && res.Dir == other && res.Generation == gen+1, "the next save after generation %d: %+v", gen, res)
}

// arksave diff on the demo's save: two generations, stone painted in one
// chunk between them; the diff names that chunk.
func TestDiffOfTheDemoSave(t *testing.T) {
	cfg := config(t, 13)
	cfg.Save.MaxBackups = 3
	s := newSim(t, cfg)
	x, y := skyAbove(s)
	s.Commands().Brush = sim.Brush{Active: true, X: x, Y: y, Radius: 4, Material: sand.Stone}
	s.Step()
	expect(t, waitSave(t, s, s.Persistence.Save()).Err == nil, "first save")
	x2 := x + cfg.ChunkSize // the next chunk, loaded too
	s.Commands().Brush = sim.Brush{Active: true, X: x2, Y: y, Radius: 4, Material: sand.Stone}
	s.Step()
	res := waitSave(t, s, s.Persistence.Save())
	expect(t, res.Err == nil && res.Generation == 2, "second save: %+v", res)
	_, err := s.Close()
	expect(t, err == nil, "close: %v", err)

	rep, err := savetool.Diff(cfg.Save.Dir, 1, 2, savetool.Options{})
	expect(t, err == nil, "diff: %v", err)
	cx, cy := int32(floorDiv(x2, cfg.ChunkSize)), int32(floorDiv(y, cfg.ChunkSize))
	var painted bool
	for _, c := range rep.Chunks {
		// Added (not stored before): without the game's generator the
		// diff counts no pixels of it, and says so (AtLeast).
		painted = painted || c.X == cx && c.Y == cy && (c.Kind == savetool.ChangeAdded && c.AtLeast || c.Pixels > 0)
	}
	expect(t, painted, "the chunk painted between the saves (%d, %d) is not in the diff: %+v", cx, cy, rep.Chunks)
	expect(t, len(rep.Damaged) == 0, "damage: %+v", rep.Damaged)
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
