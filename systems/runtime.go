package systems

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/conv"
	"github.com/arksave/arksave/internal/plugin"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/snapshot"
)

// pendingChunk is a chunk unloaded while dirty, kept until a save commits it.
type pendingChunk struct {
	chunk   components.Chunk
	version uint64
	// committed: a save committed it while the chunk was on its way back
	// (the loader may have read the store before): kept for the spawn,
	// which then starts clean.
	committed bool
}

// problem is damage found while loading (a chunk or its bodies were
// damaged and were regenerated or dropped), or a chunk that could not be
// read and stays unloaded until a later read succeeds.
type problem struct {
	section string
	pos     components.ChunkPos
	err     error
}

// runner is the state the plugin's systems share; the arksave package's
// Persistence resource is its public face. It is an ECS resource of the
// world too, so that the systems find it there. Every method must be called
// from the goroutine that runs the systems (the game loop) unless it says
// otherwise.
type runner struct {
	cfg      plugin.Config
	playTime time.Duration // played in this world: its saves' description says so
	world    *ecs.World
	writer   *savedir.Writer
	loader   *loader

	chunkMap *ecs.Map3[components.ChunkPos, components.Chunk, components.ChunkState]
	chunks   *ecs.Filter3[components.ChunkPos, components.Chunk, components.ChunkState]
	loose    *ecs.Filter1[components.PixelBody] // bodies that are not regional: removed with their chunk
	focuses  *ecs.Filter1[components.Focus]
	reg      *regional
	pl       *players

	index  *components.ChunkIndex
	conf   *autosave.Config
	state  *autosave.State
	sim    *autosave.SimulationState
	bodyID *components.BodyIDs

	committing    *snapshot.Snapshot // the save in flight, what apply confirms once it commits
	pendingChunks map[components.ChunkPos]pendingChunk
	loading       map[components.ChunkPos]bool
	retry         map[components.ChunkPos]*readRetry // chunks whose last reads failed (not damage)
	ticks         uint64                             // streaming ticks run, the clock of retry

	held      []components.SharedPixels // the running save's chunks, for what copy-on-write costs
	heldTiles int                       // tiles copied for them, counted already
	heldSpent time.Duration             // time spent copying them, counted already
	tickStall time.Duration             // the game loop's saving this tick: copies and snapshot

	// spareWorld holds the memory of the last world file the writer is
	// done with (see snapshot.Snapshot.ReuseWorld): the next snapshot
	// encodes into it.
	spareWorld chan []byte

	closed    bool // Close was called: every later call is refused (see closedErr)
	requested bool
	flush     bool // the snapshot being taken looks at every loaded chunk's regional entities
	saveTo    string
	waiting   []*handle // handles of the next save
	inflight  []*handle // handles of the running save

	mu           sync.Mutex
	problems     []problem
	loadProblems []chunkstore.Problem // a load's fallback: what was damaged
}

// init provides plugin.New: package arksave starts the runtime through it.
func init() {
	plugin.New = func(w *ecs.World, d *savedir.Dir, cfg plugin.Config) (plugin.Runtime, error) {
		r, err := newRunner(w, d, cfg)
		if err != nil {
			return nil, err
		}
		return r, nil
	}
}

// newRunner starts the runtime of a world on a save directory the caller
// opened for writing: it starts the writer (which takes d over, its lock
// included, and closes it should newRunner fail), the loader goroutine, and
// adds the runner to the world in a plugin.Slot. The world must hold the
// plugin's resources: [components.ChunkIndex], [autosave.Config],
// [autosave.State], [autosave.SimulationState] and [components.BodyIDs].
func newRunner(w *ecs.World, d *savedir.Dir, cfg plugin.Config) (*runner, error) {
	cfg.ChunkSize = int(cfg.Writer.Store.ChunkSize)
	switch {
	case cfg.ChunkSize <= 0 || cfg.TickDuration <= 0 || cfg.MaxPendingChunks <= 0:
		d.Close()
		return nil, fmt.Errorf("arksave: chunk size %d, tick %v, pending chunks %d: the plugin's settings were not resolved",
			cfg.ChunkSize, cfg.TickDuration, cfg.MaxPendingChunks)
	case cfg.WorldCodec == nil:
		d.Close()
		return nil, errors.New("arksave: no world codec")
	case cfg.Hysteresis < 0 || cfg.Checkpoint < 0:
		d.Close()
		return nil, fmt.Errorf("arksave: hysteresis %v, checkpoint %v: neither may be negative", cfg.Hysteresis, cfg.Checkpoint)
	}
	writer, err := savedir.NewWriter(d, cfg.Writer)
	if err != nil {
		return nil, err
	}
	r := &runner{
		cfg:           cfg,
		world:         w,
		writer:        writer,
		chunkMap:      ecs.NewMap3[components.ChunkPos, components.Chunk, components.ChunkState](w),
		chunks:        ecs.NewFilter3[components.ChunkPos, components.Chunk, components.ChunkState](w),
		loose:         ecs.NewFilter1[components.PixelBody](w).Without(ecs.C[components.Regional](), ecs.C[components.Persistable](), ecs.C[components.Player]()),
		focuses:       ecs.NewFilter1[components.Focus](w),
		reg:           newRegional(w, cfg.Positions, cfg.SectionOptions),
		pl:            newPlayers(w, append(slices.Clone(cfg.SectionOptions), cfg.PlayerOptions...)),
		pendingChunks: map[components.ChunkPos]pendingChunk{},
		spareWorld:    make(chan []byte, 1),
		loading:       map[components.ChunkPos]bool{},
		retry:         map[components.ChunkPos]*readRetry{},
	}
	ecs.ComponentID[components.Transient](w)
	if err := r.bindResources(); err != nil {
		writer.Close()
		return nil, err
	}
	r.loader = newLoader(writer, cfg.ChunkSize)
	// A second Install on the same world replaces the first's runtime: the
	// systems find the new one.
	id := ecs.ResourceID[plugin.Slot](w)
	if w.Resources().Has(id) {
		w.Resources().Remove(id)
	}
	w.Resources().Add(id, &plugin.Slot{Runtime: r})
	return r, nil
}

