// Package fsguard holds the one check that every opener of a save's files
// makes before it opens one: the name must be a regular file, or nothing.
// A symbolic link is never followed (it may lead outside the save
// directory), and a named pipe, a device, a socket or a directory is never
// opened (opening a pipe blocks until a writer comes; a device reads
// forever). the save directory's names and chunkstore's data files both go through
// it, so that every command refuses the same files in the same words.
package fsguard

import (
	"fmt"
	"io/fs"

	"github.com/arksave/arksave/vfs"
)

// Describe names the kind of file a mode is, for a message: "a symbolic
// link", "a directory", "a named pipe (FIFO)", "a device", "a socket", "a
// regular file" or "a special file".
func Describe(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsRegular():
		return "a regular file"
	}
	return "a special file"
}

// Regular returns nil when the file at p is a regular file or does not
// exist (a missing file is for the caller to find), described without
// following a symbolic link; else an error wrapping corrupt that names the
// file as name and says what it is: "<name> is a symbolic link, not a
// regular file: not followed", "<name> is a named pipe (FIFO), not a
// regular file: not opened".
func Regular(fsys vfs.FS, p, name string, corrupt error) error {
	fi, err := fsys.Lstat(p)
	if err != nil || fi.Mode().IsRegular() {
		return nil
	}
	refused := "not opened"
	if fi.Mode()&fs.ModeSymlink != 0 {
		refused = "not followed"
	}
	return fmt.Errorf("%w: %s is %s, not a regular file: %s", corrupt, name, Describe(fi.Mode()), refused)
}
