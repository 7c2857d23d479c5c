//go:build !unix

package vfs

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// oNoFollow is not available here: names are opened as given.
const oNoFollow = 0

// held is the set of files this process has locked. Without flock, a lock
// excludes other holders in this process only.
var held sync.Map // absolute path -> struct{}

type lockedFile struct {
	osFile
	key  string
	once sync.Once
}

func (f *lockedFile) Close() error {
	err := f.osFile.Close()
	f.once.Do(func() { held.Delete(f.key) })
	return err
}

// Lock excludes other holders within this process; on this platform it
// does not exclude other processes.
func (osFS) Lock(name string) (File, error) {
	key, err := filepath.Abs(name)
	if err != nil {
		return nil, err
	}
	if _, taken := held.LoadOrStore(key, struct{}{}); taken {
		return nil, &fs.PathError{Op: "lock", Path: name, Err: ErrLocked}
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		held.Delete(key)
		return nil, err
	}
	return &lockedFile{osFile: osFile{f}, key: key}, nil
}

// dirKey is the key of a directory's lock in held: apart from a file's.
func dirKey(abs string) string { return "dir\x00" + abs }

type dirLock struct {
	key  string
	once sync.Once
}

func (l *dirLock) Close() error {
	l.once.Do(func() { held.Delete(l.key) })
	return nil
}

// LockDir excludes other holders of the directory within this process;
// on this platform it does not exclude other processes.
func (osFS) LockDir(dir string) (io.Closer, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, &fs.PathError{Op: "lockdir", Path: dir, Err: fmt.Errorf("not a directory")}
	}
	key := dirKey(abs)
	if _, taken := held.LoadOrStore(key, struct{}{}); taken {
		return nil, &fs.PathError{Op: "lockdir", Path: dir, Err: ErrLocked}
	}
	return &dirLock{key: key}, nil
}
