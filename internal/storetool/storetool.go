// Package storetool holds what the module's own packages (the save
// directory, the tools, the map server) need of a chunk store and a game
// does not: the names of data files, roots, the files and counts of a
// generation, the mark a failed save reverts a store to, a forward scan of
// damaged files, raw records, and the compaction a repair fills from
// backups. Package chunkstore implements them (they need a store's
// insides): call them as methods of [Tool].
package storetool

import (
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/pxsw"
	"github.com/arksave/arksave/vfs"
)

// The descriptions of a store's files and records, defined in package
// pxsw (where package chunkstore makes them).
type (
	RootInfo   = pxsw.RootInfo
	FileStats  = pxsw.FileStats
	Stats      = pxsw.Stats
	Mark       = pxsw.Mark
	DeltaPixel = pxsw.DeltaPixel
	RawChunk   = pxsw.RawChunk[chunkstore.Pos, chunkstore.Key, chunkstore.StorageType]
	RecordInfo = pxsw.RecordInfo[chunkstore.Pos, chunkstore.Key]
	ScanRecord = pxsw.ScanRecord[chunkstore.Pos, chunkstore.Key]
	Filled     = pxsw.Filled[chunkstore.Pos, chunkstore.Key]
	RecordKind = pxsw.RecordKind
	Handle     = pxsw.Handle
	Entry      = pxsw.Entry[chunkstore.Pos, chunkstore.Key, chunkstore.StorageType]
)

// DataHeaderSize is the size of a data file's header (see pxsw).
const DataHeaderSize = pxsw.DataHeaderSize

// Record kinds (see [RecordKind]).
const (
	RecordDelta      = pxsw.RecordDelta
	RecordFull       = pxsw.RecordFull
	RecordBodies     = pxsw.RecordBodies
	RecordJournal    = pxsw.RecordJournal
	RecordCheckpoint = pxsw.RecordCheckpoint
	RecordPalette    = pxsw.RecordPalette
)

