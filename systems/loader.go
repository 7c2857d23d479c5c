package systems

import (
	"errors"
	"sync"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/conv"
	"github.com/arksave/arksave/internal/savedir"
)

// loadResult is a chunk read (or generated) by the loader goroutine.
type loadResult struct {
	epoch    uint64
	pos      components.ChunkPos
	pix      []uint32
	data     []byte // the chunk's extra data
	stored   bool
	block    chunkstore.EntityBlock // bodies and entity sections
	chunkErr error                  // the stored record was damaged; pix was generated instead
	bodyErr  error                  // the stored entities were damaged and are dropped
	// readErr is why the store could not be read, when that is not damage
	// (an I/O error, the store unavailable after a failed save, a lost
	// lock): nothing of the chunk is known, it must not be spawned.
	readErr error
}

// loader reads chunks on a goroutine of its own from a coalescing queue:
// a position asked for twice is read once, and a position no
// longer wanted can be taken out before it is read.
type loader struct {
	writer *savedir.Writer
	size   int

	mu      sync.Mutex
	cond    *sync.Cond
	epoch   uint64
	queue   []components.ChunkPos
	queued  map[components.ChunkPos]bool
	results []loadResult
	closed  bool
	done    chan struct{}
}

func newLoader(w *savedir.Writer, size int) *loader {
	l := &loader{writer: w, size: size, queued: map[components.ChunkPos]bool{}, done: make(chan struct{})}
	l.cond = sync.NewCond(&l.mu)
	go l.run()
	return l
}

// request queues pos unless it is queued already.
func (l *loader) request(pos components.ChunkPos) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.queued[pos] {
		return
	}
	l.queued[pos] = true
	l.queue = append(l.queue, pos)
	l.cond.Signal()
}

// cancel takes pos out of the queue if it has not been read yet and
// reports whether it did.
func (l *loader) cancel(pos components.ChunkPos) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.queued[pos] {
		return false
	}
	delete(l.queued, pos)
	for i, p := range l.queue {
		if p == pos {
			l.queue = append(l.queue[:i], l.queue[i+1:]...)
			break
		}
	}
	return true
}

// reset drops every queued request and every unread result: what is
// in flight is discarded when it arrives.
func (l *loader) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.epoch++
	l.queue = nil
	clear(l.queued)
	l.results = nil
}

// drain returns the results that arrived since the last call.
func (l *loader) drain() []loadResult {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.results
	l.results = nil
	kept := out[:0]
	for _, r := range out {
		if r.epoch == l.epoch {
			kept = append(kept, r)
		}
	}
	return kept
}

func (l *loader) close() {
	l.mu.Lock()
	l.closed = true
	l.cond.Broadcast()
	l.mu.Unlock()
	<-l.done
}

func (l *loader) run() {
	defer close(l.done)
	for {
		l.mu.Lock()
		for len(l.queue) == 0 && !l.closed {
			l.cond.Wait()
		}
		if l.closed {
			l.mu.Unlock()
			return
		}
		pos := l.queue[0]
		l.queue = l.queue[1:]
		delete(l.queued, pos)
		epoch := l.epoch
		l.mu.Unlock()

		r := l.read(pos)
		r.epoch = epoch

		l.mu.Lock()
		l.results = append(l.results, r)
		l.mu.Unlock()
	}
}

// read reads one chunk and its entity block. Only a record proven damaged
// (an error matching chunkstore.ErrCorrupt: a checksum, a bound) reads as
// the generated chunk (the writer fills it in), and a damaged entity block
// is dropped; both are reported. Any other error (I/O, the store
// unavailable or closed) is readErr: the chunk is not known and is read
// again later.
func (l *loader) read(pos components.ChunkPos) loadResult {
	r := loadResult{pos: pos, pix: make([]uint32, l.size*l.size)}
	sp := conv.StorePos(pos)
	stored, data, err := l.writer.GetExtra(sp, r.pix)
	if err != nil && !damaged(err) {
		return loadResult{pos: pos, readErr: err}
	}
	r.data = data
	if err != nil {
		r.chunkErr = err
		stored = false
	}
	r.stored = stored
	r.block, r.bodyErr = l.writer.Entities(sp)
	if r.bodyErr != nil && !damaged(r.bodyErr) {
		return loadResult{pos: pos, readErr: r.bodyErr}
	}
	if r.bodyErr != nil {
		r.block = chunkstore.EntityBlock{}
	}
	return r
}

// damaged reports whether err proves a stored record damaged, as opposed
// to a read that failed and may succeed later.
func damaged(err error) bool { return errors.Is(err, chunkstore.ErrCorrupt) }
