package arksave

import (
	"errors"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/plugin"
	"github.com/arksave/arksave/vfs"
)

// Persistence is the resource through which a game saves and loads on
// demand: get it with ecs.GetResource[arksave.Persistence](world) after
// [Plugin.Install]. Call its methods from the game loop's goroutine,
// between ticks (not while a query is being iterated).
type Persistence struct {
	rt  plugin.Runtime
	loc *vfs.Location // the location Plugin.Dir opened (a connection), closed with the Persistence
}

// Save asks for a save at the next tick and returns its handle; the game
// keeps running while the save is written. A request made while a save
// runs is coalesced into the next save. Poll [SaveHandle.IsComplete] once a
// tick, or call [SaveHandle.Wait] between ticks to finish it there.
func (p *Persistence) Save() *SaveHandle { return &SaveHandle{h: p.rt.RequestSave()} }

// SaveAs asks for a complete save into dir ("Save As"), which the game then
// continues to save to, holding it (and releasing the current directory,
// which keeps its last save). A directory another game holds makes the
// save fail with an error matching ErrLocked; dir may not be the directory
// in use (use Save).
func (p *Persistence) SaveAs(dir string) *SaveHandle {
	return &SaveHandle{h: p.rt.RequestSaveTo(dir)}
}

// SaveNow saves synchronously and returns the result once the save is
// durable: it waits for a running save, takes a snapshot and waits for its
// commit. It is for a final save on exit (or after a scheduler's run: the
// systems' Finalize does not save unless Plugin.SaveOnFinalize is set); in
// play, prefer Save, which never stalls the game.
func (p *Persistence) SaveNow() *autosave.Result { return p.rt.SaveNow() }

// Wait waits for the running save, if any, to finish and takes its result
// (autosave.State.LastResult shows it), without starting another, however
// short the autosave interval; nil when no save was running. Call it
// between ticks, for example before a final SaveNow.
func (p *Persistence) Wait() *autosave.Result { return p.rt.WaitSave() }

// WaitIdle is Wait, and then it also waits for the work the writer
// goroutine does after a save: the save's description (meta.json,
// Plugin.Name), the copy of the chunk store for the backup
// (autosave.Config.BackupCopyEvery) and compaction. Until the next save, the
// writer then takes no CPU from the game; a benchmark of the game alone, or
// a game about to measure or hand the directory to a tool, calls it.
// Call it between ticks.
func (p *Persistence) WaitIdle() *autosave.Result { return p.rt.WaitIdle() }

// Load replaces the world with the last committed save in dir and
// continues saving there. Loading the directory in use goes back to its
// last save (a "reload"); loading another one takes that directory's lock
// (an error matching ErrLocked while another game holds it) and releases
// the current one, which keeps its last save. A running save is waited for
// first.
//
// The save is read, verified and decoded into a scratch world before the
// live world is touched: a missing save (ErrNoSave), a damaged one without
// an intact backup (ErrCorrupt), or one whose types no longer match the
// game's (archetype.ErrIncompatible) returns an error and leaves the game
// as it was, still saving where it was. A committed generation that is
// damaged, its world file or the chunk store's records it uses, loads the
// newest intact backup instead (committed as a new generation; the
// damaged files are all kept), and Problems and autosave.State.Fallback
// report it. A file of it that cannot be read for a reason that is not
// damage (an I/O error, a permission) is an error matching
// autosave.ErrUnreadable and the file system's error, naming the file:
// no backup is loaded, nothing is changed, and the same Load succeeds
// once the cause is fixed.
//
// On success every entity of the world is replaced by the saved ones, with
// their exact ids (ecs.Entity values inside components stay valid);
// resources are overwritten in place, so pointers the game holds to them
// stay valid; chunks stream in again around the saved Focus entities over
// the next ticks; and the pixel-body id generator continues in a new
// session, so new bodies never collide with saved ones.
//
// Load resets the world (ecs.World.Reset): observers and filters the game
// registered are dropped, as Ark's Reset drops them, so the game's systems
// must register them again (run their Initialize). The world needs its
// component and resource types registered, as for Install with Load.
func (p *Persistence) Load(dir string) error { return p.rt.Load(dir) }

