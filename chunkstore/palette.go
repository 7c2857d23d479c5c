package chunkstore

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/arksave/arksave/internal/pxsw"
)

// Palette chunk payloads (format 3). The layout is part of the file format;
// see the package documentation.
//
//	off        size         field
//	  0        4            count u32: distinct pixels, 1 to 65,536
//	  4        1            index width: 1 when count <= 256, else 2
//	  5        3            reserved (0)
//	  8        4*count      the palette: count pixels, u32 each
//	  8+4*count width*npix  one index per pixel, row-major (u16 little-endian when width is 2)
const (
	paletteHeadSize = 8
	maxPalette      = 1 << 16 // 16-bit indices
	paletteSlots    = 1 << 17 // open addressing, at most half full
)

// paletteScratch is an encoder's palette table: pixel -> index, reused from
// chunk to chunk (a stamp per slot instead of clearing it).
type paletteScratch struct {
	keys   []uint32
	idx    []uint16
	stamps []uint32
	stamp  uint32
	vals   []uint32 // the palette: air (0) first, then in order of first appearance
	ix     []uint16 // the index of every pixel
	count  int      // len(vals) of the last chunk tried
	sample []uint32 // the sample of a base that basePlain measures
}

// build fills vals and ix from pix&mask and reports false when pix holds
// more than 65,536 distinct pixels.
func (ps *paletteScratch) build(pix []uint32, mask uint32) bool {
	if ps.keys == nil {
		ps.keys = make([]uint32, paletteSlots)
		ps.idx = make([]uint16, paletteSlots)
		ps.stamps = make([]uint32, paletteSlots)
	}
	ps.stamp++
	if ps.stamp == 0 { // wrapped: old stamps could match
		clear(ps.stamps)
		ps.stamp = 1
	}
	if cap(ps.ix) < len(pix) {
		ps.ix = make([]uint16, len(pix))
	}
	ix := ps.ix[:len(pix)]
	// Index 0 is air, the empty pixel, in every palette (seed 003), whether
	// or not the chunk holds it: a reader sees air as index 0 without
	// looking at the table.
	vals := append(ps.vals[:0], 0)
	air := uint32(0)
	airSlot := (air * 0x9E3779B1) >> (32 - 17)
	ps.stamps[airSlot], ps.keys[airSlot], ps.idx[airSlot] = ps.stamp, air, 0
	prev, prevIx := air, uint16(0)
	havePrev := true
	for i, p := range pix {
		p &= mask
		if havePrev && p == prev {
			ix[i] = prevIx
			continue
		}
		slot := (p * 0x9E3779B1) >> (32 - 17)
		for {
			if ps.stamps[slot] != ps.stamp {
				if len(vals) == maxPalette {
					ps.vals, ps.count = vals, len(vals)+1
					return false
				}
				ps.stamps[slot], ps.keys[slot], ps.idx[slot] = ps.stamp, p, uint16(len(vals))
				vals = append(vals, p)
				break
			}
			if ps.keys[slot] == p {
				break
			}
			slot = (slot + 1) & (paletteSlots - 1)
		}
		prev, prevIx, havePrev = p, ps.idx[slot], true
		ix[i] = prevIx
	}
	ps.vals, ps.count = vals, len(vals)
	return true
}

// encodePalette builds a Palette record of pix&mask in e.alt, or reports
// false when the chunk has too many distinct pixels for one.
func (e *encoder) encodePalette(pos Key, pix []uint32, mask uint32) ([]byte, bool) {
	if !e.pal.build(pix, mask) {
		return nil, false
	}
	return e.seal(pxsw.RecordPalette, pos, e.paletteRaw(len(pix))), true
}

// paletteWidth is the bytes of a palette index for count distinct pixels.
func paletteWidth(count int) int {
	if count > 256 {
		return 2
	}
	return 1
}

