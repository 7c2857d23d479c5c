package components

import "sync/atomic"

// ChunkPos is the position of a chunk in chunk coordinates: chunk (X, Y)
// covers world pixels [X*size, (X+1)*size) x [Y*size, (Y+1)*size).
type ChunkPos struct {
	X, Y int32
}

// ChunkOf returns the chunk that holds world pixel (x, y) for chunks of
// size pixels per edge. It rounds towards negative infinity.
func ChunkOf(x, y float64, size int) ChunkPos {
	return ChunkPos{X: floorDiv(x, size), Y: floorDiv(y, size)}
}

func floorDiv(v float64, size int) int32 {
	q := v / float64(size)
	i := int32(q)
	if float64(i) > q {
		i--
	}
	return i
}

// PixelBuffer holds the pixels of one chunk, row-major, Size*Size of them.
//
// A buffer shared with a save ([Chunk.Share]) is read-only until every
// holder has called [PixelBuffer.Release]; [Chunk.Mut] copies it meanwhile.
type PixelBuffer struct {
	Pix     []Pixel
	readers atomic.Int32
}

// Release ends one holder's read-only use of a buffer handed out by
// [Chunk.Share]. Call it exactly once per Share, from any goroutine.
//
// Panics if called more often than Share.
func (b *PixelBuffer) Release() {
	if b.readers.Add(-1) < 0 {
		panic("components: PixelBuffer.Release without Share")
	}
}

// Shared reports whether a save still holds the buffer.
func (b *PixelBuffer) Shared() bool { return b.readers.Load() > 0 }

// Chunk is the pixel data of one chunk entity.
//
// Pixels live in a copy-on-write [PixelBuffer]; read them with
// [Chunk.Pixels], write them through [Chunk.Mut] or [Chunk.Set]. Heat is a
// simulation-only layer that is never saved.
//
// The zero Chunk has no pixels; create chunks with [NewChunk].
type Chunk struct {
	Size int // pixels per edge
	Heat []uint8
	buf  *PixelBuffer
}

// NewChunk returns a chunk of size x size pixels, all zero (air), with a heat layer.
func NewChunk(size int) Chunk {
	return NewChunkFrom(size, make([]Pixel, size*size))
}

// NewChunkFrom returns a chunk that takes ownership of pix, which must hold
// size*size pixels.
//
// Panics if len(pix) != size*size.
func NewChunkFrom(size int, pix []Pixel) Chunk {
	if len(pix) != size*size {
		panic("components: NewChunkFrom: len(pix) != size*size")
	}
	return Chunk{Size: size, Heat: make([]uint8, size*size), buf: &PixelBuffer{Pix: pix}}
}

// Pixels returns the chunk's pixels for reading. Do not write to the slice:
// it may be shared with a save in progress. Use [Chunk.Mut] to write.
func (c *Chunk) Pixels() []Pixel {
	if c.buf == nil {
		return nil
	}
	return c.buf.Pix
}

// Mut returns the chunk's pixels for writing. If a save holds the current
// buffer, Mut first gives the chunk a private copy. The slice is valid until
// the chunk is next shared; do not keep it across ticks.
//
// Mut does not mark the chunk dirty: call [ChunkState.MarkDirty] when a pixel
// really changed.
func (c *Chunk) Mut() []Pixel {
	if c.buf == nil {
		return nil
	}
	if c.buf.Shared() {
		pix := make([]Pixel, len(c.buf.Pix))
		copy(pix, c.buf.Pix)
		c.buf = &PixelBuffer{Pix: pix}
	}
	return c.buf.Pix
}

// Share hands the current buffer to a reader (a save) by reference, without
// copying. The reader must call [PixelBuffer.Release] when done; until then
// the game's writes go to a copy.
func (c *Chunk) Share() *PixelBuffer {
	c.buf.readers.Add(1)
	return c.buf
}

// At returns the pixel at (x, y) in chunk-local coordinates.
func (c *Chunk) At(x, y int) Pixel { return c.buf.Pix[y*c.Size+x] }

// Set writes p at (x, y) in chunk-local coordinates and reports whether the
// pixel changed. Writing the value a pixel already has copies nothing.
func (c *Chunk) Set(x, y int, p Pixel) bool {
	i := y*c.Size + x
	if c.buf.Pix[i] == p {
		return false
	}
	c.Mut()[i] = p
	return true
}

// ChunkStatus is the persistence state of a chunk for dirty tracking.
type ChunkStatus uint8

// Chunk statuses.
const (
	// Clean: the chunk is as generated or as loaded; nothing to save.
	Clean ChunkStatus = iota
	// Dirty: a pixel changed since the chunk was generated, loaded or saved.
	Dirty
	// Persisted: the chunk's current pixels are in the last committed save.
	Persisted
)

// String returns the status name.
func (s ChunkStatus) String() string {
	switch s {
	case Clean:
		return "clean"
	case Dirty:
		return "dirty"
	case Persisted:
		return "persisted"
	}
	return "unknown"
}

// ChunkState tracks whether a chunk needs saving. Version counts changes, so
// that a chunk changed after its snapshot was taken stays dirty when that
// save commits.
type ChunkState struct {
	Status  ChunkStatus
	Version uint64
}

// MarkDirty records that a pixel of the chunk really changed.
func (s *ChunkState) MarkDirty() {
	s.Version++
	s.Status = Dirty
}

// IsDirty reports whether the chunk has changes that are not saved.
func (s *ChunkState) IsDirty() bool { return s.Status == Dirty }

// Confirm is called when a save that snapshotted the chunk at version has
// committed. The chunk becomes Persisted unless it changed since.
func (s *ChunkState) Confirm(version uint64) {
	if s.Status == Dirty && s.Version == version {
		s.Status = Persisted
	}
}
