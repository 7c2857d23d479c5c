package chunkstore

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/pierrec/lz4/v4"

	"github.com/arksave/arksave/internal/pxsw"
)

// Chunk payloads. Their layout is part of the file format; see the package
// documentation.
const (
	deltaCountSize = 4 // u32 entry count
	deltaEntrySize = 7 // u24 pixel index, u32 pixel
)

// nativeLE is checked at run time: on a little-endian machine a []uint32
// already is the file's byte order and pixel buffers are compressed and
// decompressed in place; elsewhere they are converted.
var nativeLE = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// pixelBytes views p as its bytes. Only valid when nativeLE.
func pixelBytes(p []uint32) []byte {
	if len(p) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&p[0])), 4*len(p))
}

// putPixels writes p&mask little-endian into dst, which holds 4*len(p) bytes.
func putPixels(dst []byte, p []uint32, mask uint32) {
	dst = dst[:4*len(p)]
	for i, v := range p {
		binary.LittleEndian.PutUint32(dst[4*i:], v&mask)
	}
}

// getPixels reads len(dst) little-endian pixels from src, masked.
func getPixels(dst []uint32, src []byte, mask uint32) {
	src = src[:4*len(dst)]
	for i := range dst {
		dst[i] = binary.LittleEndian.Uint32(src[4*i:]) & mask
	}
}

func maskPixels(p []uint32, mask uint32) {
	if mask == ^uint32(0) {
		return
	}
	for i := range p {
		p[i] &= mask
	}
}

// encoder is one compression worker's scratch space.
type encoder struct {
	src  []uint32 // the pixels a PixelSource supplies
	gen  []uint32
	raw  []byte
	c    lz4.Compressor
	recs []byte // the smallest record so far
	alt  []byte // the record being tried
	// delta holds the Delta payload scanChanges laid out (see chunkChanges.laid).
	delta []byte
	ext   []byte
	pal   paletteScratch
	// compressions counts the payloads compressed: chunk records tried and
	// generated bases measured (see chooseRecord).
	compressions int
}

// chunkResult is a chunk encoded for a commit.
type chunkResult struct {
	typ    StorageType
	remove bool   // identical to the generator's chunk: not stored
	rec    []byte // the sealed record for Delta, Full and Palette
	diff   int    // pixels that differ from the generator's chunk
}

// chunkCodec is what encoding and decoding chunks need from a store.
type chunkCodec struct {
	npix      int
	mask      uint32
	seed      uint64
	gen       Generator
	kgen      KeyGenerator // gen, in a store of 3 or 4 axes
	threshold float64
	bases     *baseCache // nil when disabled
	layers    []Layer    // the game's registered layers; nil: all 32 bits kept
	deltaFull bool       // EncodeDeltaFull
}

// run has the generator fill dst with the chunk at pos, unmasked.
func (cc *chunkCodec) run(pos Key, dst []uint32) {
	if cc.kgen != nil && pos.n > 2 {
		cc.kgen.GenerateKey(pos, cc.seed, dst)
		return
	}
	cc.gen.Generate(pos.c[0], pos.c[1], cc.seed, dst)
}

// generate fills dst with the masked generated chunk at pos.
func (cc *chunkCodec) generate(pos Key, dst []uint32) {
	if cc.gen == nil {
		clear(dst)
		return
	}
	if b := cc.bases.get(pos); b != nil {
		copy(dst, b.pix)
		return
	}
	cc.run(pos, dst)
	maskPixels(dst, cc.mask)
	if cc.bases != nil {
		cc.bases.put(&baseEntry{pos: pos, pix: append([]uint32(nil), dst...)})
	}
}

// base returns the masked generated chunk at pos, read-only: from the cache,
// or generated into scratch (and cached).
func (cc *chunkCodec) base(pos Key, scratch []uint32) *baseEntry {
	if b := cc.bases.get(pos); b != nil {
		return b
	}
	cc.run(pos, scratch)
	maskPixels(scratch, cc.mask)
	if cc.bases == nil {
		return &baseEntry{pos: pos, pix: scratch}
	}
	return cc.bases.put(&baseEntry{pos: pos, pix: append([]uint32(nil), scratch...)})
}

// encode chooses how to store pix at pos, with the game's extra data for
// the chunk (nil for none), and builds its record in e.recs. Only pix&mask
// matters: a chunk identical to generation without extra data is not
// stored, an all-zero one without extra data is Empty; anything else is
// stored in the smallest record, after compression, of the encodings that
// apply: Delta (while fewer than threshold of the pixels differ from
// generation), Palette (at most 65,536 distinct pixels) and Full (see
// chooseRecord for how the smallest is found without compressing all).
func (cc *chunkCodec) encode(e *encoder, pos Key, pix []uint32, extra []byte) (chunkResult, error) {
	return cc.encodeOn(e, pos, pix, extra, nil)
}

