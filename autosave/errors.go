package autosave

import "errors"

// ErrNoSave is returned when a directory holds no committed save (no manifest).
var ErrNoSave = errors.New("autosave: no save in directory")

// ErrCorrupt is returned when the manifest or a file it names fails its
// checks (parse, size, checksum). The error names the file and what failed.
var ErrCorrupt = errors.New("autosave: corrupt save")

// ErrVersion is returned when the manifest was written by a newer, unknown
// format version.
var ErrVersion = errors.New("autosave: unsupported save format version")

// ErrBusy is returned when a save directory is already open for writing
// by this process.
var ErrBusy = errors.New("autosave: save directory in use")
