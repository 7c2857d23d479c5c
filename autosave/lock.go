package autosave

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/arksave/arksave/internal/fsguard"
	"github.com/arksave/arksave/vfs"
)

// LockName is the lock file of a save directory. Its owner holds an
// exclusive operating-system lock on it (flock on Unix) from opening the
// directory for writing until closing it, and writes into it who it is
// ([Holder]); the file itself stays. The lock dies with its process, so a
// killed game never leaves its directory locked.
const LockName = "lock"

// Holder is who holds a save directory's lock, as the lock file says.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Program string    `json:"program"`
	Since   time.Time `json:"since"`
}

// String describes the holder in one line: "demo (pid 4242 on host box,
// since 2026-11-24 03:02:19 UTC)".
func (h Holder) String() string {
	prog := h.Program
	if prog == "" {
		prog = "a program"
	}
	return fmt.Sprintf("%s (pid %d on host %s, since %s)", prog, h.PID, h.Host, h.Since.UTC().Format("2006-01-02 15:04:05 MST"))
}

// LockedError is the error of a save directory another holder has locked.
// It matches [ErrLocked] with errors.Is.
//
// On a backend whose lock is a lease (NATS JetStream), a writer can lose
// the lock while it runs: paused or cut off until its lease expired, after
// which another program took the save over. Every later change of the
// writer then fails with a LockedError whose Lost is set, naming the new
// holder (nil when that program has let go of the save since), and
// wrapping the file system's error: the writer never commits again until
// it opens the save anew, since the other program may have committed. A
// lease that expired while nobody else took the save (a cluster electing
// a new leader for longer than the lease) is not lost: the backend takes
// it back at the writer's next change, and saving resumes.
type LockedError struct {
	Dir    string
	Holder *Holder // nil when the lock file does not say (yet)
	Lost   bool    // this writer held the lock and lost it
	Err    error   // the file system's error, for a lost lock
	// What and Advice, when the file system says (a *vfs.HeldError), are
	// what the save is called there and how to get it while it is held;
	// empty for a save directory.
	What, Advice string
}

func (e *LockedError) Error() string {
	if e.Lost {
		who := e.Who()
		if e.Holder == nil {
			who = "nobody now (another program took it over after this program's lease expired, and has let go of it since)"
		}
		return fmt.Sprintf("autosave: this program lost the lock of save %s, now held by %s: it can no longer save there; open the save again to continue from its newest generation", e.Dir, who)
	}
	what, advice := "save directory "+e.Dir, "close that first or use another directory"
	if e.What != "" {
		what = e.What
	}
	if e.Advice != "" {
		advice = e.Advice
	}
	return fmt.Sprintf("autosave: %s is in use by %s; %s (arksave inspect, check, render and export read it while it runs)", what, e.Who(), advice)
}

// Unwrap returns the file system's error of a lost lock.
func (e *LockedError) Unwrap() error { return e.Err }

// lockLost turns the error of a change the file system refused because
// another holder has the lock now (vfs.ErrLocked from a write: a lease
// that was taken over) into a *LockedError naming that holder.
func (d *Dir) lockLost(err error) error {
	var le *LockedError
	if err == nil || !errors.Is(err, vfs.ErrLocked) || errors.As(err, &le) {
		return err
	}
	return &LockedError{Dir: d.path, Holder: readHolder(d.fs, filepath.Join(d.path, LockName)), Lost: true, Err: err}
}

// Who describes the holder: "demo (pid 4242 on host box, since ...)", and
// says when it is this very process.
func (e *LockedError) Who() string {
	h := e.Holder
	if h == nil {
		return "another program (its lock file does not name it)"
	}
	who := h.String()
	if host, _ := os.Hostname(); h.PID == os.Getpid() && h.Host == host && !e.Lost {
		who += ", this process: the save directory is already open in it (a second Plugin.Install, or a Persistence not closed)"
	}
	return who
}

// Is makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// lockPoll is how often a lock with a timeout is tried again.
const lockPoll = 20 * time.Millisecond

// maxLockFile bounds what is read of a lock file to name its holder.
const maxLockFile = 4 << 10

// lockDir takes the lock of the save directory dir, waiting up to timeout
// for another holder to let go, and writes the holder into the lock file.
// It returns a *LockedError when the lock stays taken; any other error
// (a read-only medium among them, see vfs.IsReadOnly) as it is.
func lockDir(fsys vfs.FS, dir string, timeout time.Duration) (vfs.File, error) {
	name := filepath.Join(dir, LockName)
	if fi, err := fsys.Lstat(name); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s/%s is %s, not a regular file: not followed (remove it)", ErrCorrupt, dir, LockName, fsguard.Describe(fi.Mode()))
	}
	deadline := time.Now().Add(timeout)
	for {
		f, err := fsys.Lock(name)
		if err == nil {
			if err := writeHolder(f); err != nil {
				f.Close()
				return nil, fmt.Errorf("autosave: write lock file %s: %w", name, err)
			}
			return f, nil
		}
		if !errors.Is(err, vfs.ErrLocked) {
			return nil, err
		}
		if !time.Now().Before(deadline) {
			le := &LockedError{Dir: dir, Holder: readHolder(fsys, name)}
			if held := (*vfs.HeldError)(nil); errors.As(err, &held) {
				le.What, le.Advice = held.What, held.Advice
			}
			return nil, le
		}
		time.Sleep(min(lockPoll, time.Until(deadline)))
	}
}

// writeHolder replaces the lock file's content with this process. It is
// not synced: a holder's name matters only while it lives.
func writeHolder(f vfs.File) error {
	host, _ := os.Hostname()
	data, err := json.Marshal(Holder{PID: os.Getpid(), Host: host, Program: filepath.Base(os.Args[0]), Since: time.Now().UTC().Truncate(time.Second)})
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
func readHolder(fsys vfs.FS, name string) *Holder {
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
	var h Holder
	if json.Unmarshal(buf[:n], &h) != nil || h.PID == 0 {
		return nil
	}
	return &h
}
