package components

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// TileSize is the edge, in pixels, of the unit of copy-on-write: while a
// save holds a chunk, the game's first write into one of its tiles copies
// TileSize x TileSize pixels (4 KiB), not the chunk. Tiles start at
// multiples of TileSize; in a chunk whose size is not a multiple, the last
// row and column of tiles are narrower.
const TileSize = 32

// tile holds the pixels of one tile, row by row, as wide as the tile is.
type tile [TileSize * TileSize]Pixel

// spareTiles is how many copied tiles a chunk keeps for its next shares,
// so that copying for a save rarely allocates on the game loop (an
// allocation there can be made to assist the garbage collector).
const spareTiles = 64

// copySpins is how many times the game looks at a tile the writer is
// copying before it yields its thread: a 4 KiB copy takes about a
// microsecond, yielding can cost the game loop its core for longer.
const copySpins = 1000

// The states of a tile of a [sharedPixels]. A tile only moves forward:
// held -> copying -> free (the save read it from the chunk), or
// held -> preserving -> preserved (the game copied it for the save before
// writing; the save reads the copy).
const (
	tileHeld       uint32 = iota // the save needs the chunk's pixels; nobody touches them
	tileCopying                  // the save is reading the tile from the chunk
	tilePreserving               // the game is copying the tile for the save
	tilePreserved                // the save reads the game's copy; the game writes freely
	tileFree                     // the save has read the tile; the game writes freely
)

// errNotShared is returned by CopyTo after Release or a first CopyTo: the
// game may have written the chunk since, so the pixels as they were at
// [Chunk.Share] are gone.
var errNotShared = errors.New("components: shared pixels read after Release or a first CopyTo")

// SharedPixels is a save's hold on a chunk's pixels as they were at
// [Chunk.Share]. The save reads them once, with [SharedPixels.CopyTo], on
// any goroutine, while the game keeps writing the chunk; then it calls
// [SharedPixels.Release].
//
// The pixels are not copied when shared. Each tile has an atomic state
// that hands it over between the two goroutines: the reader claims a tile
// before reading it from the chunk and frees it after; the game's first
// write into a tile the reader has not claimed copies the tile aside for
// the reader first (copy-on-write, [TileSize] x [TileSize] pixels). A game
// write into the one tile the reader is reading at that moment waits for
// that tile's copy (4 KiB) to end. Neither side ever reads a tile the other
// is writing.
type SharedPixels interface {
	// Size returns the chunk's pixels per edge.
	Size() int
	// CopyTo copies the pixels as they were at [Chunk.Share] into dst
	// (Size()*Size() pixels, row-major), tile by tile, each tile from the
	// chunk or from the copy the game made of it. As soon as a tile is
	// read, the game writes it without copying. CopyTo may run on any
	// goroutine, once; afterwards the hold is over, as after Release. It
	// fails when called again or after Release, and when dst has the wrong
	// length.
	CopyTo(dst []Pixel) error
	// Release ends the hold: the game writes every tile without copying
	// from now on. Call it when the save no longer needs the pixels,
	// instead of CopyTo or after it. It is safe to call more than once,
	// from any goroutine; while CopyTo runs it does nothing (CopyTo ends
	// the hold when it returns).
	Release()
	// CopyCost returns how many tiles the game copied for this save and
	// the time it spent copying them. Call it on the game's goroutine.
	CopyCost() (tiles int, spent time.Duration)
}

// sharedPixels is the one implementation of [SharedPixels].
type sharedPixels struct {
	pix   []Pixel // the chunk's live pixels
	buf   *buffer // the chunk's: only the game touches it
	size  int     // pixels per edge
	side  int     // tiles per edge
	state []atomic.Uint32
	saved []*tile       // per tile, the game's copy; written before the tile's state becomes preserved
	phase atomic.Uint32 // holdOpen, holdReading, holdOver

	// written and read on the game's goroutine only
	copies int
	spent  time.Duration
}

// The phases of a [sharedPixels] as a whole.
const (
	holdOpen    uint32 = iota // shared, not read yet
	holdReading               // CopyTo is running
	holdOver                  // read or released: the game may forget the hold
)

// tilePool takes the copied tiles a chunk does not keep as spares.
var tilePool = sync.Pool{New: func() any { return new(tile) }}

