package archetype

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/arksave/arksave/internal/pecs"
)

// fileHeader is the fixed 64-byte start of a PECS file.
type fileHeader = pecs.Header

// minFileSize is the size of a file with an empty world: header, four empty sections
// (the pool holds the two reserved slots), footer.
const minFileSize = headerSize + 4*(sectionHeadSize+crcSize) + poolFixedSize + reservedEntities*poolSlotSize + footerSize

// minSectionSize is the size of an entity section of no entities: header, four empty sections
// (registry, tables, references, resources), footer.
const minSectionSize = headerSize + 4*(sectionHeadSize+crcSize) + footerSize

// minCompactSize is the size of a file with an empty world and a compact pool (the bitmap of
// the two reserved slots takes a byte).
const minCompactSize = headerSize + 4*(sectionHeadSize+crcSize) + compactFixed + 1 + footerSize

// appendHeader appends the 64 header bytes, CRC included.
func appendHeader(b []byte, h *fileHeader) []byte {
	start := len(b)
	w := (*writeBuf)(&b)
	w.bytes([]byte(magic))
	w.u16(h.VersionMajor)
	w.u16(h.VersionMinor)
	w.u32(h.Flags)
	w.u64(h.Entities)
	w.u32(h.Archetypes)
	w.u32(h.Types)
	w.u32(h.Resources)
	w.u64(uint64(h.Timestamp))
	w.u64(h.FileSize)
	w.bytes(make([]byte, headerCRCOffset-(len(b)-start)))
	w.u32(crc32.Checksum(b[start:], castagnoli))
	return b
}

// readHeader parses the 64-byte header at the start of a PECS file (pecs.ReadHeader): magic,
// version, checksum, values, without reading the rest. Input shorter than a header is an
// error wrapping ErrCorrupt and io.ErrUnexpectedEOF.
func readHeader(b []byte) (fileHeader, error) {
	if len(b) < headerSize {
		return fileHeader{}, fmt.Errorf("%w: header at offset 0: %d bytes, want %d: %w", ErrCorrupt, len(b), headerSize, io.ErrUnexpectedEOF)
	}
	return parseHeader(b[:headerSize])
}

