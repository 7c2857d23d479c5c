package savedir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/fsguard"
	"github.com/arksave/arksave/internal/fsx"
	"github.com/arksave/arksave/vfs"
)

// LockName is the lock file of a save directory. Its owner holds an
// exclusive operating-system lock on it (flock on Unix) from opening the
// directory for writing until closing it, and writes into it who it is
// ([Holder]); the file itself stays. The lock dies with its process, so a
// killed game never leaves its directory locked.
//
// Where the file system can (its LockDir method, see vfs.FS: flock on the directory on
// Unix), the owner locks the save directory itself too, first: removing
// or replacing the lock file while the owner runs then lets no second
// writer in. Before each commit the owner checks that the lock file is
// still the one it locked; when it is not, it takes the lock file anew if
// it holds the directory's lock, and otherwise commits nothing more (a
// *LockedError with Lost set). It also checks that the directory's path
// still leads to the directory it locked (vfs.SameDir); when the directory
// was moved away or replaced, it commits nothing more, anywhere.
const LockName = "lock"

// lockLost turns the error of a change the file system refused because
// another holder has the lock now (vfs.ErrLocked from a write: a lease
// that was taken over) into a *LockedError naming that holder.
func (d *Dir) lockLost(err error) error {
	var le *autosave.LockedError
	if err == nil || !errors.Is(err, vfs.ErrLocked) || errors.As(err, &le) {
		return err
	}
	return &autosave.LockedError{Dir: d.path, Holder: readHolder(d.fs, filepath.Join(d.path, LockName)), Lost: true, Err: err}
}

// lockPoll is how often a lock with a timeout is tried again.
const lockPoll = 20 * time.Millisecond

// maxLockFile bounds what is read of a lock file to name its holder.
const maxLockFile = 4 << 10

// heldLock is what the writer of a save directory holds: the lock file,
// and the directory itself where the file system can lock it.
type heldLock struct {
	file vfs.File
	dir  io.Closer // nil where the file system cannot lock a directory
}

// Close releases both locks.
func (l *heldLock) Close() error {
	err := l.file.Close()
	if l.dir != nil {
		err = errors.Join(err, l.dir.Close())
	}
	return err
}

// lockDir takes the lock of the save directory dir, waiting up to timeout
// for another holder to let go, and writes the holder into the lock file.
// It returns a *LockedError when the lock stays taken; any other error
// (a read-only medium among them, see vfs.IsReadOnly) as it is.
func lockDir(fsys vfs.FS, dir string, timeout time.Duration) (*heldLock, error) {
	name := filepath.Join(dir, LockName)
	if err := checkLockFile(fsys, dir); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(timeout)
	for {
		l, err := tryLock(fsys, dir)
		if err == nil {
			if err := writeHolder(l.file); err != nil {
				l.Close()
				return nil, fmt.Errorf("autosave: write lock file %s: %w", name, err)
			}
			return l, nil
		}
		if !errors.Is(err, vfs.ErrLocked) {
			return nil, err
		}
		if !time.Now().Before(deadline) {
			le := &autosave.LockedError{Dir: dir, Holder: readHolder(fsys, name)}
			if held := (*vfs.HeldError)(nil); errors.As(err, &held) {
				le.What, le.Advice = held.What, held.Advice
			}
			return nil, le
		}
		time.Sleep(min(lockPoll, time.Until(deadline)))
	}
}

// checkLockFile refuses a lock file that is not a regular file: it is not
// followed.
func checkLockFile(fsys vfs.FS, dir string) error {
	if fi, err := fsys.Lstat(filepath.Join(dir, LockName)); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s/%s is %s, not a regular file: not followed (remove it)", autosave.ErrCorrupt, dir, LockName, fsguard.Describe(fi.Mode()))
	}
	return nil
}

// tryLock takes the directory's lock, where the file system has one, and
// then the lock file's, without waiting. The directory comes first, so
// that a writer that finds it taken never touches the lock file its
// holder may be taking anew (see Dir.checkLock).
func tryLock(fsys vfs.FS, dir string) (*heldLock, error) {
	d, err := fsx.LockDir(fsys, dir)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		d = nil // the lock file alone, as before directories could be locked
	case err != nil:
		return nil, err
	}
	f, err := fsys.Lock(filepath.Join(dir, LockName))
	if err != nil {
		if d != nil {
			d.Close()
		}
		return nil, err
	}
	return &heldLock{file: f, dir: d}, nil
}

// errLockReplaced is why a writer whose lock file was removed or replaced
// commits nothing more: it does not hold the directory's own lock, or the
// lock file cannot be taken anew.
var errLockReplaced = errors.New("its lock file was removed or replaced while this program held the save")

