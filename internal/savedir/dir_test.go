package savedir_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/testkit"
	"github.com/arksave/arksave/vfs"
)

var expect, must = testkit.Expect, testkit.Must

// fakeRoot stands in for a chunk store root where no store is opened.
var fakeRoot = []byte("root")

func world(g int) []byte { return bytes.Repeat([]byte(fmt.Sprintf("world %d;", g)), 10+g) }

func commit(d *savedir.Dir, g int, backups int) error {
	_, _, err := d.Commit(savedir.Commit{
		World:      world(g),
		Chunks:     savedir.StoreRef{Name: savedir.ChunksName, Generation: uint64(g), Root: fakeRoot},
		MaxBackups: backups,
		Now:        time.UnixMilli(int64(1000 * g)),
	})
	return err
}

// loaded returns the generation a fresh open of the directory sees and
// checks that its world is exactly that generation's.
func loaded(t *testing.T, fsys vfs.FS) int {
	t.Helper()
	d, err := savedir.OpenDirReadOnly(fsys, "/save")
	must(t, err)
	m := d.Manifest()
	if m == nil {
		return 0
	}
	w, err := d.ReadWorld(nil)
	must(t, err)
	expect(t, bytes.Equal(w, world(int(m.Generation))), "generation %d has another generation's world", m.Generation)
	expect(t, m.Chunks.Generation == m.Generation, "chunk ref %d in generation %d", m.Chunks.Generation, m.Generation)
	return int(m.Generation)
}

func TestCommitAndReopen(t *testing.T) {
	mem := vfs.NewMem()
	d, err := savedir.OpenDir(mem, "/save")
	must(t, err)
	expect(t, d.Manifest() == nil && d.Generation() == 0, "new directory has a save")
	_, err = d.ReadWorld(nil)
	expect(t, errors.Is(err, autosave.ErrNoSave), "ReadWorld of empty dir: %v", err)
	for g := 1; g <= 4; g++ {
		must(t, commit(d, g, 2))
	}
	expect(t, loaded(t, mem) == 4, "reopen")
	names, _ := mem.ReadDir("/save")
	expect(t, slices.Equal(names, []string{"backups", "lock", "manifest", "world-4.pecs"}), "top level: %v", names)
	gens := []uint64{}
	for _, b := range d.Backups() {
		gens = append(gens, b.Generation)
		w, err := d.ReadWorld(b)
		must(t, err)
		expect(t, bytes.Equal(w, world(int(b.Generation))), "backup %d world", b.Generation)
	}
	expect(t, slices.Equal(gens, []uint64{3, 2}), "backups: %v", gens)
	m, err := d.Backup(3)
	must(t, err)
	expect(t, m.CreatedMS == 1000, "created time is the first save's: %d", m.CreatedMS)
	_, err = d.Backup(1)
	expect(t, err != nil, "pruned backup still restorable")
}

// A crash at every step of a commit, keeping none, some or all unsynced
// data, leaves exactly the old or the new generation.
func TestCommitCrashAtEveryStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, keep := range []float64{0, 0.3, 0.7, 1} {
		sawOld, sawNew := false, false
		for n := 0; ; n++ {
			mem := vfs.NewMem()
			d, err := savedir.OpenDir(mem, "/save")
			must(t, err)
			must(t, commit(d, 1, 1))
			must(t, commit(d, 2, 1))
			must(t, d.Close())
			fsys, crash := vfs.NewCrashFS(mem, n, keep, rng)
			d, err = savedir.OpenDir(fsys, "/save")
			if crash.Crashed() == nil {
				must(t, err)
				err = commit(d, 3, 1)
			}
			after := crash.Crashed()
			if after == nil {
				must(t, err)
				break
			}
			g := loaded(t, after)
			expect(t, g == 2 || g == 3, "keep %v, crash before call %d: generation %d", keep, n, g)
			sawOld, sawNew = sawOld || g == 2, sawNew || g == 3
			// The reopened directory commits on top of what it found.
			d2, err := savedir.OpenDir(after, "/save")
			must(t, err)
			must(t, commit(d2, g+1, 1))
			expect(t, loaded(t, after) == g+1, "commit after crash")
		}
		expect(t, sawOld, "keep %v: no crash point left the old generation", keep)
		if keep == 1 {
			expect(t, sawNew, "keep everything: no crash point kept the new generation")
		}
	}
}