// parseHeader checks magic, then version, then checksum, then the values, each failure
// with its own error, and returns the header.
func parseHeader(b []byte) (fileHeader, error) {
	le := binary.LittleEndian
	var h fileHeader
	if string(b[0:4]) != magic {
		return h, fmt.Errorf("%w: header at offset 0: magic %q, want %q: not a PECS file", ErrCorrupt, b[0:4], magic)
	}
	h.VersionMajor = le.Uint16(b[4:])
	h.VersionMinor = le.Uint16(b[6:])
	if h.VersionMajor < oldestMajor || h.VersionMajor > VersionMajor ||
		h.VersionMajor == VersionMajor && h.VersionMinor > VersionMinor || h.VersionMajor < VersionMajor && h.VersionMinor > 0 {
		return h, fmt.Errorf("%w: header at offset 4: file format %d.%d, this reader reads %d.0 and %d.0 to %d.%d",
			ErrVersion, h.VersionMajor, h.VersionMinor, oldestMajor, VersionMajor, VersionMajor, VersionMinor)
	}
	if got, want := crc32.Checksum(b[:headerCRCOffset], castagnoli), le.Uint32(b[headerCRCOffset:]); got != want && verifyChecksums {
		return h, fmt.Errorf("%w: header at offset %d: checksum %08x, stored %08x", ErrCorrupt, headerCRCOffset, got, want)
	}
	h.Flags = le.Uint32(b[8:])
	h.Entities = le.Uint64(b[12:])
	h.Archetypes = le.Uint32(b[20:])
	h.Types = le.Uint32(b[24:])
	h.Resources = le.Uint32(b[28:])
	h.Timestamp = int64(le.Uint64(b[32:]))
	h.FileSize = le.Uint64(b[40:])
	if h.Flags&^knownFlags != 0 {
		return h, fmt.Errorf("%w: header at offset 8: unknown flags %#x, written by a newer version", ErrVersion, h.Flags&^knownFlags)
	}
	section := h.Flags&FlagSection != 0
	if h.Flags&(FlagSection|FlagCompactPool) != 0 && (h.VersionMajor < VersionMajor || h.VersionMinor < 1) {
		return h, fmt.Errorf("%w: header at offset 8: flags %#x of format 2.1 in a file of format %d.%d", ErrCorrupt, h.Flags, h.VersionMajor, h.VersionMinor)
	}
	if section && h.Flags&FlagCompactPool != 0 {
		return h, fmt.Errorf("%w: header at offset 8: an entity section has no pool to compact", ErrCorrupt)
	}
	least := uint64(minFileSize)
	switch {
	case section:
		least = minSectionSize
	case h.Flags&FlagCompactPool != 0:
		least = minCompactSize
	}
	if h.FileSize < least || h.FileSize > 1<<62 {
		return h, fmt.Errorf("%w: header at offset 40: file size %d is impossible", ErrCorrupt, h.FileSize)
	}
	// Every alive entity takes a pool slot and an alive id, every entry, type and resource
	// some bytes: counts the file size cannot hold are damage. A section has no pool: it holds
	// at most one entity per byte, so that reading it never creates more than its size justifies.
	room := h.FileSize - least
	perEntity := uint64(poolSlotSize + poolAliveSize)
	if section {
		room, perEntity = h.FileSize, 1
	}
	switch {
	case h.Entities > room/perEntity:
		return h, fmt.Errorf("%w: header at offset 12: %d entities do not fit in %d bytes", ErrCorrupt, h.Entities, h.FileSize)
	case uint64(h.Archetypes) > room/entryFixedSize:
		return h, fmt.Errorf("%w: header at offset 20: %d archetypes do not fit in %d bytes", ErrCorrupt, h.Archetypes, h.FileSize)
	case uint64(h.Types) > room/typeFixedSize || h.Types > 1<<16:
		return h, fmt.Errorf("%w: header at offset 24: %d types do not fit in %d bytes", ErrCorrupt, h.Types, h.FileSize)
	case uint64(h.Resources) > room/resourceFixSize || h.Resources > h.Types:
		return h, fmt.Errorf("%w: header at offset 28: %d resources do not fit", ErrCorrupt, h.Resources)
	}
	return h, nil
}

// footer is the fixed 32-byte end of a PECS file.
type footer struct {
	checksumType uint32
	checksum     uint64
	fileSize     uint64
}

func appendFooter(b []byte, f *footer) []byte {
	w := (*writeBuf)(&b)
	w.u32(f.checksumType)
	w.u64(f.checksum)
	w.u64(f.fileSize)
	w.bytes([]byte(magicEnd))
	w.u64(0)
	return b
}

// parseFooter checks the footer at file offset off against the running checksum of
// everything before it and the header's file size.
func parseFooter(b []byte, off int64, crc uint32, h *fileHeader) (footer, error) {
	le := binary.LittleEndian
	f := footer{checksumType: le.Uint32(b), checksum: le.Uint64(b[4:]), fileSize: le.Uint64(b[12:])}
	fail := func(at int64, format string, args ...any) (footer, error) {
		return f, fmt.Errorf("%w: footer at offset %d: %s", ErrCorrupt, off+at, fmt.Sprintf(format, args...))
	}
	switch {
	case string(b[20:24]) != magicEnd:
		return fail(20, "magic %q, want %q", b[20:24], magicEnd)
	case le.Uint64(b[24:]) != 0:
		return fail(24, "reserved bytes are not zero")
	case f.checksumType != ChecksumCRC32C:
		return fail(0, "unknown checksum type %d", f.checksumType)
	case f.fileSize != h.FileSize || f.fileSize != uint64(off)+footerSize:
		return fail(12, "file size %d, header says %d, footer ends at %d", f.fileSize, h.FileSize, off+footerSize)
	case f.checksum != uint64(crc) && verifyChecksums:
		return fail(4, "checksum %08x, computed %08x", f.checksum, crc)
	}
	return f, nil
}
