//go:build unix

package savetool_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
	"github.com/arksave/arksave/vfs"
)

// A data file that is a symbolic link to a file outside the save directory
// is never followed by a repair: no call that follows a link (open, stat)
// reaches it, the file outside stays as it was, the repair says what it
// refused, and the repaired save checks clean.
func TestRepairFollowsNoSymlinkedDataFile(t *testing.T) {
	dir := fresh(t)
	link := filepath.Join(dir, savetest.DataFile1)
	outside := filepath.Join(t.TempDir(), "outside.pxsd")
	must(t, os.Rename(link, outside)) // a valid data file, whose records a scan would take
	must(t, os.Symlink(outside, link))
	before, err := os.ReadFile(outside)
	must(t, err)

	var mu sync.Mutex
	var followed []string
	fsys := vfs.Faulty(vfs.OS, vfs.InjectorFunc(func(op vfs.Op, name string) error {
		switch op {
		case vfs.OpOpen, vfs.OpOpenRW, vfs.OpCreate, vfs.OpStat, vfs.OpLock:
			if filepath.Clean(name) == link || filepath.Clean(name) == outside {
				mu.Lock()
				followed = append(followed, op.String()+" "+name)
				mu.Unlock()
			}
		}
		return nil
	}))

	for _, dry := range []bool{true, false} {
		rep, err := savetool.Repair(dir, savetool.RepairOptions{Options: savetool.Options{FS: fsys}, DryRun: dry})
		must(t, err)
		expect(t, len(followed) == 0, "dry run %v: the link was followed: %v", dry, followed)
		expect(t, slices.ContainsFunc(rep.Notes, func(n string) bool {
			return strings.HasPrefix(n, "refused "+savetest.DataFile1+": it is a symbolic link")
		}), "dry run %v: the refusal is not said: %v", dry, rep.Notes)
		if !dry {
			expect(t, rep.After != nil && rep.After.OK(), "check after the repair: %v", rep.After)
		}
	}
	after, err := os.ReadFile(outside)
	must(t, err)
	expect(t, bytes.Equal(before, after), "the file outside changed")
	fi, err := os.Lstat(link)
	must(t, err)
	expect(t, fi.Mode()&os.ModeSymlink != 0, "the link was replaced")
}

// A data file that is a named pipe is never opened: the repair returns
// (opening a pipe would wait for a writer forever) and says what it
// refused; the repaired save checks clean and loads.
func TestRepairOpensNoFIFODataFile(t *testing.T) {
	dir := fresh(t)
	fifo := filepath.Join(dir, savetest.DataFile1)
	must(t, os.Remove(fifo))
	must(t, syscall.Mkfifo(fifo, 0o644))
	type result struct {
		rep *savetool.RepairReport
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := savetool.Repair(dir, savetool.RepairOptions{})
		done <- result{rep, err}
	}()
	var res result
	select {
	case res = <-done:
	case <-time.After(2 * time.Minute): // a guard against a hang, not a timing assertion
		unblockFIFO(fifo)
		t.Fatal("repair opened the named pipe and waits for a writer")
	}
	must(t, res.err)
	expect(t, slices.ContainsFunc(res.rep.Notes, func(n string) bool {
		return strings.HasPrefix(n, "refused "+savetest.DataFile1+": it is a named pipe (FIFO)")
	}), "the refusal is not said: %v", res.rep.Notes)
	expect(t, res.rep.After != nil && res.rep.After.OK(), "check after the repair: %v", res.rep.After)
	expect(t, loads(t, dir) == 3, "the repaired save does not load generation 3's world")
}

// unblockFIFO opens a pipe for writing and closes it, so that a reader
// waiting in open returns.
func unblockFIFO(path string) {
	if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}
