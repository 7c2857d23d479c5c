// Package plugin is the contract between package arksave (Plugin and
// Persistence: what a game calls) and package systems (the runtime the
// plugin's two systems run): the settings Plugin resolves once, the
// runtime's face, and the errors both return.
//
// Package systems provides the runtime: its init sets [New]. The root
// package imports systems (for the systems Install returns) and reaches the
// runtime only through [Runtime], so that no package exports the runtime
// for a sibling.
package plugin

import (
	"errors"
	"image"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/snapshot"
)

// Config is the plugin's settings, resolved once: arksave.Plugin fills in
// its defaults, checks them and passes this one value down; New takes it
// as it is. Each field is the Plugin field of the same name (documented
// there), except where said.
type Config struct {
	// Writer is the writer's options: the chunk store's among them
	// (Plugin.ChunkSize, TileSize, Seed, Generator, Layers, ChunkEncoding,
	// CompressionWorkers, DataFileSize, Key, ArchiveZstd), the file system, the lock
	// timeout and the logger.
	Writer savedir.Options
	// ChunkSize is Writer.Store.ChunkSize as an int: New sets it.
	ChunkSize        int
	TickDuration     time.Duration
	MaxPendingChunks int
	OnChunkLoaded    func(w *ecs.World, e ecs.Entity)
	OnBodyLoaded     func(w *ecs.World, e ecs.Entity)
	OnEntityLoaded   func(w *ecs.World, e ecs.Entity)
	// Positions are Plugin.Positions' locators.
	Positions  []Locator
	Hysteresis float64
	// Checkpoint is Plugin.Checkpoint with off as zero.
	Checkpoint time.Duration
	// SectionOptions are Plugin.WorldOptions, for entity sections.
	SectionOptions []archetype.Option
	// PlayerOptions are added to SectionOptions for players' records
	// only: archetype.Key(Plugin.Key) when the save is encrypted, nil
	// otherwise (chunks' regional entities are encrypted with their whole
	// record by the chunk store: Writer.Store.Key).
	PlayerOptions []archetype.Option
	// WorldCodec encodes and decodes the ECS world file.
	WorldCodec     WorldCodec
	SaveOnFinalize bool
	// Name is Plugin.Name with its default; Thumbnail is Plugin.Thumbnail,
	// nil when the save is encrypted.
	Name      string
	Thumbnail func(w *ecs.World) image.Image
}

// WorldCodec encodes the ECS world (without chunk, regional and player
// entities) for a snapshot and decodes it on load.
type WorldCodec interface {
	// Encode appends the file of the world's entities, except chunks,
	// bodies and transient ones, and of its resources, except the plugin's
	// own, to dst (a buffer of an earlier save, reused; nil at first).
	Encode(dst []byte, w *ecs.World) ([]byte, error)
	// Validate decodes data into a scratch world with w's types and reports
	// whether Decode into w would succeed. It does not touch w.
	Validate(data []byte, w *ecs.World) error
	// Decode decodes data into w, which has just been reset.
	Decode(data []byte, w *ecs.World) error
}

// RegionStats is arksave.RegionStats as the runtime counts it (the
// fields are documented there; the root converts it).
type RegionStats struct {
	Regions, Entities, Pending, Dirty, Crossings, Checkpoints, Spawned, Unloaded int
}

// ErrChunkNotLoaded is returned by SetChunkData and ChunkData for a chunk
// that is not loaded.
var ErrChunkNotLoaded = errors.New("arksave: the chunk is not loaded")

// ErrPlayerOnline is returned by LoadPlayer for a player whose entities are
// in the world already, and by DeletePlayer for one that is.
var ErrPlayerOnline = errors.New("arksave: the player is in the world")

// ErrNoPlayer is returned by LoadPlayer for a player the save holds no
// record of, and by SavePlayer for one without entities in the world.
var ErrNoPlayer = autosave.ErrNoPlayer

// Handle tracks one requested save (arksave.SaveHandle is its face).
type Handle interface {
	// IsComplete reports whether the save has finished, successfully or not.
	IsComplete() bool
	// Done returns a channel that is closed when the save has finished.
	Done() <-chan struct{}
	// Wait finishes the save on the game loop's goroutine and returns its
	// result.
	Wait() *autosave.Result
	// Result returns the save's result once it is complete, nil before.
	Result() *autosave.Result
}

// Runtime is the state the plugin's systems share, as arksave.Persistence
// uses it. Every method is called from the game loop's goroutine. The
// methods are documented on Persistence, which a game calls.
type Runtime interface {
	RequestSave() Handle
	RequestSaveTo(dir string) Handle
	SaveNow() *autosave.Result
	WaitSave() *autosave.Result
	WaitIdle() *autosave.Result
	Load(dir string) error
	// LoadVersion is Persistence.LoadVersion with the version's fields:
	// generation gen, or the newest committed at or before at.
	LoadVersion(dir string, gen uint64, at time.Time) error
	// Adopt replaces the world with world, the world file of the
	// generation just opened in dir by Install's load; fb is its
	// fallback, picked the kept generation it asked for (each nil when
	// there is none).
	Adopt(dir string, world []byte, fb *autosave.Fallback, picked *savedir.Picked) error
	Writer() *savedir.Writer
	DirtyChunks() int
	PendingChunks() int
	Problems() []chunkstore.Problem
	SavePlayer(id string) (Handle, error)
	DeletePlayer(id string) (Handle, error)
	LoadPlayer(id string) ([]ecs.Entity, error)
	Players() []string
	Resolve(e ecs.Entity) (ecs.Entity, bool)
	Entity(id uint64) (ecs.Entity, bool)
	MarkDirty(e ecs.Entity) error
	RegionStats() RegionStats
	SetChunkData(pos components.ChunkPos, data []byte) error
	ChunkData(pos components.ChunkPos) ([]byte, error)
	Snapshot() (*snapshot.Snapshot, error)
	Close() error
	Closed() bool
}

// Slot is the ECS resource under which the runtime sits in its world, so
// that the systems find it there.
type Slot struct{ Runtime Runtime }

// New starts the runtime of w over the opened save directory d (which it
// owns from then on: it closes it should New fail) and adds it to w in a
// Slot. Package systems sets it.
var New func(w *ecs.World, d *savedir.Dir, cfg Config) (Runtime, error)
