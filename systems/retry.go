package systems

import (
	"fmt"
	"time"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
)

// A chunk whose read failed without proving its record damaged (an I/O
// error, the store unavailable after a failed save, a lost lock) is not
// spawned: spawning it generated would lose the stored chunk, its bodies
// and entities, and a later save would write the generated chunk over the
// stored one. It stays unloaded and is read again after a backoff, in game
// time: readRetryFirst after the first failure, doubling up to
// readRetryMax. A committed save shows the store works again: every
// waiting chunk is read again at the next tick.
const (
	readRetryFirst = 100 * time.Millisecond
	readRetryMax   = 5 * time.Second
)

// readRetry is a chunk whose last reads failed.
type readRetry struct {
	failures int
	due      uint64 // the tick from which it is read again
}

// readDue reports whether the chunk at pos may be read: no failed read
// waits for its backoff.
func (r *runner) readDue(pos components.ChunkPos) bool {
	rt := r.retry[pos]
	return rt == nil || r.ticks >= rt.due
}

// retryWait returns the backoff after the given number of failed reads in
// a row.
func retryWait(failures int) time.Duration {
	return min(readRetryFirst<<min(failures-1, 16), readRetryMax)
}

// readFailed notes a failed read of the chunk at pos: it is read again
// after its backoff (never at the next tick). The first failure in a row
// is reported (Problems, and the log as a warning); the chunk's pending
// data that a save committed meanwhile is dropped, the store holds it.
func (r *runner) readFailed(pos components.ChunkPos, err error) {
	rt := r.retry[pos]
	if rt == nil {
		rt = &readRetry{}
		r.retry[pos] = rt
	}
	rt.failures++
	wait := retryWait(rt.failures)
	rt.due = r.ticks + max(uint64(wait/r.cfg.TickDuration), 2)
	r.settleCommitted(pos)
	if rt.failures > 1 {
		return
	}
	r.report(problem{section: chunkstore.SectionChunk, pos: pos,
		err: fmt.Errorf("not loaded, read again in %v (nothing regenerated): %w", wait, err)})
	if log := r.cfg.Writer.Logger; log != nil {
		log.Warn("chunk read failed: not loaded, read again later", "chunk", pos, "retry_in", wait, "err", err)
	}
}

// readSucceeded forgets the failed reads of the chunk at pos.
func (r *runner) readSucceeded(pos components.ChunkPos) {
	rt := r.retry[pos]
	if rt == nil {
		return
	}
	delete(r.retry, pos)
	if log := r.cfg.Writer.Logger; log != nil {
		log.Info("chunk read after failed reads", "chunk", pos, "failures", rt.failures)
	}
}

// retryNow makes every chunk whose read failed due at once (a save
// committed: the store works), keeping its count of failures.
func (r *runner) retryNow() {
	for _, rt := range r.retry {
		rt.due = r.ticks
	}
}

// forgetRetries drops the failed reads of chunks no focus wants.
func (r *runner) forgetRetries(areas []focusArea) {
	for pos := range r.retry {
		if slack(areas, pos) > 1 {
			delete(r.retry, pos)
		}
	}
}

// settleCommitted drops what waits in memory for the chunk at pos and a
// save has committed since (kept only for a chunk on its way back, see
// pendingChunk.committed and pendingPart.committed) once the chunk is no
// longer on its way: the store holds it, as for any unloaded chunk.
func (r *runner) settleCommitted(pos components.ChunkPos) {
	if p, ok := r.pendingChunks[pos]; ok && p.committed {
		delete(r.pendingChunks, pos)
	}
	set := r.reg.pending[pos]
	if set == nil {
		return
	}
	kept := set.parts[:0]
	for _, part := range set.parts {
		if !part.committed {
			kept = append(kept, part)
		}
	}
	switch {
	case len(kept) == 0:
		delete(r.reg.pending, pos)
	case len(kept) < len(set.parts):
		set.parts = kept
		set.complete = false // the store holds the committed part; the rest adds to it
	}
}
