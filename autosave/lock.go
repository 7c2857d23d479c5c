package autosave

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/arksave/arksave/vfs"
)

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
	if e.Lost && e.Err != nil && !errors.Is(e.Err, vfs.ErrLocked) {
		// Replaced under this program: its lock file, or the directory.
		held := ""
		if e.Holder != nil {
			held = " (it is held now by " + e.Who() + ")"
		}
		return fmt.Sprintf("autosave: this program can no longer save to %s: %v%s; open the save again to continue from its newest generation", e.Dir, e.Err, held)
	}
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