// An error at any call leaves the previous generation loadable, and a later
// commit succeeds.
func TestCommitErrorsAtEveryStep(t *testing.T) {
	for _, e := range []error{syscall.ENOSPC, syscall.EIO} {
		for n := 0; ; n++ {
			mem := vfs.NewMem()
			d0, err := savedir.OpenDir(mem, "/save")
			must(t, err)
			must(t, commit(d0, 1, 1))
			must(t, d0.Close())
			cd := &vfs.Countdown{N: n, Err: e}
			fsys := vfs.Faulty(mem, cd)
			d, err := savedir.OpenDir(fsys, "/save")
			if err == nil {
				err = commit(d, 2, 1)
			}
			if !cd.Fired() {
				must(t, err)
				break
			}
			g := loaded(t, mem)
			expect(t, g == 1 || g == 2, "%v at call %d: generation %d", e, n, g)
			if d != nil {
				gen := int(d.Generation())
				expect(t, gen == g, "%v at call %d: Dir says %d, disk says %d", e, n, gen, g)
				must(t, commit(d, gen+1, 1)) // the fault is gone: the retry commits
				expect(t, loaded(t, mem) == gen+1, "retry after %v at call %d", e, n)
			}
		}
	}
}

func TestManifestCorruptionDetected(t *testing.T) {
	mem := vfs.NewMem()
	d, err := savedir.OpenDir(mem, "/save")
	must(t, err)
	must(t, commit(d, 1, 0))
	must(t, d.Close())
	good, err := vfs.ReadFile(mem, "/save/manifest")
	must(t, err)
	for i := range len(good) * 8 {
		bad := bytes.Clone(good)
		bad[i/8] ^= 1 << (i % 8)
		must(t, vfs.WriteFileAtomic(mem, "/save/manifest", bad))
		_, err := savedir.OpenDir(mem, "/save")
		expect(t, errors.Is(err, autosave.ErrCorrupt) || errors.Is(err, autosave.ErrVersion),
			"flip of bit %d (byte %q) not detected: %v", i, good[i/8], err)
	}
}

// A reader's Dir is stale when the manifest changed since it opened: a new
// generation, a manifest that appeared (or became readable), one that went
// away; not while it stays unreadable.
func TestStale(t *testing.T) {
	mem := vfs.NewMem()
	d, err := savedir.OpenDir(mem, "/save")
	must(t, err)
	must(t, commit(d, 1, 0))
	good, err := vfs.ReadFile(mem, "/save/manifest")
	must(t, err)
	ro, err := savedir.OpenDirReadOnly(mem, "/save")
	must(t, err)
	expect(t, !ro.Stale(), "a reader is stale with nothing changed")
	must(t, commit(d, 2, 0))
	expect(t, ro.Stale(), "a reader of generation 1 is not stale at generation 2")

	must(t, vfs.WriteFileAtomic(mem, "/save/manifest", good[:len(good)/2]))
	ro, err = savedir.OpenDirReadOnly(mem, "/save")
	must(t, err)
	expect(t, ro.Manifest() == nil, "a torn manifest was read")
	expect(t, !ro.Stale(), "a reader is stale while the manifest stays torn")
	must(t, vfs.WriteFileAtomic(mem, "/save/manifest", good))
	expect(t, ro.Stale(), "a reader of a torn manifest is not stale once it is whole again")

	ro, err = savedir.OpenDirReadOnly(mem, "/save")
	must(t, err)
	must(t, mem.Remove("/save/manifest"))
	expect(t, ro.Stale(), "a reader is not stale once the manifest went away")
	must(t, d.Close())
}

func TestWorldCorruptionDetected(t *testing.T) {
	mem := vfs.NewMem()
	d, err := savedir.OpenDir(mem, "/save")
	must(t, err)
	must(t, commit(d, 1, 0))
	f, err := mem.OpenRW("/save/world-1.pecs")
	must(t, err)
	_, err = f.WriteAt([]byte{'X'}, 3)
	must(t, err)
	_, err = d.ReadWorld(nil)
	expect(t, errors.Is(err, autosave.ErrCorrupt), "flipped world byte: %v", err)
	must(t, f.Truncate(5))
	_, err = d.ReadWorld(nil)
	expect(t, errors.Is(err, autosave.ErrCorrupt), "truncated world: %v", err)
	must(t, mem.Remove("/save/world-1.pecs"))
	_, err = d.ReadWorld(nil)
	expect(t, errors.Is(err, autosave.ErrCorrupt), "missing world: %v", err)
}

