package chunkstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/arksave/arksave/internal/crc8"
	"github.com/arksave/arksave/internal/pxsw"
	"github.com/arksave/arksave/vfs"
	"github.com/pierrec/lz4/v4"
)

// Records. Everything after the header slots is a sequence of records, each
// self-describing so that a forward scan can validate it and find the next.
// The layout is part of the file format; see the package documentation.
const (
	recordHeaderSize = 24      // size, raw size, key, kind, codec, flags, header CRC-8, CRC32-C
	recordFlagsOff   = 18      // record flags (format 3; 0 before)
	recordHCRCOff    = 19      // CRC-8 of bytes 0..18
	recordCRCOff     = 20      // CRC32-C of bytes 0..19 and the payload
	maxRecordPayload = 1 << 30 // no record payload is larger
	codecNone        = 0       // payload stored as is
	codecLZ4         = 1       // payload is one LZ4 block
	codecZstd        = 2       // payload is one zstd frame (archived by compaction; see zstd.go)
	maxCodec         = codecZstd
	lz4MaxRatio      = 256 // LZ4 never expands a block by more than this (255, rounded up)
	lz4Slack         = 64  // plus a little for the final literals

	// Record flags (byte 18), format 3 only. The parts bits 0 and 1
	// announce (chunk records only) follow the header, before the payload,
	// never compressed; the key bytes bits 2..3 count (chunk and body
	// records of a store of 3 or 4 axes) follow the payload.
	flagLayers    = 1 << 0                 // a u32: the persisted-layer mask the pixels were written with
	flagExtra     = 1 << 1                 // a u32 length, then the game's extra data for the chunk
	flagKeyShift  = 2                      // bits 2..3: the key's axes beyond two (0 to 2), an int32 each after the payload
	flagKeyAxes   = 3 << flagKeyShift      // the bits of the key's extra axes
	flagEncrypted = 1 << 4                 // the parts and payload are AES-256-GCM ciphertext (crypt.go)
	chunkFlags3   = flagLayers | flagExtra // the flags only chunk records carry
	knownRecFlags = chunkFlags3 | flagKeyAxes | flagEncrypted
	layersSize    = 4 // the layer mask
	extraLenSz    = 4 // the extra data's length
)

// maxWritePayload is the largest payload a commit writes: what a reader
// takes (a variable so that a test can lower it).
var maxWritePayload = maxRecordPayload

// maxRecordLength is the length of the longest record: header, payload and
// key bytes.
const maxRecordLength = recordHeaderSize + maxRecordPayload + 4*(MaxAxes-2)

// recordKind says what a record holds (see internal/pxsw).
type recordKind = pxsw.RecordKind

// storageOf is the page-table storage type of a chunk or body record kind.
func storageOf(k recordKind) StorageType {
	if k == pxsw.RecordPalette {
		return Palette
	}
	return StorageType(k)
}

// handle addresses one record: its store offset and its length, header
// included (see internal/pxsw).
type handle = pxsw.Handle

// validOffset reports whether off can start a record: within the first
// MaxDataFiles data files, after its file's header.
func validOffset(off int64) bool {
	return off > 0 && off < 1<<62 && fileOf(off) <= MaxDataFiles && localOf(off) >= firstRecord(fileOf(off))
}

// recordHeader is the decoded first 24 bytes of a record.
type recordHeader struct {
	size  uint32 // payload bytes stored
	raw   uint32 // payload bytes after decoding
	key   uint64 // position (x low, y high) or generation
	kind  recordKind
	codec uint8
	flags uint8 // flagLayers, flagExtra, the key's axes beyond two, flagEncrypted
	ext   uint8 // key bytes after the payload: axes beyond two (flags bits 2..3), 4 each
}

func (h recordHeader) length() uint32 { return recordHeaderSize + h.size + uint32(h.ext) }

// payload returns the stored payload of rec, a whole checked record
// without flagged parts before it (a page-table record).
func (h recordHeader) payload(rec []byte) []byte {
	return rec[recordHeaderSize : recordHeaderSize+h.size]
}

