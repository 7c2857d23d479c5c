package savedir_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/vfs"
)

// A save directory has one writer: a second OpenDir, OpenDirForRepair or
// OpenWriter fails with ErrLocked naming the holder until the first
// closes; a reader opens it meanwhile and changes nothing.
func TestSecondWriterIsLocked(t *testing.T) {
	for _, tc := range memAndOS(t) {
		t.Run(tc.name, func(t *testing.T) {
			first, err := savedir.OpenDir(tc.fsys, tc.dir)
			must(t, err)
			must(t, commit(first, 1, 1))
			before := snapshotFiles(t, tc.fsys, tc.dir)

			_, err = savedir.OpenDir(tc.fsys, tc.dir)
			expectLockedByUs(t, err, tc.dir)
			_, err = savedir.OpenDirForRepair(tc.fsys, tc.dir)
			expectLockedByUs(t, err, tc.dir)
			_, err = savedir.OpenWriter(tc.dir, savedir.Options{FS: tc.fsys, Store: storeConfig()})
			expectLockedByUs(t, err, tc.dir)

			r, err := savedir.OpenDirReadOnly(tc.fsys, tc.dir)
			must(t, err)
			expect(t, r.Generation() == 1, "a reader sees generation %d", r.Generation())
			_, _, err = r.Commit(savedir.Commit{World: world(2), Chunks: savedir.StoreRef{Name: savedir.ChunksName, Root: fakeRoot}})
			expect(t, errors.Is(err, autosave.ErrReadOnly), "a reader committed: %v", err)
			expectSameFiles(t, before, snapshotFiles(t, tc.fsys, tc.dir))

			must(t, first.Close())
			again, err := savedir.OpenDir(tc.fsys, tc.dir)
			must(t, err)
			must(t, commit(again, 2, 1))
			must(t, again.Close())
			_, _, err = again.Commit(savedir.Commit{World: world(3), Chunks: savedir.StoreRef{Name: savedir.ChunksName, Root: fakeRoot}})
			expect(t, errors.Is(err, autosave.ErrReadOnly), "a closed Dir committed: %v", err)
		})
	}
}

// saveOn is a save directory on a file system.
type saveOn struct {
	name string
	fsys vfs.FS
	dir  string
}