// Of returns the runtime installed in w. It panics when the plugin is not
// installed there: the systems are made by arksave.Plugin.Install.
func of(w *ecs.World) *runner {
	var r *runner
	if slot := ecs.GetResource[plugin.Slot](w); slot != nil {
		r, _ = slot.Runtime.(*runner)
	}
	if r == nil {
		panic("arksave: the world has no arksave plugin: use the systems arksave.Plugin.Install returns, with the world it installed into")
	}
	return r
}

func (r *runner) bindResources() error {
	r.index = ecs.GetResource[components.ChunkIndex](r.world)
	r.conf = ecs.GetResource[autosave.Config](r.world)
	r.state = ecs.GetResource[autosave.State](r.world)
	r.sim = ecs.GetResource[autosave.SimulationState](r.world)
	r.bodyID = ecs.GetResource[components.BodyIDs](r.world)
	if r.index == nil || r.conf == nil || r.state == nil || r.sim == nil || r.bodyID == nil {
		return errors.New("arksave: the world lacks the plugin's resources")
	}
	return nil
}

// Writer returns the autosave writer.
func (r *runner) Writer() *savedir.Writer { return r.writer }

// Problems returns the damage found since the last call: a load that fell
// back to a backup (the fallback first, then what was damaged), then
// chunks whose records were damaged, and chunks that could not be read (an
// error that is not damage: they stay unloaded and are read again later;
// reported once per run of failed reads), and chunks whose regional
// entities this game cannot read (kept as stored, reported once per
// chunk), as problems of the chunk store file in use. Safe for concurrent
// use.
func (r *runner) Problems() []chunkstore.Problem {
	r.mu.Lock()
	ps := r.problems
	out := r.loadProblems
	r.problems, r.loadProblems = nil, nil
	r.mu.Unlock()
	file := ""
	if m := r.writer.Manifest(); m != nil {
		file = m.Chunks.Name
	}
	for _, p := range ps {
		pos := conv.StorePos(p.pos)
		out = append(out, chunkstore.Problem{File: file, Section: p.section, Offset: -1, Pos: &pos, Err: p.err})
	}
	return out
}

func (r *runner) report(p problem) {
	r.mu.Lock()
	r.problems = append(r.problems, p)
	r.mu.Unlock()
}

// PendingChunks returns how many unloaded chunks wait for the next save:
// their pixels, their regional entities or both.
func (r *runner) PendingChunks() int {
	n := 0
	for pos, p := range r.pendingChunks {
		if q := r.reg.pending[pos]; !p.committed || q != nil && !q.committed() {
			n++
		}
	}
	for pos, q := range r.reg.pending {
		if _, ok := r.pendingChunks[pos]; !ok && !q.committed() {
			n++
		}
	}
	return n
}

// DirtyChunks counts the loaded chunks that have unsaved changes: pixels
// or regional entities.
func (r *runner) DirtyChunks() int {
	n := 0
	q := r.chunks.Query()
	for q.Next() {
		pos, _, st := q.Get()
		if rg := r.reg.regions[*pos]; st.IsDirty() || rg != nil && rg.dirty() {
			n++
		}
	}
	return n
}

// Close waits for a running save (its handles complete with its result),
// stops the loader and the writer, and completes the handles of saves
// asked for that did not start with an error matching
// [autosave.ErrClosed]. It does not save; call [runner.SaveNow] first for
// a final save. Every later call of the runner that can fail returns an
// error matching autosave.ErrClosed at once, Close included; the systems
// do nothing.
func (r *runner) Close() error {
	if r.closed {
		return r.closedErr("Close")
	}
	r.WaitSave()
	r.closed = true
	r.loader.close()
	err := r.writer.Close()
	if len(r.waiting) > 0 {
		res := r.closedResult("Save")
		for _, h := range r.waiting {
			h.complete(res)
		}
	}
	r.waiting, r.requested, r.saveTo = nil, false, ""
	return err
}

// Closed reports whether Close was called.
func (r *runner) Closed() bool { return r.closed }

// closedErr is the error of call after Close: it names the call and the
// save it no longer holds, and what to do instead.
func (r *runner) closedErr(call string) error {
	return fmt.Errorf("arksave: Persistence.%s after Persistence.Close: %w: %s is released; install the plugin again (on a new world) to save there", call, autosave.ErrClosed, r.writer.Dir())
}

// closedResult is the result of a save asked for after Close, or asked
// for before it and never started.
func (r *runner) closedResult(call string) *autosave.Result {
	return &autosave.Result{Err: r.closedErr(call), Generation: r.writer.Generation(), Dir: r.writer.Dir()}
}
