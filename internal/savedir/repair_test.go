package savedir_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/vfs"
)

// savedGenerations commits n generations through the writer, keeping every
// one as a backup.
func savedGenerations(t *testing.T, n int) *vfs.Mem {
	t.Helper()
	mem := vfs.NewMem()
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: mem, Store: storeConfig()})
	must(t, err)
	for g := 1; g <= n; g++ {
		s := snapAt(g)
		s.World = emptyPECS(t)
		expect(t, w.Submit(savedir.Job{Snap: s, MaxBackups: n}), "busy")
		must(t, w.Wait().Err)
	}
	must(t, w.Close())
	return mem
}

func TestManifestVersions(t *testing.T) {
	mem := savedGenerations(t, 2)
	d, err := savedir.OpenDir(mem, "/save")
	must(t, err)
	m := d.Manifest()
	expect(t, m.Version == savedir.ManifestVersion && len(m.Chunks.Root) == 64, "manifest %+v", m)
	must(t, d.Close())

	// Format 1 still reads, and is written back in its own version.
	v1 := savedir.EncodeV1(m)
	must(t, vfs.WriteFileAtomic(mem, "/save/manifest", v1))
	d, err = savedir.OpenDir(mem, "/save")
	must(t, err)
	expect(t, d.Manifest().Version == 1 && d.Manifest().Chunks.Root == nil, "v1 read as %+v", d.Manifest())
	must(t, d.Close())
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: mem, Store: storeConfig()})
	must(t, err)
	pix := make([]uint32, size*size)
	_, err = w.Get(chunkstore.Pos{}, pix)
	must(t, err)
	expect(t, w.Generation() == 2 && pix[2] == 102, "v1 save opens at generation %d with %v", w.Generation(), pix[:4])
	must(t, w.Close())

	// Format 2 without a root is damage; a future version is ErrVersion.
	bad := bytes.Replace(v1, []byte(`"version": 1`), []byte(`"version": 2`), 1)
	must(t, vfs.WriteFileAtomic(mem, "/save/manifest", bad))
	_, err = savedir.OpenDir(mem, "/save")
	expect(t, errors.Is(err, autosave.ErrCorrupt), "v2 without root (or with a stale crc): %v", err)

	// Commit refuses a store reference without a root.
	d, err = savedir.OpenDirForRepair(mem, "/save")
	must(t, err)
	_, _, err = d.Commit(savedir.Commit{World: []byte("w"), Chunks: savedir.StoreRef{Name: savedir.ChunksName}, Generation: 9})
	expect(t, err != nil, "commit without a root")
}

