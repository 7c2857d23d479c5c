package vfs_test

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/arksave/arksave/internal/fsx"
	"github.com/arksave/arksave/vfs"
)

// A lock has one holder at a time, in one process as across processes;
// closing the holder's file releases it; the lock file stays.
func TestLockConformance(t *testing.T) {
	onEachFS(t, func(t *testing.T, fsys vfs.FS, root string) {
		must(t, fsys.MkdirAll(root))
		name := filepath.Join(root, "lock")
		a, err := fsys.Lock(name)
		must(t, err)
		_, err = a.WriteAt([]byte("holder a"), 0)
		must(t, err)

		_, err = fsys.Lock(name)
		var pe *fs.PathError
		expect(t, errors.Is(err, vfs.ErrLocked) && errors.As(err, &pe) && pe.Path == name, "second lock while held: %v", err)

		must(t, a.Close())
		b, err := fsys.Lock(name)
		must(t, err)
		expect(t, string(readAll(t, fsys, name)) == "holder a", "the lock file lost the first holder's content")
		must(t, b.Close())

		_, err = fsys.Lock(filepath.Join(root, "missing", "lock"))
		expect(t, errors.Is(err, fs.ErrNotExist), "lock in a missing directory: %v", err)
	})
}

// A crash releases every lock: a restarted machine holds none.
func TestMemCrashReleasesLocks(t *testing.T) {
	m := vfs.NewMem()
	f, err := m.Lock("/lock")
	must(t, err)
	must(t, m.SyncDir("/"))
	c := m.Crash(1, nil)
	g, err := c.Lock("/lock")
	must(t, err)
	must(t, g.Close())
	_, err = m.Lock("/lock")
	expect(t, errors.Is(err, vfs.ErrLocked), "the original is still held: %v", err)
	must(t, f.Close())
}

// OS never follows a symbolic link for a write, a creation or a lock, and
// Lstat describes the link itself.
func TestOSNoFollow(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "canary")
	must(t, os.WriteFile(outside, []byte("canary"), 0o644))
	link := filepath.Join(dir, "link")
	must(t, os.Symlink(outside, link))

	_, err := vfs.OS.Create(link)
	expect(t, errors.Is(err, syscall.ELOOP), "Create through a link: %v", err)
	_, err = vfs.OS.OpenRW(link)
	expect(t, errors.Is(err, syscall.ELOOP), "OpenRW through a link: %v", err)
	_, err = vfs.OS.Lock(link)
	expect(t, errors.Is(err, syscall.ELOOP), "Lock through a link: %v", err)
	got, err := os.ReadFile(outside)
	must(t, err)
	expect(t, string(got) == "canary", "the link's target changed: %q", got)

	fi, err := vfs.OS.Lstat(link)
	must(t, err)
	expect(t, fi.Mode()&fs.ModeSymlink != 0, "Lstat of a link: mode %v", fi.Mode())
	fi, err = vfs.OS.Stat(link)
	must(t, err)
	expect(t, fi.Mode().IsRegular(), "Stat follows the link: mode %v", fi.Mode())
}

// ReadOnly reads through and refuses every change with EROFS.
func TestReadOnly(t *testing.T) {
	m := vfs.NewMem()
	must(t, m.MkdirAll("/d"))
	must(t, vfs.WriteFileAtomic(m, "/d/f", []byte("data")))
	ro := vfs.ReadOnly(m)
	expect(t, string(readAll(t, ro, "/d/f")) == "data", "read through")
	f, err := ro.Open("/d/f")
	must(t, err)
	_, werr := f.WriteAt([]byte("x"), 0)
	terr := f.Truncate(0)
	must(t, f.Close())
	_, cerr := ro.Create("/d/g")
	_, oerr := ro.OpenRW("/d/f")
	_, lerr := ro.Lock("/d/lock")
	for _, err := range []error{werr, terr, cerr, oerr, lerr, ro.Rename("/d/f", "/d/h"), ro.Remove("/d/f"),
		ro.RemoveAll("/d"), ro.MkdirAll("/e")} {
		expect(t, errors.Is(err, syscall.EROFS) && fsx.IsReadOnly(err), "a change through ReadOnly: %v", err)
	}
	must(t, ro.SyncDir("/d"))
	expect(t, string(readAll(t, m, "/d/f")) == "data", "the file changed")
	expect(t, fsx.IsReadOnly(&fs.PathError{Op: "open", Path: "x", Err: syscall.EACCES}), "EACCES is read-only")
	expect(t, !fsx.IsReadOnly(syscall.ENOSPC), "ENOSPC is not read-only")
}

