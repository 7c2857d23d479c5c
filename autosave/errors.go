package autosave

import (
	"errors"
	"fmt"

	"github.com/arksave/arksave/internal/errs"
)

// ErrNoSave is returned when a directory holds no committed save (no
// manifest and none of a save's files), or does not exist.
var ErrNoSave = errors.New("autosave: no save in directory")

// ErrCorrupt is returned when the manifest or a file it names fails its
// checks (parse, size, checksum, a name of the wrong form, a symbolic
// link where a file belongs), and when the manifest of a directory that
// holds a save's files is lost. The error names the file and what failed.
//
// It is also matched by the root package's arksave.ErrCorrupt, as the
// codecs' ErrCorrupt are.
var ErrCorrupt = errs.New("autosave: corrupt save", errs.Corrupt)

// ErrManifestLost is returned when a directory has lost its manifest (the
// commit point) but holds files only a committed save leaves: backups, a
// world file, players index or chunk store of generation 2 or later. The
// error also matches ErrCorrupt, names what is there, and names arksave
// repair, which rebuilds the manifest from the newest intact files. Nothing
// in the directory is changed: no new world ever starts over the old one.
var ErrManifestLost = errors.New("autosave: the save's manifest is lost")

// ErrVersion is returned when the manifest was written by a newer, unknown
// format version.
var ErrVersion = errors.New("autosave: unsupported save format version")

// ErrPanic is matched by the error of a save during which code panicked: the
// game's own (a component's MarshalBinary, say) while the world was encoded on
// the game loop, or the writer's while it compressed or wrote. The panic does
// not take the game down: the save fails (the error is a [*PanicError] with
// the panic's value), the previous generation stays committed, and the next
// save retries.
var ErrPanic = errors.New("autosave: save panicked")

// PanicError is the error of a save that panicked: the value given to panic
// and the stack of the goroutine that panicked.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("%v: %v", ErrPanic, e.Value) }

// Unwrap returns ErrPanic and, when the panic's value is an error, that error.
func (e *PanicError) Unwrap() []error {
	if err, ok := e.Value.(error); ok {
		return []error{ErrPanic, err}
	}
	return []error{ErrPanic}
}

// ErrLocked is returned when another holder, in this process or another,
// has the save directory open for writing. The error is a *LockedError
// that names the holder.
var ErrLocked = errors.New("autosave: save directory is in use")

// ErrInvalidConfig is returned when a Config cannot be used: a negative
// duration in its Retention. The error names the field.
var ErrInvalidConfig = errors.New("autosave: invalid config")

// ErrClosed is returned by a writer, and by everything a game asks of its
// save, after it was closed: it holds the save directory no more.
var ErrClosed = errors.New("autosave: the save is closed")

// ErrNoGeneration is returned when a generation asked for (a backup to
// read or restore) is neither the committed one nor a backup of the save
// directory. The error lists the generations the directory holds.
var ErrNoGeneration = errors.New("autosave: no such generation")

// ErrExhausted is returned by a save into a directory whose committed
// generation is MaxGeneration: no later generation can be numbered, so
// nothing more can commit there. The error says so and names the way out:
// a Save As into a new directory, whose generations start again at 1.
var ErrExhausted = errors.New("autosave: the save directory's generation counter is exhausted")

// ErrReadOnly is returned by every change to a save directory opened
// read-only: with OpenDirReadOnly, or on a medium that cannot be written
// (then the error also wraps the file system's).
var ErrReadOnly = errors.New("autosave: save directory is read-only")

// ErrUnreadable is returned by a load ([Dir.VerifyGeneration],
// [Dir.LoadIntact]) when a file of the committed generation could not be
// read for a reason that is not damage: an I/O error, a permission, a store
// that is not available. The error names the file and also wraps the file
// system's error. Unlike [ErrCorrupt] it does not make a load fall back to
// a backup: nothing is changed, and the same load succeeds once the cause
// is fixed.
var ErrUnreadable = errors.New("autosave: save file could not be read")

// ErrNoPlayer is returned when a save holds no record of a player.
var ErrNoPlayer = errors.New("autosave: no such player in the save")