// newShared starts a share of b's pixels. Once the previous share is over,
// nobody but the game touches its tile states and copies: the new share
// reuses them, and the copies become spares.
func (b *buffer) newShared(size int) *sharedPixels {
	s := &sharedPixels{pix: b.pix, buf: b, size: size, side: b.side}
	old := b.hold
	if old != nil && !old.over() {
		// An earlier share still needs tiles: copy them for it, and leave
		// its states and copies to it.
		for t := range old.state {
			old.preserve(t)
		}
		old = nil
	}
	if old == nil {
		s.state = make([]atomic.Uint32, b.side*b.side)
		s.saved = make([]*tile, b.side*b.side)
		return s
	}
	s.state, s.saved = old.state, old.saved
	old.state, old.saved = nil, nil
	for t := range s.state {
		s.state[t].Store(tileHeld)
		if c := s.saved[t]; c != nil {
			if len(b.spare) < spareTiles {
				b.spare = append(b.spare, c)
			} else {
				tilePool.Put(c)
			}
			s.saved[t] = nil
		}
	}
	return s
}

// Size implements [SharedPixels.Size].
func (s *sharedPixels) Size() int { return s.size }

// shared reports whether the hold is in force: neither released nor
// read yet.
func (s *sharedPixels) shared() bool { return s.phase.Load() != holdOver }

// over reports whether the game may forget the hold.
func (s *sharedPixels) over() bool { return s.phase.Load() == holdOver }

// tileRect returns the chunk-local rectangle of tile t.
func (s *sharedPixels) tileRect(t int) (x0, y0, x1, y1 int) {
	x0, y0 = t%s.side*TileSize, t/s.side*TileSize
	return x0, y0, min(x0+TileSize, s.size), min(y0+TileSize, s.size)
}

// CopyTo implements [SharedPixels.CopyTo].
func (s *sharedPixels) CopyTo(dst []Pixel) error {
	if len(dst) != s.size*s.size {
		return errors.New("components: SharedPixels.CopyTo: dst does not hold Size()*Size() pixels")
	}
	if !s.phase.CompareAndSwap(holdOpen, holdReading) {
		return errNotShared
	}
	defer s.phase.Store(holdOver)
	for t := range s.state {
		st := &s.state[t]
		x0, y0, x1, y1 := s.tileRect(t)
		for {
			v := st.Load()
			if v == tileHeld && st.CompareAndSwap(tileHeld, tileCopying) {
				for y := y0; y < y1; y++ {
					copy(dst[y*s.size+x0:y*s.size+x1], s.pix[y*s.size+x0:y*s.size+x1])
				}
				st.Store(tileFree)
				break
			}
			if v == tilePreserved {
				saved := s.saved[t]
				w := x1 - x0
				for y := y0; y < y1; y++ {
					copy(dst[y*s.size+x0:y*s.size+x1], saved[(y-y0)*w:(y-y0+1)*w])
				}
				break
			}
			runtime.Gosched() // the game is copying this tile: 4 KiB
		}
	}
	return nil
}

// Release implements [SharedPixels.Release].
func (s *sharedPixels) Release() { s.phase.CompareAndSwap(holdOpen, holdOver) }

// preserve runs on the game's goroutine before a write into tile t: if the
// reader still needs the tile from the chunk, it copies the tile aside for
// the reader; if the reader is reading it, it waits until it is done.
func (s *sharedPixels) preserve(t int) {
	st := &s.state[t]
	for spins := 0; ; spins++ {
		switch st.Load() {
		case tilePreserved, tileFree:
			return
		case tileHeld:
			if !st.CompareAndSwap(tileHeld, tilePreserving) {
				continue // the reader claimed it just now
			}
			start := time.Now()
			x0, y0, x1, y1 := s.tileRect(t)
			w := x1 - x0
			var saved *tile
			if b := s.buf; len(b.spare) > 0 {
				saved, b.spare = b.spare[len(b.spare)-1], b.spare[:len(b.spare)-1]
			} else {
				saved = tilePool.Get().(*tile)
			}
			for y := y0; y < y1; y++ {
				copy(saved[(y-y0)*w:(y-y0+1)*w], s.pix[y*s.size+x0:y*s.size+x1])
			}
			s.saved[t] = saved
			st.Store(tilePreserved)
			s.copies++
			s.spent += time.Since(start)
			return
		default: // tileCopying: the reader is reading this tile, 4 KiB: spin
			// for about as long as that takes before giving up the thread
			if spins >= copySpins {
				runtime.Gosched()
			}
		}
	}
}

// CopyCost implements [SharedPixels.CopyCost].
func (s *sharedPixels) CopyCost() (tiles int, spent time.Duration) { return s.copies, s.spent }
