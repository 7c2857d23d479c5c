package chunkstore

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/pierrec/lz4/v4"
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
	recs []byte
}

// chunkResult is a chunk encoded for a commit.
type chunkResult struct {
	typ    StorageType
	remove bool   // identical to the generator's chunk: not stored
	rec    []byte // the sealed record for Delta and Full
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
		copy(dst, b)
		return
	}
	cc.run(pos, dst)
	maskPixels(dst, cc.mask)
	if cc.bases != nil {
		cc.bases.put(pos, append([]uint32(nil), dst...))
	}
}

// base returns the masked generated chunk at pos, read-only: from the cache,
// or generated into scratch (and cached).
func (cc *chunkCodec) base(pos Key, scratch []uint32) []uint32 {
	if b := cc.bases.get(pos); b != nil {
		return b
	}
	cc.run(pos, scratch)
	maskPixels(scratch, cc.mask)
	if cc.bases == nil {
		return scratch
	}
	b := append([]uint32(nil), scratch...)
	cc.bases.put(pos, b)
	return b
}

// encode chooses how to store pix at pos and builds its record in e.recs
// (reset first). Only pix&mask matters: a chunk identical to generation is
// not stored, an all-zero one is Empty, one where fewer than threshold of
// the pixels differ from generation is a Delta, anything else Full.
func (cc *chunkCodec) encode(e *encoder, pos Key, pix []uint32) (chunkResult, error) {
	if len(pix) != cc.npix {
		return chunkResult{}, fmt.Errorf("%w: chunk %v has %d pixels, want %d", ErrInvalidChunk, pos, len(pix), cc.npix)
	}
	mask := cc.mask
	diff, nonzero := 0, 0
	var gen []uint32
	if cc.gen != nil {
		if cap(e.gen) < cc.npix {
			e.gen = make([]uint32, cc.npix)
		}
		gen = cc.base(pos, e.gen[:cc.npix])
		for i, p := range pix {
			p &= mask
			if p != 0 {
				nonzero++
			}
			if p != gen[i] {
				diff++
			}
		}
	} else {
		for _, p := range pix {
			if p&mask != 0 {
				nonzero++
			}
		}
		diff = nonzero
	}
	switch {
	case diff == 0:
		return chunkResult{remove: true}, nil
	case nonzero == 0:
		return chunkResult{typ: Empty, diff: diff}, nil
	case gen != nil && float64(diff) < cc.threshold*float64(cc.npix):
		return chunkResult{typ: Delta, rec: e.encodeDelta(pos, pix, gen, mask, diff), diff: diff}, nil
	}
	return chunkResult{typ: Full, rec: e.encodeFull(pos, pix, mask), diff: diff}, nil
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
			raw[at] = byte(i)
			raw[at+1] = byte(i >> 8)
			raw[at+2] = byte(i >> 16)
			binary.LittleEndian.PutUint32(raw[at+3:], p)
			at += deltaEntrySize
		}
	}
	return e.seal(RecordDelta, pos, raw)
}

func (e *encoder) encodeFull(pos Key, pix []uint32, mask uint32) []byte {
	var raw []byte
	if nativeLE && mask == ^uint32(0) {
		raw = pixelBytes(pix)
	} else {
		if cap(e.raw) < 4*len(pix) {
			e.raw = make([]byte, 4*len(pix))
		}
		raw = e.raw[:4*len(pix)]
		putPixels(raw, pix, mask)
	}
	return e.seal(RecordFull, pos, raw)
}

// seal compresses raw into a fresh record in e.recs.
func (e *encoder) seal(kind RecordKind, pos Key, raw []byte) []byte {
	rec, codec := compressInto(e.recs[:0], &e.c, raw)
	rec = sealKeyed(rec, kind, codec, pos, uint32(len(raw)))
	e.recs = rec
	return rec
}

// decodeFull decodes a checked Full record into dst.
func (cc *chunkCodec) decodeFull(h recordHeader, rec []byte, off int64, dst []uint32, scratch []byte) ([]byte, error) {
	want := 4 * cc.npix
	if int(h.raw) != want {
		return scratch, fmt.Errorf("%w: full chunk at %v: %d bytes, want %d", ErrCorrupt, loc(off), h.raw, want)
	}
	if nativeLE && h.codec == codecLZ4 {
		if _, err := payloadOf(h, rec, off, want, pixelBytes(dst)); err != nil {
			return scratch, err
		}
		maskPixels(dst, cc.mask)
		return scratch, nil
	}
	raw, err := payloadOf(h, rec, off, want, scratch)
	if err != nil {
		return scratch, err
	}
	getPixels(dst, raw, cc.mask)
	if h.codec == codecLZ4 {
		scratch = raw
	}
	return scratch, nil
}

// checkDelta checks a decoded delta payload read at off and returns its
// entry count.
func (cc *chunkCodec) checkDelta(raw []byte, off int64) (int, error) {
	if len(raw) < deltaCountSize {
		return 0, fmt.Errorf("%w: delta chunk at %v: %d bytes", ErrCorrupt, loc(off), len(raw))
	}
	count := int(binary.LittleEndian.Uint32(raw))
	if count == 0 || count > cc.npix || len(raw) != deltaCountSize+deltaEntrySize*count {
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
