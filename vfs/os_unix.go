//go:build unix

package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// oNoFollow makes an open fail on a symbolic link in the last element.
const oNoFollow = syscall.O_NOFOLLOW

// Lock takes an flock(2) lock: per open file, released by the kernel when
// the file is closed or its process ends however it ends.
func (osFS) Lock(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|oNoFollow, 0o644)
	if err != nil {
		return nil, err
	}
	if err := flock(f, "lock", name); err != nil {
		f.Close()
		return nil, err
	}
	return osFile{f}, nil
}

// LockDir takes an flock(2) lock on the directory itself, opened read-only:
// like Lock's, it dies with the descriptor or its process, and nothing done
// to the files in the directory releases it. A file system that refuses
// flock on a directory (NFS emulates flock with fcntl locks, which need a
// descriptor open for writing) gives an error matching
// errors.ErrUnsupported.
func (osFS) LockDir(dir string) (io.Closer, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	if err := flock(f, "lockdir", dir); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// flock takes an exclusive flock on f without waiting.
func flock(f *os.File, op, name string) error {
	var err error
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		err = ErrLocked
	case errors.Is(err, syscall.EBADF), errors.Is(err, syscall.ENOLCK), errors.Is(err, syscall.EOPNOTSUPP),
		errors.Is(err, syscall.ENOSYS), errors.Is(err, syscall.EINVAL):
		err = fmt.Errorf("%w: %w", errors.ErrUnsupported, err)
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}