// paletteRaw lays out in e.raw the payload of the palette e.pal built for
// npix pixels.
func (e *encoder) paletteRaw(npix int) []byte {
	ps := &e.pal
	width := paletteWidth(len(ps.vals))
	n := paletteHeadSize + 4*len(ps.vals) + width*npix
	if cap(e.raw) < n {
		e.raw = make([]byte, n)
	}
	raw := e.raw[:n]
	binary.LittleEndian.PutUint32(raw, uint32(len(ps.vals)))
	raw[4], raw[5], raw[6], raw[7] = byte(width), 0, 0, 0
	at := paletteHeadSize
	for _, v := range ps.vals {
		binary.LittleEndian.PutUint32(raw[at:], v)
		at += 4
	}
	idx := raw[at:]
	if width == 1 {
		for i, x := range ps.ix[:npix] {
			idx[i] = byte(x)
		}
	} else {
		for i, x := range ps.ix[:npix] {
			binary.LittleEndian.PutUint16(idx[2*i:], x)
		}
	}
	return raw
}

// maxPaletteRaw is the largest palette payload a chunk can have.
func (cc *chunkCodec) maxPaletteRaw() int {
	return paletteHeadSize + 4*min(maxPalette, cc.npix) + 2*cc.npix
}

// checkPalette checks the header of a decoded palette payload read at off
// and returns its palette count and index width. decodePalette checks the
// indices.
func (cc *chunkCodec) checkPalette(raw []byte, off int64) (count, width int, err error) {
	if len(raw) < paletteHeadSize {
		return 0, 0, fmt.Errorf("%w: palette chunk at %v: header of %d bytes", ErrCorrupt, loc(off), len(raw))
	}
	count, width = int(binary.LittleEndian.Uint32(raw)), int(raw[4])
	switch {
	case count < 1 || count > maxPalette || count > cc.npix:
		return 0, 0, fmt.Errorf("%w: palette chunk at %v: palette of %d pixels at offset 0", ErrCorrupt, loc(off), count)
	case width != 1 && width != 2, width == 1 && count > 256:
		return 0, 0, fmt.Errorf("%w: palette chunk at %v: %d-byte indices for a palette of %d at offset 4", ErrCorrupt, loc(off), width, count)
	case raw[5]|raw[6]|raw[7] != 0:
		return 0, 0, fmt.Errorf("%w: palette chunk at %v: reserved bytes at offset 5", ErrCorrupt, loc(off))
	case len(raw) != paletteHeadSize+4*count+width*cc.npix:
		return 0, 0, fmt.Errorf("%w: palette chunk at %v: %d bytes, a palette of %d with %d-byte indices needs %d",
			ErrCorrupt, loc(off), len(raw), count, width, paletteHeadSize+4*count+width*cc.npix)
	}
	return count, width, nil
}

// decodePalette checks a decoded palette payload read at off and fills dst
// from it. It returns the palette count.
func (cc *chunkCodec) decodePalette(raw []byte, off int64, dst []uint32) (int, error) {
	count, width, err := cc.checkPalette(raw, off)
	if err != nil {
		return 0, err
	}
	pal := raw[paletteHeadSize : paletteHeadSize+4*count]
	at := paletteHeadSize + 4*count
	idx := raw[at:]
	bad := -1
	if width == 1 {
		var small [256]uint32
		for i := range count {
			small[i] = binary.LittleEndian.Uint32(pal[4*i:]) & cc.mask
		}
		idx = idx[:len(dst)]
		var worst byte
		for i, x := range idx {
			worst = max(worst, x)
			dst[i] = small[x]
		}
		if int(worst) >= count {
			bad = slices.IndexFunc(idx, func(x byte) bool { return int(x) >= count })
		}
	} else {
		full := make([]uint32, count)
		for i := range full {
			full[i] = binary.LittleEndian.Uint32(pal[4*i:]) & cc.mask
		}
		for i := range dst {
			x := int(binary.LittleEndian.Uint16(idx[2*i:]))
			if x >= count {
				bad = i
				break
			}
			dst[i] = full[x]
		}
	}
	if bad >= 0 {
		return 0, fmt.Errorf("%w: palette chunk at %v: pixel %d has an index past the palette of %d (offset %d)",
			ErrCorrupt, loc(off), bad, count, at+width*bad)
	}
	return count, nil
}
