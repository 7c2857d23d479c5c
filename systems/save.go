package systems

import (
	"errors"
	"image"
	"slices"
	"time"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/pecs"
	"github.com/arksave/arksave/internal/plugin"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/snapshot"
)

// RequestSave asks for a save at the next [runner.UpdateSave]. A request
// made while a save runs is coalesced into the next one. After Close the
// handle is complete at once, with an error matching autosave.ErrClosed.
func (r *runner) RequestSave() plugin.Handle { return r.request("Save") }

// request adds a handle to the next save; call names the Persistence
// method in the error of a request after Close.
func (r *runner) request(call string) *handle {
	h := r.newHandle()
	if r.closed {
		h.complete(r.closedResult(call))
		return h
	}
	r.requested = true
	r.waiting = append(r.waiting, h)
	return h
}

// RequestSaveTo asks for a save into another directory, which the plugin
// then continues to use ("Save As"). A later RequestSaveTo before the save
// starts replaces the target.
func (r *runner) RequestSaveTo(dir string) plugin.Handle {
	if !r.closed {
		r.saveTo = dir
	}
	return r.request("SaveAs")
}

func (r *runner) tickSave() {
	if r.closed {
		return
	}
	// What the game loop spent on saving this tick: copying tiles for the
	// running save, and the snapshot if one is taken below.
	r.playTime += r.cfg.TickDuration
	r.tickStall = r.copyCost()
	defer func() { r.state.LongestStall = max(r.state.LongestStall, r.tickStall) }()
	if res, ok := r.writer.Poll(); ok {
		r.apply(res)
	}
	if r.writer.Busy() {
		r.state.Progress = r.writer.Progress()
		return
	}
	r.state.TimeSinceLastSave += r.cfg.TickDuration
	due := r.requested ||
		(r.conf.Enabled && r.conf.Interval > 0 && r.state.TimeSinceLastSave >= r.conf.Interval) ||
		len(r.pendingChunks) >= r.cfg.MaxPendingChunks
	if due {
		r.start()
	}
}

// copyCost returns the time the game loop spent copying tiles for the
// running save (copy-on-write) since the last call, and counts the tiles
// in autosave.State.CopiedTiles.
func (r *runner) copyCost() time.Duration {
	var tiles int
	var spent time.Duration
	for _, h := range r.held {
		n, d := h.CopyCost()
		tiles += n
		spent += d
	}
	r.state.CopiedTiles += tiles - r.heldTiles
	d := spent - r.heldSpent
	r.heldTiles, r.heldSpent = tiles, spent
	return d
}

// start takes a snapshot and hands it to the writer.
func (r *runner) start() {
	// A save the game asked for holds every change of the regional
	// entities; an automatic one those marked dirty (see entitySets).
	r.flush = r.requested
	snap, err := r.Snapshot()
	r.flush = false
	if err != nil {
		r.finishWithError(err)
		return
	}
	job := savedir.Job{Snap: snap, MaxBackups: r.conf.MaxBackups, SaveTo: r.saveTo, RequestedAt: snap.TakenAt,
		BackupCopyEvery: max(r.conf.BackupCopyEvery, 0)}
	if r.conf.BackupCopyEvery == 0 {
		job.BackupCopyEvery = 1
	}
	job.Meta = r.metaInput()
	// A copy: the game may change its Config while the writer uses the job.
	job.Retention = autosave.Retention{All: r.conf.Retention.All, Thin: slices.Clone(r.conf.Retention.Thin)}
	if !r.writer.Submit(job) {
		snap.Release() // cannot happen: start runs only when the writer is idle
		return
	}
	r.committing = snap // read once the writer is done with it
	r.requested, r.saveTo = false, ""
	r.inflight, r.waiting = r.waiting, nil
	r.state.InProgress = true
	r.state.Progress = 0
	for _, c := range snap.Chunks {
		r.held = append(r.held, c.Buf)
	}
	r.tickStall += snap.Stall
	if r.conf.PauseDuringSave {
		r.sim.Paused = true
	}
}

// finishWithError completes a save that could not even start.
func (r *runner) finishWithError(err error) {
	res := &autosave.Result{Err: err, Generation: r.writer.Generation(), Dir: r.writer.Dir()}
	r.requested, r.saveTo = false, ""
	r.inflight, r.waiting = r.waiting, nil
	r.apply(res)
}

// apply takes a finished save's result on the game loop: committed chunks
// become Persisted unless they changed since their snapshot, committed
// unloaded chunks and body sets are forgotten, handles complete.
func (r *runner) apply(res *autosave.Result) {
	done := r.committing
	r.committing = nil
	if res.Err == nil && done != nil {
		for _, cv := range done.Chunks {
			if e, ok := r.index.Get(cv.Pos); ok && r.chunkMap.HasAll(e) {
				_, _, st := r.chunkMap.Get(e)
				if st.Status == components.Dirty && st.Version == cv.Version {
					st.Status = components.Persisted
				}
			} else if p, ok := r.pendingChunks[cv.Pos]; ok && p.version == cv.Version {
				if r.loading[cv.Pos] {
					// A chunk on its way keeps its pixels: the store may
					// have been read before this commit.
					p.committed = true
					r.pendingChunks[cv.Pos] = p
				} else {
					delete(r.pendingChunks, cv.Pos)
				}
			}
		}
		r.confirmEntities(done.Entities)
		r.confirmPlayers(done.Players)
		r.retryNow()
	}
	r.tickStall += r.copyCost() // copies since the last count (none when called from tickSave)
	clear(r.held)
	r.held, r.heldTiles, r.heldSpent = r.held[:0], 0, 0
	r.state.LastResult = res
	r.state.Saves++
	r.state.InProgress = false
	r.state.Progress = 0
	r.state.TimeSinceLastSave = 0
	if r.conf.PauseDuringSave {
		r.sim.Paused = false
	}
	for _, h := range r.inflight {
		h.complete(res)
	}
	r.inflight = nil
}

