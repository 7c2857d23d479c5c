package chunkstore

import (
	"cmp"
	"fmt"

	"github.com/arksave/arksave/internal/crc8"
)

// Page table. Its layout is part of the file format; see the package
// documentation.
const (
	entrySize       = 24   // one page-table entry of a 2-axis store
	entryCRCOff     = 21   // CRC-8 of the other 23 bytes (2 axes)
	tableHeaderSize = 16   // prev u64, level u8, reserved 3, count u32
	tombstone       = 0x80 // storage-type bit: the entry deletes its position
)

// entrySizeOf is the size of a page-table entry of a store of n axes:
// 4 bytes per axis and 16 more (24, 28 or 32).
func entrySizeOf(n int) int { return 4*n + 16 }

// entryCRCOf is the offset of an entry's CRC-8 in a store of n axes.
func entryCRCOf(n int) int { return 4*n + 13 }

// Pos is a chunk position in chunk coordinates.
type Pos struct{ X, Y int32 }

func (p Pos) String() string { return fmt.Sprintf("(%d, %d)", p.X, p.Y) }

// StorageType says how a chunk is stored (its values are part of the file format), or marks an
// index entry that holds a chunk's pixel bodies.
type StorageType uint8

// Storage types.
const (
	// Empty: the chunk is all zero (air) in its persisted layers; no record.
	Empty StorageType = 0
	// Delta: the pixels that differ from the Generator's chunk.
	Delta StorageType = 1
	// Full: every pixel.
	Full StorageType = 2
	// BodyBlock: not a chunk but the pixel bodies kept with it.
	BodyBlock StorageType = 3
	// Palette: every pixel as an 8- or 16-bit index into the chunk's
	// palette of distinct pixels (format 3).
	Palette StorageType = 4
)

var typeNames = [...]string{"empty", "delta", "full", "bodies", "palette"}

func (t StorageType) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("type %d", uint8(t))
}

// tableEntry is one decoded page-table entry: a chunk's storage or its body
// block, or a tombstone that removes one of those.
type tableEntry struct {
	pos     Key
	h       handle
	typ     StorageType
	deleted bool
}

// isBody reports whether the entry is about body blocks, not chunk pixels.
func (e tableEntry) isBody() bool { return e.typ == BodyBlock }

func compareEntries(a, b tableEntry) int {
	if c := compareKeys(a.pos, b.pos); c != 0 {
		return c
	}
	return cmp.Compare(bodyRank(a), bodyRank(b))
}

func bodyRank(e tableEntry) int {
	if e.isBody() {
		return 1
	}
	return 0
}

// put writes e, an entry of a store of n axes, to b[:entrySizeOf(n)].
func (e tableEntry) put(b []byte, n int) {
	w := writeBuf(b[:entrySizeOf(n)])
	for i := range n {
		w.uint32(uint32(e.pos.c[i]))
	}
	w.uint64(uint64(e.h.Offset))
	w.uint32(e.h.Length)
	t := uint8(e.typ)
	if e.deleted {
		t |= tombstone
	}
	w.uint8(t)
	w.uint8(0)
	w.uint16(0)
	b[entryCRCOf(n)] = entryCRC(b, n)
}

// entryCRC is the CRC-8 of an entry of n axes without its CRC byte.
func entryCRC(b []byte, n int) byte {
	off := entryCRCOf(n)
	return crc8.Update(crc8.Checksum(b[:off]), b[off+1:entrySizeOf(n)])
}

