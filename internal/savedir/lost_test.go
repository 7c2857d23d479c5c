package savedir_test

import (
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/vfs"
)

// A directory whose manifest is lost while a committed save's files remain
// is never opened for writing: the error names arksave repair, and no file
// is removed, changed or reused. What a first save that never committed
// leaves is no save: a new world starts there.
func TestLostManifest(t *testing.T) {
	saved := func(t *testing.T, gens int) *vfs.Mem {
		mem := savedMem(t, gens)
		must(t, mem.Remove("/save/manifest"))
		return mem
	}
	for _, tc := range []struct {
		name string
		gens int
		undo func(t *testing.T, mem *vfs.Mem) // takes away what a committed save leaves
	}{
		{"backups-and-later-generations", 3, nil},
		{"no-backups", 3, func(t *testing.T, mem *vfs.Mem) { must(t, mem.RemoveAll("/save/backups")) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := saved(t, tc.gens)
			if tc.undo != nil {
				tc.undo(t, mem)
			}
			before := snapshotFiles(t, mem, "/save")
			_, err := savedir.OpenDir(mem, "/save")
			expect(t, errors.Is(err, autosave.ErrCorrupt) && strings.Contains(err.Error(), "arksave repair"), "OpenDir: %v", err)
			for _, fresh := range []bool{false, true} {
				_, err = savedir.OpenWriter("/save", savedir.Options{FS: mem, Store: storeConfig(), Fresh: fresh})
				expect(t, errors.Is(err, autosave.ErrCorrupt) && strings.Contains(err.Error(), "arksave repair"), "OpenWriter (fresh %v): %v", fresh, err)
			}
			expectSameFiles(t, before, snapshotFiles(t, mem, "/save"))
			r := checkDir(mem, "/save")
			named := slices.ContainsFunc(r.Problems, func(p chunkstore.Problem) bool {
				return p.File == savedir.ManifestName && strings.Contains(p.Err.Error(), "arksave repair")
			})
			expect(t, named, "check does not name the lost manifest: %v", r.Problems)
		})
	}

	// A first save that stopped before its manifest: the store at
	// generation 1 and world-1.pecs are no save. (Mirrors are grown after
	// a commit: such a save has none.)
	mem := saved(t, 1)
	must(t, mem.RemoveAll("/save/backups"))
	d, err := savedir.OpenDir(mem, "/save")
	must(t, err)
	expect(t, d.Manifest() == nil && errors.Is(d.ManifestErr(), autosave.ErrNoSave), "manifest %v", d.ManifestErr())
	expect(t, slices.Equal(d.Leftovers(), []string{"chunks-data-1.pxsd", "chunks.pxsw", "world-1.pecs"}), "leftovers %v", d.Leftovers())
	must(t, d.Close())
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: mem, Store: storeConfig()})
	must(t, err)
	must(t, save(t, w, 1).Err)
	must(t, w.Close())
	expectGeneration(t, mem, 1)
}

// A writer that never committed leaves no chunk store behind: closing it
// removes the one it started.
func TestUnsavedWorldLeavesNothing(t *testing.T) {
	mem := vfs.NewMem()
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: mem, Store: storeConfig()})
	must(t, err)
	must(t, w.Close())
	names, _ := mem.ReadDir("/save")
	expect(t, slices.Equal(names, []string{savedir.LockName}), "after a writer that never saved: %v", names)
}

// A save directory on a medium that cannot be written opens read-only: its
// save reads, every save fails with ErrReadOnly (naming the directory),
// and nothing changes.
func TestReadOnlyMedium(t *testing.T) {
	mem := savedMem(t, 2)
	ro := vfs.ReadOnly(mem)
	before := snapshotFiles(t, mem, "/save")

	d, err := savedir.OpenDir(ro, "/save")
	must(t, err)
	expect(t, errors.Is(d.ReadOnly(), autosave.ErrReadOnly) && errors.Is(d.ReadOnly(), syscall.EROFS), "ReadOnly: %v", d.ReadOnly())
	expect(t, d.Generation() == 2, "generation %d", d.Generation())
	_, _, err = d.Commit(savedir.Commit{World: []byte("w"), Chunks: d.Manifest().Chunks})
	expect(t, errors.Is(err, autosave.ErrReadOnly), "commit on a read-only medium: %v", err)
	must(t, d.Close())

	expectGeneration(t, ro, 2) // the writer opens it and reads every chunk and body
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: ro, Store: storeConfig()})
	must(t, err)
	for range 3 {
		r := save(t, w, 3)
		expect(t, errors.Is(r.Err, autosave.ErrReadOnly) && r.Dir == "/save" && strings.Contains(r.Err.Error(), "/save") && r.Generation == 2,
			"a save on a read-only medium: %+v", r)
	}
	must(t, w.Close())
	expectSameFiles(t, before, snapshotFiles(t, mem, "/save"))

	// A new world cannot start there, and says why.
	_, err = savedir.OpenWriter("/save", savedir.Options{FS: ro, Store: storeConfig(), Fresh: true})
	expect(t, errors.Is(err, autosave.ErrReadOnly), "a new world on a read-only medium: %v", err)
}

// savedMem returns a file system holding /save with gens generations saved
// by the writer (MaxBackups 1).
func savedMem(t *testing.T, gens int) *vfs.Mem {
	t.Helper()
	mem := vfs.NewMem()
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: mem, Store: storeConfig()})
	must(t, err)
	for g := 1; g <= gens; g++ {
		must(t, save(t, w, g).Err)
	}
	must(t, w.Close())
	return mem
}
