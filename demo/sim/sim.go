package sim

import (
	"errors"
	"fmt"
	"image"
	"io/fs"
	"runtime"
	"time"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/demo/bodies"
	"github.com/arksave/arksave/demo/render"
	"github.com/arksave/arksave/demo/sand"
	"github.com/arksave/arksave/demo/terrain"
	"github.com/mlange-42/ark/ecs"
)

// System is the shape of every system of the demo, as in ark-tools:
// Initialize once, Update once per tick, Finalize once at the end.
type System interface {
	Initialize(w *ecs.World)
	Update(w *ecs.World)
	Finalize(w *ecs.World)
}

// TickDuration is the game time of one tick: the demo runs 60 ticks a second.
const TickDuration = time.Second / 60

// Config describes a world and how it is saved.
type Config struct {
	// Seed is the world seed of a new world; a loaded save brings its own.
	Seed      uint64
	ChunkSize int // pixels per chunk edge, a multiple of 64; 0 means 512
	// ViewW and ViewH are the world pixels the camera shows; the chunks
	// around it are kept loaded. 0 means 640x360.
	ViewW, ViewH int
	// Radius is how many chunks around the camera's chunk stay loaded; 0
	// means just enough to cover the view.
	Radius int32

	// Save is the save directory and the autosave settings. Required.
	Save SaveConfig

	// SyncStreaming makes every tick wait until the chunks around the
	// camera have loaded, so that a run is a pure function of its seed and
	// input (tests). The game and the headless run leave it off: chunks
	// load on arksave's loader goroutine and a tick never waits on disk.
	SyncStreaming bool
}

func (c *Config) defaults() {
	if c.ChunkSize == 0 {
		c.ChunkSize = 512
	}
	if c.ViewW == 0 || c.ViewH == 0 {
		c.ViewW, c.ViewH = 640, 360
	}
	if c.Radius == 0 {
		half := max(c.ViewW, c.ViewH)/2 + 1
		c.Radius = int32((half + c.ChunkSize - 1) / c.ChunkSize)
	}
}

// Clock is the world's time, a resource saved with the world: the tick it
// is at. The scripted player plays by it, so a loaded run carries on where
// the saved one stopped.
type Clock struct {
	Tick uint64
}

// Sim is the demo's world and its systems, without any window: the game
// drives it from Ebiten's Update, the headless run from a loop.
type Sim struct {
	World  *ecs.World
	Config Config
	// Systems run in this order every tick: Tools, Streamer (arksave's
	// streaming), Bodies, Sand, then arksave's save system.
	Systems  []System
	Tools    *Tools
	Streamer System
	Bodies   *bodies.System
	Sand     *sand.System
	Field    *sand.Field
	stream   System // arksave's streaming system itself
	Camera   ecs.Entity
	// Persistence is the demo's face of arksave: save, save as, load,
	// the final save and the save figures.
	Persistence *Persistence
	// Ticks counts the ticks this Sim ran (Clock counts the world's).
	Ticks uint64
	// LastTick is the wall-clock time of the last Step, for the stats.
	LastTick time.Duration

	focus    *ecs.Map1[components.Focus]
	thumbs   *render.Renderer // draws the saves' thumbnails
	commands ecs.Resource[Commands]
	clock    ecs.Resource[Clock]
	sim      ecs.Resource[autosave.SimulationState]
	index    *components.ChunkIndex
	closed   bool
}

