package sim

import (
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/demo/bodies"
	"github.com/arksave/arksave/demo/sand"
	"github.com/arksave/arksave/demo/stream"
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

// Config describes a world.
type Config struct {
	Seed      uint64
	ChunkSize int // pixels per chunk edge, a multiple of 64; 0 means 512
	// ViewW and ViewH are the world pixels the camera shows; the chunks
	// around it are kept loaded. 0 means 640x360.
	ViewW, ViewH int
	// Radius is how many chunks around the camera's chunk stay loaded; 0
	// means just enough to cover the view.
	Radius int32

	// Streamer keeps the chunks around the camera loaded. Nil means the
	// stand-in, stream.System (generation only, nothing persisted);
	// arksave's streaming system goes here.
	Streamer System
	// After runs after the simulation every tick: arksave's dirty tracking,
	// snapshot and autosave systems go here.
	After []System
	// Setup, if set, runs on the new world before the demo adds its own
	// resources: arksave's plugin installs its resources here. A resource it
	// adds (ChunkIndex, BodyIDs) is kept, not replaced.
	Setup func(w *ecs.World)
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

// Sim is the demo's world and its systems, without any window: the game
// drives it from Ebiten's Update, the headless runner from a loop.
type Sim struct {
	World  *ecs.World
	Config Config
	// Systems run in this order every tick: Tools, Streamer, Bodies, Sand,
	// then Config.After.
	Systems  []System
	Tools    *Tools
	Streamer System
	Bodies   *bodies.System
	Sand     *sand.System
	Field    *sand.Field
	Camera   ecs.Entity
	Ticks    uint64

	focus    *ecs.Map1[components.Focus]
	commands ecs.Resource[Commands]
	states   *ecs.Filter1[components.ChunkState]
}

// New builds the world: resources, the camera above the surface at
// terrain.Home,
// and the systems, initialized. No chunk is loaded before the first Step.
func New(cfg Config) *Sim {
	cfg.defaults()
	w := ecs.NewWorld()
	s := &Sim{World: w, Config: cfg}

	if cfg.Setup != nil {
		cfg.Setup(w)
	}
	if index := ecs.NewResource[components.ChunkIndex](w); !index.Has() {
		index.Add(components.NewChunkIndex())
	}
	if ids := ecs.NewResource[components.BodyIDs](w); !ids.Has() {
		ids.Add(&components.BodyIDs{})
	}
	s.Field = sand.NewField(w, cfg.ChunkSize)
	ecs.AddResource(w, s.Field)
	ecs.AddResource(w, &Commands{})
	s.commands = ecs.NewResource[Commands](w)

	s.focus = ecs.NewMap1[components.Focus](w)
	home := terrain.Home(cfg.Seed)
	s.Camera = s.focus.NewEntity(&components.Focus{
		X: float64(home), Y: float64(terrain.SurfaceY(home, cfg.Seed) - cfg.ViewH/6), Radius: cfg.Radius,
	})
	s.states = ecs.NewFilter1[components.ChunkState](w).Register()

	s.Tools = &Tools{Seed: cfg.Seed, Camera: s.Camera}
	s.Streamer = cfg.Streamer
	if s.Streamer == nil {
		s.Streamer = &stream.System{Generator: terrain.Generator{}, Seed: cfg.Seed, Size: cfg.ChunkSize}
	}
	s.Bodies = &bodies.System{}
	s.Sand = &sand.System{Seed: cfg.Seed}
	s.Systems = append([]System{s.Tools, s.Streamer, s.Bodies, s.Sand}, cfg.After...)
	for _, sys := range s.Systems {
		sys.Initialize(w)
	}
	return s
}

// Step advances the world by one fixed tick: every system's Update, in order.
// The commands of the tick must be set before.
func (s *Sim) Step() {
	for _, sys := range s.Systems {
		sys.Update(s.World)
	}
	s.Ticks++
}

// Close finalizes every system, in reverse order.
func (s *Sim) Close() {
	for i := len(s.Systems) - 1; i >= 0; i-- {
		s.Systems[i].Finalize(s.World)
	}
}

// Commands returns what the player asks of the next tick.
func (s *Sim) Commands() *Commands { return s.commands.Get() }

// Focus returns the camera's focus: the world pixel at the centre of the view.
func (s *Sim) Focus() *components.Focus { return s.focus.Get(s.Camera) }

// Chunks counts the loaded chunks and those of them that are dirty.
func (s *Sim) Chunks() (loaded, dirty int) {
	q := s.states.Query()
	for q.Next() {
		loaded++
		if q.Get().IsDirty() {
			dirty++
		}
	}
	return loaded, dirty
}

// StreamStats returns the chunk loads and unloads so far, if the streamer
// keeps count in a stream.Stats resource.
func (s *Sim) StreamStats() stream.Stats {
	if st := ecs.GetResource[stream.Stats](s.World); st != nil {
		return *st
	}
	return stream.Stats{}
}
