package savedir_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/conv"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/snapshot"
	"github.com/arksave/arksave/vfs"
)

// sparseSnap is save g of a player who edits far-apart regions: three
// chunks a million chunks apart in both directions, each with a few
// pixels changed (a small Delta record).
func sparseSnap(g int) *snapshot.Snapshot {
	s := &snapshot.Snapshot{World: []byte(fmt.Sprintf("world generation %d", g))}
	rng := rand.New(rand.NewPCG(uint64(g), 17))
	for range 3 {
		pos := components.ChunkPos{X: int32(rng.IntN(2_000_000) - 1_000_000), Y: int32(rng.IntN(2_000_000) - 1_000_000)}
		pix := make([]uint32, size*size)
		flatGen{}.Generate(pos.X, pos.Y, 3, pix)
		for i := range 5 {
			pix[rng.IntN(len(pix))] = uint32(200 + i + g)
		}
		c := components.NewChunk(size, conv.Pixels(pix))
		s.Chunks = append(s.Chunks, snapshot.Chunk{Pos: pos, Buf: c.Share(), Version: uint64(g)})
	}
	return s
}

// Sparse edits across far-apart regions do not create many tiny files:
// however scattered the chunks each save writes, the data files of the
// save directory fill up one after the other, each but the newest close
// to its size, and the manifest names them.
func TestSparseEditsDoNotCreateTinyFiles(t *testing.T) {
	mem := vfs.NewMem()
	cfg := storeConfig()
	cfg.DataFileSize = 8 << 10
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: mem, Store: cfg})
	must(t, err)
	var written int64
	for g := 1; g <= 60; g++ {
		expect(t, w.Submit(savedir.Job{Snap: sparseSnap(g), MaxBackups: 1}), "busy")
		r := w.Wait()
		must(t, r.Err)
		written += r.BytesWritten
	}
	m := w.Manifest()
	must(t, w.Close())
	files := dataFilesOnDisk(t, mem, "/save")
	expect(t, len(files) >= 2, "60 saves fit in %d data files", len(files))
	for i, name := range m.Chunks.Data {
		if i == len(m.Chunks.Data)-1 {
			break
		}
		size := fileSize(t, mem, "/save/"+name)
		expect(t, size > cfg.DataFileSize/2, "data file %s holds %d bytes of %d", name, size, cfg.DataFileSize)
	}
	// Every save wrote a few hundred bytes to the store, in 180 places
	// over a space of 10^12 chunks: the data files number what the bytes
	// need.
	maxFiles := int(written/(cfg.DataFileSize/2)) + 2
	expect(t, len(files) <= maxFiles, "%d data files for %d bytes written", len(files), written)
	for _, name := range files {
		expect(t, slices.Contains(m.Chunks.Data, name) || backupNames(t, mem, name), "data file %s is named by no manifest", name)
	}
}

// backupNames reports whether a backup's manifest names data file name.
func backupNames(t *testing.T, fsys vfs.FS, name string) bool {
	t.Helper()
	d, err := savedir.OpenDirReadOnly(fsys, "/save")
	must(t, err)
	for _, b := range d.Backups() {
		if slices.Contains(b.Chunks.Data, name) {
			return true
		}
	}
	return false
}

// A crash between the store's data append and the manifest swap preserves
// the last committed state: a save whose chunk records start a new data
// file is crashed at each of its mutating calls (the data file's creation
// and its records, their syncs and the directory's, the header slot, the
// world file, the temp manifest, the rename), keeping none, some or all of
// what was not synced; the directory then opens at the previous generation
// exactly, or at the new one once its manifest is in place, and saving
// goes on.
func TestCrashBetweenDataAppendAndManifestSwap(t *testing.T) {
	cfg := storeConfig()
	base := vfs.NewMem()
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: base, Store: cfg})
	must(t, err)
	for g := 1; g <= 2; g++ {
		expect(t, w.Submit(savedir.Job{Snap: randomSnap(g), MaxBackups: 1}), "busy")
		must(t, w.Wait().Err)
	}
	before := w.Manifest()
	must(t, w.Close())
	// The save at stake writes four 1 KiB records into 2 KiB data files:
	// it starts data files.
	rng := rand.New(rand.NewPCG(13, 14))
	sawOld, sawNew := false, false
	for _, keep := range []float64{0, 0.5, 1} {
		for n := 0; ; n++ {
			disk := base.Crash(1, nil)
			fsys, crash := vfs.NewCrashFS(disk, n, keep, rng)
			if w, err := savedir.OpenWriter("/save", savedir.Options{FS: fsys, Store: cfg}); err == nil {
				if w.Submit(savedir.Job{Snap: randomSnap(3), MaxBackups: 1}) {
					w.Wait()
				}
				w.Close()
			}
			after := crash.Crashed()
			if after == nil {
				expect(t, n > 12, "the save made only %d mutating calls", n)
				d, err := savedir.OpenDirReadOnly(disk, "/save")
				must(t, err)
				expect(t, len(d.Manifest().Chunks.Data) > len(before.Chunks.Data) || d.Manifest().Chunks.Data[0] != before.Chunks.Data[0],
					"the save started no data file: %v, before %v", d.Manifest().Chunks.Data, before.Chunks.Data)
				break
			}
			w2, err := savedir.OpenWriter("/save", savedir.Options{FS: after, Store: cfg})
			must(t, err)
			g := int(w2.Generation())
			w2.Close()
			expect(t, g == 2 || g == 3, "keep %v, crash before call %d: generation %d", keep, n, g)
			sawOld, sawNew = sawOld || g == 2, sawNew || g == 3
			expectRandomGenerationWith(t, after, cfg, g)
			// Saving goes on from there.
			w3, err := savedir.OpenWriter("/save", savedir.Options{FS: after, Store: cfg})
			must(t, err)
			expect(t, w3.Submit(savedir.Job{Snap: randomSnap(g + 1), MaxBackups: 1}), "busy")
			must(t, w3.Wait().Err)
			must(t, w3.Close())
			expectRandomGenerationWith(t, after, cfg, g+1)
			if r := storeCheck(t, after, cfg); !r.OK() {
				t.Fatalf("keep %v, crash before call %d, then a save: check: %s", keep, n, r)
			}
		}
	}
	expect(t, sawOld && sawNew, "crashes left the old generation %v, the new one %v", sawOld, sawNew)
}