// axesFlags are the record flags of a key of n axes.
func axesFlags(n int) uint8 { return uint8(n-2) << flagKeyShift }

// keyIn returns the chunk key of a checked chunk or body record rec of a
// store of n axes, read at off.
func (h recordHeader) keyIn(rec []byte, n int, off int64) (Key, error) {
	if int(h.ext) != keyExtSize(n) {
		return Key{}, fmt.Errorf("%w: %s at %v: %d key bytes after the payload, a store of %d axes has %d",
			ErrCorrupt, h.kind, loc(off), h.ext, n, keyExtSize(n))
	}
	k := Key{n: uint8(n)}
	k.c[0], k.c[1] = int32(uint32(h.key)), int32(uint32(h.key>>32))
	if n == 2 {
		return k, nil
	}
	if uint64(len(rec)) < uint64(h.length()) {
		return Key{}, fmt.Errorf("%w: %s at %v: %d bytes, its header says %d: %w", ErrCorrupt, h.kind, loc(off), len(rec), h.length(), io.ErrUnexpectedEOF)
	}
	r := readBuf(rec[recordHeaderSize+h.size:])
	for i := 2; i < n; i++ {
		k.c[i] = int32(r.uint32())
	}
	return k, nil
}

// keyAny returns the chunk key of a chunk or body record as its bytes say,
// with as many axes as its key bytes give; rec may be nil or short (a
// damaged record), and then only x and y are known.
func (h recordHeader) keyAny(rec []byte) Key {
	n := 2 + int(h.ext)/4
	if h.ext%4 != 0 || n > MaxAxes || uint64(len(rec)) < uint64(h.length()) {
		n = 2
	}
	if n == 2 {
		return Key2(int32(uint32(h.key)), int32(uint32(h.key>>32)))
	}
	k, _ := h.keyIn(rec, n, 0)
	return k
}

// sealRecord fills the header rec[:24] for what follows it (the parts
// flags announce, then the payload), which is already in place, for a
// record that is not keyed by a chunk or keyed by a 2-axis one.
func sealRecord(rec []byte, kind recordKind, codec, flags uint8, key uint64, raw uint32) {
	sealExt(rec, kind, codec, flags, key, raw, 0)
}

// sealKeyed appends the axes of k beyond two to rec, whose parts and
// payload after rec[:24] are in place, and seals it as a record of chunk
// key k.
func sealKeyed(rec []byte, kind recordKind, codec, flags uint8, k Key, raw uint32) []byte {
	ext := keyExtSize(int(k.n))
	if ext == 0 {
		sealRecord(rec, kind, codec, flags, k.recordKey(), raw)
		return rec
	}
	n := len(rec)
	rec = grow(rec, ext)
	w := writeBuf(rec[n:])
	for i := 2; i < int(k.n); i++ {
		w.uint32(uint32(k.c[i]))
	}
	sealExt(rec, kind, codec, flags|axesFlags(int(k.n)), k.recordKey(), raw, ext)
	return rec
}

func sealExt(rec []byte, kind recordKind, codec, flags uint8, key uint64, raw uint32, ext int) {
	w := writeBuf(rec[:recordHeaderSize])
	w.uint32(uint32(len(rec) - recordHeaderSize - ext))
	w.uint32(raw)
	w.uint64(key)
	w.uint8(uint8(kind))
	w.uint8(codec)
	w.uint8(flags)
	w.uint8(crc8.Checksum(rec[:recordHCRCOff]))
	w.uint32(recordCRC(rec))
}

// recordCRC is the CRC32-C of a record's bytes 0..19, its payload and the
// key bytes after it.
func recordCRC(rec []byte) uint32 {
	c := crc32.Update(0, castagnoli, rec[:recordCRCOff])
	return crc32.Update(c, castagnoli, rec[recordHeaderSize:])
}

