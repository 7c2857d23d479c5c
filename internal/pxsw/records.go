package pxsw

import "fmt"

// The descriptions of records below are generic in the chunk store's own
// types, which this package cannot name (package chunkstore imports it): P
// is chunkstore.Pos, K chunkstore.Key and T chunkstore.StorageType.
// Package storetool names them with those types.

// DeltaPixel is one entry of a Delta chunk: a pixel index (row-major) and
// the pixel stored for it.
type DeltaPixel struct {
	Index uint32
	Pixel uint32
}

// RawChunk is a chunk as stored, without applying it to the generator:
// what export and inspection tools need.
type RawChunk[P, K, T any] struct {
	Pos    P // the first two axes of Key
	Key    K
	Type   T
	Handle Handle       // zero for Empty
	Delta  []DeltaPixel // Type == Delta: the pixels that differ from generation
	Pixels []uint32     // Type == Full or Palette: every pixel
	// Palette is the chunk's palette when Type == Palette: its distinct
	// pixels, Pixels holding them by value.
	Palette []uint32
	// Layers is the persisted-layer mask the record was written with; 0 for
	// records of format 1 and 2, which do not say.
	Layers uint32
	Extra  []byte // the game's extra data for the chunk, nil for none
}

// RecordInfo describes a record: kind, key, sizes.
type RecordInfo[P, K any] struct {
	Kind       RecordKind
	Pos        P      // chunk and body records: the first two axes of Key
	Key        K      // chunk and body records
	Generation uint64 // table records
	Stored     uint32 // payload bytes in the file
	Raw        uint32 // payload bytes decoded
	Compressed bool   // the payload is LZ4 or zstd
	Zstd       bool   // the payload is zstd (a record compaction archived)
	Encrypted  bool   // stored encrypted (chunkstore Options.Key); Layers and Extra need the key
	Layers     uint32 // chunk records of format 3: the persisted-layer mask they were written with
	Extra      int    // chunk records: bytes of the game's extra data
}

// ScanRecord is one record, or one damaged stretch of bytes, found by a
// forward scan.
type ScanRecord[P, K any] struct {
	Handle     Handle     // the record, or the damaged bytes
	Kind       RecordKind // zero when the damaged bytes have no readable header
	Pos        P          // chunk and body records: the first two axes of Key
	Key        K          // chunk and body records, with the axes their key bytes give
	Generation uint64     // journal segments and checkpoints: the generation that wrote them
	Stored     uint32     // payload bytes in the file
	Raw        uint32     // payload bytes decoded
	Compressed bool       // the payload is LZ4 or zstd
	Zstd       bool       // the payload is zstd (a record compaction archived)
	Err        error      // non-nil for damaged bytes; matches chunkstore.ErrCorrupt
}

// Filled is a chunk that a compaction filling from other stores took from
// one of them.
type Filled[P, K any] struct {
	Pos     P // the first two axes of Key
	Key     K
	From    int  // the index of the fill store it came from
	Damaged bool // the store held it, in a damaged record
}

// RecordKind says what a record holds.
type RecordKind uint8

// Record kinds. The chunk kinds equal their chunkstore.StorageType.
const (
	RecordDelta      RecordKind = 1 // a delta chunk
	RecordFull       RecordKind = 2 // a full chunk: ChunkSize*ChunkSize little-endian pixels
	RecordBodies     RecordKind = 3 // the body block of one chunk
	RecordJournal    RecordKind = 4 // a journal segment of the page table
	RecordCheckpoint RecordKind = 5 // a full sorted page table
	RecordPalette    RecordKind = 6 // a palette chunk (format 3)
	// RecordKindMax is the highest kind.
	RecordKindMax = RecordPalette
)

var recordKindNames = [...]string{"", "delta chunk", "full chunk", "body block", "journal segment", "checkpoint", "palette chunk"}

// String names the kind.
func (k RecordKind) String() string {
	if k >= 1 && k <= RecordKindMax {
		return recordKindNames[k]
	}
	return fmt.Sprintf("kind %d", uint8(k))
}

// IsTable reports whether records of kind hold page-table entries.
func (k RecordKind) IsTable() bool { return k == RecordJournal || k == RecordCheckpoint }

// IsChunk reports whether records of kind hold a chunk's pixels.
func (k RecordKind) IsChunk() bool { return k == RecordDelta || k == RecordFull || k == RecordPalette }

// OffsetShift splits a store offset: its high bits (>> OffsetShift) are
// the number of the file it is in (0 for the store file, 1 and up for data
// files), the low bits the offset within that file.
const OffsetShift = 40

// Handle addresses one record: its store offset and its length, header
// included. A store offset names the file and the place in it: the high
// bits (Offset >> 40) are the data file's number, 0 for the store file
// itself (where a format 1 store keeps its records), the low 40 bits the
// offset within that file.
type Handle struct {
	Offset int64
	Length uint32
}

// End returns the store offset just after the record.
func (h Handle) End() int64 { return h.Offset + int64(h.Length) }

// File returns the number of the data file that holds the record (0: the
// store file).
func (h Handle) File() uint32 { return uint32(h.Offset >> OffsetShift) }

// FileOffset returns the record's offset within its file.
func (h Handle) FileOffset() int64 { return h.Offset & (1<<OffsetShift - 1) }

// IsZero reports whether h addresses no record: an Empty chunk's.
func (h Handle) IsZero() bool { return h == Handle{} }

// Entry is one entry of a store's index, as tools see it: a stored chunk,
// or the body block of a chunk, and its record.
type Entry[P, K, T any] struct {
	Pos    P // the first two axes of Key
	Key    K
	Type   T
	Handle Handle // the record; zero for Empty chunks
}
