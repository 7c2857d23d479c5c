package sim

import (
	"fmt"
	"io"
	"time"
)

// Persistence is everything the game asks of its save system. The demo is
// written against it; Unsaved stands in until arksave's Persistence and
// AutosaveState resources are wired behind it.
type Persistence interface {
	// Save starts a save now (F5); the game keeps running while it writes.
	Save()
	// SaveAs starts a copy-on-write save into another directory (F6),
	// which becomes the current one.
	SaveAs(dir string)
	// Load replaces the world with the last committed save (F9, -load).
	Load() error
	// Close makes the final save when the game exits and waits for it.
	Close() error
	// Status is what the overlay and the headless stats show.
	Status() SaveStatus
}

// SaveStatus describes the saves of a session.
type SaveStatus struct {
	Dir           string
	Autosave      time.Duration // interval; 0 when autosave is off
	SinceLast     time.Duration // since the last save committed
	InProgress    bool          // a save is being written
	Progress      float64       // of the save in progress, 0..1
	Saves         uint64        // committed this session
	ChunksWritten uint64
	BytesWritten  uint64
	LastDuration  time.Duration // of the last committed save, start to commit
	LastBytes     uint64
	LongestStall  time.Duration // the longest game-loop tick spent on saving
	LastError     string
}

// Unsaved is the stand-in Persistence until arksave is wired in: it writes
// nothing and logs what it was asked.
type Unsaved struct {
	Dir      string
	Autosave time.Duration
	Log      io.Writer // nil: silent
}

func (u *Unsaved) logf(format string, args ...any) {
	if u.Log != nil {
		fmt.Fprintf(u.Log, "demo: "+format+" (saving is not wired in yet)\n", args...)
	}
}

// Save logs the request.
func (u *Unsaved) Save() { u.logf("save to %s", u.Dir) }

// SaveAs logs the request and takes dir as the current directory.
func (u *Unsaved) SaveAs(dir string) { u.logf("save as %s", dir); u.Dir = dir }

// Load logs the request.
func (u *Unsaved) Load() error { u.logf("load from %s", u.Dir); return nil }

// Close logs the final save.
func (u *Unsaved) Close() error { u.logf("final save to %s", u.Dir); return nil }

// Status reports no saves.
func (u *Unsaved) Status() SaveStatus { return SaveStatus{Dir: u.Dir, Autosave: u.Autosave} }
