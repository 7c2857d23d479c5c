package savetool

import (
	"errors"
	"io/fs"

	"github.com/arksave/arksave/autosave"
)

// Errors of the package's operations. Each is returned wrapped with what
// was found and what to do.
var (
	// ErrNoWorld is returned by Repair when no intact ECS world file is left
	// and RepairOptions.EmptyWorld is not set.
	ErrNoWorld = errors.New("savetool: no intact ECS world file")

	// ErrNoChunks is returned by Repair when no chunk store can be read and
	// RepairOptions.EmptyChunks is not set.
	ErrNoChunks = errors.New("savetool: no readable chunk store")

	// ErrUnknownConfig is returned by Repair when a chunk store must be
	// rebuilt without a header and nothing in the directory records the
	// game's constants, seed or generator version.
	ErrUnknownConfig = errors.New("savetool: the game's constants are unknown")

	// ErrDamaged is returned by operations that need an intact save
	// (Compact, Migrate) when it is damaged.
	ErrDamaged = errors.New("savetool: the save is damaged")

	// ErrInUse is returned by the operations that change a save directory
	// (Repair, Compact, Migrate, Restore, ImportInto) while another program, a game,
	// holds it; the error also matches autosave.ErrLocked and names the
	// holder. The operations that only read (Check, InspectDir, RenderDir,
	// ExportJSON) work meanwhile.
	ErrInUse = errors.New("savetool: the save directory is in use; close the game first")

	// ErrNotASave is matched by the error (a [*NotASaveError]) for a path
	// that is neither a save directory nor one of a save's files: a path
	// that does not exist, a directory that holds none of a save's files,
	// or a file that is not a world file (.pecs) or a chunk store (.pxsw).
	ErrNotASave = errors.New("savetool: not a save")

	// ErrNothingToRender is returned by RenderDir and RenderStore when no
	// region is given and nothing is stored.
	ErrNothingToRender = errors.New("savetool: the save stores no chunk; give a region to render")

	// ErrOtherGeneration is returned by ImportInto when the JSON is a save
	// directory's export of another generation than the one committed in
	// the directory (the game saved since, or it comes from another save)
	// and ImportOptions.AnyGeneration is not set.
	ErrOtherGeneration = errors.New("savetool: the JSON was exported from another generation")
)

// NotASaveError is the error for a path that is not a save: it names the
// path and says why. It matches [ErrNotASave], and autosave.ErrNoSave for a
// directory (or a missing path) that holds no save.
type NotASaveError struct {
	Path   string
	Reason string // "it does not exist", "the directory holds no manifest, ...", ...
	Err    error  // the file system's error behind it (fs.ErrNotExist), if any
	noSave bool   // a directory, or a missing path: also autosave.ErrNoSave
}

func (e *NotASaveError) Error() string { return e.Path + " is not a save: " + e.Reason }

// Unwrap returns the file system's error, if any.
func (e *NotASaveError) Unwrap() error { return e.Err }

// Is makes errors.Is match ErrNotASave, and autosave.ErrNoSave for a
// directory (or a missing path) that holds no save.
func (e *NotASaveError) Is(target error) bool {
	return target == ErrNotASave || e.noSave && target == autosave.ErrNoSave
}

// emptyDir is the error for a directory that holds none of a save's files.
func emptyDir(dir string) error {
	return &NotASaveError{Path: dir, Reason: "the directory holds no manifest, world file, chunk store or backup", noSave: true}
}

// pathError says why a path given as a save cannot be read: it does not
// exist (a NotASaveError), or the file system's own error.
func pathError(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return &NotASaveError{Path: path, Reason: "it does not exist", Err: err, noSave: true}
	}
	return err
}
