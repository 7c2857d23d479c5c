package arksave

import (
	"errors"
	"fmt"
	"strings"
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

// Errors of the save directory, matched with errors.Is.
var (
	// ErrLocked is returned by [Plugin.Install] (and a Load or SaveTo into
	// another directory) when another holder, in this process or another,
	// has the save directory open: one writer per world. The message names
	// the holder (program, pid, host, since when) and what to do.
	ErrLocked = autosave.ErrLocked
	// ErrNoSave is returned by [Plugin.Install] with Load when Dir does not
	// exist or holds no save, unless LoadOrCreate asks to start a new
	// world there.
	ErrNoSave = autosave.ErrNoSave
	// ErrReadOnly is the error of every save into a directory that cannot
	// be written (a read-only medium): the save loads, saves report it.
	ErrReadOnly = autosave.ErrReadOnly
)

// Plugin configures arksave for a game. The zero value of every field but
// Dir is a sensible default.
type Plugin struct {
	// Dir is the save directory. Required. The plugin holds it (a lock
	// file, see autosave.LockName) from Install to Persistence.Close: a
	// second Install on it, in this process or another, fails with
	// ErrLocked.
	Dir string
	// Load continues the save in Dir: Install loads it. A Dir that does
	// not exist or holds no save is an error matching ErrNoSave (a
	// mistyped directory never silently starts a new world), unless
	// LoadOrCreate is set. A Dir whose manifest is damaged, or lost while
	// the save's files remain, is an error that names arksave repair.
	Load bool
	// LoadOrCreate continues the save in Dir if there is one and starts a
	// new world there (creating Dir) if there is none.
	LoadOrCreate bool
	// Overwrite starts a new world in Dir even if it holds a save. The old
	// generations stay in backups/ as long as Autosave.MaxBackups keeps them.
	Overwrite bool
	// LockTimeout is how long Install waits for another holder of Dir to
	// let go (a game restarting while the last instance makes its final
	// save); zero fails at once with ErrLocked.
	LockTimeout time.Duration

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
// directory and takes its lock (loading the save if Load or LoadOrCreate is
// set and there is one), and returns the systems to run every tick after
// the game's own: first the streaming system, then the save system.
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
//
// A save directory on a medium that cannot be written loads read-only:
// every save then fails with an error matching ErrReadOnly.
func (p Plugin) Install(w *ecs.World) ([]System, error) {
	p.defaults()
	if p.Dir == "" {
		return nil, errors.New("arksave: Plugin.Dir is empty")
	}
	if p.ChunkSize <= 0 || p.ChunkSize > 1<<12 || p.TileSize <= 0 || p.TileSize > p.ChunkSize {
		return nil, fmt.Errorf("arksave: chunk size %d and tile size %d: want 0 < tile <= chunk <= 4096", p.ChunkSize, p.TileSize)
	}
	load := p.Load || p.LoadOrCreate
	if p.Load && !p.LoadOrCreate {
		// Look before creating or locking anything: a mistyped directory
		// stays as it is.
		if err := p.expectSave(); err != nil {
			return nil, err
		}
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

	dir, err := autosave.OpenDir(p.FS, p.Dir, autosave.LockTimeout(p.LockTimeout))
	if err != nil {
		return nil, err
	}
	hasSave := dir.Manifest() != nil
	switch {
	case hasSave && !load && !p.Overwrite:
		dir.Close()
		return nil, fmt.Errorf("%s: %w", p.Dir, ErrSaveExists)
	case !hasSave && p.Load && !p.LoadOrCreate:
		dir.Close()
		return nil, p.noSave(dir)
	}
	writer, err := autosave.NewWriter(dir, autosave.Options{
		FS: p.FS,
		Store: chunkstore.Options{
			ChunkSize:   uint16(p.ChunkSize),
			TileSize:    uint16(p.TileSize),
			PixelSize:   4,
			Seed:        p.Seed,
			Generator:   p.Generator,
			PersistMask: p.PersistMask,
			Workers:     p.CompressionWorkers,
		},
		Fresh:       hasSave && !load,
		LockTimeout: p.LockTimeout,
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
	if hasSave && load {
		if err := rt.Load(p.Dir); err != nil {
			rt.Close()
			return nil, err
		}
	}
	return []System{&systems.StreamSystem{R: rt}, &systems.SaveSystem{R: rt}}, nil
}

// expectSave returns an error matching ErrNoSave when Dir does not exist or
// holds no save, without creating or changing anything. A damaged or lost
// manifest is left to OpenDir, which names the repair.
func (p Plugin) expectSave() error {
	d, err := autosave.OpenDirReadOnly(p.FS, p.Dir)
	if err != nil {
		return fmt.Errorf("arksave: load: %w; set Plugin.LoadOrCreate to start a new world there", err)
	}
	if d.Manifest() == nil && errors.Is(d.ManifestErr(), ErrNoSave) {
		return p.noSave(d)
	}
	return nil
}

// noSave explains a directory that holds no save to load.
func (p Plugin) noSave(d *autosave.Dir) error {
	msg := fmt.Sprintf("arksave: load: %s holds no save", p.Dir)
	if files := d.Leftovers(); len(files) > 0 {
		msg += fmt.Sprintf(" (%s: what a first save left that did not commit; arksave repair %s can make a save of it)", strings.Join(files, ", "), p.Dir)
	}
	return fmt.Errorf("%w: %s; set Plugin.LoadOrCreate to start a new world there", ErrNoSave, msg)
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
// continues to save to, holding it (and releasing the current directory,
// which keeps its last save). A directory another game holds makes the
// save fail with ErrLocked.
func (p *Persistence) SaveTo(dir string) *SaveHandle { return p.rt.RequestSaveTo(dir) }

// SaveNow saves synchronously, waiting for the commit: for a final save on
// exit. Call it between ticks.
func (p *Persistence) SaveNow() *Result { return p.rt.SaveNow() }

// Wait waits for the running save, if any, to finish and takes its result
// (AutosaveState.LastResult shows it), without starting another, however
// short the autosave interval; nil when no save was running. Call it
// between ticks, for example before a final SaveNow.
func (p *Persistence) Wait() *Result { return p.rt.WaitSave() }

// Load replaces the world with the last save in dir and continues there,
// holding dir from then on (and releasing the directory it left). A
// missing or damaged save, or a directory another game holds (ErrLocked),
// returns an error and leaves the world as it was. See
// systems.Runtime.Load.
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
