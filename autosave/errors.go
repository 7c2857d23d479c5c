package autosave

import "errors"

// ErrNoSave is returned when a directory holds no committed save (no
// manifest and none of a save's files), or does not exist.
var ErrNoSave = errors.New("autosave: no save in directory")

// ErrCorrupt is returned when the manifest or a file it names fails its
// checks (parse, size, checksum, a name of the wrong form, a symbolic
// link where a file belongs), and when the manifest of a directory that
// holds a save's files is lost. The error names the file and what failed.
var ErrCorrupt = errors.New("autosave: corrupt save")

// ErrVersion is returned when the manifest was written by a newer, unknown
// format version.
var ErrVersion = errors.New("autosave: unsupported save format version")

// ErrLocked is returned when another holder, in this process or another,
// has the save directory open for writing. The error is a *LockedError
// that names the holder.
var ErrLocked = errors.New("autosave: save directory is in use")

// ErrReadOnly is returned by every change to a save directory opened
// read-only: with OpenDirReadOnly, or on a medium that cannot be written
// (then the error also wraps the file system's).
var ErrReadOnly = errors.New("autosave: save directory is read-only")