// parseRecordHeader checks and decodes a record header read at off. It
// does not look at the payload.
func parseRecordHeader(b []byte, off int64) (recordHeader, error) {
	if len(b) < recordHeaderSize {
		return recordHeader{}, fmt.Errorf("%w: record at %v: header %d of %d bytes: %w", ErrCorrupt, loc(off), len(b), recordHeaderSize, io.ErrUnexpectedEOF)
	}
	if c := crc8.Checksum(b[:recordHCRCOff]); c != b[recordHCRCOff] {
		return recordHeader{}, fmt.Errorf("%w: record header at %v: crc8 %02x != %02x", ErrChecksum, loc(off), c, b[recordHCRCOff])
	}
	r := readBuf(b)
	var h recordHeader
	h.size = r.uint32()
	h.raw = r.uint32()
	h.key = r.uint64()
	h.kind = recordKind(r.uint8())
	h.codec = r.uint8()
	h.flags = r.uint8()
	h.ext = 4 * (h.flags & flagKeyAxes >> flagKeyShift)
	switch {
	case h.kind < 1 || h.kind > pxsw.RecordKindMax:
		return h, fmt.Errorf("%w: record at %v: unknown kind %d", ErrCorrupt, loc(off), h.kind)
	case h.codec > maxCodec:
		return h, fmt.Errorf("%w: record at %v: unknown codec %d", ErrCorrupt, loc(off), h.codec)
	case h.flags&^knownRecFlags != 0 || (h.flags&chunkFlags3 != 0 && !h.kind.IsChunk()) || (h.flags&flagEncrypted != 0 && h.kind.IsTable()):
		return h, fmt.Errorf("%w: record at %v: flags %#02x on a %s", ErrCorrupt, loc(off), h.flags, h.kind)
	case h.ext != 0 && (h.kind.IsTable() || h.ext > uint8(keyExtSize(MaxAxes))):
		return h, fmt.Errorf("%w: record at %v: %s with %d key bytes", ErrCorrupt, loc(off), h.kind, h.ext)
	case h.size > maxRecordPayload:
		return h, fmt.Errorf("%w: record at %v: payload of %d bytes", ErrCorrupt, loc(off), h.size)
	case h.flags&flagEncrypted != 0 && h.size < cryptOverhead:
		return h, fmt.Errorf("%w: record at %v: encrypted payload of %d bytes, shorter than its nonce and tag (%d)", ErrCorrupt, loc(off), h.size, cryptOverhead)
	}
	return h, checkSizes(h, off)
}

// checkSizes checks a record header's raw size against what its codec can
// make of the bytes it stores (an encrypted record's less the nonce and
// tag).
func checkSizes(h recordHeader, off int64) error {
	size := h.size
	if h.flags&flagEncrypted != 0 {
		size -= cryptOverhead
	}
	switch {
	case h.codec == codecNone && (h.raw > size || h.flags&chunkFlags3 == 0 && h.raw != size):
		return fmt.Errorf("%w: record at %v: stored payload of %d bytes claims %d", ErrCorrupt, loc(off), size, h.raw)
	case h.codec == codecLZ4 && (size == 0 || uint64(h.raw) > uint64(size)*lz4MaxRatio+lz4Slack || h.raw > maxRecordPayload):
		return fmt.Errorf("%w: record at %v: %d LZ4 bytes cannot hold %d", ErrCorrupt, loc(off), size, h.raw)
	case h.codec == codecZstd && !zstdBound(size, h.raw):
		return fmt.Errorf("%w: record at %v: %d zstd bytes cannot hold %d", ErrCorrupt, loc(off), size, h.raw)
	case h.kind.IsTable() && h.codec != codecNone:
		return fmt.Errorf("%w: record at %v: compressed %s", ErrCorrupt, loc(off), h.kind)
	}
	return nil
}

