package vfs_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/arksave/arksave/internal/testkit"
	"github.com/arksave/arksave/vfs"
)

var expect, must = testkit.Expect, testkit.Must

func readAll(t *testing.T, fsys vfs.FS, name string) []byte {
	t.Helper()
	b, err := vfs.ReadFile(fsys, name)
	must(t, err)
	return b
}

// onEachFS runs script as a subtest on the real file system (in a
// temporary directory) and on Mem (under /r).
func onEachFS(t *testing.T, script func(t *testing.T, fsys vfs.FS, root string)) {
	t.Run("os", func(t *testing.T) { script(t, vfs.OS, t.TempDir()) })
	t.Run("mem", func(t *testing.T) { script(t, vfs.NewMem(), "/r") })
}

// The same script must behave the same on the real file system and on Mem.
func TestFSConformance(t *testing.T) {
	onEachFS(t, func(t *testing.T, fsys vfs.FS, root string) {
		p := func(s string) string { return filepath.Join(root, s) }
		must(t, fsys.MkdirAll(p("a/b")))
		f, err := fsys.Create(p("a/b/f"))
		must(t, err)
		_, err = f.WriteAt([]byte("hello"), 0)
		must(t, err)
		_, err = f.WriteAt([]byte("XY"), 7) // leaves a zero gap
		must(t, err)
		size, err := f.Size()
		must(t, err)
		expect(t, size == 9, "size %d", size)
		buf := make([]byte, 4)
		n, err := f.ReadAt(buf, 7)
		expect(t, n == 2 && errors.Is(err, io.EOF), "short read at end: n=%d err=%v", n, err)
		must(t, f.Truncate(5))
		must(t, f.Sync())
		must(t, f.Close())
		expect(t, bytes.Equal(readAll(t, fsys, p("a/b/f")), []byte("hello")), "content after truncate")

		_, err = fsys.Open(p("a/missing"))
		expect(t, errors.Is(err, fs.ErrNotExist), "open missing: %v", err)
		_, err = fsys.Create(p("nodir/f"))
		expect(t, errors.Is(err, fs.ErrNotExist), "create in missing dir: %v", err)

		ro, err := fsys.Open(p("a/b/f"))
		must(t, err)
		_, err = ro.WriteAt([]byte("x"), 0)
		expect(t, err != nil, "write to read-only file succeeded")
		must(t, ro.Close())

		must(t, vfs.WriteFileAtomic(fsys, p("a/g"), []byte("v1")))
		must(t, vfs.WriteFileAtomic(fsys, p("a/g"), []byte("v2")))
		expect(t, string(readAll(t, fsys, p("a/g"))) == "v2", "atomic replace")
		names, err := fsys.ReadDir(p("a"))
		must(t, err)
		expect(t, slices.Equal(names, []string{"b", "g"}), "readdir: %v", names)

		must(t, fsys.Rename(p("a/g"), p("a/b/h")))
		_, err = fsys.Stat(p("a/g"))
		expect(t, errors.Is(err, fs.ErrNotExist), "old name after rename: %v", err)
		fi, err := fsys.Stat(p("a/b/h"))
		must(t, err)
		expect(t, fi.Size() == 2 && !fi.IsDir(), "stat after rename: %v %v", fi.Size(), fi.IsDir())
		must(t, fsys.SyncDir(p("a/b")))

		expect(t, fsys.Remove(p("a")) != nil, "removing a non-empty directory succeeded")
		must(t, fsys.RemoveAll(p("a")))
		_, err = fsys.Stat(p("a/b/f"))
		expect(t, errors.Is(err, fs.ErrNotExist), "after RemoveAll: %v", err)
		must(t, fsys.RemoveAll(p("a")))
	})
}

func TestMemCrashDropsUnsynced(t *testing.T) {
	m := vfs.NewMem()
	must(t, m.MkdirAll("/d"))
	must(t, m.SyncDir("/"))

	f, err := m.Create("/d/synced")
	must(t, err)
	_, err = f.WriteAt([]byte("durable"), 0)
	must(t, err)
	must(t, f.Sync())
	_, err = f.WriteAt([]byte("LOST"), 0)
	must(t, err)

	g, err := m.Create("/d/nodirsync")
	must(t, err)
	_, err = g.WriteAt([]byte("x"), 0)
	must(t, err)
	must(t, g.Sync())

	// Before the directory is synced, neither new name survives.
	c := m.Crash(0, nil)
	names, err := c.ReadDir("/d")
	must(t, err)
	expect(t, len(names) == 0, "unsynced directory entries survived: %v", names)

	must(t, m.SyncDir("/d"))
	c = m.Crash(0, nil)
	expect(t, string(readAll(t, c, "/d/synced")) == "durable", "synced content: %q", readAll(t, c, "/d/synced"))
	expect(t, string(readAll(t, c, "/d/nodirsync")) == "x", "synced file after dir sync")

	all := m.Crash(1, nil)
	expect(t, string(readAll(t, all, "/d/synced")) == "LOSTble", "keep-all crash: %q", readAll(t, all, "/d/synced"))

	// The crashed copy is independent of the original.
	h, err := c.OpenRW("/d/synced")
	must(t, err)
	_, err = h.WriteAt([]byte("zz"), 0)
	must(t, err)
	expect(t, string(readAll(t, m, "/d/synced")) == "LOSTble", "crash copy shares data with the original")
}