// New builds the world, installs arksave on it (loading the save in
// cfg.Save.Dir when cfg.Save.Load is set, else starting a new world there),
// finds or places the camera (above the surface at terrain.Home in a new
// world), initializes the systems and waits (up to a few seconds) for the
// chunks around the camera, so that the first tick sees them.
func New(cfg Config) (*Sim, error) {
	cfg.defaults()
	w := ecs.NewWorld()
	s := &Sim{World: w, Config: cfg}

	// What the world file holds of the demo must be registered before a
	// save can be decoded into the world: the clock. (The camera, the
	// player, is in the players file; its Focus is the plugin's own
	// component.)
	ecs.AddResource(w, &Clock{})
	ecs.AddResource(w, &Commands{})

	p, plugin, err := install(w, cfg, s.chunkLoaded, s.thumbnail)
	if errors.Is(err, arksave.ErrNoSave) {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("sim: nothing to load: %s does not exist; run without -load to start a new world there (the directory is created): %w", cfg.Save.Dir, arksave.ErrNoSave)
		}
		return nil, fmt.Errorf("sim: nothing to load: %s holds no save (without -load a new world starts there): %w", cfg.Save.Dir, arksave.ErrNoSave)
	}
	if errors.Is(err, arksave.ErrManifestLost) {
		return nil, fmt.Errorf("sim: the save in %s lost its manifest and no new world starts over it; repair it first "+
			"(in the repository: go run ./cmd/arksave repair %s), then run again: %w", cfg.Save.Dir, cfg.Save.Dir, err)
	}
	if err != nil {
		return nil, err
	}
	s.Config.Seed = p.Seed() // a loaded save brings its own
	s.Persistence = newPersistence(s, p)

	s.Field = sand.NewField(w, cfg.ChunkSize)
	ecs.AddResource(w, s.Field)
	s.commands = ecs.NewResource[Commands](w)
	s.clock = ecs.NewResource[Clock](w)
	s.sim = ecs.NewResource[autosave.SimulationState](w)
	s.index = ecs.GetResource[components.ChunkIndex](w)
	s.focus = ecs.NewMap1[components.Focus](w)

	s.Tools = &Tools{Seed: s.Config.Seed}
	s.stream = plugin[0]
	s.Streamer = plugin[0]
	if cfg.SyncStreaming {
		s.Streamer = &syncStreamer{s: s, inner: plugin[0]}
	}
	s.Bodies = &bodies.System{}
	s.Sand = &sand.System{Seed: s.Config.Seed}
	s.Systems = []System{s.Tools, s.Streamer, s.Bodies, s.Sand, plugin[1]}
	if err := s.bind(); err != nil {
		p.Close()
		return nil, err
	}
	for _, sys := range s.Systems {
		sys.Initialize(w)
	}
	s.Warm(5 * time.Second)
	return s, nil
}

// install adds arksave to w: resources, and the streaming and save systems.
func install(w *ecs.World, cfg Config, loaded func(*ecs.World, ecs.Entity), thumb func(*ecs.World) image.Image) (*arksave.Persistence, []arksave.System, error) {
	sc := cfg.Save
	if sc.Dir == "" {
		return nil, nil, errors.New("sim: no save directory")
	}
	systems, err := arksave.Plugin{
		Dir:         sc.Dir,
		Load:        sc.Load,
		Overwrite:   !sc.Load, // without -load the demo starts a new world there
		LockTimeout: sc.LockTimeout,
		ChunkSize:   cfg.ChunkSize,
		TileSize:    sand.TileSize,
		Seed:        cfg.Seed,
		Generator:   terrain.Generator{},
		Autosave: &autosave.Config{
			Interval:        sc.Autosave,
			Enabled:         sc.Autosave > 0,
			MaxBackups:      sc.MaxBackups,
			PauseDuringSave: sc.PauseDuringSave,
		},
		TickDuration: TickDuration,
		// The game loop is one goroutine: leave it a core while a save
		// compresses.
		CompressionWorkers: max(1, runtime.GOMAXPROCS(0)-1),
		OnChunkLoaded:      loaded,
		Thumbnail:          thumb,
		FS:                 sc.FS,
		// The sand field and the player's commands are rebuilt, not saved;
		// so is a body's Motion (the body system starts it from the body's
		// blitted transform).
		SkipResources:  []ecs.Comp{ecs.C[sand.Field](), ecs.C[Commands]()},
		SkipComponents: []ecs.Comp{ecs.C[bodies.Motion]()},
	}.Install(w)
	if err != nil {
		return nil, nil, err
	}
	return ecs.GetResource[arksave.Persistence](w), systems, nil
}

