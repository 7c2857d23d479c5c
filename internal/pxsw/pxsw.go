// Package pxsw holds the descriptions of a chunk store's files (PXSW) that
// the module's own packages read and a game does not: a root's contents,
// the files of a generation and their sizes, a store's counts, and the mark
// a failed save takes a store back to. Package chunkstore makes them;
// package internal/storetool is how the save directory and the tools reach
// the operations that return them. Hook carries those operations from
// chunkstore, which imports this package, to storetool, which imports
// chunkstore.
package pxsw

import "time"

// Hook is set by package chunkstore when it loads: the value whose methods
// storetool.Tools lists.
var Hook any

// RootInfo is what a root (a store's header slot, which a save directory's
// manifest keeps) says of its generation.
type RootInfo struct {
	FormatVersion    uint16 // the format version of the store the root was written in
	Generation       uint64
	Chunks           uint32 // chunks stored at this generation (body blocks not counted)
	ChunkSize        uint16
	TileSize         uint16
	PixelSize        uint8
	Seed             uint64
	GeneratorVersion uint32
	Table            int64 // store offset (see storetool.Handle) of the generation's newest page-table record; 0 = empty
	Created          time.Time
	Modified         time.Time // when the generation was committed
}

// FileStats describes one file of a store at its committed generation:
// the store file itself (Number 0, which holds the header slots and, in a
// store of format 1, records) or a data file.
type FileStats struct {
	Number uint32
	Name   string // base name
	Size   int64  // bytes in the file; 0 when it cannot be read
	Live   int64  // its header and the records the generation uses
	Dead   int64  // Size - Live: what compacting the file reclaims
	Newest bool   // the data file the next commit appends to (not set when read-only)
	Err    error  // why the file cannot be read (missing, damaged header), or nil
}

// Stats describes a store at its committed generation.
type Stats struct {
	Generation      uint64
	Chunks          int   // stored chunks, all types
	Empty           int   // chunks stored as Empty
	Delta           int   // chunks stored as Delta
	Full            int   // chunks stored as Full
	Palette         int   // chunks stored as Palette
	BodyBlocks      int   // chunks with pixel bodies
	RecordBytes     int64 // live chunk and body records (shared records once)
	TableBytes      int64 // live page table: checkpoint and journal segments
	LiveBytes       int64 // file headers + RecordBytes + TableBytes
	DeadBytes       int64 // FileSize - LiveBytes: what compaction reclaims
	FileSize        int64 // the store file and its data files, added up
	DataFiles       int   // data files the generation uses
	JournalSegments int   // journal segments since the checkpoint
	JournalEntries  int   // entries in them
	IndexBytes      int64 // memory held by the runtime index
}

// SlotsSize is the size of a store file's two header slots.
const SlotsSize = 128

// DataHeaderSize is the size of a data file's header: a data file whose
// live bytes (FileStats.Live) are no more holds no record the generation
// uses.
const DataHeaderSize = 64

// A Mark is the state of a store's files between commits: the store file's
// size and header slots, where the next commit appends and the size of the
// data file it appends to. Reverting a store to it takes the files back.
type Mark struct {
	Size   int64           // of the store file
	Append int64           // store offset where the next commit appends
	Newest int64           // size of the data file Append is in; -1 when it did not exist
	Slots  [SlotsSize]byte // the header slots
}
