package systems

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/snapshot"
)

// Config is what the runtime needs to know about the game.
type Config struct {
	// ChunkSize is the number of pixels per chunk edge.
	ChunkSize int
	// TickDuration is the game time one Update stands for; the autosave
	// timer advances by it.
	TickDuration time.Duration
	// MaxPendingChunks is how many unloaded dirty chunks may wait in memory
	// for the next save before a save is started for them.
	MaxPendingChunks int
	// Generator produces chunks whose record is damaged (the store itself
	// generates the chunks it does not hold), with the save's seed.
	Generator chunkstore.Generator
	// OnChunkLoaded and OnBodyLoaded, when set, are called on the game loop
	// for every chunk and body entity the streaming system spawns, for
	// example to add the game's own components.
	OnChunkLoaded func(w *ecs.World, e ecs.Entity)
	OnBodyLoaded  func(w *ecs.World, e ecs.Entity)
	// WorldCodec encodes and decodes the ECS world file.
	WorldCodec WorldCodec
}

// WorldCodec encodes the ECS world (without chunk and body entities) for a
// snapshot and decodes it on load.
type WorldCodec interface {
	// Encode encodes the world's entities, except chunks, bodies and
	// transient ones, and its resources, except the plugin's own.
	Encode(w *ecs.World) ([]byte, error)
	// Validate decodes data into a scratch world with w's types and reports
	// whether Decode into w would succeed. It does not touch w.
	Validate(data []byte, w *ecs.World) error
	// Decode decodes data into w, which has just been reset.
	Decode(data []byte, w *ecs.World) error
}

// pendingChunk is a chunk unloaded while dirty, kept until a save commits it.
type pendingChunk struct {
	chunk   components.Chunk
	version uint64
}

// Problem is damage found while loading: a chunk or its bodies could not be
// read and were regenerated or dropped.
type Problem struct {
	Pos components.ChunkPos
	Err error
}

// Runtime is the state the plugin's systems share; the arksave package's
// Persistence resource is its public face. Every method must be called from
// the goroutine that runs the systems (the game loop) unless it says
// otherwise.
type Runtime struct {
	cfg    Config
	world  *ecs.World
	writer *autosave.Writer
	loader *loader

	chunkMap  *ecs.Map3[components.ChunkPos, components.Chunk, components.ChunkState]
	bodyMap   *ecs.Map2[components.PixelBody, components.Persistable]
	chunks    *ecs.Filter3[components.ChunkPos, components.Chunk, components.ChunkState]
	bodies    *ecs.Filter1[components.PixelBody] // every body
	persist   *ecs.Filter1[components.PixelBody] // bodies with Persistable
	focuses   *ecs.Filter1[components.Focus]
	persistID ecs.ID

	index  *components.ChunkIndex
	conf   *autosave.Config
	state  *autosave.State
	sim    *autosave.SimulationState
	bodyID *components.BodyIDs

	pendingChunks map[components.ChunkPos]pendingChunk
	pendingBodies map[components.ChunkPos]snapshot.BodySet
	storedBodies  map[components.ChunkPos]uint64 // hash of each chunk's body set as committed
	loading       map[components.ChunkPos]bool

	requested bool
	saveTo    string
	waiting   []*SaveHandle // handles of the next save
	inflight  []*SaveHandle // handles of the running save

	mu       sync.Mutex
	problems []Problem
}

// NewRuntime wires a runtime to a world and a writer. The world must hold
// the plugin's resources: [components.ChunkIndex], [autosave.Config],
// [autosave.State], [autosave.SimulationState] and [components.BodyIDs].
func NewRuntime(w *ecs.World, writer *autosave.Writer, cfg Config) (*Runtime, error) {
	if cfg.ChunkSize <= 0 {
		return nil, fmt.Errorf("systems: chunk size %d", cfg.ChunkSize)
	}
	if cfg.TickDuration <= 0 {
		cfg.TickDuration = time.Second / 60
	}
	if cfg.MaxPendingChunks <= 0 {
		cfg.MaxPendingChunks = 64
	}
	if cfg.WorldCodec == nil {
		return nil, errors.New("systems: no world codec")
	}
	r := &Runtime{
		cfg:           cfg,
		world:         w,
		writer:        writer,
		chunkMap:      ecs.NewMap3[components.ChunkPos, components.Chunk, components.ChunkState](w),
		bodyMap:       ecs.NewMap2[components.PixelBody, components.Persistable](w),
		chunks:        ecs.NewFilter3[components.ChunkPos, components.Chunk, components.ChunkState](w),
		bodies:        ecs.NewFilter1[components.PixelBody](w),
		persist:       ecs.NewFilter1[components.PixelBody](w).With(ecs.C[components.Persistable]()),
		focuses:       ecs.NewFilter1[components.Focus](w),
		persistID:     ecs.ComponentID[components.Persistable](w),
		pendingChunks: map[components.ChunkPos]pendingChunk{},
		pendingBodies: map[components.ChunkPos]snapshot.BodySet{},
		storedBodies:  map[components.ChunkPos]uint64{},
		loading:       map[components.ChunkPos]bool{},
	}
	ecs.ComponentID[components.Transient](w)
	if err := r.bindResources(); err != nil {
		return nil, err
	}
	r.loader = newLoader(writer, cfg.ChunkSize, cfg.Generator)
	return r, nil
}

func (r *Runtime) bindResources() error {
	r.index = ecs.GetResource[components.ChunkIndex](r.world)
	r.conf = ecs.GetResource[autosave.Config](r.world)
	r.state = ecs.GetResource[autosave.State](r.world)
	r.sim = ecs.GetResource[autosave.SimulationState](r.world)
	r.bodyID = ecs.GetResource[components.BodyIDs](r.world)
	if r.index == nil || r.conf == nil || r.state == nil || r.sim == nil || r.bodyID == nil {
		return errors.New("systems: the world lacks the plugin's resources")
	}
	return nil
}

// Writer returns the autosave writer.
func (r *Runtime) Writer() *autosave.Writer { return r.writer }

// Config returns the runtime's configuration.
func (r *Runtime) Config() Config { return r.cfg }

// Problems returns the damage found while loading chunks since the last call.
// Safe for concurrent use.
func (r *Runtime) Problems() []Problem {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.problems
	r.problems = nil
	return p
}

func (r *Runtime) report(p Problem) {
	r.mu.Lock()
	r.problems = append(r.problems, p)
	r.mu.Unlock()
}

// PendingChunks returns how many unloaded chunks wait for the next save.
func (r *Runtime) PendingChunks() int { return len(r.pendingChunks) }

// DirtyChunks counts the loaded chunks that have unsaved changes.
func (r *Runtime) DirtyChunks() int {
	n := 0
	q := r.chunks.Query()
	for q.Next() {
		_, _, st := q.Get()
		if st.IsDirty() {
			n++
		}
	}
	return n
}

// Close waits for a running save, stops the loader and the writer. It does
// not save; call [Runtime.SaveNow] first for a final save.
func (r *Runtime) Close() error {
	r.loader.close()
	return r.writer.Close()
}