func TestOpenRemovesFilesNewerThanManifest(t *testing.T) {
	mem := vfs.NewMem()
	d, err := savedir.OpenDir(mem, "/save")
	must(t, err)
	must(t, commit(d, 1, 0))
	must(t, d.Close())
	for _, n := range []string{"world-2.pecs", "manifest.tmp", "chunks-2.pxsw", "notes.txt"} {
		must(t, vfs.WriteFileAtomic(mem, "/save/"+n, []byte("x")))
	}
	_, err = savedir.OpenDir(mem, "/save")
	must(t, err)
	names, _ := mem.ReadDir("/save")
	expect(t, slices.Equal(names, []string{"lock", "manifest", "notes.txt", "world-1.pecs"}), "after cleanup: %v", names)
}

// A directory that lost its manifest while a save's files remain is not
// opened for writing: the error names the repair, and nothing is removed.
func TestOpenKeepsChunkStoreWithoutManifest(t *testing.T) {
	mem := vfs.NewMem()
	must(t, mem.MkdirAll("/save"))
	must(t, vfs.WriteFileAtomic(mem, "/save/chunks.pxsw", []byte("chunks")))
	must(t, vfs.WriteFileAtomic(mem, "/save/world-3.pecs", []byte("w")))
	_, err := savedir.OpenDir(mem, "/save")
	expect(t, errors.Is(err, autosave.ErrCorrupt) && strings.Contains(err.Error(), "arksave repair"), "lost manifest: %v", err)
	names, _ := mem.ReadDir("/save")
	expect(t, slices.Equal(names, []string{"chunks.pxsw", "lock", "world-3.pecs"}), "a chunk store and world files without manifest must be kept: %v", names)
}

func TestOpenCreatesNestedDirectoriesDurably(t *testing.T) {
	mem := vfs.NewMem()
	d, err := savedir.OpenDir(mem, "/a/b/save")
	must(t, err)
	_, _, err = d.Commit(savedir.Commit{World: world(1), Chunks: savedir.StoreRef{Name: savedir.ChunksName, Generation: 1, Root: fakeRoot}})
	must(t, err)
	after := mem.Crash(0, nil)
	d2, err := savedir.OpenDir(after, "/a/b/save")
	must(t, err)
	expect(t, d2.Generation() == 1, "nested save directory lost in a crash: generation %d", d2.Generation())
}

// Generations near the top: a manifest of generation 2^64-1 is corrupt, a
// backup of it not the save's (it never wraps to 0 nor sorts first), the
// last valid generation commits nothing after it, and real backups are
// pruned in their order.
func TestOverflowingGenerations(t *testing.T) {
	mem := vfs.NewMem()
	d, err := savedir.OpenDir(mem, "/save")
	must(t, err)
	must(t, commit(d, 1, 1))
	must(t, commit(d, 2, 1))
	b, err := d.Backup(1)
	must(t, err)
	b.Generation = math.MaxUint64
	b.World.Name = fmt.Sprintf("backups/world-%d.pecs", uint64(math.MaxUint64))
	must(t, vfs.WriteFileAtomic(mem, fmt.Sprintf("/save/backups/manifest-%d", uint64(math.MaxUint64)), b.Encode()))
	expect(t, len(d.Backups()) == 1 && d.Backups()[0].Generation == 1 && len(d.DamagedBackups()) == 0, "backups %v, damaged %v", d.Backups(), d.DamagedBackups())
	must(t, commit(d, 3, 1))
	gens := []uint64{}
	for _, b := range d.Backups() {
		gens = append(gens, b.Generation)
	}
	expect(t, slices.Equal(gens, []uint64{2}), "after a commit keeping one backup: %v", gens)
	must(t, d.Close())

	m := d.Manifest()
	for _, g := range []uint64{math.MaxUint64, savedir.MaxGeneration + 1, 0} {
		m.Generation, m.World.Name = g, savedir.WorldName(g)
		must(t, vfs.WriteFileAtomic(mem, "/save/manifest", m.Encode()))
		_, err = savedir.OpenDir(mem, "/save")
		expect(t, errors.Is(err, autosave.ErrCorrupt) && strings.Contains(err.Error(), "generation"), "generation %d: %v", g, err)
	}
	m.Generation, m.World.Name = savedir.MaxGeneration, savedir.WorldName(savedir.MaxGeneration)
	must(t, vfs.WriteFileAtomic(mem, "/save/manifest", m.Encode()))
	d, err = savedir.OpenDirForRepair(mem, "/save")
	must(t, err)
	err = commit(d, 4, 1)
	expect(t, err != nil && strings.Contains(err.Error(), "last generation"), "a commit after the last generation: %v", err)
	must(t, d.Close())
}
