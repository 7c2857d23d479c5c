package autosave_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/vfs"
)

// A save directory has one writer: a second OpenDir, OpenDirForRepair or
// OpenWriter fails with ErrLocked naming the holder until the first
// closes; a reader opens it meanwhile and changes nothing.
func TestSecondWriterIsLocked(t *testing.T) {
	for _, tc := range []struct {
		name string
		fsys vfs.FS
		dir  string
	}{
		{"mem", vfs.NewMem(), "/save"},
		{"os", vfs.OS, filepath.Join(t.TempDir(), "save")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first, err := autosave.OpenDir(tc.fsys, tc.dir)
			must(t, err)
			must(t, commit(first, 1, 1))
			before := snapshotFiles(t, tc.fsys, tc.dir)

			_, err = autosave.OpenDir(tc.fsys, tc.dir)
			expectLockedByUs(t, err, tc.dir)
			_, err = autosave.OpenDirForRepair(tc.fsys, tc.dir)
			expectLockedByUs(t, err, tc.dir)
			_, err = autosave.OpenWriter(tc.dir, autosave.Options{FS: tc.fsys, Store: storeConfig()})
			expectLockedByUs(t, err, tc.dir)

			r, err := autosave.OpenDirReadOnly(tc.fsys, tc.dir)
			must(t, err)
			expect(t, r.Generation() == 1, "a reader sees generation %d", r.Generation())
			_, _, err = r.Commit(autosave.Commit{World: world(2), Chunks: autosave.StoreRef{Name: autosave.ChunksName, Root: fakeRoot}})
			expect(t, errors.Is(err, autosave.ErrReadOnly), "a reader committed: %v", err)
			expectSameFiles(t, before, snapshotFiles(t, tc.fsys, tc.dir))

			must(t, first.Close())
			again, err := autosave.OpenDir(tc.fsys, tc.dir)
			must(t, err)
			must(t, commit(again, 2, 1))
			must(t, again.Close())
			_, _, err = again.Commit(autosave.Commit{World: world(3), Chunks: autosave.StoreRef{Name: autosave.ChunksName, Root: fakeRoot}})
			expect(t, errors.Is(err, autosave.ErrReadOnly), "a closed Dir committed: %v", err)
		})
	}
}

// expectLockedByUs checks an ErrLocked that names this process as the
// holder: pid, host, since when, and what to do.
func expectLockedByUs(t *testing.T, err error, dir string) {
	t.Helper()
	var le *autosave.LockedError
	expect(t, errors.Is(err, autosave.ErrLocked) && errors.As(err, &le), "want ErrLocked, got %v", err)
	host, _ := os.Hostname()
	h := le.Holder
	expect(t, h != nil && h.PID == os.Getpid() && h.Host == host && time.Since(h.Since) < time.Hour, "holder %+v", h)
	msg := err.Error()
	for _, part := range []string{dir, fmt.Sprintf("pid %d", os.Getpid()), "host " + host, "since", "close"} {
		expect(t, strings.Contains(msg, part), "the error does not say %q: %s", part, msg)
	}
}

// With LockTimeout, opening waits for the holder to let go.
func TestLockTimeout(t *testing.T) {
	mem := vfs.NewMem()
	first, err := autosave.OpenDir(mem, "/save")
	must(t, err)

	start := time.Now()
	_, err = autosave.OpenDir(mem, "/save", autosave.LockTimeout(30*time.Millisecond))
	expect(t, errors.Is(err, autosave.ErrLocked) && time.Since(start) >= 30*time.Millisecond, "a short timeout: %v after %v", err, time.Since(start))

	tried := make(chan struct{})
	var once bool
	fsys := &vfs.Faulty{FS: mem, Injector: vfs.InjectorFunc(func(op vfs.Op, _ string) error {
		if op == vfs.OpLock && !once {
			once = true
			close(tried)
		}
		return nil
	})}
	got := make(chan error, 1)
	go func() {
		d, err := autosave.OpenDir(fsys, "/save", autosave.LockTimeout(time.Minute))
		if err == nil {
			err = d.Close()
		}
		got <- err
	}()
	<-tried // the second opener is waiting
	must(t, first.Close())
	must(t, <-got)
}

// A lock file that does not name its holder still refuses, and says so.
func TestLockedWithoutHolder(t *testing.T) {
	mem := vfs.NewMem()
	must(t, mem.MkdirAll("/save"))
	f, err := mem.Lock("/save/lock")
	must(t, err)
	defer f.Close()
	_, err = f.WriteAt([]byte("{not json"), 0)
	must(t, err)
	_, err = autosave.OpenDir(mem, "/save")
	var le *autosave.LockedError
	expect(t, errors.As(err, &le) && le.Holder == nil && strings.Contains(err.Error(), "does not name it"), "%v", err)
}

type fileState struct {
	data string
	mod  time.Time
}

// snapshotFiles returns every file of the directory tree at dir (backups/
// included) with its content and modification time, the lock file left
// out (its holder writes it).
func snapshotFiles(t *testing.T, fsys vfs.FS, dir string) map[string]fileState {
	t.Helper()
	out := map[string]fileState{}
	for _, sub := range []string{".", autosave.BackupDir} {
		names, _ := fsys.ReadDir(filepath.Join(dir, sub))
		for _, n := range names {
			p := filepath.Join(dir, sub, n)
			fi, err := fsys.Stat(p)
			if err != nil || fi.IsDir() || n == autosave.LockName {
				continue
			}
			data, err := vfs.ReadFile(fsys, p)
			must(t, err)
			out[filepath.Join(sub, n)] = fileState{string(data), fi.ModTime()}
		}
	}
	return out
}

func expectSameFiles(t *testing.T, before, after map[string]fileState) {
	t.Helper()
	for n, b := range before {
		a, ok := after[n]
		expect(t, ok, "%s was removed", n)
		expect(t, a.data == b.data && a.mod.Equal(b.mod), "%s changed", n)
	}
	for n := range after {
		_, ok := before[n]
		expect(t, ok, "%s appeared", n)
	}
}