// LoadVersion is [Persistence.Load] of a kept generation of dir, the
// committed one or a backup: the one v names (see [Version]). A
// generation other than the committed one is made current first, as a
// new generation H above every other (as arksave restore does): its world
// file and its players are copied into H, H names its chunk store
// generation, the generation that was committed becomes a backup, and
// every backup stays, so nothing is lost and no backup's file is written
// to. This happens under the directory's lock (the one the game holds, or
// the one Load takes), after the generation was verified whole and
// decoded into a scratch world; then it loads as Load does. Problems
// reports it first ("loaded generation G of <time> as generation H",
// its Err not matching ErrCorrupt), and the log.
//
// A zero Version, one with both fields set, a generation dir does not
// keep, or a time before every kept generation is an error matching
// autosave.ErrNoGeneration that names the kept generations (for a time,
// the oldest and its time); a damaged backup is an error matching
// ErrCorrupt. Every error leaves the game, and dir, as they were.
//
// Later saves keep backups as autosave.Config says: the generations made
// backups by the load go as older ones would.
func (p *Persistence) LoadVersion(dir string, v Version) error {
	return p.rt.LoadVersion(dir, v.Generation, v.At)
}

// Version names a kept generation of a save, the committed one or a
// backup (arksave inspect lists them), for [Plugin.LoadVersion] and
// [Persistence.LoadVersion]: by its number, or by time. Set one field.
type Version struct {
	// Generation is the generation's number.
	Generation uint64
	// At picks the newest kept generation committed at or before it (its
	// manifest's time): time.Now().Add(-10 * time.Minute) is the save the
	// game had ten minutes ago.
	At time.Time
}

// isZero reports whether v names no generation.
func (v Version) isZero() bool { return v.Generation == 0 && v.At.IsZero() }

// Dir returns the save directory in use.
func (p *Persistence) Dir() string { return p.rt.Writer().Dir() }

// Generation returns the last committed generation of the save directory,
// 0 before its first save.
func (p *Persistence) Generation() uint64 { return p.rt.Writer().Generation() }

// Seed returns the world seed of the save in use.
func (p *Persistence) Seed() uint64 { return p.rt.Writer().Seed() }

// DirtyChunks counts loaded chunks with unsaved changes plus unloaded
// chunks waiting for the next save.
func (p *Persistence) DirtyChunks() int { return p.rt.DirtyChunks() + p.rt.PendingChunks() }

// Problems returns the damage found since the last call: first, when the
// last load fell back to a backup, that fallback (a Problem of the
// manifest naming the generations) and what was damaged in the committed
// generation; or, when the last load made an older generation current
// (LoadVersion, Plugin.LoadVersion), a Problem of the manifest saying so,
// "loaded generation G of <time> as generation H", whose Err does not
// match ErrCorrupt (it is no damage); then each chunk whose record was damaged while loading it
// (regenerated, or its bodies dropped: its Err matches ErrCorrupt), and
// each chunk that could not be read for another reason (an I/O error, the
// chunk store unavailable after a failed save): such a chunk stays
// unloaded, nothing of it is regenerated or dropped, and it is read again
// after a backoff (from 100 ms of game time, doubling, to 5 s; at once
// after a save commits), reported once until a read succeeds; and each
// chunk whose stored regional entities this game cannot read (a component
// type it does not register, or registers at another type version or
// with another layout and no migration; its Err matches
// archetype.ErrUnknownType, ErrVersion or ErrIncompatible and names the
// type): the chunk loads with its other entities, and those it cannot
// read are kept as stored, not spawned, and written again unchanged with
// the chunk's entities by every later save, so that a game that
// registers the type gets them back; reported once per chunk.
func (p *Persistence) Problems() []Problem { return p.rt.Problems() }

// SavePlayer sets aside the record of player id (every entity with
// components.Player{ID: id}) for the next save, which it asks for, and
// returns that save's handle: the game may remove the player's entities at
// once (a player leaves), and waits on the handle if it wants to know the
// record is durable. A player with no entity in the world is an error
// matching ErrNoPlayer.
func (p *Persistence) SavePlayer(id string) (*SaveHandle, error) {
	h, err := p.rt.SavePlayer(id)
	if err != nil {
		return nil, err
	}
	return &SaveHandle{h: h}, nil
}

// LoadPlayer spawns the entities of player id (a player joins) from its
// newest record, one SavePlayer set aside or the committed one, and
// returns them. Players are never spawned by Install or Load: a server
// loads the players that are online. A player already in the world is
// ErrPlayerOnline, one without a record ErrNoPlayer, a damaged record an
// error matching ErrCorrupt; then nothing is spawned.
func (p *Persistence) LoadPlayer(id string) ([]ecs.Entity, error) { return p.rt.LoadPlayer(id) }

