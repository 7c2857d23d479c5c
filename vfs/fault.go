package vfs

import (
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"sync"
)

// Op names a file-system call, for an [Injector].
type Op uint8

// File-system calls.
const (
	OpCreate Op = iota
	OpOpen
	OpOpenRW
	OpRead
	OpWrite
	OpSync
	OpTruncate
	OpSize
	OpClose
	OpRename
	OpRemove
	OpRemoveAll
	OpMkdirAll
	OpReadDir
	OpSyncDir
	OpStat
	OpLstat
	OpLock
	OpLockDir
)

var opNames = [...]string{"create", "open", "open-rw", "read", "write", "sync", "truncate",
	"size", "close", "rename", "remove", "remove-all", "mkdir-all", "read-dir", "sync-dir", "stat", "lstat", "lock", "lock-dir"}

// String returns the call's name.
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "unknown"
}

// Mutating reports whether the call can change what is on disk.
func (o Op) Mutating() bool {
	switch o {
	case OpCreate, OpWrite, OpSync, OpTruncate, OpRename, OpRemove, OpRemoveAll, OpMkdirAll, OpSyncDir, OpLock:
		return true
	}
	return false
}

// Injector decides, before each call through a [Faulty] file system, whether
// the call fails. A non-nil error is returned in place of the call's result.
// For OpWrite, an error that matches [io.ErrShortWrite] writes the first half
// of the buffer before failing.
type Injector interface {
	Inject(op Op, name string) error
}

// InjectorFunc adapts a function to [Injector].
type InjectorFunc func(op Op, name string) error

// Inject implements [Injector].
func (f InjectorFunc) Inject(op Op, name string) error { return f(op, name) }

// Faulty returns an [FS] that asks inj before every call on fsys and on the
// files it opens (a nil inj never fails). It locks a directory when fsys
// can (OpLockDir is asked first).
func Faulty(fsys FS, inj Injector) FS { return &faultyFS{FS: fsys, Injector: inj} }

// faultyFS is the file system Faulty returns.
type faultyFS struct {
	FS       FS
	Injector Injector
}

func (f *faultyFS) inject(op Op, name string) error {
	if f.Injector == nil {
		return nil
	}
	return f.Injector.Inject(op, name)
}

func (f *faultyFS) wrap(file File, err error) (File, error) {
	if err != nil {
		return nil, err
	}
	return &faultyFile{f: f, File: file}, nil
}

// Create implements [FS].
func (f *faultyFS) Create(name string) (File, error) {
	if err := f.inject(OpCreate, name); err != nil {
		return nil, err
	}
	return f.wrap(f.FS.Create(name))
}

// Open implements [FS].
func (f *faultyFS) Open(name string) (File, error) {
	if err := f.inject(OpOpen, name); err != nil {
		return nil, err
	}
	return f.wrap(f.FS.Open(name))
}

// OpenRW implements [FS].
func (f *faultyFS) OpenRW(name string) (File, error) {
	if err := f.inject(OpOpenRW, name); err != nil {
		return nil, err
	}
	return f.wrap(f.FS.OpenRW(name))
}

// Rename implements [FS].
func (f *faultyFS) Rename(oldname, newname string) error {
	if err := f.inject(OpRename, oldname); err != nil {
		return err
	}
	return f.FS.Rename(oldname, newname)
}

// Remove implements [FS].
func (f *faultyFS) Remove(name string) error {
	if err := f.inject(OpRemove, name); err != nil {
		return err
	}
	return f.FS.Remove(name)
}

// RemoveAll implements [FS].
func (f *faultyFS) RemoveAll(name string) error {
	if err := f.inject(OpRemoveAll, name); err != nil {
		return err
	}
	return f.FS.RemoveAll(name)
}

// MkdirAll implements [FS].
func (f *faultyFS) MkdirAll(dir string) error {
	if err := f.inject(OpMkdirAll, dir); err != nil {
		return err
	}
	return f.FS.MkdirAll(dir)
}

// ReadDir implements [FS].
func (f *faultyFS) ReadDir(dir string) ([]string, error) {
	if err := f.inject(OpReadDir, dir); err != nil {
		return nil, err
	}
	return f.FS.ReadDir(dir)
}

// SyncDir implements [FS].
func (f *faultyFS) SyncDir(dir string) error {
	if err := f.inject(OpSyncDir, dir); err != nil {
		return err
	}
	return f.FS.SyncDir(dir)
}

// Stat implements [FS].
func (f *faultyFS) Stat(name string) (fs.FileInfo, error) {
	if err := f.inject(OpStat, name); err != nil {
		return nil, err
	}
	return f.FS.Stat(name)
}

// Lstat implements [FS].
func (f *faultyFS) Lstat(name string) (fs.FileInfo, error) {
	if err := f.inject(OpLstat, name); err != nil {
		return nil, err
	}
	return f.FS.Lstat(name)
}

