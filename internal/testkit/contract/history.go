package contract

import (
	"bytes"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/conv"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/snapshot"
	"github.com/arksave/arksave/vfs"
)

// The history rows: generations share what did not change, every kept one
// loads exactly, one is made current again by number, and a save writes
// what changed, not the world.

// historySaves is how many generations the history rows commit: enough
// for the small data files of historyOptions to seal several times and for
// the writer to compact between saves (after the 15th).
const historySaves = 20

// historyOptions are StoreOptions with small data files (16 KiB), so that
// a few saves seal several of them.
func historyOptions() chunkstore.Options {
	o := StoreOptions()
	o.DataFileSize = 16 << 10
	return o
}

// saveHistory commits generations 1 to historySaves of Snapshot through
// the writer, keeping them all as backups, and returns how many of the
// saves committed a compaction.
func saveHistory(t *testing.T, fsys vfs.FS, dir string) (compacted int) {
	t.Helper()
	w, err := savedir.OpenWriter(dir, savedir.Options{FS: fsys, Store: historyOptions()})
	must(t, err)
	for g := 1; g <= historySaves; g++ {
		r := save(t, w, g, historySaves)
		must(t, r.Err)
		if r.Compacted {
			compacted++
		}
	}
	must(t, w.Close())
	return compacted
}

// expectKept checks every generation d keeps, the committed one and each
// backup: its world, chunks, bodies and player are exactly what
// Snapshot(content[G]) made (content[G] = G when absent). It returns the
// backups' generations, newest first.
func expectKept(t *testing.T, fsys vfs.FS, d *savedir.Dir, content map[uint64]int) []uint64 {
	t.Helper()
	of := func(g uint64) int {
		if c, ok := content[g]; ok {
			return c
		}
		return int(g)
	}
	m := d.Manifest()
	expect(t, m != nil, "no committed generation: %v", d.ManifestErr())
	must(t, checkGeneration(fsys, d, m, of(m.Generation)))
	expect(t, len(d.DamagedBackups()) == 0, "damaged backups: %v", d.DamagedBackups())
	var gens []uint64
	for _, b := range d.Backups() {
		gens = append(gens, b.Generation)
		if err := checkGeneration(fsys, d, b, of(b.Generation)); err != nil {
			t.Fatalf("kept generation %d does not load exactly: %v", b.Generation, err)
		}
	}
	return gens
}

// everyKeptGeneration: saves with changes in between, compaction between
// some of them; then each kept generation, opened read-only by another
// program, holds exactly what it held when it was committed.
func everyKeptGeneration(t *testing.T, b Backend) {
	fsys, dir := b.New(t)
	compacted := saveHistory(t, fsys, dir)
	expect(t, compacted > 0, "no save of %d committed a compaction: the row tests nothing of it", historySaves)
	other := b.other(t, fsys)
	d, err := savedir.OpenDirReadOnly(other, dir)
	must(t, err)
	gens := expectKept(t, other, d, nil)
	want := make([]uint64, 0, historySaves-1)
	for g := historySaves - 1; g >= 1; g-- {
		want = append(want, uint64(g))
	}
	expect(t, slices.Equal(gens, want), "kept generations %v, want %v", gens, want)
}

// historyByGeneration: a kept generation, the oldest and then one in the
// middle, is made current by number (Dir.Restore) and loads exactly; the
// saves after it commit, and every generation kept before still loads.
func historyByGeneration(t *testing.T, b Backend) {
	fsys, dir := b.New(t)
	saveHistory(t, fsys, dir)
	content := map[uint64]int{}
	next := historySaves + 1 // the next generation's number
	for i, g := range []uint64{1, historySaves / 2} {
		d, err := savedir.OpenDir(fsys, dir)
		must(t, err)
		m, err := d.Restore(g, 4*historySaves)
		must(t, err)
		must(t, d.Close())
		expect(t, m.Generation == uint64(next), "restoring %d made generation %d, want %d", g, m.Generation, next)
		content[m.Generation] = int(g)
		next++
		other := b.other(t, fsys)
		w, err := savedir.OpenWriter(dir, savedir.Options{FS: other, Store: historyOptions()})
		must(t, err)
		expectContents(t, w, int(g))
		// Saves go on from the restored generation.
		for s := range 3 {
			c := 100 + 10*i + s
			must(t, save(t, w, c, 4*historySaves).Err)
			content[uint64(next)] = c
			next++
		}
		must(t, w.Close())
		ro, err := savedir.OpenDirReadOnly(other, dir)
		must(t, err)
		gens := expectKept(t, other, ro, content)
		expect(t, len(gens) == next-2, "after restoring %d: kept %v", g, gens)
	}
}

