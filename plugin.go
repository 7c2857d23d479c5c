package arksave

import (
	"errors"
	"fmt"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/systems"
	"github.com/arksave/arksave/vfs"
)

// Resources and results the plugin shares with the game.
type (
	// AutosaveConfig controls autosave: interval, on/off, backups kept.
	AutosaveConfig = autosave.Config
	// AutosaveState shows what autosave is doing: timer, progress, last result.
	AutosaveState = autosave.State
	// SimulationState asks the game to pause while a save runs, if configured.
	SimulationState = autosave.SimulationState
	// Result is the outcome of one save.
	Result = autosave.Result
	// SaveHandle tracks one requested save.
	SaveHandle = systems.SaveHandle
	// Problem is damage found while loading a chunk or its bodies.
	Problem = systems.Problem
)

// Ticks returns the game time of n ticks at the default TickDuration
// (1/60 s), for AutosaveConfig.Interval.
func Ticks(n int) time.Duration { return time.Duration(n) * (time.Second / 60) }

// System is an ECS system in the shape ark-tools' app.App schedules
// (app.System): the arktools module runs the plugin under it.
type System interface {
	Initialize(w *ecs.World)
	Update(w *ecs.World)
	Finalize(w *ecs.World)
}

// ErrSaveExists is returned by [Plugin.Install] when the directory holds a
// save and the plugin was asked neither to load it nor to overwrite it.
var ErrSaveExists = errors.New("arksave: the save directory holds a save; set Plugin.Load to continue it or Plugin.Overwrite to start a new world there")

// Plugin configures arksave for a game. The zero value of every field but
// Dir is a sensible default.
type Plugin struct {
	// Dir is the save directory. Required.
	Dir string
	// Load continues the save in Dir if there is one: Install loads it.
	Load bool
	// Overwrite starts a new world in Dir even if it holds a save. The old
	// generations stay in backups/ as long as Autosave.MaxBackups keeps them.
	Overwrite bool

	// ChunkSize, TileSize are the game's constants, checked against the save:
	// pixels per chunk edge (512) and per tile edge (32).
	ChunkSize int
	TileSize  int
	// Seed is the world seed of a new world; a loaded save brings its own
	// (see [Persistence.Seed]).
	Seed uint64
	// Generator produces chunks that were never saved; the store saves
	// chunks as deltas against it. Nil means chunks start as air.
	Generator chunkstore.Generator
	// PersistMask selects the pixel bits that are saved
	// (default components.PersistMask: material, colour, damage, body flag).
	PersistMask uint32

	// Autosave is the initial AutosaveConfig resource; nil means
	// autosave.DefaultConfig (every 300 s, one backup).
	Autosave *AutosaveConfig
	// TickDuration is the game time of one Update (default 1/60 s); the
	// autosave timer counts it.
	TickDuration time.Duration
	// MaxPendingChunks is how many unloaded dirty chunks wait in memory
	// before a save is started for them (default 64).
	MaxPendingChunks int
	// CompressionWorkers caps the goroutines that compress chunks during a
	// save (default: one per core). A game that needs every core for its
	// own loop can set 1.
	CompressionWorkers int

	// OnChunkLoaded and OnBodyLoaded are called for every chunk and body
	// entity the plugin spawns, for the game to add its own components.
	OnChunkLoaded func(w *ecs.World, e ecs.Entity)
	OnBodyLoaded  func(w *ecs.World, e ecs.Entity)

	// WorldOptions are passed to the PECS codec, for example to skip
	// components, register aliases or migrations (package archetype).
	WorldOptions []archetype.Option

	// FS replaces the file system, for tests that inject faults.
	FS vfs.FS
}

func (p *Plugin) defaults() {
	if p.ChunkSize == 0 {
		p.ChunkSize = 512
	}
	if p.TileSize == 0 {
		p.TileSize = 32
	}
	if p.PersistMask == 0 {
		p.PersistMask = components.PersistMask
	}
	if p.TickDuration == 0 {
		p.TickDuration = time.Second / 60
	}
	if p.FS == nil {
		p.FS = vfs.OS
	}
}

