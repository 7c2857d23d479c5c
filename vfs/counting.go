package vfs

import (
	"io"
	"io/fs"
)

// Counting returns fsys as a file system that reports the bytes read from
// and written to the files opened through it: a progress bar's source.
// count is called after every ReadAt and WriteAt of such a file with the
// bytes it moved (0 is not reported; write is false for a read), possibly
// from several goroutines at once.
func Counting(fsys FS, count func(n int64, write bool)) FS {
	return &countingFS{FS: fsys, count: count}
}

// countingFS is the file system Counting returns.
type countingFS struct {
	FS
	count func(n int64, write bool)
}

func (c *countingFS) wrap(f File, err error) (File, error) {
	if err != nil {
		return nil, err
	}
	return &countingFile{File: f, count: c.count}, nil
}

// Create creates name through the wrapped file system; its file counts.
func (c *countingFS) Create(name string) (File, error) { return c.wrap(c.FS.Create(name)) }

// Open opens name through the wrapped file system; its file counts.
func (c *countingFS) Open(name string) (File, error) { return c.wrap(c.FS.Open(name)) }

// OpenRW opens name through the wrapped file system; its file counts.
func (c *countingFS) OpenRW(name string) (File, error) { return c.wrap(c.FS.OpenRW(name)) }

// LockDir locks dir through the wrapped file system when it can (see [FS]).
func (c *countingFS) LockDir(dir string) (io.Closer, error) { return lockDir(c.FS, dir) }

type countingFile struct {
	File
	count func(n int64, write bool)
}

func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	if n > 0 {
		f.count(int64(n), false)
	}
	return n, err
}

func (f *countingFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	if n > 0 {
		f.count(int64(n), true)
	}
	return n, err
}

// Stat describes the open file, when the wrapped one can.
func (f *countingFile) Stat() (fs.FileInfo, error) { return statOpen(f.File) }
