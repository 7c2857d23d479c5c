package chunkstore

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"

	"github.com/arksave/arksave/vfs"
)

// Generator produces the procedural chunk for a position; deltas are stored
// against it. Implementations are pure, deterministic and safe for
// concurrent use.
type Generator interface {
	// Version identifies the generator's output. It is recorded in the
	// header (24 bits: at most 1<<24-1); deltas only mean something against
	// the same version.
	Version() uint32
	// Generate fills dst, ChunkSize*ChunkSize pixels, row-major, with the
	// chunk at (x, y) of the world with the given seed.
	Generate(x, y int32, seed uint64, dst []uint32)
}

// KeyGenerator is a Generator for a store whose chunk keys have 3 or 4
// axes ([Options.Axes]): such a store calls GenerateKey, never Generate,
// and refuses a Generator that is not a KeyGenerator.
type KeyGenerator interface {
	Generator
	// GenerateKey fills dst, ChunkSize*ChunkSize pixels, row-major, with
	// the chunk at k of the world with the given seed.
	GenerateKey(k Key, seed uint64, dst []uint32)
}

// Defaults: what a zero field of Options means.
const (
	DefaultDeltaThreshold      = 0.75
	DefaultCompactionThreshold = 0.25
	DefaultCheckpointRatio     = 0.5
	// DefaultBaseCache is how many generated chunks a store keeps
	// (Options.BaseCache): 16 MiB of 512x512 chunks.
	DefaultBaseCache = 16
	// DefaultDataFileSize is the size a data file grows to before the
	// next one starts (Options.DataFileSize).
	DefaultDataFileSize = 128 << 20
	// DefaultMaxOpenFiles is how many data files a store keeps open at
	// most (Options.MaxOpenFiles).
	DefaultMaxOpenFiles = 64
)

// Limits of a store.
const (
	// A store's chunks are keyed by 2, 3 or 4 int32 axes (x, y, then z,
	// then w), fixed when the store is created ([Options.Axes]) and kept in
	// its header slots.
	MinAxes = 2 // the fewest axes of a chunk key: (x, y)
	MaxAxes = 4 // the most axes of a chunk key: (x, y, z, w)
	// MaxDataFiles is the highest data file number: store offsets stay
	// below 1<<62.
	MaxDataFiles = 1<<22 - 1
	// MaxExtra is the most extra data a chunk can carry (16 MiB).
	MaxExtra = 16 << 20
)

