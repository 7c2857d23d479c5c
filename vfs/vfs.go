// Package vfs is the small file-system seam that arksave's storage code goes
// through, so that tests can inject errors into any call and simulate a crash
// that drops whatever was not yet synced.
//
// # Outline
//
//   - [FS] and [File]: the operations storage code needs, nothing more.
//   - [OS]: the real file system.
//   - [Mem]: an in-memory file system that tracks what is durable. A file's
//     writes become durable on [File.Sync]; creations, renames and removals
//     become durable on [FS.SyncDir] of their directory. [Mem.Crash] returns
//     the file system as a restarted machine would see it, keeping none,
//     some or all of what was not durable.
//   - [Faulty]: wraps an FS and asks an [Injector] before every call, so a
//     test can fail the Nth call with ENOSPC, EIO or a short write
//     ([Countdown]) or crash at the Nth mutating call ([Crasher]).
//   - [ReadOnly]: wraps an FS so that every call that would change it fails
//     with EROFS, as on a read-only medium.
//   - [ReadFile], [WriteFileAtomic]: helpers over any FS.
//
// # Locks
//
// [FS.Lock] takes an exclusive lock on a file, without waiting: the
// operating system's (flock on Unix) for [OS], a table of held names for
// [Mem]. A lock belongs to the open file it returns; closing that file, or
// the end of the process that holds it (a kill included), releases it.
// Within one process a second Lock of the same file fails too, so two
// owners in one program exclude each other as two programs do.
//
// # Symbolic links
//
// [OS] never follows a symbolic link in the last element of a name it
// creates, opens for writing or locks (O_NOFOLLOW); [FS.Lstat] describes a
// link itself, so that callers can refuse links in the directories they
// own. Reads follow links.
package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
)

// File is an open file.
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
	// Sync makes every write to the file durable.
	Sync() error
	// Truncate changes the size of the file.
	Truncate(size int64) error
	// Size returns the current size of the file.
	Size() (int64, error)
	// Name returns the name the file was opened with.
	Name() string
}

// FS is a file system. Names are slash- or OS-separated paths; errors for
// missing files match [fs.ErrNotExist] and for existing ones [fs.ErrExist].
//
// A file system that can lock a directory itself, as [OS] (flock on the
// directory on Unix) and [Mem] do, also has the method
//
//	LockDir(dir string) (io.Closer, error)
//
// which takes an exclusive lock on the directory dir without waiting. When
// another holder has it, in this process or another, it returns an error
// matching [ErrLocked]; where the directory cannot be locked (a network
// file system without flock on directories), an error matching
// [errors.ErrUnsupported]. Closing the returned value releases the lock.
// A lock on the directory outlives whatever happens to the files in it: a
// lock file that is removed or replaced while its holder runs no longer
// excludes anybody, the directory's lock still does. The wrappers of this
// package pass it on.
type FS interface {
	// Create creates or truncates the named file and opens it read-write.
	Create(name string) (File, error)
	// Open opens an existing file read-only.
	Open(name string) (File, error)
	// OpenRW opens an existing file read-write.
	OpenRW(name string) (File, error)
	// Rename renames oldname to newname, replacing newname if it exists.
	Rename(oldname, newname string) error
	// Remove removes a file or an empty directory.
	Remove(name string) error
	// RemoveAll removes name and everything under it; a missing name is not an error.
	RemoveAll(name string) error
	// MkdirAll creates a directory and any missing parents.
	MkdirAll(dir string) error
	// ReadDir returns the names of the entries of a directory, sorted.
	ReadDir(dir string) ([]string, error)
	// SyncDir makes the creations, renames and removals in dir durable.
	SyncDir(dir string) error
	// Stat describes the named file or directory, following symbolic links.
	Stat(name string) (fs.FileInfo, error)
	// Lstat describes the named file or directory; a symbolic link is
	// described itself, not followed.
	Lstat(name string) (fs.FileInfo, error)
	// Lock creates the named file if it does not exist, opens it read-write
	// and takes an exclusive lock on it without waiting. When another open
	// file holds the lock, in this process or another, it returns an error
	// matching [ErrLocked]. Closing the returned file releases the lock.
	Lock(name string) (File, error)
}

// Errors of the file systems of this package.
var (
	// ErrLocked is returned (wrapped in an *fs.PathError) by [FS.Lock]
	// when another holder has the lock.
	ErrLocked = errors.New("vfs: file is locked by another holder")
	// ErrTooLarge is returned by [ReadFileLimit] for a file above its
	// limit.
	ErrTooLarge = errors.New("vfs: file is larger than expected")
	// ErrUnknownScheme is returned by [OpenLocation] for a location whose
	// scheme no backend registered.
	ErrUnknownScheme = errors.New("vfs: no backend for the location's scheme")
	// ErrCrashed is returned by every call after a [Crasher] has crashed.
	ErrCrashed = errors.New("vfs: simulated crash")
)

// HeldError is what an [FS.Lock] may return instead of a bare [ErrLocked]
// (which it matches) to say, for messages, what a save on the file system
// is called and what to do while another holder has it: a world in NATS
// JetStream, say, whose lock is a lease that can be waited for or taken
// over. A lock on a directory of the real file system returns ErrLocked.
type HeldError struct {
	What   string // what is locked, e.g. "world w in NATS JetStream"
	Advice string // the ways to get it, e.g. wait for it or take it over
}

func (e *HeldError) Error() string { return "vfs: " + e.What + " is locked by another holder" }

// Is makes errors.Is(err, ErrLocked) true.
func (e *HeldError) Is(target error) bool { return target == ErrLocked }

// ReadFile reads the whole named file.
func ReadFile(fsys FS, name string) ([]byte, error) { return ReadFileLimit(fsys, name, -1) }

// ReadFileLimit reads the whole named file, unless it is larger than limit
// bytes (an error wrapping [ErrTooLarge]; a negative limit has none): a
// file whose format bounds its size is never read into memory whole when a
// hostile one is huge.
func ReadFileLimit(fsys FS, name string, limit int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	if limit >= 0 && size > limit {
		return nil, fmt.Errorf("%w: %s: %d bytes, at most %d expected", ErrTooLarge, name, size, limit)
	}
	buf := make([]byte, size)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !(errors.Is(err, io.EOF) && int64(n) == size) {
		return nil, fmt.Errorf("vfs: read %s: %w", name, err)
	}
	return buf, nil
}

// WriteFileAtomic replaces the named file with data so that a crash leaves
// either the old or the new content: it writes name+".tmp", syncs it,
// renames it over name and syncs the directory.
func WriteFileAtomic(fsys FS, name string, data []byte) error {
	tmp := name + ".tmp"
	f, err := fsys.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := fsys.Rename(tmp, name); err != nil {
		return err
	}
	return fsys.SyncDir(filepath.Dir(name))
}