// Lock implements [FS].
func (f *faultyFS) Lock(name string) (File, error) {
	if err := f.inject(OpLock, name); err != nil {
		return nil, err
	}
	return f.wrap(f.FS.Lock(name))
}

// LockDir locks dir when FS can (see [FS]). Locking a directory changes
// nothing on disk: OpLockDir is not a mutating call.
func (f *faultyFS) LockDir(dir string) (io.Closer, error) {
	if err := f.inject(OpLockDir, dir); err != nil {
		return nil, err
	}
	return lockDir(f.FS, dir)
}

type faultyFile struct {
	f *faultyFS
	File
}

func (ff *faultyFile) ReadAt(p []byte, off int64) (int, error) {
	if err := ff.f.inject(OpRead, ff.Name()); err != nil {
		return 0, err
	}
	return ff.File.ReadAt(p, off)
}

func (ff *faultyFile) WriteAt(p []byte, off int64) (int, error) {
	if err := ff.f.inject(OpWrite, ff.Name()); err != nil {
		if errors.Is(err, io.ErrShortWrite) && len(p) > 1 {
			n, werr := ff.File.WriteAt(p[:len(p)/2], off)
			if werr != nil {
				return n, werr
			}
			return n, err
		}
		return 0, err
	}
	return ff.File.WriteAt(p, off)
}

func (ff *faultyFile) Sync() error {
	if err := ff.f.inject(OpSync, ff.Name()); err != nil {
		return err
	}
	return ff.File.Sync()
}

func (ff *faultyFile) Truncate(size int64) error {
	if err := ff.f.inject(OpTruncate, ff.Name()); err != nil {
		return err
	}
	return ff.File.Truncate(size)
}

func (ff *faultyFile) Size() (int64, error) {
	if err := ff.f.inject(OpSize, ff.Name()); err != nil {
		return 0, err
	}
	return ff.File.Size()
}

// Stat describes the open file (OpStat), when the wrapped one can.
func (ff *faultyFile) Stat() (fs.FileInfo, error) {
	if err := ff.f.inject(OpStat, ff.Name()); err != nil {
		return nil, err
	}
	return statOpen(ff.File)
}

func (ff *faultyFile) Close() error {
	if err := ff.f.inject(OpClose, ff.Name()); err != nil {
		ff.File.Close() // the handle is gone either way
		return err
	}
	return ff.File.Close()
}

// Countdown is an [Injector] that fails one call: the one with index N
// (counting from 0) among the calls it counts, which are the mutating calls
// unless Ops names others. With Sticky it keeps failing every counted call
// after that one, as a full disk does. A test runs an operation with N = 0,
// 1, 2, ... until the operation no longer reaches the Nth call (see
// [Countdown.Fired]).
type Countdown struct {
	N      int
	Err    error // the error to return; for example syscall.ENOSPC or syscall.EIO
	Ops    []Op  // the calls to count; nil counts the mutating ones
	Sticky bool

	mu    sync.Mutex
	calls int
	fired bool
}

// Inject implements [Injector].
func (c *Countdown) Inject(op Op, name string) error {
	if !c.counts(op) {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	i := c.calls
	c.calls++
	if i == c.N || (c.Sticky && i > c.N) {
		c.fired = true
		return &fs.PathError{Op: op.String(), Path: name, Err: c.Err}
	}
	return nil
}

func (c *Countdown) counts(op Op) bool {
	if c.Ops == nil {
		return op.Mutating()
	}
	for _, o := range c.Ops {
		if o == op {
			return true
		}
	}
	return false
}

// Fired reports whether the injected failure happened.
func (c *Countdown) Fired() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fired
}

// Calls returns how many counted calls were seen.
func (c *Countdown) Calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

// Crasher is an [Injector] over a [Mem] that simulates a crash just before
// the mutating call with index N (counting from 0): it records what the disk
// would hold ([Mem.Crash] with Keep and Rand) and fails that call and every
// later one with [ErrCrashed], as if the process had died.
type Crasher struct {
	Mem  *Mem
	N    int
	Keep float64    // see [Mem.Crash]
	Rand *rand.Rand // needed when 0 < Keep < 1

	mu      sync.Mutex
	calls   int
	crashed *Mem
}

// Inject implements [Injector].
func (c *Crasher) Inject(op Op, name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.crashed != nil {
		return ErrCrashed
	}
	if !op.Mutating() {
		return nil
	}
	i := c.calls
	c.calls++
	if i == c.N {
		c.crashed = c.Mem.Crash(c.Keep, c.Rand)
		return ErrCrashed
	}
	return nil
}

// Crashed returns the file system after the crash, or nil if the crash point
// was never reached.
func (c *Crasher) Crashed() *Mem {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.crashed
}

// NewCrashFS returns a file system over mem that crashes just before its Nth
// mutating call, and the Crasher that reports the result.
func NewCrashFS(mem *Mem, n int, keep float64, rng *rand.Rand) (FS, *Crasher) {
	c := &Crasher{Mem: mem, N: n, Keep: keep, Rand: rng}
	return Faulty(mem, c), c
}