// Options describe the game a store belongs to, how the store behaves, and
// which generation [Open] opens. The zero value of every field is its
// default; a nil *Options is the zero Options.
type Options struct {
	// ChunkSize, TileSize and PixelSize are the game's constants (for
	// example 512, 32 and 4). Create records them; Open refuses a file whose
	// values differ, naming the field and both values. On Open a zero value
	// adopts the file's. ChunkSize is at most 4096; PixelSize must be 4.
	ChunkSize uint16
	TileSize  uint16
	PixelSize uint8

	// Seed is the world seed. Create records it; Open adopts the file's when
	// Seed is zero and refuses a different non-zero seed (deltas are only
	// valid against the seed they were made with). Store.Options reports it.
	Seed uint64

	// Axes is the number of int32 axes of a chunk key: 2 (x, y; the
	// default), 3 (x, y, z) or 4 (x, y, z, w). Create records it in the
	// header; Open takes it from there and refuses a non-zero Axes that
	// differs (ErrConfigMismatch). A store of 2 axes is read and written
	// with [Pos] or 2-axis [Key]s, one of 3 or 4 with [Key]s of as many
	// axes (the methods ending in Key); any other key is refused with
	// ErrAxes.
	Axes int

	// Generator produces unstored chunks and is the base of Delta chunks.
	// Nil means no deltas: chunks are stored Full or Empty, and a chunk that
	// is not stored reads as zeros.
	Generator Generator

	// Layers are the game's pixel layers: which bits of a pixel each
	// occupies, whether the store keeps it, and the value it reads as
	// where a chunk's record does not hold it (see [Layer]). The store
	// keeps the persisted layers only; every chunk record it writes notes
	// which layers it holds, so that a layer the game registers later
	// reads as its default in chunks saved before. Nil means one layer of
	// all 32 bits, kept. Pixel bodies' pixels keep the persisted layers
	// too; the others read as zero there (body records do not note their
	// layers).
	Layers []Layer

	// DeltaThreshold: a chunk may be stored as a delta while fewer than
	// this fraction of its pixels differ from the generator's. Zero means
	// 0.75.
	DeltaThreshold float64

	// Encoding says how a chunk's pixels are stored. Zero is
	// EncodeSmallest.
	Encoding Encoding

	// CompactionThreshold: NeedsCompaction reports true when the dead
	// bytes of the data files exceed this fraction of their size (and 16
	// KiB). Zero means 0.25.
	CompactionThreshold float64

	// CheckpointRatio: a commit writes a full sorted checkpoint of the page
	// table, instead of a journal segment, once the journal since the last
	// checkpoint would hold more entries than this fraction of the table
	// (and at least 4096). Zero means 0.5.
	CheckpointRatio float64

	// Workers is how many goroutines compress in Commit. Zero means
	// runtime.GOMAXPROCS(0).
	Workers int

	// BaseCache is how many generated chunks the store keeps to encode and
	// read Delta chunks without running the Generator again (chunks saved
	// over and over are usually the same few). Zero means
	// DefaultBaseCache; negative turns the cache off. Each costs
	// ChunkSize*ChunkSize*4 bytes of memory.
	BaseCache int

	// DataFileSize is the size a data file grows to: a commit whose next
	// record would take the newest data file past it starts the next data
	// file (a record larger than that gets a data file of its own). Zero
	// means DefaultDataFileSize (128 MiB); at least 1 KiB, below 1 TiB.
	DataFileSize int64

	// MaxOpenFiles is how many data files the store keeps open at most:
	// past it, the least recently used one that no read or write is using
	// is closed, and opened again (its header checked again) when next
	// read. Zero means DefaultMaxOpenFiles (64); at least 2. (A data file
	// written since its last sync stays open until the sync.)
	MaxOpenFiles int

	// Key, when set (32 bytes), encrypts every chunk and body record a
	// commit writes with AES-256-GCM under it (record flag bit 4: see
	// docs/format.md), and opens such records when they are read. Reading
	// an encrypted record without a key fails with an error matching
	// archetype.ErrEncrypted, with another key archetype.ErrWrongKey;
	// its checksum is checked first, so damage is ErrCorrupt either way.
	// Compaction and copies move encrypted records as stored, without the
	// key. Encrypted records are never shared by the chunk dictionary
	// (their bytes differ by their random nonce). A key of another length
	// makes Create and Open fail with archetype.ErrWrongKey.
	Key []byte

	// Dictionary says which records the chunk dictionary shares (identical
	// payloads stored once). Zero is DictionaryAll.
	Dictionary Dictionary

	// ZstdArchive makes compaction (CompactNext, Compact, CompactTo)
	// store the records it moves with zstd, at ZstdLevel, where that is
	// smaller than what they are stored as: records that outlived the data
	// file they were written to are cold, and kept for as long as the
	// generations that use them. What a commit writes stays LZ4, which
	// compresses several times faster. A store with zstd records is read
	// by this version of the package on; see docs/format.md.
	ZstdArchive bool
	// ZstdLevel is the zstd level of ZstdArchive, as
	// github.com/klauspost/compress/zstd numbers them: 1 fastest, 2
	// default, 3 better, 4 best compression. Zero means 2.
	ZstdLevel int

	// FS is the file system; nil means vfs.OS.
	FS vfs.FS

	// AllowGeneratorChange opens a store written with another generator
	// version: its Delta chunks are dropped (Store.OpenReport lists them),
	// read back as generated, and the next commit records their removal and
	// the new version.
	AllowGeneratorChange bool

	// ReadOnly opens the file read-only; Commit and Compact then return
	// ErrReadOnly. Read-only without a Generator, a store opens for
	// inspection: the generator version is not checked (Check and reading raw records
	// work, Get of a Delta chunk does not).
	ReadOnly bool

	// Which generation Open opens; Create ignores these. Without any, Open
	// opens the newest valid generation.

	// Generation, when not zero, opens exactly that committed generation,
	// through the header slot that holds it, even when the other slot holds
	// a newer one (as a save directory's manifest of format 1 names it).
	// Data of the newer generation stays in the file, untouched, until a
	// commit from this store replaces that slot: the next commit appends
	// after the end of every generation still named by a slot, so the
	// generation stays loadable until the new commit has completed. Open
	// returns ErrGenerationNotFound when no valid slot holds it.
	Generation uint64

	// Root, when set, opens the generation it describes: the bytes
	// [Store.Root] returned while that generation was current (a save
	// directory's manifest keeps them). The file keeps every generation's
	// page table (it is only ever appended to), so roots stay valid until
	// the file is compacted in place with [Store.Compact]; compaction into
	// a new file leaves the old one and its roots intact. The store's next
	// commit becomes generation max(root's, every slot's)+1 and appends
	// after all data, so that the roots of the generations in between stay
	// valid too; Generation reports that maximum until then. A root whose
	// page table is damaged is an error wrapping ErrCorrupt (unless Repair
	// is set): a rebuild could not tell that generation's records from
	// later ones. Generation must be zero or the root's.
	Root []byte

	// Repair opens a possibly damaged store for inspection and repair:
	// read-only, the generator version not checked (Get of a Delta chunk
	// still needs a Generator), a damaged page table rebuilt by scanning
	// the records up to that generation's end, and, without a Root, when
	// neither header slot is valid, the index rebuilt from a forward scan
	// of the whole file with ChunkSize (required then), TileSize and Seed.
	// With a Root the file's header slots are not needed: the root carries
	// the game's constants, the seed and the generator version.
	// [Store.OpenReport] lists everything that was skipped; CompactTo writes
	// a clean copy. Repair cannot be combined with Generation.
	Repair bool

	// dataPaths, when set, reads data files from other paths than the
	// names next to the store file: a save directory verifies a
	// generation with the redundant copies of its data files this way
	// (internal/storetool's WithDataPaths). Only for read-only opens.
	dataPaths *dataPaths

	// pixelMigration, with ReadOnly, opens a store of another pixel size
	// than 4 (1, 2 or 8) to migrate it: CompactTo writes it with 4-byte
	// pixels (internal/storetool's ForPixelMigration). Only a migration
	// sets it.
	pixelMigration bool
}

