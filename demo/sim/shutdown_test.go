package sim_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/arksave/arksave/demo/sim"
	"github.com/arksave/arksave/vfs"
)

// An autosave interval shorter than one tick: every tick starts a save,
// and Close still makes exactly one final save and returns.
func TestShortIntervalOneFinalSave(t *testing.T) {
	cfg := config(t, 9)
	cfg.Save.Autosave = time.Millisecond // a tick is 16.7 ms of game time
	s, err := sim.New(cfg)
	expect(t, err == nil, "sim.New: %v", err)
	for range 30 {
		s.Step()
	}
	st := s.Persistence.Status()
	want := st.Saves + 1 // the final save
	if st.InProgress {
		want++ // the autosave running now finishes first
	}
	done := make(chan struct{})
	var err2 error
	go func() {
		_, err2 = s.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Close did not return")
	}
	expect(t, err2 == nil, "close: %v", err2)
	after := s.Persistence.Status()
	expect(t, after.Saves == want && !after.InProgress, "%d saves finished by Close, want %d", after.Saves-st.Saves, want-st.Saves)
	expect(t, after.Last != nil && after.Last.Generation == after.Generation, "the last save is generation %v, the directory is at %d", after.Last, after.Generation)
}

// Saves that fail (the directory stops taking new files) say which
// directory in their result, the game keeps running, and once the fault is
// gone the next save commits; the final save of a failing run names the
// directory in its error.
func TestFailingSavesRetry(t *testing.T) {
	var failing atomic.Bool
	cfg := config(t, 10)
	cfg.Save.FS = vfs.Faulty(vfs.OS, vfs.InjectorFunc(func(op vfs.Op, name string) error {
		if failing.Load() && op == vfs.OpCreate && strings.Contains(filepath.Base(name), "world-") {
			return syscall.EACCES
		}
		return nil
	}))

	s := newSim(t, cfg)
	dir := cfg.Save.Dir
	expect(t, waitSave(t, s, s.Persistence.Save()).Err == nil, "first save")
	failing.Store(true)
	for i := range 5 {
		s.Step()
		res := waitSave(t, s, s.Persistence.Save())
		expect(t, errors.Is(res.Err, syscall.EACCES) && res.Dir == dir && res.Generation == 1, "failing save %d: %+v", i, res)
	}
	failing.Store(false)
	res := waitSave(t, s, s.Persistence.Save())
	expect(t, res.Err == nil && res.Generation == 2 && res.Dir == dir, "the save after the fault: %+v", res)

	failing.Store(true)
	_, err := s.Close()
	expect(t, err != nil && strings.Contains(err.Error(), "final save to "+dir+":"), "a failing final save: %v", err)
	_, statErr := os.Stat(filepath.Join(dir, "manifest"))
	expect(t, statErr == nil, "the directory lost its save: %v", statErr)
}

// The demo says when saving stops and when it resumes, once each, through
// SaveConfig.OnSaving: a line when the first save fails after a committed
// one, none for the failures after it, a line when a save commits again.
func TestSavingStopsAndResumesSaid(t *testing.T) {
	var failing atomic.Bool
	var lines []string // appended on the game loop, which this test runs
	cfg := config(t, 11)
	cfg.Save.OnSaving = func(line string) { lines = append(lines, line) }
	cfg.Save.FS = vfs.Faulty(vfs.OS, vfs.InjectorFunc(func(op vfs.Op, name string) error {
		if failing.Load() && op == vfs.OpCreate && strings.Contains(filepath.Base(name), "world-") {
			return syscall.EACCES
		}
		return nil
	}))

	s := newSim(t, cfg)
	expect(t, waitSave(t, s, s.Persistence.Save()).Err == nil, "first save")
	s.Persistence.WaitIdle()
	expect(t, len(lines) == 0, "a committed save said %q", lines)
	failing.Store(true)
	for range 3 {
		s.Step()
		expect(t, waitSave(t, s, s.Persistence.Save()).Err != nil, "a save succeeded while failing")
	}
	s.Persistence.WaitIdle()
	expect(t, len(lines) == 1 && strings.HasPrefix(lines[0], "saving stopped: ") && strings.Contains(lines[0], "permission denied"),
		"after 3 failed saves: %q", lines)
	failing.Store(false)
	expect(t, waitSave(t, s, s.Persistence.Save()).Err == nil, "the save after the fault")
	s.Persistence.WaitIdle()
	expect(t, len(lines) == 2 && lines[1] == "saving resumed: generation 2 of "+cfg.Save.Dir+" committed, after 3 failed saves",
		"after the fault: %q", lines)
}
