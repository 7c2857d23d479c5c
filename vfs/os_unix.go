//go:build unix

package vfs

import (
	"errors"
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
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			err = ErrLocked
		}
		return nil, &fs.PathError{Op: "lock", Path: name, Err: err}
	}
	return osFile{f}, nil
}