// The per-save bytes row: the same 5 chunks changed in a world of 40 and
// of 1,600 stored chunks.

// bytesPerSaveSaves is how many saves of changes a measurement averages:
// enough for compaction to run in the world of 1,600 stored chunks too
// (once its dead bytes pass a quarter of it, after about 110 saves), so
// that its cost weighs as it does over time.
const bytesPerSaveSaves = 120

// changedChunks is how many chunks each save of changes changes.
const changedChunks = 5

var historyWorld = bytes.Repeat([]byte("the same world file;"), 40)

// worldChunkSize and offPixels shape the chunks of the per-save bytes
// row: 64x64 chunks, each offPixels pixels (a tenth) off the generator,
// stored as a delta against it.
const worldChunkSize, offPixels = 64, 400

// WorldOptions are the chunk store options of the per-save bytes row.
func WorldOptions() chunkstore.Options {
	o := StoreOptions()
	o.ChunkSize = uint16(worldChunkSize)
	return o
}

// storedChunk is stored chunk i of a world of stored chunks, as save s
// leaves it (s = 0: as the world was built): offPixels pixels off the
// generator, at other places for each save.
func storedChunk(i, s int) snapshot.Chunk {
	pos := components.ChunkPos{X: int32(i % 40), Y: int32(2 + i/40)}
	pix := make([]uint32, worldChunkSize*worldChunkSize)
	flatGen{}.Generate(pos.X, pos.Y, 3, pix)
	x := uint32(i*7919 + s*104729 + 1)
	for k := range offPixels {
		x = x*1664525 + 1013904223
		pix[int(x>>8)%len(pix)] = 500 + uint32(k)%50
	}
	c := components.NewChunk(worldChunkSize, conv.Pixels(pix))
	return snapshot.Chunk{Pos: pos, Buf: c.Share(), Version: uint64(s + 1)}
}

// StoredWorld is the save that builds a world of n stored chunks.
func StoredWorld(n int) *snapshot.Snapshot {
	s := &snapshot.Snapshot{World: historyWorld}
	for i := range n {
		s.Chunks = append(s.Chunks, storedChunk(i, 0))
	}
	return s
}

// Changes is save s (from 1) of changes to a world of StoredWorld: the
// same 5 chunks, among the first 40 stored, each changed again.
func Changes(s int) *snapshot.Snapshot {
	snap := &snapshot.Snapshot{World: historyWorld}
	for k := range changedChunks {
		snap.Chunks = append(snap.Chunks, storedChunk(k*8, s))
	}
	return snap
}

// Keeping is what the saves of a bytes measurement keep of the older
// generations.
type Keeping struct {
	Name       string // for the test's and the benchmark's output
	MaxBackups int
	Retention  autosave.Retention
}

// TwoBackups keeps the two newest older generations: compaction between
// saves reclaims the records only older ones used.
var TwoBackups = Keeping{Name: "two-backups", MaxBackups: 2}

// GameDefaults keeps what autosave.DefaultConfig keeps: every save of the
// last hour (each save of a measurement), and thinned older ones.
func GameDefaults() Keeping {
	c := autosave.DefaultConfig()
	return Keeping{Name: "defaults", MaxBackups: c.MaxBackups, Retention: c.Retention}
}