// PlayerID is the player id of the demo's one player: its camera, saved in
// the save's players file, apart from the world.
const PlayerID = "local"

// bind finds the camera and hands it to the tools: the player's, loaded
// from the players file (arksave spawns no player by itself), else one in
// the world (a save from before players were apart, which the camera then
// joins), else a new one above the surface at terrain.Home.
func (s *Sim) bind() error {
	s.Camera = ecs.Entity{}
	ents, err := s.Persistence.p.LoadPlayer(PlayerID)
	switch {
	case err == nil:
		for _, e := range ents {
			if s.focus.HasAll(e) {
				s.Camera = e
			}
		}
	case !errors.Is(err, arksave.ErrNoPlayer) && !errors.Is(err, arksave.ErrPlayerOnline):
		return fmt.Errorf("sim: load the player: %w", err)
	}
	if s.Camera.IsZero() {
		q := ecs.NewFilter1[components.Focus](s.World).Query()
		for q.Next() {
			if s.Camera.IsZero() {
				s.Camera = q.Entity()
			}
		}
	}
	if s.Camera.IsZero() {
		home := terrain.Home(s.Config.Seed)
		s.Camera = s.focus.NewEntity(&components.Focus{
			X: float64(home), Y: float64(terrain.SurfaceY(home, s.Config.Seed) - s.Config.ViewH/6), Radius: s.Config.Radius,
		})
	}
	if m := ecs.NewMap1[components.Player](s.World); !m.HasAll(s.Camera) {
		m.Add(s.Camera, &components.Player{ID: PlayerID})
	}
	s.Tools.Camera = s.Camera
	return nil
}

// chunkLoaded is arksave's OnChunkLoaded: it counts the chunks streamed in.
// (The sand field gives a new chunk its simulation tiles at the next tick.)
func (s *Sim) chunkLoaded(*ecs.World, ecs.Entity) { s.Persistence.chunksLoaded++ }

// Step advances the world by one fixed tick: every system's Update, in order.
// The commands of the tick must be set before. While arksave asks for a
// pause (autosave.Config.PauseDuringSave), bodies and sand stand still.
func (s *Sim) Step() {
	start := time.Now() // measurement only; the simulation never reads the clock
	saving := s.Persistence.state.InProgress
	paused := s.sim.Get().Paused
	s.clock.Get().Tick++ // before the save system, so that a snapshot holds the tick it ends
	for _, sys := range s.Systems {
		if paused && (sys == System(s.Bodies) || sys == System(s.Sand)) {
			continue
		}
		sys.Update(s.World)
	}
	s.Ticks++
	s.LastTick = time.Since(start)
	s.Persistence.observe(s.LastTick, saving || s.Persistence.state.InProgress)
}

// Tick returns the world's tick: saved with it, carried on by a load.
func (s *Sim) Tick() uint64 { return s.clock.Get().Tick }

// Load replaces the world with the last save of the current directory (F9):
// arksave resets the world and decodes the save; the systems are then
// initialized again (Ark's Reset drops their registered filters), the
// camera is looked up, and the chunks around it are awaited. A missing or
// damaged save returns an error and leaves the world as it was.
func (s *Sim) Load() error { return s.LoadFrom(s.Persistence.p.Dir()) }

// LoadFrom loads the save in dir, as Load does the current one: the game
// then saves to dir (the load menu's choice).
func (s *Sim) LoadFrom(dir string) error {
	p := s.Persistence
	if err := p.p.Load(dir); err != nil {
		return err
	}
	p.loads++
	*s.Field = *sand.NewField(s.World, s.Config.ChunkSize)
	if err := s.bind(); err != nil {
		return err
	}
	for _, sys := range s.Systems {
		sys.Initialize(s.World)
	}
	s.Warm(5 * time.Second)
	return nil
}

