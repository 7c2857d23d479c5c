package vfs

import (
	"io"
	"io/fs"
	"syscall"
)

// ReadOnly returns a file system that reads through fsys and fails every
// call that would change it (creating, opening for writing, locking,
// writing, renaming, removing, making directories) with an *fs.PathError
// wrapping syscall.EROFS, as a read-only medium does. Syncing a directory
// succeeds: there is nothing to make durable.
func ReadOnly(fsys FS) FS { return readOnlyFS{fsys} }

type readOnlyFS struct{ fs FS }

func erofs(op, name string) error { return &fs.PathError{Op: op, Path: name, Err: syscall.EROFS} }

func (r readOnlyFS) Create(name string) (File, error)      { return nil, erofs("create", name) }
func (r readOnlyFS) OpenRW(name string) (File, error)      { return nil, erofs("open", name) }
func (r readOnlyFS) Lock(name string) (File, error)        { return nil, erofs("lock", name) }
func (r readOnlyFS) LockDir(dir string) (io.Closer, error) { return nil, erofs("lockdir", dir) }
func (r readOnlyFS) Rename(oldname, newname string) error  { return erofs("rename", oldname) }
func (r readOnlyFS) Remove(name string) error              { return erofs("remove", name) }
func (r readOnlyFS) RemoveAll(name string) error           { return erofs("removeall", name) }
func (r readOnlyFS) MkdirAll(dir string) error             { return erofs("mkdir", dir) }
func (r readOnlyFS) SyncDir(dir string) error              { _, err := r.fs.Stat(dir); return err }
func (r readOnlyFS) ReadDir(dir string) ([]string, error)  { return r.fs.ReadDir(dir) }
func (r readOnlyFS) Stat(name string) (fs.FileInfo, error) { return r.fs.Stat(name) }
func (r readOnlyFS) Lstat(name string) (fs.FileInfo, error) {
	return r.fs.Lstat(name)
}

func (r readOnlyFS) Open(name string) (File, error) {
	f, err := r.fs.Open(name)
	if err != nil {
		return nil, err
	}
	return readOnlyFile{f}, nil
}

// readOnlyFile refuses writes even when the underlying file would take them.
type readOnlyFile struct{ File }

func (f readOnlyFile) WriteAt(p []byte, off int64) (int, error) { return 0, erofs("write", f.Name()) }
func (f readOnlyFile) Truncate(size int64) error                { return erofs("truncate", f.Name()) }
func (f readOnlyFile) Stat() (fs.FileInfo, error)               { return statOpen(f.File) }