// bytesPerSave builds a world of stored chunks at dir on fsys through the
// writer and returns the bytes the next bytesPerSaveSaves saves of Changes
// write through vfs.Counting, on average, everything the writer does after
// each save (compaction steps) included. The saves keep what keep says.
func bytesPerSave(t testing.TB, fsys vfs.FS, dir string, stored int, keep Keeping) float64 {
	t.Helper()
	var written atomic.Int64
	counting := vfs.Counting(fsys, func(n int64, write bool) {
		if write {
			written.Add(n)
		}
	})
	w, err := savedir.OpenWriter(dir, savedir.Options{FS: counting, Store: WorldOptions()})
	must(t, err)
	defer w.Close()
	SaveKeeping(t, w, StoredWorld(stored), keep)
	written.Store(0)
	for s := 1; s <= bytesPerSaveSaves; s++ {
		r := SaveKeeping(t, w, Changes(s), keep)
		expect(t, r.ChunksWritten == changedChunks, "save %d wrote %d chunks, want %d", s, r.ChunksWritten, changedChunks)
	}
	return float64(written.Load()) / bytesPerSaveSaves
}

// SaveKeeping commits snap, keeping what keep says, and waits for what the
// writer does after it.
func SaveKeeping(t testing.TB, w *savedir.Writer, snap *snapshot.Snapshot, keep Keeping) *autosave.Result {
	t.Helper()
	expect(t, w.Submit(savedir.Job{Snap: snap, MaxBackups: keep.MaxBackups, Retention: keep.Retention}), "writer busy")
	r := w.WaitIdle()
	must(t, r.Err)
	return r
}

// perSaveBytes: the same 5 changed chunks cost the same bytes in a world
// of 40 stored chunks and in one of 1,600 (within 1.5x; the benchmarks
// report the ratio itself), with two backups kept and with what the
// game's defaults keep.
func perSaveBytes(t *testing.T, b Backend) {
	for _, keep := range []Keeping{TwoBackups, GameDefaults()} {
		fsys, dir := b.New(t)
		small := bytesPerSave(t, fsys, dir, 40, keep)
		fsys, dir = b.New(t)
		big := bytesPerSave(t, fsys, dir, 1600, keep)
		t.Logf("%s: bytes per save of %d changed chunks: %.0f in a world of 40 stored, %.0f in one of 1,600: %.2fx", keep.Name, changedChunks, small, big, big/small)
		expect(t, big <= 1.5*small, "%s: a save of %d changed chunks writes %.0f bytes in a world of 1,600 stored chunks, %.2fx the %.0f of a world of 40", keep.Name, changedChunks, big, big/small, small)
	}
}

// checkGeneration checks that generation m of the save d reads holds
// exactly what Snapshot(g) made: world file, chunks, bodies, player.
func checkGeneration(fsys vfs.FS, d *savedir.Dir, m *savedir.Manifest, g int) error {
	world, err := d.ReadWorld(m)
	if err != nil {
		return err
	}
	if !bytes.Equal(world, worldOf(g)) {
		return fmt.Errorf("the world file of generation %d differs", g)
	}
	p, err := d.File(m.Chunks.Name)
	if err != nil {
		return err
	}
	o := StoreOptions()
	o.FS, o.ReadOnly, o.Root = fsys, true, m.Chunks.Root
	st, err := chunkstore.Open(p, &o)
	if err != nil {
		return err
	}
	defer st.Close()
	got := make([]uint32, chunkSize*chunkSize)
	for _, pos := range []components.ChunkPos{{X: 0, Y: 0}, {X: 1, Y: 0}} {
		if _, err := st.Get(conv.StorePos(pos), got); err != nil {
			return err
		}
		if !slices.Equal(got, pixelsAt(pos, g)) {
			return fmt.Errorf("generation %d: chunk %v differs", g, pos)
		}
	}
	bodies, err := st.Bodies(chunkstore.Pos{})
	if err != nil {
		return err
	}
	if len(bodies) != 1 || bodies[0].ID != uint64(g) {
		return fmt.Errorf("generation %d: bodies %v", g, bodies)
	}
	players, err := d.ReadPlayers(m)
	if err != nil {
		return err
	}
	rec, err := d.ReadPlayer(players, "ada")
	if err != nil {
		return err
	}
	if !bytes.Equal(rec, PlayerRecord(g)) {
		return fmt.Errorf("generation %d: the player's record differs", g)
	}
	return nil
}
