// Package fsx holds what the save directory and the tools need of a
// [vfs.FS] beyond what package vfs offers a game: a directory lock through
// the file systems that can take one, the check that a lock file is still
// the file its name leads to, and the test of an error for a medium that
// refuses changes.
package fsx

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/arksave/arksave/vfs"
)

// LockDir takes an exclusive lock on the directory dir through fsys when it
// can lock a directory itself (a LockDir method, as vfs.OS, vfs.Mem and the
// wrappers of package vfs have; see [vfs.FS]). On any other file system it
// returns an error matching [errors.ErrUnsupported]: its caller then goes on
// with what the file system can do ([vfs.FS.Lock] on a file).
func LockDir(fsys vfs.FS, dir string) (io.Closer, error) {
	if l, ok := fsys.(interface {
		LockDir(dir string) (io.Closer, error)
	}); ok {
		return l.LockDir(dir)
	}
	return nil, &fs.PathError{Op: "lockdir", Path: dir, Err: fmt.Errorf("%w: the file system cannot lock a directory", errors.ErrUnsupported)}
}

// SameFile reports whether the open file f is still the file that name
// leads to, without following a symbolic link in name: false when name was
// removed, or replaced by another file (a rename over it, a symbolic link)
// since f was opened. A holder of a lock file checks it before it relies on
// the lock: a lock on a file that no name leads to excludes nobody.
//
// Where the file system cannot tell (a file that cannot describe itself:
// neither vfs.OS nor vfs.Mem, nor a wrapper of theirs) it returns an error
// matching [errors.ErrUnsupported].
func SameFile(fsys vfs.FS, f vfs.File, name string) (bool, error) {
	s, ok := f.(interface{ Stat() (fs.FileInfo, error) })
	if !ok {
		return false, &fs.PathError{Op: "stat", Path: f.Name(), Err: fmt.Errorf("%w: the open file cannot describe itself", errors.ErrUnsupported)}
	}
	open, err := s.Stat()
	if err != nil {
		return false, err
	}
	cur, err := fsys.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil // no file at name: not the open one
	}
	if cur == nil || err != nil {
		return false, err
	}
	// The real file system's files are told apart by device and inode, an
	// in-memory one's by the node its descriptions carry (Sys).
	return os.SameFile(open, cur) || open.Sys() != nil && open.Sys() == cur.Sys(), nil
}

// IsReadOnly reports whether err says that a file or directory cannot be
// changed: a read-only file system (EROFS, as vfs.ReadOnly returns) or a
// refused permission (EACCES, EPERM).
func IsReadOnly(err error) bool {
	return errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission)
}
