package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// lockDir locks dir through fsys when it can lock a directory (see [FS]),
// for the wrappers of this package.
func lockDir(fsys FS, dir string) (io.Closer, error) {
	if l, ok := fsys.(interface {
		LockDir(dir string) (io.Closer, error)
	}); ok {
		return l.LockDir(dir)
	}
	return nil, &fs.PathError{Op: "lockdir", Path: dir, Err: fmt.Errorf("%w: the file system cannot lock a directory", errors.ErrUnsupported)}
}

// statOpen describes an open file, through its own Stat (fstat on Unix).
func statOpen(f File) (fs.FileInfo, error) {
	s, ok := f.(interface{ Stat() (fs.FileInfo, error) })
	if !ok {
		return nil, &fs.PathError{Op: "stat", Path: f.Name(), Err: fmt.Errorf("%w: the open file cannot describe itself", errors.ErrUnsupported)}
	}
	return s.Stat()
}

// SameDir reports whether the directory lock l, returned by the LockDir
// method of fsys (see [FS]), is still on the directory that the path dir leads to, without
// following a symbolic link in dir: false when the directory was moved
// away, removed, or replaced (by another directory, a symbolic link) since
// it was locked. A holder checks it before it relies on the lock: a lock
// on a directory no longer at its path excludes nobody from the one there
// now, and what the holder writes by path goes there.
//
// On [OS] (Unix) it compares the locked descriptor's device and inode
// (fstat) with the path's (lstat). [Mem] cannot rename directories; it
// tells a locked directory removed since, even when one was made anew at
// its path. Where the lock cannot tell (a platform whose directory lock
// holds no descriptor, a lock from another file system) it returns an
// error matching [errors.ErrUnsupported].
func SameDir(fsys FS, l io.Closer, dir string) (bool, error) {
	if ml, ok := l.(*memDirLock); ok {
		return ml.same(), nil
	}
	s, ok := l.(interface{ Stat() (fs.FileInfo, error) })
	if !ok {
		return false, &fs.PathError{Op: "stat", Path: dir, Err: fmt.Errorf("%w: the directory's lock cannot describe the directory", errors.ErrUnsupported)}
	}
	locked, err := s.Stat()
	if err != nil {
		return false, err
	}
	cur, err := fsys.Lstat(dir)
	if cur == nil || err != nil {
		return false, ignoreGone(err)
	}
	return os.SameFile(locked, cur), nil
}

// ignoreGone is err but for a name that does not exist: that is no error
// to SameDir, only another directory (none).
func ignoreGone(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