// A directory opened for repair keeps everything, reports why its manifest
// is unusable, and commits a chosen generation without backing up the
// damaged one.
func TestOpenDirForRepair(t *testing.T) {
	mem := savedGenerations(t, 3)
	d, err := savedir.OpenDir(mem, "/save")
	must(t, err)
	good := d.Manifest()
	must(t, d.Close())
	must(t, vfs.WriteFileAtomic(mem, "/save/manifest", []byte("{garbage")))
	must(t, vfs.WriteFileAtomic(mem, "/save/world-9.pecs", []byte("stray")))

	_, err = savedir.OpenDir(mem, "/save")
	expect(t, errors.Is(err, autosave.ErrCorrupt), "OpenDir of a damaged manifest: %v", err)
	d, err = savedir.OpenDirForRepair(mem, "/save")
	must(t, err)
	expect(t, d.Manifest() == nil && errors.Is(d.ManifestErr(), autosave.ErrCorrupt), "manifest error %v", d.ManifestErr())
	expect(t, d.HighestGeneration() == 9, "highest generation %d", d.HighestGeneration())
	names, _ := mem.ReadDir("/save")
	expect(t, slices.Contains(names, "world-9.pecs"), "repair open removed files: %v", names)
	expect(t, len(d.Backups()) == 2, "backups %d", len(d.Backups()))

	m, _, err := d.Commit(savedir.Commit{World: []byte("repaired"), Chunks: good.Chunks, Generation: 10, MaxBackups: 5})
	must(t, err)
	expect(t, m.Generation == 10, "generation %d", m.Generation)
	_, _, err = d.Commit(savedir.Commit{World: []byte("w"), Chunks: good.Chunks, Generation: 3})
	expect(t, err != nil, "a generation below the committed one was accepted")
	_, _, err = d.Commit(savedir.Commit{World: []byte("again"), Chunks: good.Chunks, NoBackup: true, MaxBackups: 5})
	must(t, err)
	var gens []uint64
	for _, b := range d.Backups() {
		gens = append(gens, b.Generation)
	}
	expect(t, slices.Equal(gens, []uint64{2, 1}), "backups after a commit with NoBackup: %v", gens)
	r := checkDir(mem, "/save")
	expect(t, r.Manifest.Generation == 11 && len(r.Problems) == 1 && r.Problems[0].File == "world-11.pecs", "check: %v", r.Problems)

	// A missing manifest.
	must(t, d.Close())
	must(t, mem.Remove("/save/manifest"))
	d, err = savedir.OpenDirForRepair(mem, "/save")
	must(t, err)
	expect(t, errors.Is(d.ManifestErr(), autosave.ErrNoSave), "missing manifest: %v", d.ManifestErr())
	_, err = savedir.OpenDirForRepair(mem, "/nowhere")
	expect(t, err != nil, "a missing directory opened")
}

func TestDamagedAndDroppedBackups(t *testing.T) {
	mem := savedGenerations(t, 4)
	must(t, vfs.WriteFileAtomic(mem, "/save/backups/manifest-2", []byte("{}")))
	d, err := savedir.OpenDirForRepair(mem, "/save")
	must(t, err)
	bad := d.DamagedBackups()
	expect(t, len(bad) == 1 && bad[0].File == "backups/manifest-2" && len(d.Backups()) == 2, "damaged %v, backups %d", bad, len(d.Backups()))
	r := checkDir(mem, "/save")
	expect(t, len(r.Problems) == 1 && r.Problems[0].File == "backups/manifest-2", "check: %v", r.Problems)

	must(t, d.DropBackup(2))
	must(t, d.DropBackup(3))
	names, _ := mem.ReadDir("/save/backups")
	expect(t, slices.Equal(names, []string{"manifest-1", "mirror-chunks-data-1.pxsd", "mirror-chunks.pxsw", "world-1.pecs"}), "after dropping: %v", names)
	expect(t, checkDir(mem, "/save").OK(), "check after dropping")
}

// A backup of format 1 restores: its store generation's root is found in
// the store file.
func TestRestoreV1Backup(t *testing.T) {
	mem := savedGenerations(t, 4)
	d, err := savedir.OpenDirReadOnly(mem, "/save")
	must(t, err)
	for _, b := range d.Backups() {
		must(t, vfs.WriteFileAtomic(mem, "/save/backups/manifest-"+string(rune('0'+b.Generation)), savedir.EncodeV1(b)))
	}
	d, err = savedir.OpenDir(mem, "/save")
	must(t, err)
	b, err := d.Backup(1)
	must(t, err)
	expect(t, b.Version == 1 && b.Chunks.Root == nil, "backup 1 is %+v", b)
	r := checkDir(mem, "/save")
	expect(t, r.OK(), "check of v1 backups: %v", r.Problems)
	m, err := d.Restore(1, 4)
	must(t, err)
	expect(t, m.Generation == 5 && len(m.Chunks.Root) == 64, "restored %+v", m)
	must(t, d.Close())
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: mem, Store: storeConfig()})
	must(t, err)
	defer w.Close()
	pix := make([]uint32, size*size)
	_, err = w.Get(chunkstore.Pos{}, pix)
	must(t, err)
	expect(t, pix[1] == 101 && pix[2] != 102, "restored chunk holds %v", pix[:4])
}