// encodeOn is encode against base, the generated chunk at pos taken from
// the cache when the commit started; nil: looked up or generated now.
func (cc *chunkCodec) encodeOn(e *encoder, pos Key, pix []uint32, extra []byte, base *baseEntry) (chunkResult, error) {
	if len(pix) != cc.npix {
		return chunkResult{}, fmt.Errorf("%w: chunk %v has %d pixels, want %d", ErrInvalidChunk, pos, len(pix), cc.npix)
	}
	if len(extra) > MaxExtra {
		return chunkResult{}, fmt.Errorf("%w: chunk %v: %d bytes of extra data, at most %d", ErrInvalidChunk, pos, len(extra), MaxExtra)
	}
	if len(extra) == 0 {
		extra = nil // none
	}
	var ch chunkChanges
	if cc.gen != nil {
		if base == nil {
			if cap(e.gen) < cc.npix {
				e.gen = make([]uint32, cc.npix)
			}
			base = cc.base(pos, e.gen[:cc.npix])
		}
		ch = e.scanChanges(pix, base.pix, cc.mask)
	} else {
		ch.diff = countNonzero(pix, cc.mask)
		ch.nonzero = ch.diff > 0
		base = nil
	}
	switch {
	case ch.diff == 0 && extra == nil:
		return chunkResult{remove: true}, nil
	case !ch.nonzero && extra == nil:
		return chunkResult{typ: Empty, diff: ch.diff}, nil
	}
	e.setExt(cc, extra)
	pk := pick{e: e}
	switch {
	case base != nil && float64(ch.diff) < cc.threshold*float64(cc.npix) && cc.deltaFull:
		pk.try(Delta, e.deltaOf(pos, pix, base.pix, cc.mask, ch))
	case base != nil && float64(ch.diff) < cc.threshold*float64(cc.npix):
		cc.chooseRecord(&pk, pos, pix, base, ch)
	case cc.deltaFull:
		pk.try(Full, e.encodeFull(pos, pix, cc.mask))
	default:
		cc.encodePlain(&pk, pos, pix)
	}
	pk.res.diff = ch.diff
	return pk.res, nil
}

// chunkChanges is what one pass over a chunk and its generated base finds.
type chunkChanges struct {
	diff    int  // pixels that differ from the base
	runs    int  // runs of consecutive differing pixels
	nonzero bool // some pixel is not zero
	// laid: the scan laid out the Delta payload in the encoder's delta
	// buffer (few enough pixels differ).
	laid bool
}

func countNonzero(pix []uint32, mask uint32) int {
	n := 0
	for _, p := range pix {
		if p&mask != 0 {
			n++
		}
	}
	return n
}

// setExt builds the parts of a record that its flags announce: the layer
// mask, and extra data when the chunk has any.
func (e *encoder) setExt(cc *chunkCodec, extra []byte) {
	e.ext = binary.LittleEndian.AppendUint32(e.ext[:0], cc.mask)
	if extra != nil {
		e.ext = binary.LittleEndian.AppendUint32(e.ext, uint32(len(extra)))
		e.ext = append(e.ext, extra...)
	}
}

// flags returns the record flags for e.ext, as setExt built it.
func (e *encoder) flags() uint8 {
	switch len(e.ext) {
	case 0:
		return 0
	case layersSize:
		return flagLayers
	}
	return flagLayers | flagExtra
}

func (e *encoder) encodeDelta(pos Key, pix, gen []uint32, mask uint32, diff int) []byte {
	n := deltaCountSize + deltaEntrySize*diff
	if cap(e.raw) < n {
		e.raw = make([]byte, n)
	}
	raw := e.raw[:n]
	binary.LittleEndian.PutUint32(raw, uint32(diff))
	at := deltaCountSize
	for i, p := range pix {
		p &= mask
		if p != gen[i] {
			putDeltaEntry(raw[at:at+deltaEntrySize], i, p)
			at += deltaEntrySize
		}
	}
	return e.seal(pxsw.RecordDelta, pos, raw)
}

func (e *encoder) encodeFull(pos Key, pix []uint32, mask uint32) []byte {
	return e.seal(pxsw.RecordFull, pos, e.fullRaw(pix, mask))
}

// fullRaw returns the payload of a Full record of pix&mask: pix itself
// where that is the file's layout, else laid out in e.raw.
func (e *encoder) fullRaw(pix []uint32, mask uint32) []byte {
	if nativeLE && mask == ^uint32(0) {
		return pixelBytes(pix)
	}
	if cap(e.raw) < 4*len(pix) {
		e.raw = make([]byte, 4*len(pix))
	}
	raw := e.raw[:4*len(pix)]
	putPixels(raw, pix, mask)
	return raw
}

// seal compresses raw into a fresh record in e.alt, after the parts in
// e.ext, with the key bytes of pos after it.
func (e *encoder) seal(kind recordKind, pos Key, raw []byte) []byte {
	e.compressions++
	raw = seamPayload(kind, raw)
	rec, codec := compressInto(e.alt[:0], &e.c, e.ext, raw)
	rec = sealKeyed(rec, kind, codec, e.flags(), pos, uint32(len(raw)))
	e.alt = rec
	return rec
}

