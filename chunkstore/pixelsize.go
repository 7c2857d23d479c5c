package chunkstore

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/pierrec/lz4/v4"

	"github.com/arksave/arksave/internal/pxsw"
)

// Pixel sizes. A store of pixel size p holds every pixel value as p bytes,
// little-endian: a Full payload p*n bytes, a Delta entry a u24 position and
// p bytes, a Palette entry p bytes, a body's pixel section p*w*h bytes.
// This package writes p = 4 (its pixel is 32 bits) and reads stores of 1,
// 2 and 8 only to migrate them to 4 (Options.pixelMigration, through
// internal/storetool): every value is widened, or narrowed when it fits in
// 32 bits; a value that does not fit refuses the migration. The header's
// pixel size byte (offset 52) is checked to be one of these.
const pixelSizeOff = 52

// validPixelSize reports whether a header's pixel size is one a store can
// have.
func validPixelSize(p uint8) bool { return p == 1 || p == 2 || p == 4 || p == 8 }

// pixelSizeError is the error for opening a store of another pixel size
// for the game: it says what to do.
func pixelSizeError(file uint8) error {
	return fmt.Errorf("%w: pixel size: the file stores %d-byte pixels, the game %d-byte ones (its pixel is 32 bits); "+
		"run arksave migrate DIR on the save directory that holds it, which rewrites the store with %d-byte pixels when every stored value fits in 32 bits",
		ErrConfigMismatch, file, pixelSize, pixelSize)
}

// migratingPixels reports whether c opens a store of another pixel size to
// migrate it: read-only, with the unexported opt-in set.
func (c *Options) migratingPixels() bool { return c.pixelMigration && c.ReadOnly }

// pixelWriterSeam makes stores created while it is set write pixel values
// of size bytes each, every value v written as widen(v) (nil: v itself,
// cut to size bytes). Only tests and fixture generators set it (through
// setPixelWriter): this package writes 4-byte pixels.
type pixelWriterSeam struct {
	size  int
	widen func(uint32) uint64
}

var pixelWriter atomic.Pointer[pixelWriterSeam]

// setPixelWriter sets the writer seam (size 0 or 4: off) and returns what
// restores the one before.
func setPixelWriter(size int, widen func(uint32) uint64) (restore func()) {
	var seam *pixelWriterSeam
	if size != 0 && size != pixelSize {
		seam = &pixelWriterSeam{size: size, widen: widen}
	}
	old := pixelWriter.Swap(seam)
	return func() { pixelWriter.Store(old) }
}

// createPixelSize is the pixel size a store created now gets.
func createPixelSize(cfg uint8) uint8 {
	if seam := pixelWriter.Load(); seam != nil {
		return uint8(seam.size)
	}
	return cfg
}

// seamPayload lays out a chunk payload built with 4-byte pixels at the
// writer seam's size; raw is returned as is while the seam is off.
func seamPayload(kind recordKind, raw []byte) []byte {
	seam := pixelWriter.Load()
	if seam == nil {
		return raw
	}
	rp := seam.repack()
	out, _, err := rp.payload(kind, raw, 0)
	if err != nil {
		return raw // not a payload this package built; left as it is
	}
	return out
}

// seamPixels lays out a body's pixel section built with 4-byte pixels at
// the writer seam's size.
func seamPixels(raw []byte) []byte {
	seam := pixelWriter.Load()
	if seam == nil {
		return raw
	}
	out, _ := seam.repack().values(nil, raw)
	return out
}

func (seam *pixelWriterSeam) repack() pixelRepack {
	size := seam.size
	return pixelRepack{from: pixelSize, to: size, value: func(v uint64) (uint64, bool) {
		if seam.widen != nil {
			return seam.widen(uint32(v)), true
		}
		return v & (1<<(8*size) - 1), true
	}}
}

// pixelRepack converts the pixel values of payloads from one width to
// another; value maps each value read to the one written and reports false
// for one that does not fit.
type pixelRepack struct {
	from, to int
	value    func(v uint64) (uint64, bool)
}

// toPixelSize is the repack of a migration from a store of pixel size from.
func toPixelSize(from int) pixelRepack {
	return pixelRepack{from: from, to: pixelSize, value: func(v uint64) (uint64, bool) { return v, v>>32 == 0 }}
}