// Install adds the plugin's resources to the world, opens the save
// directory (loading the save if Load is set and there is one), and returns
// the systems to run every tick after the game's own: first the streaming
// system, then the save system.
//
// Install needs the world's component and resource types registered first
// when Load is set, as for any PECS decode: components with
// ecs.ComponentID, resources with ecs.AddResource.
//
// Install checks every registered component type and every resource the
// world holds (archetype.Check with the plugin's codec options): a type
// whose values could not come back exactly from a save (a channel or a
// function inside, say) makes Install fail with an error matching
// archetype.ErrUnsupportedType that names the type, the field and the ways
// out. Types registered later are checked at the first save that meets
// them. The plugin's own runtime resources and ark-tools' scheduler
// resources ([SchedulerResources]) are not saved.
func (p Plugin) Install(w *ecs.World) ([]System, error) {
	p.defaults()
	if p.Dir == "" {
		return nil, errors.New("arksave: Plugin.Dir is empty")
	}
	if p.ChunkSize <= 0 || p.ChunkSize > 1<<12 || p.TileSize <= 0 || p.TileSize > p.ChunkSize {
		return nil, fmt.Errorf("arksave: chunk size %d and tile size %d: want 0 < tile <= chunk <= 4096", p.ChunkSize, p.TileSize)
	}
	registerComponents(w)
	codec := newWorldCodec(p.WorldOptions)
	// Every type a save would write must come back exactly: refuse at start-up
	// what cannot, not at the first autosave minutes later.
	if err := archetype.Check(w, codec.opts...); err != nil {
		return nil, fmt.Errorf("arksave: the world holds types that cannot be saved (register the game's types before Install to have them checked here): %w", err)
	}
	conf := autosave.DefaultConfig()
	if p.Autosave != nil {
		conf = *p.Autosave
	}
	addResource(w, &conf)
	addResource(w, &autosave.State{})
	addResource(w, &autosave.SimulationState{})
	addResource(w, components.NewChunkIndex())
	addResource(w, &components.BodyIDs{Session: 1})

	dir, err := autosave.OpenDir(p.FS, p.Dir)
	if err != nil {
		return nil, err
	}
	hasSave := dir.Manifest() != nil
	if hasSave && !p.Load && !p.Overwrite {
		return nil, fmt.Errorf("%s: %w", p.Dir, ErrSaveExists)
	}
	writer, err := autosave.OpenWriter(p.Dir, autosave.Options{
		FS: p.FS,
		Store: chunkstore.Config{
			ChunkSize:   uint16(p.ChunkSize),
			TileSize:    uint16(p.TileSize),
			PixelSize:   4,
			Seed:        p.Seed,
			Generator:   p.Generator,
			PersistMask: p.PersistMask,
			Workers:     p.CompressionWorkers,
		},
		Fresh: hasSave && !p.Load,
	})
	if err != nil {
		return nil, err
	}
	rt, err := systems.NewRuntime(w, writer, systems.Config{
		ChunkSize:        p.ChunkSize,
		TickDuration:     p.TickDuration,
		MaxPendingChunks: p.MaxPendingChunks,
		Generator:        p.Generator,
		OnChunkLoaded:    p.OnChunkLoaded,
		OnBodyLoaded:     p.OnBodyLoaded,
		WorldCodec:       codec,
	})
	if err != nil {
		writer.Close()
		return nil, err
	}
	pers := &Persistence{rt: rt}
	addResource(w, pers)
	if hasSave && p.Load {
		if err := rt.Load(p.Dir); err != nil {
			rt.Close()
			return nil, err
		}
	}
	return []System{&systems.StreamSystem{R: rt}, &systems.SaveSystem{R: rt}}, nil
}

// addResource adds res unless the world has a resource of its type; an
// existing one is overwritten in place so that pointers stay valid.
func addResource[T any](w *ecs.World, res *T) {
	if old := ecs.GetResource[T](w); old != nil {
		*old = *res
		return
	}
	ecs.AddResource(w, res)
}

func registerComponents(w *ecs.World) {
	ecs.ComponentID[components.ChunkPos](w)
	ecs.ComponentID[components.Chunk](w)
	ecs.ComponentID[components.ChunkState](w)
	ecs.ComponentID[components.PixelBody](w)
	ecs.ComponentID[components.Persistable](w)
	ecs.ComponentID[components.Transient](w)
	ecs.ComponentID[components.Focus](w)
}

// Persistence is the resource through which a game saves and loads on
// demand (seed 000's PersistenceControl). Call its methods from the game
// loop's goroutine.
type Persistence struct {
	rt *systems.Runtime
}

// Save asks for a save at the next tick and returns its handle. A request
// made while a save runs is coalesced into the next save.
func (p *Persistence) Save() *SaveHandle { return p.rt.RequestSave() }

// SaveTo asks for a complete save into dir ("Save As"), which the game then
// continues to save to. The current directory keeps its last save.
func (p *Persistence) SaveTo(dir string) *SaveHandle { return p.rt.RequestSaveTo(dir) }

// SaveNow saves synchronously, waiting for the commit: for a final save on
// exit. Call it between ticks.
func (p *Persistence) SaveNow() *Result { return p.rt.SaveNow() }

// Load replaces the world with the last save in dir and continues there.
// A missing or damaged save returns an error and leaves the world as it
// was. See systems.Runtime.Load.
func (p *Persistence) Load(dir string) error { return p.rt.Load(dir) }

// Dir returns the save directory in use.
func (p *Persistence) Dir() string { return p.rt.Writer().Dir() }

// Generation returns the last committed generation of the save directory.
func (p *Persistence) Generation() uint64 { return p.rt.Writer().Generation() }

// Seed returns the world seed of the save in use.
func (p *Persistence) Seed() uint64 { return p.rt.Writer().Seed() }

// DirtyChunks counts loaded chunks with unsaved changes plus unloaded
// chunks waiting for the next save.
func (p *Persistence) DirtyChunks() int { return p.rt.DirtyChunks() + p.rt.PendingChunks() }

// Problems returns the damage found while loading chunks since the last
// call: each such chunk was regenerated or its bodies dropped.
func (p *Persistence) Problems() []Problem { return p.rt.Problems() }

// Close waits for a running save and releases the save directory. It does
// not save: call SaveNow first if the game wants a final save.
func (p *Persistence) Close() error { return p.rt.Close() }
