package chunkstore

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Archival compression. Records that compaction moves (they outlived the
// data file they were written to) can be stored as one zstd frame
// (codecZstd) when Options.ZstdArchive is set: smaller than LZ4, slower to
// write, still fast to read. What a save writes stays LZ4.
//
// The coder is created on first use, once per process: a store that holds
// no zstd record and does not archive never pays for it.
const (
	// zstdMaxRatio bounds what a zstd payload can decode to: a block of
	// 128 KiB repeating one byte is stored in 4 bytes (a 3-byte block
	// header and the byte), so no frame decodes to more than this many
	// bytes per stored byte, plus one such block. It keeps a damaged raw
	// size from making a reader allocate much more than the record holds.
	zstdMaxRatio = 128 << 10 / 4
	zstdSlack    = 128 << 10
	// Options.ZstdLevel: 1 fastest, 2 default, 3 better, 4 best, as
	// klauspost/compress/zstd numbers its EncoderLevel.
	zstdLevelDefault = int(zstd.SpeedDefault)
	zstdLevelMax     = int(zstd.SpeedBestCompression)
)

var (
	zstdDecOnce sync.Once
	zstdDec     *zstd.Decoder
	zstdDecErr  error
	zstdEncOnce [zstdLevelMax + 1]sync.Once
	zstdEnc     [zstdLevelMax + 1]*zstd.Encoder
)

// zstdDecoder returns the process's zstd decoder. DecodeAll runs on as
// many goroutines as GOMAXPROCS at once (chunks load in parallel), each
// limited to the capacity of the buffer it is given.
func zstdDecoder() (*zstd.Decoder, error) {
	zstdDecOnce.Do(func() {
		zstdDec, zstdDecErr = zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
			zstd.WithDecoderMaxMemory(maxRecordPayload),
			zstd.WithDecodeAllCapLimit(true))
	})
	return zstdDec, zstdDecErr
}

// zstdEncoder returns the process's zstd encoder of level (1 to
// zstdLevelMax). Records carry their own CRC32-C: the frame has no
// checksum of its own.
func zstdEncoder(level int) *zstd.Encoder {
	zstdEncOnce[level].Do(func() {
		e, err := zstd.NewWriter(nil,
			zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderLevel(zstd.EncoderLevel(level)),
			zstd.WithEncoderCRC(false))
		if err != nil {
			panic(fmt.Sprintf("chunkstore: zstd encoder of level %d: %v", level, err)) // only on a level the options check refused
		}
		zstdEnc[level] = e
	})
	return zstdEnc[level]
}

// zstdBound reports whether size stored bytes of zstd can hold raw bytes.
func zstdBound(size, raw uint32) bool {
	return size > 0 && raw > 0 && uint64(raw) <= uint64(size)*zstdMaxRatio+zstdSlack && raw <= maxRecordPayload
}

// unzstd decodes the zstd payload src, at offset at of the record read at
// off, into dst, which has exactly the raw size the record's header gives:
// a frame that declares or decodes to another size is corrupt.
func unzstd(h recordHeader, src, dst []byte, off int64, at int) error {
	var fh zstd.Header
	if err := fh.Decode(src); err != nil {
		return fmt.Errorf("%w: %s at %v: zstd frame at offset %d: %w", ErrCorrupt, h.kind, loc(off), at, err)
	}
	if fh.HasFCS && fh.FrameContentSize != uint64(len(dst)) {
		return fmt.Errorf("%w: %s at %v: zstd frame at offset %d holds %d bytes, the record's header says %d", ErrCorrupt, h.kind, loc(off), at, fh.FrameContentSize, len(dst))
	}
	d, err := zstdDecoder()
	if err != nil {
		return fmt.Errorf("chunkstore: zstd decoder: %w", err)
	}
	out, err := d.DecodeAll(src, dst[:0])
	if err != nil || len(out) != len(dst) || len(dst) > 0 && &out[0] != &dst[0] {
		return fmt.Errorf("%w: %s at %v: zstd frame at offset %d decodes to %d of %d bytes: %v", ErrCorrupt, h.kind, loc(off), at, len(out), len(dst), err)
	}
	return nil
}

// rezstd re-encodes the checked chunk or body record rec, read at off, as
// zstd of level when that makes it smaller, and returns the new record,
// appended to dst[:0] (scratch is reused for the decoded payload); else it
// returns rec itself. A record whose payload does not decode is returned
// as it is, for the caller's checks to find; so is an encrypted one.
func rezstd(h recordHeader, rec []byte, off int64, level int, dst, scratch []byte) (out, raw []byte) {
	if h.kind.IsTable() || h.codec == codecZstd || h.flags&flagEncrypted != 0 {
		// An encrypted record is moved as stored: its payload is
		// ciphertext, which compresses no further, and opening it would
		// need the key.
		return rec, scratch
	}
	raw, x, err := payloadExt(h, rec, off, maxRecordPayload, scratch)
	if err != nil || len(raw) == 0 {
		return rec, scratch
	}
	if h.codec != codecNone {
		scratch = raw
	}
	pre := recordHeaderSize + x.size
	dst = append(dst[:0], rec[:pre]...)
	dst = zstdEncoder(level).EncodeAll(raw, dst)
	stored := len(dst) - recordHeaderSize
	if stored >= int(h.size) {
		return rec, scratch
	}
	dst = append(dst, rec[recordHeaderSize+h.size:]...) // the key bytes
	sealExt(dst, h.kind, codecZstd, h.flags, h.key, h.raw, int(h.ext))
	return dst, scratch
}