// Tools lists the operations package chunkstore gives the module's own
// packages.
type Tools interface {
	// DataFileName returns the name of data file n of the store file named
	// store: "chunks.pxsw" keeps its records in "chunks-data-1.pxsd",
	// "chunks-data-2.pxsd" and so on, next to it. The name is a base name
	// when store is one, else a path in store's directory.
	DataFileName(store string, n uint32) string
	// ParseDataFileName splits the name of a data file into the name of
	// its store file and its number: "chunks-7-data-3.pxsd" is data file 3
	// of "chunks-7.pxsw". The number is plain decimal without a leading
	// zero, from 1 to chunkstore.MaxDataFiles; anything else is not a data
	// file's name.
	ParseDataFileName(name string) (store string, n uint32, ok bool)
	// StoreOffset returns the store offset (see Handle) of byte
	// offset of data file n, 0 being the store file itself.
	StoreOffset(n uint32, offset int64) int64

	// ParseRoot checks and decodes a root: a header slot of either parity
	// (magic, version, checksum, fields), as a save directory's manifest
	// keeps it ([chunkstore.Store.Root]). It does not look at any file.
	ParseRoot(root []byte) (RootInfo, error)
	// FindRoot returns the root of generation gen of the store at path,
	// for save directories whose manifests predate roots (save format 1)
	// and name a generation only by its number. When a valid header slot
	// holds gen, that slot is the root. Otherwise the root is
	// reconstructed from the file: the page table of gen is the newest
	// table record written by gen or, when gen changed nothing, by the
	// newest generation before it; the constants, seed and generator
	// version come from the newest valid header slot (generation gen is
	// assumed to share them), the chunk count from loading that table. The
	// root is verified by loading its page table; a damaged one returns an
	// error wrapping chunkstore.ErrCorrupt. It needs no Generator and opens
	// the file (through fsys, nil meaning vfs.OS) read-only.
	FindRoot(fsys vfs.FS, path string, gen uint64) ([]byte, error)
	// NewestGeneration reads only the header slots of the store file at
	// path (through fsys, nil meaning vfs.OS) and returns the newest
	// generation a valid one names, or 0 for a file with nothing after its
	// slots (created and never committed to). A file with records but no
	// valid slot returns an error wrapping chunkstore.ErrNoValidHeader.
	NewestGeneration(fsys vfs.FS, path string) (uint64, error)

	// Files describes the files of the committed generation of s, in
	// number order: the store file, then every data file that holds a
	// record the generation uses, and (unless the store is read-only) the
	// data file the next commit appends to.
	Files(s *chunkstore.Store) []FileStats
	// DataFileNames returns the base names of the data files the committed
	// generation of s uses (Files without the store file), for a save
	// directory's manifest to name.
	DataFileNames(s *chunkstore.Store) []string
	// Stats returns the counts and sizes of s.
	Stats(s *chunkstore.Store) Stats

	// Mark returns the state of the files of s now, for Revert: a save
	// that commits the store and then fails at a later step (its world
	// file, its manifest) takes the store back with it, so that failed
	// saves never make the files grow.
	Mark(s *chunkstore.Store) (Mark, error)
	// Revert takes the files of s back to m, undoing every commit since:
	// it writes back the header slots, syncs, truncates the data file
	// appended to back to its size then, removes the data files started
	// since and syncs again. Nothing a generation committed before m uses
	// is touched, and a crash part way leaves the store opening at m's
	// generations (the slots are restored before anything is cut). The
	// store is closed afterwards, its state being newer than its files':
	// reopen it at the generation needed.
	Revert(s *chunkstore.Store, m Mark) error

	// Scan walks the records of the store at path forward, without using
	// the header slots or the page table, and calls fn for each record and
	// each damaged stretch until fn returns false: the store file's
	// records (a store of format 1 keeps them there), then those of each
	// of its data files found next to it, in number order. Given a data
	// file's path, it walks that file only. Handles are store offsets (see
	// Handle). It is what a repair tool uses to see a store
	// whose page table is lost.
	//
	// No file is opened that is not a regular file: a data file that is a
	// symbolic link, a named pipe, a device or a directory is reported as
	// one damaged stretch of no length at its start (Kind zero, Err
	// wrapping chunkstore.ErrCorrupt and naming it) and the scan goes on
	// with the next one; such a store file is an error.
	Scan(fsys vfs.FS, path string, fn func(ScanRecord) bool) error
	// ScanRange walks the records of the data file at path (through fsys,
	// nil meaning vfs.OS) whose offsets within the file lie in [from, to),
	// as Scan does: from before the first record starts there, to past the
	// file's end stops at it; a record that starts before to but runs past
	// it is met as damaged. A save directory copies the committed records
	// of its data files to their redundant copies this way, checking each.
	ScanRange(fsys vfs.FS, path string, from, to int64, fn func(ScanRecord) bool) error
	// WithDataPaths returns o set to read data file n from paths[n] instead
	// of from its name next to the store file, for a read-only open (o's
	// ReadOnly or Repair set; otherwise the open fails): a save directory
	// verifies a generation with the redundant copies of its data files
	// this way. A compacted copy (CompactTo) writes data files of its own.
	WithDataPaths(o chunkstore.Options, paths map[uint32]string) chunkstore.Options
	// Verify checks what a load of s's generation trusts, decoding
	// nothing: the data files it uses (present, the store's, long enough),
	// its page table, and the header and CRC32-C of every live record, each
	// read once in file order. It finds what the disk did to any of them at
	// a fraction of s.Check's cost, which also decodes every live record
	// and reads the dead ones. A record that checks out but does not
	// decode is reported by the read that meets it.
	Verify(s *chunkstore.Store) chunkstore.Report
	// CheckFile checks the store file at path (through fsys, nil meaning
	// vfs.OS) on its own, without the game: it opens the newest generation
	// read-only for inspection and returns what opening skipped together
	// with what Check finds. When the file cannot be opened (no valid
	// header slot), the report holds that error and every damaged stretch
	// a forward scan of the file finds. key is the store's key
	// (chunkstore Options.Key), nil for none: encrypted records are then
	// checked as stored and counted (Report.Encrypted).
	CheckFile(fsys vfs.FS, path string, key []byte) chunkstore.Report
	// TypeCounts lists a report's Types as "2 delta, 1 palette, ..." in
	// storage type order, or "" when no entry was checked.
	TypeCounts(types map[chunkstore.StorageType]int) string

	// ReadRaw returns the stored form of the chunk of s at pos, and false
	// when it is not stored. It needs no Generator.
	ReadRaw(s *chunkstore.Store, pos chunkstore.Pos) (RawChunk, bool, error)
	// ReadRawKey is ReadRaw at a key of the store's axes; a key of other
	// axes returns chunkstore.ErrAxes.
	ReadRawKey(s *chunkstore.Store, k chunkstore.Key) (RawChunk, bool, error)
	// Entries calls fn for every entry of the index of s, each with its
	// record, in page-table order, until fn returns false: what
	// s.Entries lists, and where each record is.
	Entries(s *chunkstore.Store, fn func(Entry) bool)
	// RecordInfo reads and checks the record of s at h and describes it.
	RecordInfo(s *chunkstore.Store, h Handle) (RecordInfo, error)
	// Encrypted reads the header of the record of s at h (24 bytes, not
	// the record) and reports whether it is encrypted (Plugin.Key).
	Encrypted(s *chunkstore.Store, h Handle) (bool, error)

	// CompactFile moves the live records of file n of s (a data file, or
	// the store file of a store of format 1) into the newest data file and
	// commits: see chunkstore.Store.CompactNext, which picks the file.
	CompactFile(s *chunkstore.Store, n uint32) (chunkstore.CompactStats, error)
	// CompactToFilling is s.CompactTo(path) that also takes, record for
	// record, the chunks s lost from the first of fill that holds them
	// intact: every chunk whose record in s is damaged and every one s
	// does not hold for which missing (when not nil) returns true (after
	// a damaged page table was rebuilt by a scan, a chunk may be missing
	// because its records were lost; missing gets the chunk's key, of the
	// store's axes). A repair brings chunks back from a backup's store this
	// way. Body sets are never taken: bodies move between chunks, and an
	// older set could hold bodies that live in another chunk's now. A fill
	// store of another chunk size or other axes gives nothing; one of
	// another seed or generator version no Delta chunks: they mean
	// something only against their own generator.
	CompactToFilling(s *chunkstore.Store, path string, missing func(k chunkstore.Key) bool, fill ...*chunkstore.Store) (*chunkstore.Store, []Filled, error)

	// ForPixelMigration returns o set to open a store whose pixel size is
	// not the game's 4 bytes (1, 2 or 8: written by another build of a
	// game), read-only, to migrate it: CheckPixels checks its values and
	// CompactTo writes it with 4-byte pixels, every value widened or
	// narrowed (one that does not fit in 32 bits refuses the compaction,
	// with an error wrapping chunkstore.ErrConfigMismatch). Reads (Get,
	// Bodies, Check) of such a store are not supported. Without it such a
	// store is refused with chunkstore.ErrConfigMismatch naming arksave
	// migrate.
	ForPixelMigration(o chunkstore.Options) chunkstore.Options
	// CheckPixels reads every record the committed generation of s uses
	// and checks that each stored pixel value fits in 4 bytes, in
	// page-table order, writing nothing: the first value that does not fit
	// returns an error wrapping chunkstore.ErrConfigMismatch that names the
	// chunk (and body), the pixel and the value; a damaged record one
	// wrapping chunkstore.ErrCorrupt. A store of 4-byte pixels checks only
	// that its records read.
	CheckPixels(s *chunkstore.Store) error
	// PixelSize returns the bytes per pixel the store of s holds.
	PixelSize(s *chunkstore.Store) int
	// SetPixelWriter makes stores created from now on write pixel values
	// of size bytes (1, 2 or 8; 0 or 4 turns it off), each value v as
	// widen(v) (nil: v cut to size bytes), and returns what turns it back.
	// It is process-wide and only for tests and the generators of their
	// fixtures: the module writes 4-byte pixels.
	SetPixelWriter(size int, widen func(uint32) uint64) (restore func())
}

// Tool is package chunkstore's implementation of Tools.
var Tool = pxsw.Hook.(Tools)
