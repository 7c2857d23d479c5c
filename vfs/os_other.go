//go:build !unix

package vfs

import (
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
