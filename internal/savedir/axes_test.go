package savedir_test

import (
	"path"
	"slices"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/testkit"
	"github.com/arksave/arksave/internal/testkit/ndsave"
	"github.com/arksave/arksave/vfs"
)

// A save whose chunk store has keys of 3 or 4 axes commits, opens and
// verifies; a damaged record of its committed generation makes a load
// fall back to the backup, committed as a new generation whose store (a
// copy, of the same axes) holds the backup's chunks; a later commit and
// Cleanup remove what no generation names, and every kept generation
// still reads.
func TestAxesGenerations(t *testing.T) {
	ndsave.ForAxes(t, func(t *testing.T, n int) {
		mem := vfs.NewMem()
		const dir = "/save"
		s := ndsave.BuildFS(t, mem, dir, n)
		d, err := savedir.OpenDir(mem, dir)
		testkit.Must(t, err)
		m := d.Manifest()
		testkit.Expect(t, m.Generation == 2 && len(d.Backups()) == 1, "generation %d, %d backups", m.Generation, len(d.Backups()))
		_, probs, err := d.VerifyGeneration(m, nil)
		testkit.Expect(t, err == nil && len(probs) == 0, "verify: %v %v", probs, err)
		d.Close()

		file := ndsave.DamageFS(t, mem, dir, ndsave.Key(n, 0, 0, 1, -1), false) // changed in generation 2
		d, err = savedir.OpenDir(mem, dir)
		testkit.Must(t, err)
		_, fb, err := d.LoadIntact(nil)
		testkit.Must(t, err)
		testkit.Expect(t, fb != nil && fb.Damaged == 2 && fb.Loaded == 1 && fb.Generation == 3, "fallback %v", fb)
		testkit.Expect(t, len(fb.Problems) == 1 && fb.Problems[0].File == file, "problems %v", fb.Problems)
		got := ndsave.ReadGeneration(t, d, d.Manifest(), n)
		expectChunks(t, got.Chunks, s.Previous)

		// Two more generations over the fallen-back one (its store,
		// one commit each), then Cleanup: the damaged generation
		// leaves the backups, its files with it.
		for i := range 2 {
			commitOver(t, d, n, int32(10+i))
		}
		testkit.Must(t, d.Cleanup())
		testkit.Expect(t, d.Generation() == 5 && len(d.Backups()) == ndsave.MaxBackups, "generation %d, %d backups", d.Generation(), len(d.Backups()))
		for _, b := range append(d.Backups(), d.Manifest()) {
			_, probs, err := d.VerifyGeneration(b, nil)
			testkit.Expect(t, err == nil && len(probs) == 0, "generation %d: %v %v", b.Generation, probs, err)
		}
		names, err := mem.ReadDir(dir)
		testkit.Must(t, err)
		for _, name := range names {
			name = path.Base(name)
			testkit.Expect(t, name != "chunks.pxsw" && name != file, "%s left after Cleanup: %v", name, names)
		}
		last := ndsave.ReadGeneration(t, d, d.Manifest(), n)
		want := ndsave.Key(n, 11, 0, 1, 2)
		testkit.Expect(t, slices.Equal(last.Chunks[want], ndsave.Full(want)), "the last commit's chunk %v", want)
		d.Close()
	})
}

func expectChunks(t *testing.T, got, want map[chunkstore.Key][]uint32) {
	t.Helper()
	testkit.Expect(t, len(got) == len(want), "%d chunks, want %d", len(got), len(want))
	for k, pix := range want {
		testkit.Expect(t, slices.Equal(got[k], pix), "chunk %v differs", k)
	}
}

// commitOver commits a generation over d's committed one: its chunk store
// with a Full chunk at (x, 0, 1, 2), and the same world.
func commitOver(t *testing.T, d *savedir.Dir, n int, x int32) {
	t.Helper()
	m := d.Manifest()
	world, err := d.ReadWorld(m)
	testkit.Must(t, err)
	p, err := d.File(m.Chunks.Name)
	testkit.Must(t, err)
	o := ndsave.Options(d.FS(), n)
	o.Root = m.Chunks.Root
	s, err := chunkstore.Open(p, &o)
	testkit.Must(t, err)
	defer s.Close()
	b := s.NewBatch()
	k := ndsave.Key(n, x, 0, 1, 2)
	b.PutChunkKey(k, ndsave.Full(k))
	_, err = s.Commit(b)
	testkit.Must(t, err)
	_, _, err = d.Commit(savedir.Commit{World: world, MaxBackups: ndsave.MaxBackups,
		Chunks: savedir.StoreRef{Name: m.Chunks.Name, Generation: s.Generation(), Root: s.Root(), Data: storetool.Tool.DataFileNames(s)}})
	testkit.Must(t, err)
}
