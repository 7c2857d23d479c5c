package chunkstore

import (
	"errors"

	"github.com/arksave/arksave/internal/errs"
)

// Errors returned by the store. Decode failures wrap [ErrCorrupt], or a more
// specific sentinel that matches it ([ErrChecksum]), and name the section
// and file offset:
//
//	chunkstore: checksum mismatch: full chunk at offset 4096: crc 1a2b3c4d != 00000000
var (
	// ErrCorrupt is returned (wrapped) when bytes read from the file fail a
	// check: a checksum, a length that does not fit, a value out of range.
	// It is also matched by the root package's arksave.ErrCorrupt.
	ErrCorrupt = errs.New("chunkstore: corrupt data", errs.Corrupt)

	// ErrBadMagic is returned when a header slot does not start with "PXSW".
	ErrBadMagic = errors.New("chunkstore: bad magic")

	// ErrVersion is returned when a header slot has a format version or flags
	// this package does not know.
	ErrVersion = errors.New("chunkstore: unsupported format version")

	// ErrChecksum is returned (wrapped) when a header slot, a record, a
	// page-table entry or a body header fails its checksum. It matches
	// ErrCorrupt too.
	ErrChecksum = errs.New("chunkstore: checksum mismatch", ErrCorrupt)

	// ErrNoValidHeader is returned by Open when neither header slot is
	// valid; the error also carries each slot's own error.
	ErrNoValidHeader = errors.New("chunkstore: no valid header slot")

	// ErrGenerationNotFound is returned by Open with Options.Generation when no valid header slot
	// holds the requested generation.
	ErrGenerationNotFound = errors.New("chunkstore: generation not found")

	// ErrConfigMismatch is returned when the file's chunk size, tile size,
	// pixel size or world seed differs from the game's; the message names
	// the field and both values.
	ErrConfigMismatch = errors.New("chunkstore: configuration mismatch")

	// ErrGeneratorVersion is returned when the file was written against
	// another generator version than Options.Generator's and
	// Options.AllowGeneratorChange is not set.
	ErrGeneratorVersion = errors.New("chunkstore: generator version mismatch")

	// ErrNoGenerator is returned when a delta chunk is read without a
	// Options.Generator to apply it to.
	ErrNoGenerator = errors.New("chunkstore: delta chunk needs a generator")

	// ErrInvalidConfig is returned when an Options cannot describe a store:
	// a zero or too large chunk size, a pixel size other than 4, a
	// threshold out of range.
	ErrInvalidConfig = errors.New("chunkstore: invalid config")

	// ErrInvalidBody is returned by Commit when a body's Pixels or Shape do
	// not hold Width*Height values.
	ErrInvalidBody = errors.New("chunkstore: invalid body")

	// ErrInvalidChunk is returned by Commit when a chunk's pixel slice does
	// not hold ChunkSize*ChunkSize values.
	ErrInvalidChunk = errors.New("chunkstore: invalid chunk")

	// ErrAxes is returned when a chunk key has another number of axes than
	// the store (Options.Axes, fixed when it was created): a [Pos] given to
	// a store of 3 or 4 axes, a 4-axis [Key] given to one of 3. Commit
	// returns it before writing anything.
	ErrAxes = errors.New("chunkstore: chunk key of the wrong number of axes")

	// ErrClosed is returned by every method of a closed Store.
	ErrClosed = errors.New("chunkstore: store is closed")

	// ErrReadOnly is returned by Commit and Compact on a store opened
	// read-only (Options.ReadOnly or Options.Repair).
	ErrReadOnly = errors.New("chunkstore: store is read-only")
)