// checkRecord decodes the header of rec, a whole record read at off, and
// verifies its length and checksum.
func checkRecord(rec []byte, off int64) (recordHeader, error) {
	h, err := parseRecordHeader(rec, off)
	if err != nil {
		return h, err
	}
	if int64(h.length()) != int64(len(rec)) {
		return h, fmt.Errorf("%w: record at %v: %d bytes, its header says %d", ErrCorrupt, loc(off), len(rec), h.length())
	}
	stored := readBuf(rec[recordCRCOff:])
	if c, s := recordCRC(rec), stored.uint32(); c != s {
		return h, fmt.Errorf("%w: %s at %v: crc %08x != %08x", ErrChecksum, h.kind, loc(off), c, s)
	}
	return h, nil
}

// readRecord reads the record at h into buf (grown as needed) and checks
// it. It returns the header and the whole record. f is the file that holds
// the record (see Handle.File).
func readRecord(f vfs.File, h handle, buf []byte) (recordHeader, []byte, error) {
	if h.Length < recordHeaderSize || h.Length > maxRecordLength || !validOffset(h.Offset) {
		return recordHeader{}, nil, fmt.Errorf("%w: handle {%d, %d} cannot address a record", ErrCorrupt, h.Offset, h.Length)
	}
	if h.Length > 64<<10 {
		// Before allocating much, make sure the file holds that much: a
		// damaged entry must not make a reader allocate a gigabyte.
		if size, err := f.Size(); err != nil {
			return recordHeader{}, nil, fmt.Errorf("chunkstore: read at %v: %w", loc(h.Offset), err)
		} else if localOf(h.Offset)+int64(h.Length) > size {
			return recordHeader{}, nil, fmt.Errorf("%w: record at %v of %d bytes beyond the file's %d bytes: %w",
				ErrCorrupt, loc(h.Offset), h.Length, size, io.ErrUnexpectedEOF)
		}
	}
	if cap(buf) < int(h.Length) {
		buf = make([]byte, h.Length)
	}
	rec := buf[:h.Length]
	if err := readFull(f, rec, h.Offset); err != nil {
		return recordHeader{}, nil, err
	}
	hdr, err := checkRecord(rec, h.Offset)
	return hdr, rec, err
}

// readFull reads exactly len(p) bytes at store offset off from f, the file
// that holds it; a file that ends first is corrupt (truncated), other
// errors are passed on.
func readFull(f vfs.File, p []byte, off int64) error {
	n, err := f.ReadAt(p, localOf(off))
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: %d bytes at %v: file ends after %d: %w", ErrCorrupt, len(p), loc(off), n, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("chunkstore: read at %v: %w", loc(off), err)
}

// recordExt is what the flags of a chunk record announce.
type recordExt struct {
	layers    uint32 // the persisted-layer mask the pixels were written with
	hasLayers bool   // false: a record of format 1 or 2, written with the reader's mask
	extra     []byte // the game's extra data, in place in the record; nil for none
	size      int    // bytes between the header and the payload
}

// extOf decodes the parts between the header and the payload of a checked
// record read at off.
func extOf(h recordHeader, rec []byte, off int64) (recordExt, error) {
	var x recordExt
	b := rec[recordHeaderSize : recordHeaderSize+h.size]
	if h.flags&flagLayers != 0 {
		if len(b) < layersSize {
			return x, fmt.Errorf("%w: %s at %v: layer mask at offset %d: %w", ErrCorrupt, h.kind, loc(off), recordHeaderSize, io.ErrUnexpectedEOF)
		}
		x.layers, x.hasLayers = binary.LittleEndian.Uint32(b), true
		b, x.size = b[layersSize:], layersSize
	}
	if h.flags&flagExtra != 0 {
		if len(b) < extraLenSz {
			return x, fmt.Errorf("%w: %s at %v: extra data length at offset %d: %w", ErrCorrupt, h.kind, loc(off), recordHeaderSize+x.size, io.ErrUnexpectedEOF)
		}
		n := binary.LittleEndian.Uint32(b)
		if n > MaxExtra || int64(n) > int64(len(b)-extraLenSz) {
			return x, fmt.Errorf("%w: %s at %v: %d bytes of extra data at offset %d, %d remain", ErrCorrupt, h.kind, loc(off), n, recordHeaderSize+x.size, len(b)-extraLenSz)
		}
		x.extra = b[extraLenSz : extraLenSz+n : extraLenSz+n]
		x.size += extraLenSz + int(n)
	}
	rest := int(h.size) - x.size
	if (h.codec == codecNone && rest != int(h.raw)) || (h.codec != codecNone && rest == 0) {
		return x, fmt.Errorf("%w: %s at %v: payload of %d bytes at offset %d for %d decoded", ErrCorrupt, h.kind, loc(off), rest, recordHeaderSize+x.size, h.raw)
	}
	return x, nil
}

