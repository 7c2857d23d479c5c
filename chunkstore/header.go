package chunkstore

import (
	"fmt"
	"hash/crc32"
	"io"
)

// Header slots. Their layout is part of the file format; see the package
// documentation for the table.
// Format versions of the chunk store file format (PXSW). The version is
// part of every header slot and data file header; docs/format.md has its
// history.
const (
	// FormatVersion is the version this package writes: format 3,
	// whatever the axes of the store's chunk keys ([Options.Axes]; the axes
	// in the header's flags, page-table entries of 4N+16 bytes, a record's
	// key bytes beyond two axes after its payload) and whatever the format
	// of the store it continues. It reads every version from
	// OldestFormatVersion on.
	FormatVersion = 3
	// OldestFormatVersion is the oldest format version this package reads:
	// 1, a single file without data files.
	OldestFormatVersion = 1
)

const (
	headerSize          = 64            // bytes in one header slot
	slotCount           = 2             // slots A (offset 0) and B (offset 64)
	dataStart           = 128           // first byte after the slots: the data region
	formatVersion       = FormatVersion // the version this package writes and the newest it reads
	flagLZ4             = 1 << 0        // records may be LZ4 block compressed (always set)
	flagAxesShift       = 1             // format 3: bits 1..2 hold the key's axes minus 2
	flagAxes            = 3 << flagAxesShift
	flagEncryptedRecs   = 1 << 3  // format 3: records may be encrypted (Options.Key): a reader that does not know encryption refuses the store
	knownFlags          = flagLZ4 // flags format 2 understands
	knownFlags3         = flagLZ4 | flagAxes | flagEncryptedRecs
	maxGeneratorVersion = 1<<24 - 1     // generator versions live in 3 bytes
	headerCRCOff        = 36            // the CRC32-C field (seed: page-table size)
	headerRootOff       = 40            // the table root field (seed: data-region pointer)
	headerGenOff        = 53            // the generation field (seed: entity-section pointer)
	headerGenVerOff     = 61            // the generator version (seed: reserved)
	pixelSize           = 4             // bytes per pixel: material, colour, damage, flags
	maxChunkSize        = 4096          // a delta position is 24 bits: 4096*4096 pixels
	headerMagic         = "PXSW"        // bytes 0..3 of a slot; 0x50585357 read big-endian
	maxGeneration       = 1<<64 - 1 - 1 // a commit must be able to add one
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// header is one decoded header slot: the state of one committed generation.
type header struct {
	flags      uint16
	seed       uint64
	created    int64  // unix seconds
	modified   int64  // unix seconds of the commit that wrote the slot
	chunkCount uint32 // chunks (not body blocks) stored at this generation
	root       int64  // offset of the table root record; 0 = empty table
	chunkSize  uint16
	tileSize   uint16
	pixelSize  uint8
	generation uint64
	genVersion uint32 // Generator.Version() of the writer, 24 bits
	version    uint16 // the format version the slot was written in (kept by marshal); 0 is the current one
	axes       uint8  // axes of a chunk key: 2, 3 or 4 (0 reads as 2)
}

// keyAxes returns the number of axes of the store's chunk keys.
func (h *header) keyAxes() int { return max(MinAxes, int(h.axes)) }

// currentVersion is the format version a commit writes for the store.
func (h *header) currentVersion() uint16 { return formatVersion }

// slotOffset returns the file offset of the slot that holds generation g.
func slotOffset(g uint64) int64 { return int64(g%slotCount) * headerSize }

func slotName(i int) string { return string(rune('A' + i)) }

func (h *header) marshal() [headerSize]byte {
	var out [headerSize]byte
	w := writeBuf(out[:])
	w.bytes([]byte(headerMagic))
	v := h.version
	if v == 0 {
		v = h.currentVersion()
	}
	w.uint16(v)
	flags := h.flags &^ flagAxes
	if n := h.keyAxes(); n > 2 {
		flags |= uint16(n-2) << flagAxesShift
	}
	w.uint16(flags)
	w.uint64(h.seed)
	w.uint64(uint64(h.created))
	w.uint64(uint64(h.modified))
	w.uint32(h.chunkCount)
	w.uint32(0) // checksum, below
	w.uint64(uint64(h.root))
	w.uint16(h.chunkSize)
	w.uint16(h.tileSize)
	w.uint8(h.pixelSize)
	w.uint64(h.generation)
	w.uint8(uint8(h.genVersion))
	w.uint8(uint8(h.genVersion >> 8))
	w.uint8(uint8(h.genVersion >> 16))
	c := headerChecksum(out[:])
	cw := writeBuf(out[headerCRCOff:])
	cw.uint32(c)
	return out
}

// headerChecksum is the CRC32-C of a slot without its checksum field.
func headerChecksum(b []byte) uint32 { return headerChecksumAt(b[:headerSize], headerCRCOff) }

// headerChecksumAt is the CRC32-C of b without the 4 bytes at off.
func headerChecksumAt(b []byte, off int) uint32 {
	c := crc32.Update(0, castagnoli, b[:off])
	return crc32.Update(c, castagnoli, b[off+4:])
}

// errEmptySlot is returned for a slot that holds only zeros: never written.
var errEmptySlot = fmt.Errorf("%w: slot never written (all zero)", ErrBadMagic)

// parseHeader decodes slot i (0 = A, 1 = B) from b. It checks the magic,
// then the version, then the checksum, each with its own error, and then
// that the fields make sense.
func parseHeader(b []byte, i int) (header, error) {
	off := int64(i) * headerSize
	where := fmt.Sprintf("header slot %s at offset %d", slotName(i), off)
	if len(b) < headerSize {
		return header{}, fmt.Errorf("%w: %s: %d of %d bytes: %w", ErrCorrupt, where, len(b), headerSize, io.ErrUnexpectedEOF)
	}
	b = b[:headerSize]
	if isZero(b) {
		return header{}, errEmptySlot
	}
	if string(b[:4]) != headerMagic {
		return header{}, fmt.Errorf("%w: %s: %q", ErrBadMagic, where, b[:4])
	}
	r := readBuf(b[4:])
	v := r.uint16()
	if v < OldestFormatVersion || v > formatVersion {
		return header{}, fmt.Errorf("%w: %s: version %d, this package reads %d to %d", ErrVersion, where, v, OldestFormatVersion, formatVersion)
	}
	cr := readBuf(b[headerCRCOff:])
	stored := cr.uint32()
	if c := headerChecksum(b); c != stored {
		return header{}, fmt.Errorf("%w: %s: crc %08x != %08x", ErrChecksum, where, c, stored)
	}
	h := header{version: v}
	h.flags = r.uint16()
	known := uint16(knownFlags)
	if v >= 3 {
		known = knownFlags3 // only format 3 has keys of more than 2 axes
	}
	if h.flags&^known != 0 {
		return header{}, fmt.Errorf("%w: %s: unknown flags %#04x", ErrVersion, where, h.flags&^known)
	}
	h.axes = uint8(2 + (h.flags&flagAxes)>>flagAxesShift)
	if h.axes > MaxAxes {
		return header{}, fmt.Errorf("%w: %s: flags %#04x: chunk keys of %d axes", ErrCorrupt, where, h.flags, h.axes)
	}
	h.seed = r.uint64()
	h.created = int64(r.uint64())
	h.modified = int64(r.uint64())
	h.chunkCount = r.uint32()
	r.skip(4) // checksum
	h.root = int64(r.uint64())
	h.chunkSize = r.uint16()
	h.tileSize = r.uint16()
	h.pixelSize = r.uint8()
	h.generation = r.uint64()
	h.genVersion = uint32(r.uint8()) | uint32(r.uint8())<<8 | uint32(r.uint8())<<16
	switch {
	case !validPixelSize(h.pixelSize):
		return header{}, fmt.Errorf("%w: %s: pixel size %d at byte %d of the slot: a store holds 1, 2, 4 or 8 bytes per pixel", ErrCorrupt, where, h.pixelSize, pixelSizeOff)
	case h.generation%slotCount != uint64(i):
		return header{}, fmt.Errorf("%w: %s: generation %d belongs in slot %s", ErrCorrupt, where, h.generation, slotName(int(h.generation%slotCount)))
	case h.root != 0 && !validOffset(h.root):
		return header{}, fmt.Errorf("%w: %s: table root %v outside the data region", ErrCorrupt, where, loc(h.root))
	case h.version == 1 && fileOf(h.root) != 0:
		return header{}, fmt.Errorf("%w: %s: a format 1 slot whose table root is in data file %d", ErrCorrupt, where, fileOf(h.root))
	case h.chunkSize == 0 || h.chunkSize > maxChunkSize:
		return header{}, fmt.Errorf("%w: %s: chunk size %d", ErrCorrupt, where, h.chunkSize)
	case h.generation > maxGeneration:
		return header{}, fmt.Errorf("%w: %s: generation %d", ErrCorrupt, where, h.generation)
	}
	return h, nil
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