func TestMemCrashRenameAndRemove(t *testing.T) {
	m := vfs.NewMem()
	must(t, vfs.WriteFileAtomic(m, "/old", []byte("1")))
	must(t, m.Remove("/old"))
	c := m.Crash(0, nil)
	expect(t, string(readAll(t, c, "/old")) == "1", "an unsynced remove must not survive a crash")
	must(t, m.SyncDir("/"))
	_, err := m.Crash(0, nil).Stat("/old")
	expect(t, errors.Is(err, fs.ErrNotExist), "synced remove: %v", err)
}

// A crash at any step of WriteFileAtomic leaves the old or the new content.
func TestWriteFileAtomicCrashes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, keep := range []float64{0, 0.5, 1} {
		for n := 0; ; n++ {
			m := vfs.NewMem()
			must(t, vfs.WriteFileAtomic(m, "/f", []byte("old content")))
			fsys, crash := vfs.NewCrashFS(m, n, keep, rng)
			err := vfs.WriteFileAtomic(fsys, "/f", []byte("new content!"))
			after := crash.Crashed()
			if after == nil {
				must(t, err)
				break
			}
			expect(t, errors.Is(err, vfs.ErrCrashed), "step %d: %v", n, err)
			got := string(readAll(t, after, "/f"))
			expect(t, got == "old content" || got == "new content!", "keep %v, crash before step %d: %q", keep, n, got)
		}
	}
}

func TestMemCrashKeepSomeKeepsDurable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := vfs.NewMem()
	f, err := m.Create("/f")
	must(t, err)
	must(t, m.SyncDir("/"))
	base := bytes.Repeat([]byte{'a'}, 64)
	_, err = f.WriteAt(base, 0)
	must(t, err)
	must(t, f.Sync())
	for i := range 8 {
		_, err = f.WriteAt([]byte{'b', 'b'}, int64(64+2*i))
		must(t, err)
	}
	sawPartial := false
	for range 50 {
		got := readAll(t, m.Crash(0.5, rng), "/f")
		expect(t, bytes.HasPrefix(got, base), "durable prefix lost: %q", got)
		if len(got) > 64 && len(got) < 80 {
			sawPartial = true
		}
	}
	expect(t, sawPartial, "keep=0.5 never kept part of the unsynced writes")
}

func TestCountdown(t *testing.T) {
	m := vfs.NewMem()
	cd := &vfs.Countdown{N: 1, Err: syscall.ENOSPC}
	fsys := vfs.Faulty(m, cd)
	f, err := fsys.Create("/f") // call 0
	must(t, err)
	_, err = f.WriteAt([]byte("abcd"), 0) // call 1: fails
	expect(t, errors.Is(err, syscall.ENOSPC), "want ENOSPC, got %v", err)
	expect(t, cd.Fired() && cd.Calls() == 2, "fired=%v calls=%d", cd.Fired(), cd.Calls())
	_, err = f.WriteAt([]byte("abcd"), 0) // not sticky: succeeds
	must(t, err)

	short := vfs.Faulty(m, vfs.InjectorFunc(func(op vfs.Op, _ string) error {
		if op == vfs.OpWrite {
			return io.ErrShortWrite
		}
		return nil
	}))

	g, err := short.Create("/g")
	must(t, err)
	n, err := g.WriteAt([]byte("abcd"), 0)
	expect(t, n == 2 && errors.Is(err, io.ErrShortWrite), "short write: n=%d err=%v", n, err)
	expect(t, string(readAll(t, m, "/g")) == "ab", "short write content")

	sticky := &vfs.Countdown{N: 0, Err: syscall.EIO, Sticky: true, Ops: []vfs.Op{vfs.OpSync}}
	fsys = vfs.Faulty(m, sticky)
	h, err := fsys.Create("/h")
	must(t, err)
	first, second := h.Sync(), h.Sync()
	expect(t, errors.Is(first, syscall.EIO) && errors.Is(second, syscall.EIO), "sticky sync failure: %v, then %v", first, second)
}