// dataPaths maps data file numbers to the paths they are read from.
type dataPaths struct{ paths map[uint32]string }

// Encoding says how a store chooses a chunk's record.
type Encoding uint8

// Encodings.
const (
	// EncodeSmallest stores each chunk in the smallest record, after
	// compression and within 10%, of the encodings that apply: Delta
	// (under DeltaThreshold), Palette (at most 65,536 distinct pixels)
	// and Full. The sizes are estimated before compressing (a Delta's
	// from the pixels changed; the others' from the generated base's,
	// measured once per cached base), the likelier winner is compressed,
	// and a second record only when its estimate is close: a chunk a few
	// pixels off its base costs one compression, as a Delta.
	EncodeSmallest Encoding = iota
	// EncodeDeltaFull stores a Delta under DeltaThreshold and Full
	// otherwise, as stores of format 2 did: for comparison.
	EncodeDeltaFull
)

// Dictionary says which records the chunk dictionary shares: a record
// whose payload equals one the store holds is not written again, its entry
// points at the existing record.
type Dictionary uint8

// Dictionary modes.
const (
	// DictionaryAll shares every chunk and body record, of any size.
	DictionaryAll Dictionary = iota
	// DictionarySmallFull shares Full chunk records of at most 16 KiB
	// only, as stores of format 1 did: for comparison.
	DictionarySmallFull
	// DictionaryOff shares nothing.
	DictionaryOff
)

// smallFullRecord is the largest record DictionarySmallFull shares.
const smallFullRecord = 16 << 10

// withDefaults returns c with its zero fields filled in and checks it. For
// Create the size fields must be set.
func (c Options) withDefaults(creating bool) (Options, error) {
	// What chose the generation to open is not part of the store's options.
	c.Generation, c.Root, c.Repair = 0, nil, false
	if len(c.Layers) > 0 {
		if _, err := checkLayers(c.Layers); err != nil {
			return c, err
		}
		c.Layers = slices.Clone(c.Layers)
	}
	c.fillDefaults(creating)
	return c, c.check(creating)
}

// fillDefaults gives every zero field the default its documentation names.
func (c *Options) fillDefaults(creating bool) {
	if c.FS == nil {
		c.FS = vfs.OS
	}
	c.DeltaThreshold = cmp.Or(c.DeltaThreshold, DefaultDeltaThreshold)
	c.CompactionThreshold = cmp.Or(c.CompactionThreshold, DefaultCompactionThreshold)
	c.CheckpointRatio = cmp.Or(c.CheckpointRatio, DefaultCheckpointRatio)
	c.BaseCache = cmp.Or(c.BaseCache, DefaultBaseCache)
	c.DataFileSize = cmp.Or(c.DataFileSize, DefaultDataFileSize)
	c.MaxOpenFiles = cmp.Or(c.MaxOpenFiles, DefaultMaxOpenFiles)
	c.ZstdLevel = cmp.Or(c.ZstdLevel, zstdLevelDefault)
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if creating {
		c.Axes = cmp.Or(c.Axes, MinAxes)
		c.PixelSize = cmp.Or(c.PixelSize, pixelSize)
	}
}

// check refuses options no store can have, naming the field.
func (c *Options) check(creating bool) error {
	if err := c.checkSizes(creating); err != nil {
		return err
	}
	if err := c.checkTuning(); err != nil {
		return err
	}
	return c.checkKeys()
}