// DeletePlayer removes player id's record at the next save, which it asks
// for. A player in the world is ErrPlayerOnline.
func (p *Persistence) DeletePlayer(id string) (*SaveHandle, error) {
	h, err := p.rt.DeletePlayer(id)
	if err != nil {
		return nil, err
	}
	return &SaveHandle{h: h}, nil
}

// Players returns the ids of the saved players, ascending, including
// records set aside for the next save.
func (p *Persistence) Players() []string { return p.rt.Players() }

// Resolve returns the entity that a handle to a regional entity stands for
// now: e itself while it is alive; for the handle of an entity whose chunk
// was unloaded since (or a reference a load could not resolve yet), the
// entity with the same stable id once its chunk is loaded again. ok is
// false when that entity is not loaded.
func (p *Persistence) Resolve(e ecs.Entity) (ecs.Entity, bool) { return p.rt.Resolve(e) }

// Entity returns the loaded regional entity with stable id id
// (components.Regional.ID).
func (p *Persistence) Entity(id uint64) (ecs.Entity, bool) { return p.rt.Entity(id) }

// MarkDirty marks the chunk of regional entity e as changed, so that the
// next save writes it: for a change of its components that should not wait
// for the next checkpoint (Plugin.Checkpoint). Spawning, despawning and
// moving across a chunk border need no call.
func (p *Persistence) MarkDirty(e ecs.Entity) error { return p.rt.MarkDirty(e) }

// RegionStats counts what the regional bookkeeping holds and did.
type RegionStats struct {
	Regions     int // loaded chunks with regional entities
	Entities    int // placed regional entities
	Pending     int // unloaded chunks whose entities wait for a save
	Dirty       int // loaded chunks whose entities wait for a save
	Crossings   int // border crossings past the hysteresis margin
	Checkpoints int // chunks a checkpoint found changed
	Spawned     int // entities placed or spawned with their chunk
	Unloaded    int // entities unloaded with their chunk or into one
}

// RegionStats returns the regional bookkeeping's counters: loaded chunks
// with regional entities, placed entities, unloaded chunks whose entities
// wait for a save, dirty chunks; crossings, checkpoints that found a
// change, entities spawned and unloaded since Install (or the last Load).
func (p *Persistence) RegionStats() RegionStats { return RegionStats(p.rt.RegionStats()) }

// Close waits for a running save (and the copy of the chunk store that
// follows it for its backup, autosave.Config.BackupCopyEvery) and releases
// the save directory (and the connection its location opened). It does
// not save: call SaveNow first if the game wants a final save. Saves asked
// for that had not started complete with an error matching ErrClosed.
//
// After Close, every method that can fail does so at once with an error
// matching ErrClosed (Close again included; Save and SaveAs return a
// complete handle holding it; SaveNow, Wait and WaitIdle a autosave.Result holding
// it), and the plugin's systems do nothing. Dir, Generation, Seed and the
// other queries still answer from what the game last held.
func (p *Persistence) Close() error {
	err := p.rt.Close()
	return errors.Join(err, p.loc.Close())
}

// SaveHandle tracks one requested save. Several requests made while a save
// is running share the next save and its handle.
//
// The save is started and finished by the save system on the game loop, so
// the game loop must never block on [SaveHandle.Done] before the save
// completes: it polls IsComplete once a tick, or calls Wait, which
// finishes the save itself and cannot deadlock. Another goroutine (a
// loading screen's, say) waits on Done.
type SaveHandle struct {
	h plugin.Handle
}

// IsComplete reports whether the save has finished, successfully or not.
// Poll it once a tick.
func (h *SaveHandle) IsComplete() bool { return h.h.IsComplete() }

// Done returns a channel that is closed when the save has finished, for
// goroutines other than the game loop's (see SaveHandle).
func (h *SaveHandle) Done() <-chan struct{} { return h.h.Done() }

// Wait finishes the save on the calling goroutine, which must be the game
// loop's, between ticks, and returns its result (never nil; Result.Err is
// the save's error), as Persistence.Wait and SaveNow do: a save that has
// not started yet is started now (its snapshot taken), then its commit is
// waited for. It never waits for a tick, so it cannot deadlock the game
// loop; it stalls it for the time the save takes.
func (h *SaveHandle) Wait() *autosave.Result { return h.h.Wait() }

// Err returns the save's error once it is complete, nil before.
func (h *SaveHandle) Err() error {
	if r := h.h.Result(); r != nil {
		return r.Err
	}
	return nil
}

// autosave.Result returns the save's result once it is complete, nil before.
func (h *SaveHandle) Result() *autosave.Result { return h.h.Result() }