// parseEntry decodes and checks the entry of a store of n axes at
// b[:entrySizeOf(n)], read at off.
func parseEntry(b []byte, off int64, n int) (tableEntry, error) {
	if c, crcOff := entryCRC(b, n), entryCRCOf(n); c != b[crcOff] {
		return tableEntry{}, fmt.Errorf("%w: page-table entry at %v: crc8 %02x != %02x", ErrChecksum, loc(off), c, b[crcOff])
	}
	r := readBuf(b)
	var e tableEntry
	e.pos.n = uint8(n)
	for i := range n {
		e.pos.c[i] = int32(r.uint32())
	}
	e.h.Offset = int64(r.uint64())
	e.h.Length = r.uint32()
	t := r.uint8()
	r.skip(1)
	reserved := r.uint16()
	e.deleted = t&tombstone != 0
	e.typ = StorageType(t &^ tombstone)
	noRecord := e.deleted || e.typ == Empty
	switch {
	case e.typ > Palette:
		return e, fmt.Errorf("%w: page-table entry at %v: storage type %d", ErrCorrupt, loc(off), t)
	case reserved != 0:
		return e, fmt.Errorf("%w: page-table entry at %v: reserved bytes %#04x", ErrCorrupt, loc(off), reserved)
	case noRecord && !e.h.IsZero():
		return e, fmt.Errorf("%w: page-table entry at %v: %s entry with a handle", ErrCorrupt, loc(off), e.typ)
	case !noRecord && (!validOffset(e.h.Offset) || e.h.Length < recordHeaderSize || e.h.Length > maxRecordLength):
		return e, fmt.Errorf("%w: page-table entry at %v: handle {%d, %d}", ErrCorrupt, loc(off), e.h.Offset, e.h.Length)
	}
	return e, nil
}

// appendTable appends the payload of a table record (journal segment or
// checkpoint) holding entries of n axes to dst.
func appendTable(dst []byte, prev int64, level uint8, entries []tableEntry, n int) []byte {
	size := entrySizeOf(n)
	start := len(dst)
	dst = grow(dst, tableHeaderSize+size*len(entries))
	w := writeBuf(dst[start:])
	w.uint64(uint64(prev))
	w.uint8(level)
	w.zero(3)
	w.uint32(uint32(len(entries)))
	b := dst[start+tableHeaderSize:]
	for i, e := range entries {
		e.put(b[i*size:], n)
	}
	return dst
}

// table is a decoded table record.
type table struct {
	prev    int64 // previous table record in the chain; 0 = none
	level   uint8 // 0 for one commit's changes, L+1 for a merge of level-L segments
	entries []tableEntry
}

// parseTable decodes the payload of a table record at off, in a store of
// axes axes. With salvage,
// entries that fail their own checks are skipped and returned as problems
// instead of failing the whole record, and the entry count comes from the
// payload's length rather than its count field.
func parseTable(payload []byte, off int64, salvage bool, axes int) (table, []error, error) {
	base := off + recordHeaderSize
	entrySize := entrySizeOf(axes)
	if len(payload) < tableHeaderSize || (len(payload)-tableHeaderSize)%entrySize != 0 {
		return table{}, nil, fmt.Errorf("%w: table record at %v: payload of %d bytes is not 16 + %dn", ErrCorrupt, loc(off), len(payload), entrySize)
	}
	r := readBuf(payload)
	var t table
	t.prev = int64(r.uint64())
	t.level = r.uint8()
	r.skip(3)
	count := int(r.uint32())
	n := (len(payload) - tableHeaderSize) / entrySize
	if count != n && !salvage {
		return table{}, nil, fmt.Errorf("%w: table record at %v: count %d, room for %d", ErrCorrupt, loc(off), count, n)
	}
	if t.prev != 0 && (!validOffset(t.prev) || t.prev >= off) && !salvage {
		return table{}, nil, fmt.Errorf("%w: table record at %v: previous record at %v", ErrCorrupt, loc(off), loc(t.prev))
	}
	var problems []error
	t.entries = make([]tableEntry, 0, n)
	for i := range n {
		at := tableHeaderSize + i*entrySize
		e, err := parseEntry(payload[at:at+entrySize], base+int64(at), axes)
		if err != nil {
			if !salvage {
				return table{}, nil, err
			}
			problems = append(problems, err)
			continue
		}
		t.entries = append(t.entries, e)
	}
	return t, problems, nil
}
