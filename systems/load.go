package systems

import (
	"errors"
	"fmt"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/pecs"
	"github.com/arksave/arksave/internal/savedir"
)

// Load replaces the game's world with the last committed save in dir and
// continues saving there. It waits for a running save to finish first.
// When the committed generation is damaged, the newest intact backup is
// loaded instead (savedir.Writer.ContinueIntact) and reported.
//
// The save is read and decoded into a scratch world before the live world
// is touched, so a missing, damaged or incompatible save returns an error
// and leaves the game as it was (and saving where it was). Loading another
// directory takes its lock (an error matching autosave.ErrLocked while
// another holder has it) and releases the current one's. On success every
// entity of the world is replaced by the saved ones (with their exact ids),
// resources are overwritten in place (pointers the game holds stay valid),
// chunks stream in again around the saved focus entities, and the body id
// generator continues in a new session.
//
// Load resets the world ([ecs.World.Reset]): observers and registered
// filters are dropped, as Ark's Reset does. Call it between ticks, never
// while a query is being iterated.
func (r *runner) Load(dir string) error {
	if r.closed {
		return r.closedErr("Load")
	}
	r.WaitSave()
	data, fb, err := r.writer.ContinueIntact(dir, r.validate)
	if err != nil {
		return r.loadFailed(dir, err)
	}
	return r.Adopt(dir, data, fb, nil)
}

// LoadVersion is Load of a kept generation of dir: generation gen, or the
// newest committed at or before at (exactly one of them set). A generation
// other than the committed one is made current as a new generation first
// (savedir.Writer.ContinueAt: the committed one becomes a backup, every
// backup stays), under the lock the runtime holds or takes, and then loads
// as Load loads. Bad input (both set, neither, a generation dir does not
// keep, a time before every kept generation) is an error matching
// autosave.ErrNoGeneration that lists what dir keeps; it and any other
// error leave the game as it was.
func (r *runner) LoadVersion(dir string, gen uint64, at time.Time) error {
	if r.closed {
		return r.closedErr("LoadVersion")
	}
	r.WaitSave()
	data, fb, picked, err := r.writer.ContinueAt(dir, gen, at, r.validate)
	if err != nil {
		return r.loadFailed(dir, err)
	}
	return r.Adopt(dir, data, fb, picked)
}

// validate reports whether world, a world file to load, decodes into the
// game's world.
func (r *runner) validate(world []byte) error { return r.cfg.WorldCodec.Validate(world, r.world) }

// loadFailed logs and returns the error of a load of dir that left the
// game as it was.
func (r *runner) loadFailed(dir string, err error) error {
	if log := r.cfg.Writer.Logger; log != nil {
		log.Error("load failed", "dir", dir, "err", err)
	}
	return fmt.Errorf("load %s: %w", dir, err)
}

// Adopt replaces the game's world with world, the world file of the
// generation the writer has just opened in dir (Install's load), and notes
// fb, when the committed generation was damaged and a backup was loaded
// instead: autosave.State.Fallback shows it and Problems reports it; and
// picked, when the load asked for a kept generation (by number or by
// time) other than the committed one: Problems reports it first, and the
// log.
func (r *runner) Adopt(dir string, world []byte, fb *autosave.Fallback, picked *savedir.Picked) error {
	if err := r.replaceWorld(world); err != nil {
		return fmt.Errorf("load %s: %w", dir, err)
	}
	r.state.Fallback = fb
	r.playTime = 0
	if m, err := r.writer.Meta(); err == nil {
		r.playTime = m.PlayTime()
	}
	log := r.cfg.Writer.Logger
	var reports []chunkstore.Problem
	if picked != nil && picked.Loaded != picked.Generation && fb == nil {
		reports = append(reports, chunkstore.Problem{File: savedir.ManifestName, Section: "generation", Offset: -1, Err: errors.New("arksave: " + picked.String())})
		if log != nil {
			log.Info("loaded an older generation", "dir", dir, "loaded", picked.Loaded, "committed_at", picked.At, "generation", picked.Generation, "summary", picked.String())
		}
	}
	if fb != nil {
		reports = append(reports, fb.Problem())
		reports = append(reports, fb.Problems...)
	}
	if reports != nil {
		r.mu.Lock()
		r.loadProblems = reports
		r.mu.Unlock()
	}
	if fb != nil && log != nil {
		log.Warn("damaged generation: loaded the newest intact backup", "dir", dir, "damaged", fb.Damaged,
			"loaded", fb.Loaded, "generation", fb.Generation, "problems", len(fb.Problems), "first", fb.Problems[0].String(), "summary", fb.String())
	}
	if log != nil {
		entities := 0
		if h, err := pecs.ReadHeader(world); err == nil {
			entities = int(h.Entities)
		}
		log.Info("save loaded", "dir", dir, "generation", r.writer.Generation(), "entities", entities, "world_bytes", len(world))
	}
	return nil
}

// replaceWorld resets the world and decodes data into it, keeping the
// resource values the game and the plugin hold pointers to.
func (r *runner) replaceWorld(data []byte) error {
	type res struct {
		id  ecs.ResID
		ptr any
	}
	var keep []res
	for _, id := range ecs.ResourceIDs(r.world) {
		if ptr := r.world.Resources().Get(id); ptr != nil {
			keep = append(keep, res{id, ptr})
		}
	}
	r.world.Reset()
	for _, k := range keep {
		r.world.Resources().Add(k.id, k.ptr)
	}
	r.forgetChunks()
	if err := r.cfg.WorldCodec.Decode(data, r.world); err != nil {
		return err
	}
	// A new session: bodies made from now on never collide with saved ones.
	r.bodyID.Session++
	r.bodyID.Counter = 0
	r.state.TimeSinceLastSave = 0
	return nil
}

// forgetChunks drops everything the runtime knew about loaded, loading and
// unloaded chunks; the world's chunk entities are gone.
func (r *runner) forgetChunks() {
	r.loader.reset()
	clear(r.pendingChunks)
	clear(r.loading)
	clear(r.retry)
	r.reg.reset()
	clear(r.pl.state)
	var all []components.ChunkPos
	r.index.All(func(p components.ChunkPos, _ ecs.Entity) bool {
		all = append(all, p)
		return true
	})
	for _, p := range all {
		r.index.Delete(p)
	}
}