// decodeChunk decodes the checked chunk record rec of storage type typ,
// read at off for the chunk at pos, into dst, and returns the chunk's extra
// data (in place in rec; nil for none). Layers the record does not hold get
// their defaults.
func (cc *chunkCodec) decodeChunk(pos Key, typ StorageType, h recordHeader, rec []byte, off int64, dst []uint32, sc *readScratch) ([]byte, error) {
	var x recordExt
	var err error
	switch typ {
	case Full:
		x, err = cc.decodeFull(h, rec, off, dst, sc)
	case Delta:
		x, err = cc.decodeDelta(pos, h, rec, off, dst, sc)
	case Palette:
		var raw []byte
		if raw, x, err = payloadExt(h, rec, off, cc.maxPaletteRaw(), sc.raw); err == nil {
			sc.keep(h, raw)
			_, err = cc.decodePalette(raw, off, dst)
		}
	default:
		err = fmt.Errorf("%w: %s record at %v is not a chunk", ErrCorrupt, h.kind, loc(off))
	}
	if err != nil {
		return nil, err
	}
	cc.fillLayers(dst, x)
	return x.extra, nil
}

// keep holds on to raw, a payload decoded into sc.raw, for the next read.
func (sc *readScratch) keep(h recordHeader, raw []byte) {
	if h.codec != codecNone {
		sc.raw = raw
	}
}

// decodeFull decodes a checked Full record into dst.
func (cc *chunkCodec) decodeFull(h recordHeader, rec []byte, off int64, dst []uint32, sc *readScratch) (recordExt, error) {
	want := 4 * cc.npix
	if int(h.raw) != want {
		return recordExt{}, fmt.Errorf("%w: full chunk at %v: %d bytes, want %d", ErrCorrupt, loc(off), h.raw, want)
	}
	if nativeLE && h.codec != codecNone {
		_, x, err := payloadExt(h, rec, off, want, pixelBytes(dst))
		if err != nil {
			return x, err
		}
		maskPixels(dst, cc.mask)
		return x, nil
	}
	raw, x, err := payloadExt(h, rec, off, want, sc.raw)
	if err != nil {
		return x, err
	}
	getPixels(dst, raw, cc.mask)
	sc.keep(h, raw)
	return x, nil
}

// decodeDelta applies the Delta record rec, read at off, to the generated
// chunk at pos (the entry's position: the record may be shared with another
// position, whose key it carries).
func (cc *chunkCodec) decodeDelta(pos Key, h recordHeader, rec []byte, off int64, dst []uint32, sc *readScratch) (recordExt, error) {
	if cc.gen == nil {
		return recordExt{}, fmt.Errorf("%w: delta chunk at %v", ErrNoGenerator, loc(off))
	}
	raw, x, err := payloadExt(h, rec, off, cc.maxDeltaRaw(), sc.raw)
	if err != nil {
		return x, err
	}
	sc.keep(h, raw)
	if _, err := cc.checkDelta(raw, off, x.extra != nil); err != nil {
		return x, err
	}
	cc.generate(pos, dst)
	cc.applyDelta(raw, dst)
	return x, nil
}

// checkDelta checks a decoded delta payload read at off and returns its
// entry count. Only a record with extra data may have no entries (a chunk
// as generated that carries extra data).
func (cc *chunkCodec) checkDelta(raw []byte, off int64, mayBeEmpty bool) (int, error) {
	if len(raw) < deltaCountSize {
		return 0, fmt.Errorf("%w: delta chunk at %v: %d bytes", ErrCorrupt, loc(off), len(raw))
	}
	count := int(binary.LittleEndian.Uint32(raw))
	// count < 0: a 32-bit host reads a count over 2^31-1 as negative.
	if count < 0 || (count == 0 && !mayBeEmpty) || count > cc.npix || len(raw) != deltaCountSize+deltaEntrySize*count {
		return 0, fmt.Errorf("%w: delta chunk at %v: %d entries in %d bytes", ErrCorrupt, loc(off), count, len(raw))
	}
	for i, at := 0, deltaCountSize; i < count; i, at = i+1, at+deltaEntrySize {
		if idx := int(raw[at]) | int(raw[at+1])<<8 | int(raw[at+2])<<16; idx >= cc.npix {
			return 0, fmt.Errorf("%w: delta chunk at %v: entry %d at pixel %d of %d", ErrCorrupt, loc(off), i, idx, cc.npix)
		}
	}
	return count, nil
}

// applyDelta sets the pixels of a checked delta payload in dst.
func (cc *chunkCodec) applyDelta(raw []byte, dst []uint32) {
	count := int(binary.LittleEndian.Uint32(raw))
	for i, at := 0, deltaCountSize; i < count; i, at = i+1, at+deltaEntrySize {
		idx := int(raw[at]) | int(raw[at+1])<<8 | int(raw[at+2])<<16
		dst[idx] = binary.LittleEndian.Uint32(raw[at+3:]) & cc.mask
	}
}

// maxDeltaRaw is the largest delta payload a chunk can have.
func (cc *chunkCodec) maxDeltaRaw() int { return deltaCountSize + deltaEntrySize*cc.npix }