// misfit is the first value of a payload that does not fit.
type misfit struct {
	pixel  int    // pixel index in the chunk or body; -1: no pixel uses it
	value  uint64 // the value as stored
	entry  int    // palette entry, for a Palette payload; -1 otherwise
	body   uint64 // the body's id, for a body block
	inBody bool
}

func getPixel(b []byte, p int) uint64 {
	switch p {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

func putPixel(b []byte, p int, v uint64) {
	switch p {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, v)
	}
}

// values converts src, whole pixels of rp.from bytes, and appends them to
// dst; a value that does not fit stops it, with its index.
func (rp pixelRepack) values(dst, src []byte) ([]byte, int) {
	n := len(src) / rp.from
	at := len(dst)
	dst = grow(dst, n*rp.to)
	for i := range n {
		v, ok := rp.value(getPixel(src[i*rp.from:], rp.from))
		if !ok {
			return dst, i
		}
		putPixel(dst[at+i*rp.to:], rp.to, v)
	}
	return dst, -1
}

// payload converts the decoded payload of a chunk record or body block of
// kind, read in the record at off, and returns the first value that does
// not fit (nil: all do).
func (rp pixelRepack) payload(kind recordKind, raw []byte, off int64) ([]byte, *misfit, error) {
	switch kind {
	case pxsw.RecordFull:
		if len(raw)%rp.from != 0 {
			return nil, nil, fmt.Errorf("%w: full chunk at %v: %d bytes, not whole %d-byte pixels", ErrCorrupt, loc(off), len(raw), rp.from)
		}
		out, bad := rp.values(nil, raw)
		if bad >= 0 {
			return nil, &misfit{pixel: bad, value: getPixel(raw[bad*rp.from:], rp.from), entry: -1}, nil
		}
		return out, nil, nil
	case pxsw.RecordDelta:
		return rp.delta(raw, off)
	case pxsw.RecordPalette:
		return rp.palette(raw, off)
	case pxsw.RecordBodies:
		return rp.bodyBlock(raw, off)
	}
	return raw, nil, nil
}

// delta converts a Delta payload: a u32 count, then a u24 position and a
// pixel per entry.
func (rp pixelRepack) delta(raw []byte, off int64) ([]byte, *misfit, error) {
	if len(raw) < deltaCountSize {
		return nil, nil, fmt.Errorf("%w: delta chunk at %v: %d bytes", ErrCorrupt, loc(off), len(raw))
	}
	count := uint64(binary.LittleEndian.Uint32(raw))
	if uint64(len(raw)) != deltaCountSize+uint64(3+rp.from)*count {
		return nil, nil, fmt.Errorf("%w: delta chunk at %v: %d entries of %d-byte pixels in %d bytes", ErrCorrupt, loc(off), count, rp.from, len(raw))
	}
	out := make([]byte, deltaCountSize+(3+rp.to)*int(count))
	copy(out, raw[:deltaCountSize])
	in, at := raw[deltaCountSize:], deltaCountSize
	for range count {
		idx := int(in[0]) | int(in[1])<<8 | int(in[2])<<16
		stored := getPixel(in[3:], rp.from)
		v, ok := rp.value(stored)
		if !ok {
			return nil, &misfit{pixel: idx, value: stored, entry: -1}, nil
		}
		copy(out[at:], in[:3])
		putPixel(out[at+3:], rp.to, v)
		in, at = in[3+rp.from:], at+3+rp.to
	}
	return out, nil, nil
}

// palette converts a Palette payload: its entries change width, its
// indices stay.
func (rp pixelRepack) palette(raw []byte, off int64) ([]byte, *misfit, error) {
	if len(raw) < paletteHeadSize {
		return nil, nil, fmt.Errorf("%w: palette chunk at %v: header of %d bytes", ErrCorrupt, loc(off), len(raw))
	}
	count, width := uint64(binary.LittleEndian.Uint32(raw)), int(raw[4])
	if width != 1 && width != 2 || count > maxPalette || uint64(len(raw)-paletteHeadSize) < count*uint64(rp.from) ||
		(uint64(len(raw)-paletteHeadSize)-count*uint64(rp.from))%uint64(width) != 0 {
		return nil, nil, fmt.Errorf("%w: palette chunk at %v: a palette of %d %d-byte pixels with %d-byte indices in %d bytes",
			ErrCorrupt, loc(off), count, rp.from, width, len(raw))
	}
	end := paletteHeadSize + int(count)*rp.from
	out := append(make([]byte, 0, paletteHeadSize+int(count)*rp.to+len(raw)-end), raw[:paletteHeadSize]...)
	out, bad := rp.values(out, raw[paletteHeadSize:end])
	if bad >= 0 {
		return nil, &misfit{pixel: paletteUser(raw[end:], width, bad), value: getPixel(raw[paletteHeadSize+bad*rp.from:], rp.from), entry: bad}, nil
	}
	return append(out, raw[end:]...), nil, nil
}

// paletteUser returns the first pixel whose index in idx (of width bytes
// each) is entry, or -1.
func paletteUser(idx []byte, width, entry int) int {
	if width == 1 {
		return slices.Index(idx, byte(entry))
	}
	for i := 0; 2*i+1 < len(idx); i++ {
		if int(binary.LittleEndian.Uint16(idx[2*i:])) == entry {
			return i
		}
	}
	return -1
}

// bodyBlock converts the pixel section of every body of a body block; the
// shape masks, extensions and entity sections are copied as they are.
func (rp pixelRepack) bodyBlock(raw []byte, off int64) ([]byte, *misfit, error) {
	if len(raw) < bodyBlockHeaderSize {
		return nil, nil, fmt.Errorf("%w: body block at %v: %d bytes", ErrCorrupt, loc(off), len(raw))
	}
	count := int(binary.LittleEndian.Uint32(raw))
	out := append(make([]byte, 0, len(raw)*rp.to/rp.from+bodyBlockHeaderSize), raw[:bodyBlockHeaderSize]...)
	rest := raw[bodyBlockHeaderSize:]
	e := new(encoder)
	for range count {
		var bad *misfit
		var err error
		out, rest, bad, err = rp.body(out, rest, off, e)
		if bad != nil || err != nil {
			return nil, bad, err
		}
	}
	return append(out, rest...), nil, nil // the entity sections
}

// body converts the body at the front of b and appends it to out.
func (rp pixelRepack) body(out, b []byte, off int64, e *encoder) ([]byte, []byte, *misfit, error) {
	if len(b) < bodyHeaderSize || bodyCRC(b) != b[bodyCRCOff] {
		return nil, nil, nil, fmt.Errorf("%w: body block at %v: a body header that fails its checks", ErrCorrupt, loc(off))
	}
	h := b[:bodyHeaderSize]
	id := binary.LittleEndian.Uint64(h)
	n := uint64(binary.LittleEndian.Uint32(h[32:])) * uint64(binary.LittleEndian.Uint32(h[36:]))
	pixSize, maskSize, extSize := uint64(binary.LittleEndian.Uint32(h[48:])), uint64(binary.LittleEndian.Uint32(h[52:])), uint64(binary.LittleEndian.Uint32(h[56:]))
	flags := h[bodyFlagsOff]
	if n == 0 || n > maxBodyPixels || pixSize+maskSize+extSize > uint64(len(b)-bodyHeaderSize) {
		return nil, nil, nil, fmt.Errorf("%w: body %d in the body block at %v: %d pixels, sections of %d+%d+%d bytes in %d",
			ErrCorrupt, id, loc(off), n, pixSize, maskSize, extSize, len(b)-bodyHeaderSize)
	}
	secs := b[bodyHeaderSize:]
	pix, err := section(secs[:pixSize], uint64(rp.from)*n, flags&bodyPixelsRaw != 0, off, "pixels")
	if err != nil {
		return nil, nil, nil, err
	}
	conv, bad := rp.values(nil, pix)
	if bad >= 0 {
		return nil, nil, &misfit{pixel: bad, value: getPixel(pix[bad*rp.from:], rp.from), entry: -1, body: id, inBody: true}, nil
	}
	at := len(out)
	out = append(out, h...)
	pixAt := len(out)
	out, flags = e.appendSection(out, conv, flags&^bodyPixelsRaw, bodyPixelsRaw)
	nh := out[at : at+bodyHeaderSize]
	binary.LittleEndian.PutUint32(nh[48:], uint32(len(out)-pixAt))
	nh[bodyFlagsOff] = flags
	nh[bodyCRCOff] = bodyCRC(nh)
	out = append(out, secs[pixSize:pixSize+maskSize+extSize]...)
	return out, secs[pixSize+maskSize+extSize:], nil, nil
}

// repixel returns the checked record rec of s, read at off, with its
// pixels at this package's size: rec itself in a store of 4-byte pixels
// and for records without pixels. A value that does not fit in 32 bits
// returns an error wrapping ErrConfigMismatch that names the chunk, the
// pixel and the value.
func (s *Store) repixel(h recordHeader, rec []byte, off int64) ([]byte, error) {
	p := int(s.hdr.pixelSize)
	switch {
	case p == pixelSize:
		return rec, nil
	case h.kind != pxsw.RecordFull && h.kind != pxsw.RecordDelta && h.kind != pxsw.RecordPalette && h.kind != pxsw.RecordBodies:
		return rec, nil
	}
	npix := uint64(s.cc.npix)
	limit := min(uint64(maxRecordPayload), uint64(paletteHeadSize)+uint64(p+2)*npix+deltaCountSize+uint64(3+p)*npix)
	if h.kind == pxsw.RecordBodies {
		limit = maxRecordPayload
	}
	raw, x, err := payloadExt(h, rec, off, int(limit), nil)
	if err != nil {
		return nil, err
	}
	conv, bad, err := toPixelSize(p).payload(h.kind, raw, off)
	if err != nil {
		return nil, err
	}
	key := h.keyAny(rec)
	if bad != nil {
		return nil, misfitError(bad, key, p, h.kind, off)
	}
	ext := rec[recordHeaderSize : recordHeaderSize+x.size]
	if h.kind == pxsw.RecordBodies {
		// Body blocks are stored as they are, not compressed as a whole.
		out := append(make([]byte, recordHeaderSize, recordHeaderSize+len(ext)+len(conv)+keyExtSize(int(key.n))), ext...)
		out = append(out, conv...)
		return sealKeyed(out, h.kind, codecNone, h.flags&^flagKeyAxes, key, uint32(len(conv))), nil
	}
	var c lz4.Compressor
	out, codec := compressInto(nil, &c, ext, conv)
	return sealKeyed(out, h.kind, codec, h.flags&^flagKeyAxes, key, uint32(len(conv))), nil
}

// misfitError is the error for a value of a store of p-byte pixels that
// does not fit in this package's pixel.
func misfitError(m *misfit, key Key, p int, kind recordKind, off int64) error {
	where := fmt.Sprintf("chunk %v, pixel %d", key, m.pixel)
	switch {
	case m.inBody:
		where = fmt.Sprintf("chunk %v, body %d, pixel %d", key, m.body, m.pixel)
	case m.entry >= 0 && m.pixel < 0:
		where = fmt.Sprintf("chunk %v, palette entry %d (no pixel uses it)", key, m.entry)
	}
	return fmt.Errorf("%w: pixel size: %s holds %#x (%s at %v), which does not fit in the game's %d-byte pixel; "+
		"the store stays as it is (%d-byte pixels): only a build of the game whose pixel holds such values can read it",
		ErrConfigMismatch, where, m.value, kind, loc(off), pixelSize, p)
}

// checkPixels converts every live record of s to this package's pixel
// size, in page-table order, and returns the first value that does not
// fit (or the first record that fails its checks), without writing
// anything: what a migration checks before it writes.
func (s *Store) checkPixels() error {
	s.mu.RLock()
	entries := make([]tableEntry, 0, s.chunks.Len()+s.bodies.Len())
	for _, ix := range [...]struct {
		ix   *index
		body bool
	}{{s.chunks, false}, {s.bodies, true}} {
		ix.ix.each(func(key ikey, v ival) bool {
			entries = append(entries, mutation{key: key, body: ix.body, v: v}.entry(s.axes))
			return true
		})
	}
	s.mu.RUnlock()
	slices.SortFunc(entries, compareEntries)
	seen := map[int64]bool{}
	var buf []byte
	for _, e := range entries {
		if e.h.IsZero() || seen[e.h.Offset] {
			continue
		}
		seen[e.h.Offset] = true
		h, rec, err := s.read(e.h, buf)
		buf = rec
		if err == nil {
			_, err = s.repixel(h, rec, e.h.Offset)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