// WaitSave waits for the running save to finish, if one runs, and applies
// its result; it never starts a save. It returns nil when none was running,
// and a result with an error matching autosave.ErrClosed after Close.
func (r *runner) WaitSave() *autosave.Result {
	if r.closed {
		return r.closedResult("Wait")
	}
	return r.applied(r.writer.Wait())
}

// WaitIdle is WaitSave, and then it also waits for the writer's work after
// the save (the backup copy of the chunk store, compaction steps).
func (r *runner) WaitIdle() *autosave.Result {
	if r.closed {
		return r.closedResult("WaitIdle")
	}
	return r.applied(r.writer.WaitIdle())
}

// applied applies res, when there is one, and returns it.
func (r *runner) applied(res *autosave.Result) *autosave.Result {
	if res != nil {
		r.apply(res)
	}
	return res
}

// SaveNow saves synchronously on the calling goroutine, which must be the
// game loop's, between ticks: it waits for a running save, takes a
// snapshot and waits for its commit. Use it for a final save on exit; in
// play, prefer [runner.RequestSave], which never stalls.
func (r *runner) SaveNow() *autosave.Result {
	if r.closed {
		return r.closedResult("SaveNow")
	}
	r.tickStall = r.copyCost()
	r.WaitSave()
	r.requested = true
	r.start()
	r.state.LongestStall = max(r.state.LongestStall, r.tickStall)
	r.WaitSave()
	return r.state.LastResult
}

// Snapshot takes everything a save needs without copying pixels: the ECS
// world encoded, the dirty chunks by reference ([components.Chunk.Share]),
// unloaded chunks waiting to be saved, the entity sets of the chunks whose
// regional entities changed (encoded), and the player records that
// changed (encoded). The caller owns the snapshot and must Release it
// (the writer does); until then the game's first write into a tile of one
// of its chunks that the writer has not read copies that tile.
func (r *runner) Snapshot() (*snapshot.Snapshot, error) {
	start := time.Now()
	snap := &snapshot.Snapshot{TakenAt: start}
	// Regional entities made since the last tick find their chunks first:
	// the world file leaves them out.
	r.trackNew()
	r.trackRemoved()
	r.orphanFresh()

	world, err := r.encodeWorld()
	if err != nil {
		return nil, errors.Join(errors.New("systems: encode ECS world"), err)
	}
	snap.World = world
	snap.ReuseWorld = r.reuseWorld
	if h, err := pecs.ReadHeader(world); err == nil {
		snap.WorldEntities = int(h.Entities)
	}

	q := r.chunks.Query()
	for q.Next() {
		pos, ch, st := q.Get()
		if st.IsDirty() {
			snap.Chunks = append(snap.Chunks, snapshot.Chunk{Pos: *pos, Buf: ch.Share(), Version: st.Version, Data: ch.Data()})
		}
	}
	for pos, p := range r.pendingChunks {
		snap.Chunks = append(snap.Chunks, snapshot.Chunk{Pos: pos, Buf: p.chunk.Share(), Version: p.version, Data: p.chunk.Data()})
	}
	if snap.Entities, err = r.entitySets(r.flush); err != nil {
		return nil, err
	}
	if snap.Players, err = r.playerRecords(); err != nil {
		return nil, err
	}
	snap.Stall = time.Since(start)
	return snap, nil
}

// encodeWorld encodes the ECS world. Encoding runs the game's own code (a
// component's MarshalBinary, say): a panic there fails this save with an
// [autosave.PanicError] instead of ending the game.
func (r *runner) encodeWorld() (data []byte, err error) {
	var dst []byte
	select {
	case dst = <-r.spareWorld:
	default:
	}
	defer func() {
		if p := recover(); p != nil {
			data, err = nil, savedir.NewPanicError(p)
		}
		if err != nil && dst != nil {
			r.reuseWorld(dst)
		}
	}()
	return r.cfg.WorldCodec.Encode(dst[:0], r.world)
}

// reuseWorld keeps the memory of a world file the writer is done with for
// the next snapshot (one buffer: saves do not overlap). It runs on the
// writer's goroutine.
func (r *runner) reuseWorld(b []byte) {
	select {
	case r.spareWorld <- b:
	default:
	}
}

// metaInput is what the game gives the description of the save being
// started: its name, its play time and a copy of its thumbnail.
func (r *runner) metaInput() *savedir.MetaInput {
	in := &savedir.MetaInput{Name: r.cfg.Name, PlayTime: r.playTime}
	if r.cfg.Thumbnail != nil {
		in.Thumbnail = r.thumbnail()
	}
	return in
}

// thumbnail copies the game's picture; a panic in the game's function
// skips it.
func (r *runner) thumbnail() (img *image.NRGBA) {
	defer func() {
		if p := recover(); p != nil {
			img = nil
			if log := r.cfg.Writer.Logger; log != nil {
				log.Warn("the game's Thumbnail panicked: the save has no thumbnail", "panic", p)
			}
		}
	}()
	return savedir.CopyThumbnail(r.cfg.Thumbnail(r.world))
}