// checkLock makes sure, before a change is committed, that this Dir still
// holds the directory: that its lock file is still the file it locked. A
// lock file removed or replaced (by hand, by a program that cleans up)
// excludes nobody any more. When the Dir holds the lock of the directory
// itself, no other writer can have come in: it locks the lock file anew,
// names itself in it and goes on. Otherwise, or when the new lock file
// cannot be locked, the Dir commits nothing more: it returns a
// *LockedError with Lost set, and so does every later change. A file
// system that cannot tell (vfs.SameFile unsupported) is trusted.
func (d *Dir) checkLock() error {
	if err := d.writable(); err != nil || d.lock == nil {
		return err
	}
	if err := d.checkDirPath(); err != nil {
		return err
	}
	name := filepath.Join(d.path, LockName)
	same, err := fsx.SameFile(d.fs, d.lock.file, name)
	switch {
	case errors.Is(err, errors.ErrUnsupported), err == nil && same:
		return nil
	case err != nil:
		return fmt.Errorf("autosave: check lock file %s: %w", name, err)
	}
	if d.lock.dir == nil {
		err = fmt.Errorf("%w, and the file system cannot lock the directory itself: another program may have opened it since", errLockReplaced)
	} else if err = d.relock(); err == nil {
		return nil
	} else {
		err = fmt.Errorf("%w, and it cannot be taken anew: %w", errLockReplaced, err)
	}
	d.roErr = &autosave.LockedError{Dir: d.path, Holder: readHolder(d.fs, name), Lost: true, Err: err}
	return d.roErr
}

// errDirReplaced is why a writer whose save directory was moved away,
// removed or replaced commits nothing more: what it would write by path
// would go into whatever is at that path now.
var errDirReplaced = errors.New("the save directory was moved, removed or replaced while this program held it (its lock is on the directory that was there); nothing more is written at that path, and the directory moved away keeps the last generation saved: open the save again where it is now")

// checkDirPath makes sure that the Dir's path still leads to the directory
// whose lock it holds. When it does not, the Dir commits nothing more: it
// returns a *LockedError with Lost set (naming no holder: the directory at
// the path now is not this writer's to read or to lock), and so does every
// later change. It comes before the lock file's check, which would take a
// missing lock file anew at the path. Where the directory is not locked
// (the lock file alone: the lock file's check then sees a moved directory
// as a lock file gone) or its lock cannot tell (vfs.SameDir unsupported),
// the Dir goes on.
func (d *Dir) checkDirPath() error {
	if d.lock.dir == nil {
		return nil
	}
	same, err := vfs.SameDir(d.fs, d.lock.dir, d.path)
	switch {
	case errors.Is(err, errors.ErrUnsupported), err == nil && same:
		return nil
	case err != nil:
		return fmt.Errorf("autosave: check save directory %s: %w", d.path, err)
	}
	d.roErr = &autosave.LockedError{Dir: d.path, Lost: true, Err: errDirReplaced}
	return d.roErr
}

// relock takes the lock file anew for a Dir that holds the directory's
// own lock, and names this process in it.
func (d *Dir) relock() error {
	if err := checkLockFile(d.fs, d.path); err != nil {
		return err
	}
	f, err := d.fs.Lock(filepath.Join(d.path, LockName))
	if err != nil {
		return fmt.Errorf("autosave: take the replaced lock file anew: %w", err)
	}
	if err := writeHolder(f); err != nil {
		f.Close()
		return fmt.Errorf("autosave: write lock file %s: %w", f.Name(), err)
	}
	d.lock.file.Close() // the old file, which no name leads to now
	d.lock.file = f
	return nil
}

// writeHolder replaces the lock file's content with this process. It is
// not synced: a holder's name matters only while it lives.
func writeHolder(f vfs.File) error {
	host, _ := os.Hostname()
	data, err := json.Marshal(autosave.Holder{PID: os.Getpid(), Host: host, Program: filepath.Base(os.Args[0]), Since: time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err = f.WriteAt(append(data, '\n'), 0)
	return err
}

// readHolder reads who holds the lock; nil when the file does not say
// (its holder may be writing it just now).
func readHolder(fsys vfs.FS, name string) *autosave.Holder {
	if fi, err := fsys.Lstat(name); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil
	}
	defer f.Close()
	buf := make([]byte, maxLockFile)
	n, err := f.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil
	}
	var h autosave.Holder
	if json.Unmarshal(buf[:n], &h) != nil || h.PID == 0 {
		return nil
	}
	return &h
}