// checkSizes checks the game's constants and the data file size.
func (c *Options) checkSizes(creating bool) error {
	switch {
	case creating && c.ChunkSize == 0:
		return fmt.Errorf("%w: ChunkSize is zero", ErrInvalidConfig)
	case c.ChunkSize > maxChunkSize:
		return fmt.Errorf("%w: ChunkSize %d > %d (delta positions are 24 bits)", ErrInvalidConfig, c.ChunkSize, maxChunkSize)
	case c.PixelSize != 0 && c.PixelSize != pixelSize:
		return fmt.Errorf("%w: PixelSize %d, this package stores %d-byte pixels", ErrInvalidConfig, c.PixelSize, pixelSize)
	case c.DataFileSize < minDataFileSize || c.DataFileSize >= maxDataFileSize:
		return fmt.Errorf("%w: DataFileSize %d not in [%d, %d)", ErrInvalidConfig, c.DataFileSize, minDataFileSize, int64(maxDataFileSize))
	case c.MaxOpenFiles < 2:
		return fmt.Errorf("%w: MaxOpenFiles %d: at least 2 (the newest data file and one to read)", ErrInvalidConfig, c.MaxOpenFiles)
	}
	return nil
}

// checkTuning checks the thresholds and the encoding modes.
func (c *Options) checkTuning() error {
	switch {
	case !(c.DeltaThreshold > 0 && c.DeltaThreshold <= 1):
		return fmt.Errorf("%w: DeltaThreshold %v not in (0, 1]", ErrInvalidConfig, c.DeltaThreshold)
	case !(c.CompactionThreshold > 0 && c.CompactionThreshold < 1):
		return fmt.Errorf("%w: CompactionThreshold %v not in (0, 1)", ErrInvalidConfig, c.CompactionThreshold)
	case !(c.CheckpointRatio > 0):
		return fmt.Errorf("%w: CheckpointRatio %v not positive", ErrInvalidConfig, c.CheckpointRatio)
	case c.Encoding > EncodeDeltaFull:
		return fmt.Errorf("%w: Encoding %d", ErrInvalidConfig, c.Encoding)
	case c.Dictionary > DictionaryOff:
		return fmt.Errorf("%w: Dictionary %d", ErrInvalidConfig, c.Dictionary)
	case c.ZstdLevel < 1 || c.ZstdLevel > zstdLevelMax:
		return fmt.Errorf("%w: ZstdLevel %d not in [1, %d]", ErrInvalidConfig, c.ZstdLevel, zstdLevelMax)
	}
	return nil
}

// checkKeys checks the key axes against the generator.
func (c *Options) checkKeys() error {
	switch {
	case c.Axes != 0 && (c.Axes < MinAxes || c.Axes > MaxAxes):
		return fmt.Errorf("%w: Axes %d not in [%d, %d]", ErrInvalidConfig, c.Axes, MinAxes, MaxAxes)
	case c.Axes > 2 && c.Generator != nil && !isKeyGenerator(c.Generator):
		return fmt.Errorf("%w: a store of %d axes needs a KeyGenerator; %T is not one", ErrInvalidConfig, c.Axes, c.Generator)
	case c.Generator != nil && c.Generator.Version() > maxGeneratorVersion:
		return fmt.Errorf("%w: generator version %d does not fit in 24 bits", ErrInvalidConfig, c.Generator.Version())
	}
	return nil
}

// generatorVersion is the version recorded for a config: 0 without a
// generator.
func (c Options) generatorVersion() uint32 {
	if c.Generator == nil {
		return 0
	}
	return c.Generator.Version()
}

// checkAgainst compares the game's constants with a file's header and
// adopts the file's where the config leaves them zero.
func (c *Options) checkAgainst(h header) error {
	mismatch := func(field string, file, game any) error {
		return fmt.Errorf("%w: %s: the file has %v, the game %v", ErrConfigMismatch, field, file, game)
	}
	switch {
	case c.ChunkSize != 0 && c.ChunkSize != h.chunkSize:
		return mismatch("chunk size", h.chunkSize, c.ChunkSize)
	case c.TileSize != 0 && c.TileSize != h.tileSize:
		return mismatch("tile size", h.tileSize, c.TileSize)
	case h.pixelSize != pixelSize && !c.migratingPixels():
		return pixelSizeError(h.pixelSize)
	case c.Seed != 0 && c.Seed != h.seed:
		return mismatch("world seed", h.seed, c.Seed)
	case c.Axes != 0 && c.Axes != h.keyAxes():
		return mismatch("chunk key axes", h.keyAxes(), c.Axes)
	case h.keyAxes() > 2 && c.Generator != nil && !isKeyGenerator(c.Generator):
		return fmt.Errorf("%w: the store's chunk keys have %d axes, and %T is not a KeyGenerator", ErrInvalidConfig, h.keyAxes(), c.Generator)
	}
	c.ChunkSize, c.TileSize, c.PixelSize, c.Seed, c.Axes = h.chunkSize, h.tileSize, h.pixelSize, h.seed, h.keyAxes()
	return nil
}

func isKeyGenerator(g Generator) bool {
	_, ok := g.(KeyGenerator)
	return ok
}