// payloadOf decodes the payload of a checked record into dst (grown as
// needed) and returns it; a stored payload is returned in place. maxRaw
// bounds what the caller accepts, so that a corrupt raw size never makes it
// allocate more than it expects.
func payloadOf(h recordHeader, rec []byte, off int64, maxRaw int, dst []byte) ([]byte, error) {
	p, _, err := payloadExt(h, rec, off, maxRaw, dst)
	return p, err
}

// payloadExt is payloadOf that also returns the parts the record's flags
// announce.
func payloadExt(h recordHeader, rec []byte, off int64, maxRaw int, dst []byte) ([]byte, recordExt, error) {
	if int64(h.raw) > int64(maxRaw) {
		return nil, recordExt{}, fmt.Errorf("%w: %s at %v: %d bytes decoded, at most %d expected", ErrCorrupt, h.kind, loc(off), h.raw, maxRaw)
	}
	x, err := extOf(h, rec, off)
	if err != nil {
		return nil, x, err
	}
	at := recordHeaderSize + x.size
	if h.codec == codecNone {
		return rec[at : recordHeaderSize+h.size], x, nil
	}
	if cap(dst) < int(h.raw) {
		dst = make([]byte, h.raw)
	}
	dst = dst[:h.raw]
	if err := decodePayload(h, rec[at:recordHeaderSize+h.size], dst, off, at); err != nil {
		return nil, x, err
	}
	return dst, x, nil
}

// decodePayload decodes src, the compressed payload of the record read at
// off, found at offset at in the record, into dst, of the record's raw
// size exactly.
func decodePayload(h recordHeader, src, dst []byte, off int64, at int) error {
	switch h.codec {
	case codecLZ4:
		n, err := lz4.UncompressBlock(src, dst)
		if err != nil || n != len(dst) {
			return fmt.Errorf("%w: %s at %v: LZ4 block at offset %d decodes to %d of %d bytes: %w", ErrCorrupt, h.kind, loc(off), at, n, len(dst), err)
		}
		return nil
	case codecZstd:
		return unzstd(h, src, dst, off, at)
	}
	return fmt.Errorf("%w: %s at %v: unknown codec %d", ErrCorrupt, h.kind, loc(off), h.codec)
}

// compressInto appends a record to dst: header space, ext as is, then src
// compressed with c when that saves space, else as is. It returns the record
// (not sealed) and the codec used.
func compressInto(dst []byte, c *lz4.Compressor, ext, src []byte) ([]byte, uint8) {
	start := len(dst)
	pre := recordHeaderSize + len(ext)
	bound := lz4.CompressBlockBound(len(src))
	dst = grow(dst, pre+bound)
	copy(dst[start+recordHeaderSize:], ext)
	out := dst[start+pre : start+pre+bound]
	n, err := c.CompressBlock(src, out)
	if err != nil || n == 0 || n >= len(src) {
		copy(out, src)
		return dst[:start+pre+len(src)], codecNone
	}
	return dst[:start+pre+n], codecLZ4
}

// grow returns b extended by n bytes (contents of the new bytes undefined).
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), 2*cap(b)+n)
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}