// expectRandomGenerationWith is expectRandomGeneration with the store
// options cfg.
func expectRandomGenerationWith(t *testing.T, fsys vfs.FS, cfg chunkstore.Options, want int) {
	t.Helper()
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: fsys, Store: cfg})
	must(t, err)
	defer w.Close()
	world, err := w.ReadWorld()
	must(t, err)
	expect(t, string(world) == fmt.Sprintf("world generation %d", want), "world %q, want generation %d", world, want)
	got := make([]uint32, size*size)
	for _, c := range randomSnap(want).Chunks {
		_, err := w.Get(conv.StorePos(c.Pos), got)
		must(t, err)
		expect(t, slicesEqual(got, chunkPixels(t, c)), "chunk %v is not generation %d's", c.Pos, want)
	}
}

// Between saves the writer keeps the store compact: after each save and
// the compaction steps that follow it, the dead bytes of its data files
// are at most a quarter of them (or less than 16 KiB), however often the
// same chunks are saved over; no floor of four raw chunks lets a small
// world's store run mostly dead.
func TestWriterKeepsSmallStoresCompact(t *testing.T) {
	mem := vfs.NewMem()
	cfg := compactConfig()
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: mem, Store: cfg})
	must(t, err)
	defer w.Close()
	compactions := 0
	for g := 1; g <= 30; g++ {
		expect(t, w.Submit(savedir.Job{Snap: randomSnap(g), MaxBackups: 0}), "busy")
		r := w.Wait()
		must(t, r.Err)
		if r.Compacted {
			compactions++
			// The generation this save committed includes the steps: what
			// is dead is what this save superseded, at most the four
			// chunks' records it rewrote.
			dead := storeDead(t, mem, cfg)
			expect(t, dead <= 5*(size*size*4+64), "save %d: %d dead bytes after the compaction it commits", g, dead)
		}
	}
	expect(t, compactions >= 5, "%d of 30 saves committed a compaction", compactions)
}

// committedStore opens the directory's committed store generation
// read-only.
func committedStore(t *testing.T, fsys vfs.FS, cfg chunkstore.Options) *chunkstore.Store {
	t.Helper()
	d, err := savedir.OpenDirReadOnly(fsys, "/save")
	must(t, err)
	m := d.Manifest()
	p, err := d.File(m.Chunks.Name)
	must(t, err)
	c := cfg
	c.FS, c.ReadOnly, c.Root = fsys, true, m.Chunks.Root
	s, err := chunkstore.Open(p, &c)
	must(t, err)
	return s
}

// storeDead returns the dead bytes of the data files of the directory's
// committed store generation.
func storeDead(t *testing.T, fsys vfs.FS, cfg chunkstore.Options) int64 {
	t.Helper()
	s := committedStore(t, fsys, cfg)
	defer s.Close()
	var dead int64
	for _, f := range storetool.Tool.Files(s) {
		dead += f.Dead
	}
	return dead
}

// storeCheck checks the directory's committed store generation.
func storeCheck(t *testing.T, fsys vfs.FS, cfg chunkstore.Options) chunkstore.Report {
	t.Helper()
	s := committedStore(t, fsys, cfg)
	defer s.Close()
	r := s.Check()
	r.Problems = append(s.OpenReport().Problems, r.Problems...)
	return r
}
