package savetool_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
	"github.com/arksave/arksave/vfs"
)

// changeChunks commits a generation of the save BuildLarge made in dir
// that changes pixel i of each chunk at ps, i from 0 to n-1.
func changeChunks(t testing.TB, dir string, n int, ps ...chunkstore.Pos) {
	t.Helper()
	d, err := savedir.OpenDir(nil, dir)
	must(t, err)
	defer d.Close()
	m := d.Manifest()
	world, err := d.ReadWorld(m)
	must(t, err)
	path, err := d.File(m.Chunks.Name)
	must(t, err)
	s, err := chunkstore.Open(path, &chunkstore.Options{Generator: savetest.Generator, Root: m.Chunks.Root})
	must(t, err)
	defer s.Close()
	b := s.NewBatch()
	for _, p := range ps {
		pix := make([]uint32, int(s.Options().ChunkSize)*int(s.Options().ChunkSize))
		_, err := s.Get(p, pix)
		must(t, err)
		for i := range n {
			pix[i] ^= 0x0300
		}
		b.PutChunk(p, pix)
	}
	_, err = s.Commit(b)
	must(t, err)
	_, _, err = d.Commit(savedir.Commit{World: world, MaxBackups: savetest.MaxBackups,
		Chunks: savedir.StoreRef{Name: m.Chunks.Name, Generation: s.Generation(), Root: s.Root(), Data: storetool.Tool.DataFileNames(s)}})
	must(t, err)
}

// five are the chunks changeChunks changes in the large saves.
var five = []chunkstore.Pos{{X: 0, Y: 0}, {X: 1, Y: 0}, {X: 2, Y: 2}, {X: -3, Y: 1}, {X: 4, Y: -4}}

// largeWithFive builds a save of n chunks of 64x64 pixels whose last
// generation changes 7 pixels in each of five chunks.
func largeWithFive(t testing.TB, n int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "save")
	must(t, savetest.BuildLarge(dir, n, 64))
	changeChunks(t, dir, 7, five...)
	return dir
}

// diffCounting diffs the last two generations of the save at dir and
// counts the bytes it reads.
func diffCounting(t testing.TB, dir string) (*savetool.DiffReport, int64) {
	t.Helper()
	var read atomic.Int64
	fsys := vfs.Counting(vfs.OS, func(n int64, write bool) {
		expect(t, !write, "diff wrote %d bytes", n)
		read.Add(n)
	})
	d, err := savedir.OpenDirReadOnly(nil, dir)
	must(t, err)
	g := d.Generation()
	read.Store(0)
	r, err := savetool.Diff(dir, g-1, g, savetool.Options{FS: fsys})
	must(t, err)
	return r, read.Load()
}

// Five chunks changed in a world of 2,000 stored chunks: the diff reads
// the page tables and the ten records of those chunks, skipping every
// record the generations share, and lists the five with their 7 pixels.
func TestDiffReadsWhatChanged(t *testing.T) {
	dir := largeWithFive(t, 2000)
	r, read := diffCounting(t, dir)
	var want []string
	for _, p := range []chunkstore.Pos{five[4], five[0], five[1], five[3], five[2]} { // by y, then x
		want = append(want, fmt.Sprintf("(%d, %d) changed", p.X, p.Y))
	}
	var got []string
	for _, c := range r.Chunks {
		got = append(got, fmt.Sprintf("(%d, %d) %s", c.X, c.Y, c.Kind))
		expect(t, c.Pixels == 7 && !c.AtLeast, "chunk (%d, %d): %d pixels, want 7", c.X, c.Y, c.Pixels)
	}
	expect(t, fmt.Sprint(got) == fmt.Sprint(want), "chunks %v, want %v", got, want)
	expect(t, r.Changes() == len(five) && len(r.Damaged) == 0, "more than the chunks: %v %v", lines(r), r.Damaged)
	entries := 2000 + 200 // a body block in every tenth chunk
	expect(t, r.Shared == entries-len(five), "%d entries shared, want %d", r.Shared, entries-len(five))
	store := dirBytes(t, dir)
	expect(t, read*20 < store, "diff read %d bytes of a store of %d", read, store)
}

// dirBytes returns the bytes of the files of the directory dir.
func dirBytes(t testing.TB, dir string) int64 {
	t.Helper()
	es, err := os.ReadDir(dir)
	must(t, err)
	var n int64
	for _, e := range es {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	return n
}

// BenchmarkDiff_5Of10000Chunks64 diffs two generations of a world of
// 10,000 chunks that differ by five.
func BenchmarkDiff_5Of10000Chunks64(b *testing.B) {
	dir := largeWithFive(b, 10000)
	b.ResetTimer()
	for b.Loop() {
		r, read := diffCounting(b, dir)
		if len(r.Chunks) != len(five) {
			b.Fatal(lines(r))
		}
		b.ReportMetric(float64(read), "read-B/op")
	}
}