// Warm runs the streaming system until every chunk within the camera's
// radius is loaded, or until timeout: a new or freshly loaded world then
// starts complete. It reports whether every chunk arrived.
func (s *Sim) Warm(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		s.stream.Update(s.World)
		if s.missing() == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// missing counts the chunks within the camera's radius that are not loaded.
func (s *Sim) missing() int {
	f := s.focus.Get(s.Camera)
	c := components.ChunkOf(f.X, f.Y, s.Config.ChunkSize)
	n := 0
	for y := c.Y - f.Radius; y <= c.Y+f.Radius; y++ {
		for x := c.X - f.Radius; x <= c.X+f.Radius; x++ {
			if _, ok := s.index.Get(components.ChunkPos{X: x, Y: y}); !ok {
				n++
			}
		}
	}
	return n
}

// syncStreamer is the streaming system of a SyncStreaming world: it waits
// for the chunks it asked for.
type syncStreamer struct {
	s     *Sim
	inner System
}

func (y *syncStreamer) Initialize(w *ecs.World) { y.inner.Initialize(w) }
func (y *syncStreamer) Update(w *ecs.World)     { y.s.Warm(10 * time.Second) }
func (y *syncStreamer) Finalize(w *ecs.World)   { y.inner.Finalize(w) }

// Close makes the final save and waits for it, finalizes the systems in
// reverse order and releases the save directory. It returns the final
// save's result (nil if the Sim was closed before); the error is the save's
// or the release's.
func (s *Sim) Close() (*autosave.Result, error) {
	if s.closed {
		return nil, nil
	}
	s.closed = true
	res := s.Persistence.finalSave()
	for i := len(s.Systems) - 1; i >= 0; i-- {
		s.Systems[i].Finalize(s.World)
	}
	err := s.Persistence.p.Close()
	if res != nil && res.Err != nil {
		err = errors.Join(fmt.Errorf("final save to %s: %w", res.Dir, res.Err), err)
	}
	return res, err
}

// Thumbnail size: the world pixels around the camera a save's thumbnail
// shows, one to one (the copy is part of the save's stall: keep it small).
const thumbW, thumbH = 192, 108

// thumbnail is the save's picture: the world around the camera.
func (s *Sim) thumbnail(w *ecs.World) image.Image {
	if !w.Alive(s.Camera) || !s.focus.HasAll(s.Camera) {
		return nil
	}
	if s.thumbs == nil {
		s.thumbs = render.New(w, s.Config.ChunkSize, s.Config.Seed)
	}
	f := s.Focus()
	img := image.NewRGBA(image.Rect(0, 0, thumbW, thumbH))
	s.thumbs.Render(img.Pix, int(f.X)-thumbW/2, int(f.Y)-thumbH/2, thumbW, thumbH)
	return img
}

// Commands returns what the player asks of the next tick.
func (s *Sim) Commands() *Commands { return s.commands.Get() }

// Focus returns the camera's focus: the world pixel at the centre of the view.
func (s *Sim) Focus() *components.Focus { return s.focus.Get(s.Camera) }

// Chunks counts the loaded chunks and those of them that are dirty.
func (s *Sim) Chunks() (loaded, dirty int) {
	q := ecs.NewFilter1[components.ChunkState](s.World).Query()
	for q.Next() {
		loaded++
		if q.Get().IsDirty() {
			dirty++
		}
	}
	return loaded, dirty
}

// Streamed returns how many chunks were loaded (streamed in) since the Sim
// started, and how many of them were unloaded since.
func (s *Sim) Streamed() (loaded, unloaded uint64) {
	l := s.Persistence.chunksLoaded
	return l, l - uint64(s.index.Len())
}