// memAndOS returns a save directory in memory and one on disk.
func memAndOS(t *testing.T) []saveOn {
	return []saveOn{{"mem", vfs.NewMem(), "/save"}, {"os", vfs.OS, filepath.Join(t.TempDir(), "save")}}
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
	first, err := savedir.OpenDir(mem, "/save")
	must(t, err)

	start := time.Now()
	_, err = savedir.OpenDir(mem, "/save", savedir.LockTimeout(30*time.Millisecond))
	expect(t, errors.Is(err, autosave.ErrLocked) && time.Since(start) >= 30*time.Millisecond, "a short timeout: %v after %v", err, time.Since(start))

	tried := make(chan struct{})
	var once bool
	fsys := vfs.Faulty(mem, vfs.InjectorFunc(func(op vfs.Op, _ string) error {
		if (op == vfs.OpLockDir || op == vfs.OpLock) && !once {
			once = true
			close(tried)
		}
		return nil
	}))

	got := make(chan error, 1)
	go func() {
		d, err := savedir.OpenDir(fsys, "/save", savedir.LockTimeout(time.Minute))
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
	_, err = savedir.OpenDir(mem, "/save")
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
	for _, sub := range []string{".", savedir.BackupDir} {
		names, _ := fsys.ReadDir(filepath.Join(dir, sub))
		for _, n := range names {
			p := filepath.Join(dir, sub, n)
			fi, err := fsys.Stat(p)
			if err != nil || fi.IsDir() || n == savedir.LockName {
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

// tamperings are what a person or a program may do to the lock file of a
// save while its writer runs: remove it, or rename another file over it.
var tamperings = []struct {
	name string
	do   func(fsys vfs.FS, dir string) error
}{
	{"removed", func(fsys vfs.FS, dir string) error { return fsys.Remove(filepath.Join(dir, savedir.LockName)) }},
	{"replaced", func(fsys vfs.FS, dir string) error {
		other := filepath.Join(dir, "other")
		if err := vfs.WriteFileAtomic(fsys, other, []byte("not a lock\n")); err != nil {
			return err
		}
		return fsys.Rename(other, filepath.Join(dir, savedir.LockName))
	}},
}

// A writer holds its save directory whatever happens to the lock file: with
// the lock file removed or replaced, a second OpenDir, OpenDirForRepair or
// OpenWriter is still refused (the directory itself is locked), and the
// writer's next commit takes the lock file anew, naming itself, so that the
// next refusal names it again. Every generation it committed loads.
func TestLockFileTamperedWhileHeld(t *testing.T) {
	for _, tc := range memAndOS(t) {
		t.Run(tc.name, func(t *testing.T) {
			first, err := savedir.OpenDir(tc.fsys, tc.dir)
			must(t, err)
			defer first.Close()
			must(t, commit(first, 1, 1))
			for i, tamper := range tamperings {
				must(t, tamper.do(tc.fsys, tc.dir))
				_, err = savedir.OpenDir(tc.fsys, tc.dir)
				expect(t, errors.Is(err, autosave.ErrLocked), "%s: a second OpenDir got in: %v", tamper.name, err)
				_, err = savedir.OpenDirForRepair(tc.fsys, tc.dir)
				expect(t, errors.Is(err, autosave.ErrLocked), "%s: OpenDirForRepair got in: %v", tamper.name, err)
				_, err = savedir.OpenWriter(tc.dir, savedir.Options{FS: tc.fsys, Store: storeConfig()})
				expect(t, errors.Is(err, autosave.ErrLocked), "%s: OpenWriter got in: %v", tamper.name, err)

				must(t, commit(first, 2+i, 1))
				_, err = savedir.OpenDir(tc.fsys, tc.dir)
				expectLockedByUs(t, err, tc.dir)
			}
			must(t, first.Close())
			d, err := savedir.OpenDir(tc.fsys, tc.dir)
			must(t, err)
			expect(t, d.Generation() == uint64(1+len(tamperings)), "generation %d after the writer closed", d.Generation())
			w, err := d.ReadWorld(nil)
			must(t, err)
			expect(t, bytes.Equal(w, world(int(d.Generation()))), "the last generation's world differs")
			must(t, d.Close())
		})
	}
}

// dirLockless hides the LockDir method (see vfs.FS): a file system (over a network, say) on
// which a directory cannot be locked.
type dirLockless struct{ vfs.FS }

// Where the directory itself cannot be locked, a writer whose lock file
// was removed or replaced cannot keep a second writer out; it commits
// nothing more then: its commit fails with ErrLocked (Lost), and so does
// every later change, so that the second writer's commits stay.
func TestLockFileTamperedWithoutDirectoryLock(t *testing.T) {
	for _, tamper := range tamperings {
		t.Run(tamper.name, func(t *testing.T) {
			fsys := dirLockless{vfs.NewMem()}
			first, err := savedir.OpenDir(fsys, "/save")
			must(t, err)
			defer first.Close()
			must(t, commit(first, 1, 1))
			must(t, tamper.do(fsys, "/save"))

			second, err := savedir.OpenDir(fsys, "/save")
			must(t, err)
			must(t, commit(second, 2, 1))

			err = commit(first, 2, 1)
			var le *autosave.LockedError
			expect(t, errors.Is(err, autosave.ErrLocked) && errors.As(err, &le) && le.Lost, "the first writer committed after losing its lock file: %v", err)
			expect(t, strings.Contains(err.Error(), "removed or replaced") && strings.Contains(err.Error(), "open the save again"), "message: %v", err)
			err = first.Cleanup()
			expect(t, errors.Is(err, autosave.ErrLocked), "the first writer cleaned up after losing its lock: %v", err)
			must(t, second.Close())
			expect(t, loaded(t, fsys) == 2, "the second writer's generation was lost")
		})
	}
}