// Faulty asks its injector before Lstat and Lock, and Lock counts as a
// mutating call.
func TestFaultyLock(t *testing.T) {
	m := vfs.NewMem()
	var seen []vfs.Op
	fsys := vfs.Faulty(m, vfs.InjectorFunc(func(op vfs.Op, _ string) error {
		seen = append(seen, op)
		if op == vfs.OpLock {
			return syscall.EIO
		}
		return nil
	}))

	_, err := fsys.Lstat("/")
	must(t, err)
	_, err = fsys.Lock("/lock")
	expect(t, errors.Is(err, syscall.EIO), "injected lock failure: %v", err)
	expect(t, len(seen) == 2 && seen[0] == vfs.OpLstat && seen[1] == vfs.OpLock, "calls %v", seen)
	expect(t, vfs.OpLock.Mutating() && !vfs.OpLstat.Mutating(), "Lock mutates, Lstat does not")
	expect(t, vfs.OpLock.String() == "lock" && vfs.OpLstat.String() == "lstat", "names %v %v", vfs.OpLock, vfs.OpLstat)
}

// A read-only medium: reads work, every change fails with EROFS.
func ExampleReadOnly() {
	mem := vfs.NewMem()
	vfs.WriteFileAtomic(mem, "/notes", []byte("kept"))
	ro := vfs.ReadOnly(mem)
	data, _ := vfs.ReadFile(ro, "/notes")
	_, err := ro.Create("/other")
	fmt.Printf("%s; create: %v, read-only: %v\n", data, err, fsx.IsReadOnly(err))
	// Output: kept; create: create /other: read-only file system, read-only: true
}

// A lock belongs to the file, not its name: once the lock file is removed
// or renamed over, its name locks again (what flock does) and SameFile
// tells its holder; the lock of the directory itself holds through all of
// it, until its holder lets go. Every wrapper passes both on.
func TestLockDirOutlivesTheLockFile(t *testing.T) {
	onEachWrapper(t, lockDirScript)
}

// onEachWrapper runs script on each file system of onEachFS, plain and
// through each wrapper, in a directory of its own.
func onEachWrapper(t *testing.T, script func(t *testing.T, fsys vfs.FS, dir string)) {
	onEachFS(t, func(t *testing.T, fsys vfs.FS, root string) {
		for _, w := range []struct {
			name string
			fsys vfs.FS
		}{
			{"plain", fsys},
			{"faulty", vfs.Faulty(fsys, nil)},
			{"counting", vfs.Counting(fsys, func(int64, bool) {})},
		} {
			t.Run(w.name, func(t *testing.T) { script(t, w.fsys, filepath.Join(root, w.name)) })
		}
	})
}

func lockDirScript(t *testing.T, fsys vfs.FS, dir string) {
	must(t, fsys.MkdirAll(dir))
	name := filepath.Join(dir, "lock")
	d, err := fsx.LockDir(fsys, dir)
	must(t, err)
	f, err := fsys.Lock(name)
	must(t, err)
	same, err := fsx.SameFile(fsys, f, name)
	expect(t, err == nil && same, "the lock file just locked: %v %v", same, err)

	_, err = fsx.LockDir(fsys, dir)
	expect(t, errors.Is(err, vfs.ErrLocked), "second directory lock while held: %v", err)

	// Removed: the name locks again, the directory does not.
	must(t, fsys.Remove(name))
	same, err = fsx.SameFile(fsys, f, name)
	expect(t, err == nil && !same, "removed lock file: same=%v %v", same, err)
	g, err := fsys.Lock(name)
	must(t, err)
	must(t, g.Close())
	_, err = fsx.LockDir(fsys, dir)
	expect(t, errors.Is(err, vfs.ErrLocked), "directory lock after the lock file went: %v", err)

	// Replaced by a rename: the holder sees another file.
	must(t, vfs.WriteFileAtomic(fsys, filepath.Join(dir, "other"), []byte("x")))
	must(t, fsys.Rename(filepath.Join(dir, "other"), name))
	same, err = fsx.SameFile(fsys, f, name)
	expect(t, err == nil && !same, "replaced lock file: same=%v %v", same, err)
	g, err = fsys.Lock(name)
	must(t, err)
	same, err = fsx.SameFile(fsys, g, name)
	expect(t, err == nil && same, "the new lock file: %v %v", same, err)
	must(t, g.Close())

	must(t, f.Close())
	must(t, d.Close())
	d, err = fsx.LockDir(fsys, dir)
	must(t, err)
	must(t, d.Close())
	_, err = fsx.LockDir(fsys, filepath.Join(dir, "missing"))
	expect(t, errors.Is(err, fs.ErrNotExist), "lock of a missing directory: %v", err)
}

