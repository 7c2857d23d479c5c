package archetype

import (
	"fmt"

	"github.com/pierrec/lz4/v4"
)

// A column is the data of one component for all entities of a table, in row order: raw memory
// for plain-old-data types, one msgpack value per row for the others. In the file, each column
// is a blob: its stored bytes (LZ4-compressed when that is smaller and the header says LZ4)
// followed by the CRC32C of the stored bytes.

// blob is one column or resource on its way into the file.
type blob struct {
	raw    []byte // uncompressed bytes: the column's memory for raw types
	stored []byte // what the file holds: raw, or its LZ4 block when that is smaller
}

// compressor compresses blobs with one reusable scratch buffer.
type compressor struct {
	c       lz4.CompressorCCompat // the reference implementation's fast algorithm: faster than lz4.Compressor on columns
	scratch []byte
}

// compress sets b.stored: the LZ4 block of b.raw if it is smaller, else b.raw.
func (c *compressor) compress(b *blob) {
	b.stored = b.raw
	if len(b.raw) == 0 {
		return
	}
	c.scratch = growLen(c.scratch[:0], lz4.CompressBlockBound(len(b.raw)))
	n, err := c.c.CompressBlock(b.raw, c.scratch)
	if err == nil && n > 0 && n < len(b.raw) {
		b.stored = append([]byte(nil), c.scratch[:n]...)
	}
}

// write streams the blob and its CRC.
func (b *blob) write(w *streamWriter) {
	w.writeCRC(w.writeSum(b.stored))
}

// readBlob reads one blob of raw size raw and stored size stored and checks its CRC. When dst
// is given (len raw) the raw bytes land there, the way raw columns go straight into the world's
// memory; otherwise they land in one of the reader's buffers, valid until the next call.
func (f *fileReader) readBlob(section string, raw, stored uint64, dst []byte) ([]byte, error) {
	s := f.s
	start := s.off
	s.beginCRC()
	var err error
	if stored == raw && dst != nil {
		err = s.full(dst, section)
	} else {
		f.buf, err = s.next(f.buf, int64(stored), section)
	}
	if err != nil {
		return nil, err
	}
	if err := s.endCRC(section); err != nil {
		return nil, err
	}
	if stored == raw {
		if dst != nil {
			return dst, nil
		}
		return f.buf, nil
	}
	if dst == nil {
		f.zbuf = growLen(f.zbuf[:0], int(raw))
		dst = f.zbuf
	}
	n, err := lz4Uncompress(f.buf, dst)
	if err != nil || uint64(n) != raw {
		return nil, fmt.Errorf("%w: %s at offset %d: LZ4 block does not expand to %d bytes", ErrCorrupt, section, start, raw)
	}
	return dst, nil
}

// lz4Uncompress expands an LZ4 block into dst.
func lz4Uncompress(src, dst []byte) (int, error) { return lz4.UncompressBlock(src, dst) }
