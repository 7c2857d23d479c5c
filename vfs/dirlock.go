package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// DirLocker is implemented by a file system that can lock a directory
// itself, as [OS] (flock on the directory on Unix) and [Mem] do. A lock on
// the directory outlives whatever happens to the files in it: a lock file
// that is removed or replaced while its holder runs no longer excludes
// anybody, the directory's lock still does.
type DirLocker interface {
	// LockDir takes an exclusive lock on the directory dir, without
	// waiting. When another holder has it, in this process or another, it
	// returns an error matching [ErrLocked]; where the directory cannot be
	// locked (a network file system without flock on directories), an
	// error matching [errors.ErrUnsupported]. Closing the returned value
	// releases the lock.
	LockDir(dir string) (io.Closer, error)
}

// LockDir takes an exclusive lock on the directory dir through fsys when
// it is a [DirLocker]. On any other file system it returns an error
// matching [errors.ErrUnsupported]: its caller then goes on with what the
// file system can do ([FS.Lock] on a file).
func LockDir(fsys FS, dir string) (io.Closer, error) {
	if l, ok := fsys.(DirLocker); ok {
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
// neither [OS] nor [Mem], nor a wrapper of theirs) it returns an error
// matching [errors.ErrUnsupported].
func SameFile(fsys FS, f File, name string) (bool, error) {
	open, err := statOpen(f)
	if err != nil {
		return false, err
	}
	cur, err := fsys.Lstat(name)
	if cur == nil || err != nil {
		return false, ignoreGone(err)
	}
	if mo, ok := open.(memInfo); ok {
		mc, ok := cur.(memInfo)
		return ok && mo.node != nil && mo.node == mc.node, nil
	}
	return os.SameFile(open, cur), nil
}

// statOpen describes an open file, through its own Stat (fstat on Unix).
func statOpen(f File) (fs.FileInfo, error) {
	s, ok := f.(interface{ Stat() (fs.FileInfo, error) })
	if !ok {
		return nil, &fs.PathError{Op: "stat", Path: f.Name(), Err: fmt.Errorf("%w: the open file cannot describe itself", errors.ErrUnsupported)}
	}
	return s.Stat()
}

// SameDir reports whether the directory lock l, returned by [LockDir] on
// fsys, is still on the directory that the path dir leads to, without
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
// to SameFile and SameDir, only another file (none).
func ignoreGone(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