// Where the file system cannot lock a directory or describe an open file,
// LockDir and SameFile say so with errors.ErrUnsupported; ReadOnly refuses
// the directory's lock as it refuses a file's.
func TestLockDirUnsupported(t *testing.T) {
	m := vfs.NewMem()
	must(t, m.MkdirAll("/d"))
	bare := struct{ vfs.FS }{m} // only the methods of FS
	_, err := fsx.LockDir(bare, "/d")
	expect(t, errors.Is(err, errors.ErrUnsupported), "LockDir without DirLocker: %v", err)
	f, err := m.Lock("/d/lock")
	must(t, err)
	defer f.Close()
	_, err = fsx.SameFile(m, struct{ vfs.File }{f}, "/d/lock")
	expect(t, errors.Is(err, errors.ErrUnsupported), "SameFile of a file without Stat: %v", err)
	_, err = fsx.LockDir(vfs.ReadOnly(m), "/d")
	expect(t, errors.Is(err, syscall.EROFS), "LockDir through ReadOnly: %v", err)
	expect(t, !vfs.OpLockDir.Mutating() && vfs.OpLockDir.String() == "lock-dir", "OpLockDir: %v", vfs.OpLockDir)
}

// A directory's lock is on the directory, not its path: once the directory
// is removed and made anew there (or, on OS, moved away), its path locks
// again and SameDir tells the holder. Every wrapper passes both on.
func TestSameDir(t *testing.T) {
	onEachWrapper(t, sameDirScript)
	t.Run("moved", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "d")
		must(t, os.Mkdir(dir, 0o755))
		d, err := fsx.LockDir(vfs.OS, dir)
		must(t, err)
		defer d.Close()
		if _, err := vfs.SameDir(vfs.OS, d, dir); errors.Is(err, errors.ErrUnsupported) {
			t.Skip("this platform's directory lock cannot tell its directory")
		}
		must(t, os.Rename(dir, dir+".old"))
		same, err := vfs.SameDir(vfs.OS, d, dir)
		expect(t, err == nil && !same, "moved away, nothing at the path: same=%v %v", same, err)
		must(t, os.Mkdir(dir, 0o755))
		same, err = vfs.SameDir(vfs.OS, d, dir)
		expect(t, err == nil && !same, "moved away, another directory at the path: same=%v %v", same, err)
		must(t, os.Remove(dir))
		must(t, os.Symlink(dir+".old", dir))
		same, err = vfs.SameDir(vfs.OS, d, dir)
		expect(t, err == nil && !same, "a symbolic link to the locked directory is not followed: same=%v %v", same, err)
		same, err = vfs.SameDir(vfs.OS, d, dir+".old")
		expect(t, err == nil && same, "the locked directory at its new path: same=%v %v", same, err)
	})
	t.Run("unsupported", func(t *testing.T) {
		m := vfs.NewMem()
		must(t, m.MkdirAll("/d"))
		d, err := m.LockDir("/d")
		must(t, err)
		defer d.Close()
		_, err = vfs.SameDir(m, struct{ io.Closer }{d}, "/d")
		expect(t, errors.Is(err, errors.ErrUnsupported), "SameDir of a lock that cannot tell: %v", err)
	})
}

func sameDirScript(t *testing.T, fsys vfs.FS, dir string) {
	must(t, fsys.MkdirAll(dir))
	d, err := fsx.LockDir(fsys, dir)
	must(t, err)
	defer d.Close()
	same, err := vfs.SameDir(fsys, d, dir)
	expect(t, err == nil && same, "the directory just locked: same=%v %v", same, err)

	must(t, fsys.RemoveAll(dir))
	same, err = vfs.SameDir(fsys, d, dir)
	expect(t, err == nil && !same, "removed: same=%v %v", same, err)
	must(t, fsys.MkdirAll(dir))
	same, err = vfs.SameDir(fsys, d, dir)
	expect(t, err == nil && !same, "made anew: same=%v %v", same, err)
	e, err := fsx.LockDir(fsys, dir)
	must(t, err) // the new directory is free
	same, err = vfs.SameDir(fsys, e, dir)
	expect(t, err == nil && same, "the new directory's lock: same=%v %v", same, err)
	must(t, d.Close()) // frees nothing of the new directory's
	_, err = fsx.LockDir(fsys, dir)
	expect(t, errors.Is(err, vfs.ErrLocked), "second lock of the new directory: %v", err)
	must(t, e.Close())
}
