package components

import "bytes"

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

// Chunk is the pixel data of one chunk entity.
//
// Pixels live in one row-major buffer that the game owns for the chunk's
// lifetime. Read them with [Chunk.Pixels] or [Chunk.At]; write them with
// [Chunk.Set], or through the slice [Chunk.MutRect] returns, inside its
// rectangle. A save takes the pixels by reference ([Chunk.Share]); while it
// holds them, the first write into a tile it has not read yet copies that
// tile ([TileSize] x [TileSize] pixels) for the save. Heat is a
// simulation-only layer that is never saved.
//
// Chunk values may be copied: the copies share the pixels.
//
// The zero Chunk has no pixels; create chunks with [NewChunk].
type Chunk struct {
	Size int // pixels per edge
	Heat []uint8
	buf  *buffer
}

// buffer is what every copy of a Chunk value shares: the pixels and the
// newest save holding them. Only the game loop touches it.
type buffer struct {
	pix    []Pixel
	side   int           // tiles per edge
	hold   *sharedPixels // the newest share, nil before the first
	active bool          // hold may still need tiles
	spare  []*tile       // tiles copied for earlier shares, for the next copies
	data   []byte        // the game's extra data for the chunk; never written in place
}

// NewChunk returns a chunk of size x size pixels that takes ownership of
// pix, which must hold size*size pixels; nil pix is all zero (air). It
// has a heat layer.
//
// Panics if pix is not nil and len(pix) != size*size.
func NewChunk(size int, pix []Pixel) Chunk {
	if pix == nil {
		pix = make([]Pixel, size*size)
	}
	if len(pix) != size*size {
		panic("components: NewChunk: len(pix) != size*size")
	}
	return Chunk{Size: size, Heat: make([]uint8, size*size), buf: &buffer{pix: pix, side: (size + TileSize - 1) / TileSize}}
}

// Pixels returns the chunk's pixels, row-major, for reading. The slice is
// the chunk's for its whole life, so a system may keep it across ticks. Do
// not write through it: a save may be reading it. Write with [Chunk.Set] or
// through [Chunk.MutRect].
func (c *Chunk) Pixels() []Pixel {
	if c.buf == nil {
		return nil
	}
	return c.buf.pix
}

// MutRect makes the pixels of the rectangle [x0, x1) x [y0, y1) (chunk-local,
// clipped to the chunk) writable and returns the chunk's pixels, row-major.
// Write only inside the rectangle: pixels outside it may still be read by a
// save. If a save holds tiles of the rectangle it has not read yet, MutRect
// first copies each of them for the save; otherwise it copies nothing.
// The rectangle stays writable until the chunk is next shared.
//
// MutRect does not mark the chunk dirty: call [ChunkState.MarkDirty] when a
// pixel really changed.
func (c *Chunk) MutRect(x0, y0, x1, y1 int) []Pixel {
	if c.buf == nil {
		return nil
	}
	if c.Held() {
		x0, y0 = max(x0, 0), max(y0, 0)
		x1, y1 = min(x1, c.Size), min(y1, c.Size)
		if x0 < x1 && y0 < y1 {
			h := c.buf.hold
			for ty := y0 / TileSize; ty <= (y1-1)/TileSize; ty++ {
				for tx := x0 / TileSize; tx <= (x1-1)/TileSize; tx++ {
					h.preserve(ty*h.side + tx)
				}
			}
		}
	}
	return c.buf.pix
}

// Held reports whether a save still holds tiles of the chunk that it has
// not read: writes then go through [Chunk.Set] or [Chunk.MutRect] with
// their rectangle. It changes to false on its own as the save reads; it
// becomes true only at [Chunk.Share].
func (c *Chunk) Held() bool {
	if c.buf == nil || !c.buf.active {
		return false
	}
	if c.buf.hold.over() {
		c.buf.active = false
		return false
	}
	return true
}

// Share hands the chunk's pixels, as they are now, to a reader (a save) by
// reference, without copying: the reader reads them with
// [SharedPixels.CopyTo] and calls [SharedPixels.Release] when done. Until
// then, the game's first write into a tile the reader has not read copies
// that tile for the reader.
//
// Share must be called on the goroutine that writes the chunk. If an
// earlier share of the chunk still holds tiles, Share first copies them for
// it (up to the whole chunk, on the calling goroutine); the plugin never
// does this, as its saves do not overlap.
func (c *Chunk) Share() SharedPixels {
	b := c.buf
	b.hold = b.newShared(c.Size)
	b.active = true
	return b.hold
}

// At returns the pixel at (x, y) in chunk-local coordinates.
func (c *Chunk) At(x, y int) Pixel { return c.buf.pix[y*c.Size+x] }

// Data returns the game's own extra data for the chunk (tile entities, a
// heightmap, a biome: bytes the plugin saves and loads with the chunk's
// pixels without looking into them), nil for none. Do not modify the
// slice: a save may hold it. Set it with [Chunk.SetData].
func (c *Chunk) Data() []byte {
	if c.buf == nil {
		return nil
	}
	return c.buf.data
}

// SetData replaces the chunk's extra data with a copy of data (nil or
// empty: none; at most 16 MiB, the most a chunk record holds, or the save fails) and
// reports whether it changed. Like [Chunk.Set] it does not mark the chunk
// dirty: call [ChunkState.MarkDirty] when it reports true, or use
// arksave's Persistence.SetChunkData, which does both. A chunk whose only
// change is its extra data is saved; one as generated without extra data
// is not.
func (c *Chunk) SetData(data []byte) bool {
	if c.buf == nil {
		return false
	}
	if len(data) == 0 {
		data = nil
	}
	if bytes.Equal(c.buf.data, data) { // (both nil when empty)
		return false
	}
	if data != nil {
		data = append(make([]byte, 0, len(data)), data...)
	}
	c.buf.data = data
	return true
}

// Set writes p at (x, y) in chunk-local coordinates and reports whether the
// pixel changed. Writing the value a pixel already has copies nothing; a
// change into a tile a save holds and has not read copies that tile once.
func (c *Chunk) Set(x, y int, p Pixel) bool {
	b, i := c.buf, y*c.Size+x
	if b.pix[i] == p {
		return false
	}
	if b.active {
		c.writable(x, y)
	}
	b.pix[i] = p
	return true
}

// writable copies the tile of (x, y) for a save that holds it and has not
// read it; apart from Set, so that Set stays small enough to be inlined.
func (c *Chunk) writable(x, y int) {
	if c.Held() {
		c.buf.hold.preserve(y/TileSize*c.buf.side + x/TileSize)
	}
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
