package chunkstore_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/vfs"
)

// A store opened read-only through storetool's WithDataPaths reads its
// data files from the paths given (a save directory's mirrors), every
// chunk as committed, even with the files next to the store gone; a
// writable open with other paths is refused. ScanRange walks the records
// of a data file from any record's offset to the end of another.
func TestDataPathsAndScanRange(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	must(t, mem.MkdirAll("/s"))
	s, err := chunkstore.Create("/s/chunks.pxsw", &cfg)
	must(t, err)
	rng := rand.New(rand.NewPCG(3, 3))
	want := map[chunkstore.Pos][]uint32{}
	for i := range 6 {
		b := s.NewBatch()
		p := chunkstore.Pos{X: int32(i)}
		want[p] = randomChunk(small, rng)
		b.PutChunk(p, want[p])
		_, err := s.Commit(b)
		must(t, err)
	}
	root := s.Root()
	names := storetool.Tool.DataFileNames(s)
	must(t, s.Close())
	expect(t, len(names) >= 2, "data files %v: the test needs two", names)

	// Each data file moves to a path of its own.
	paths := map[uint32]string{}
	for _, n := range names {
		_, num, ok := storetool.Tool.ParseDataFileName(n)
		expect(t, ok, "%s is no data file's name", n)
		data, err := vfs.ReadFile(mem, "/s/"+n)
		must(t, err)
		must(t, mem.MkdirAll("/elsewhere"))
		must(t, vfs.WriteFileAtomic(mem, "/elsewhere/mirror-"+n, data))
		must(t, mem.Remove("/s/"+n))
		paths[num] = "/elsewhere/mirror-" + n
	}
	o := storetool.Tool.WithDataPaths(chunkstore.Options{FS: mem, ReadOnly: true, Root: root, Generator: gen}, paths)
	r, err := chunkstore.Open("/s/chunks.pxsw", &o)
	must(t, err)
	expect(t, r.Check().OK(), "check through the other paths: %v", r.Check())
	got := make([]uint32, npix)
	for p, pix := range want {
		ok, err := r.Get(p, got)
		must(t, err)
		expect(t, ok && slices.Equal(got, pix), "chunk %v through the other paths", p)
	}
	must(t, r.Close())
	o.ReadOnly = false
	_, err = chunkstore.Open("/s/chunks.pxsw", &o)
	expect(t, err != nil, "a writable open reading data files from other paths")

	// ScanRange from the second record of data file 1 meets the others.
	first := paths[1]
	var all []storetool.ScanRecord
	must(t, storetool.Tool.ScanRange(mem, first, 0, 1<<40, func(r storetool.ScanRecord) bool { all = append(all, r); return true }))
	expect(t, len(all) >= 2 && all[0].Err == nil, "records of data file 1: %v", all)
	var rest []storetool.ScanRecord
	must(t, storetool.Tool.ScanRange(mem, first, all[1].Handle.FileOffset(), 1<<40, func(r storetool.ScanRecord) bool { rest = append(rest, r); return true }))
	expect(t, slices.Equal(rest, all[1:]), "from the second record: %v, want %v", rest, all[1:])
	// A range that ends inside a record meets it cut short.
	var cut []storetool.ScanRecord
	end := all[0].Handle.FileOffset() + int64(all[0].Handle.Length) - 1
	must(t, storetool.Tool.ScanRange(mem, first, 0, end, func(r storetool.ScanRecord) bool { cut = append(cut, r); return true }))
	expect(t, len(cut) == 1 && errors.Is(cut[0].Err, chunkstore.ErrCorrupt), "a range ending inside the first record: %v", cut)
	err = storetool.Tool.ScanRange(mem, "/s/chunks.pxsw", 0, 1<<40, func(storetool.ScanRecord) bool { return true })
	expect(t, errors.Is(err, chunkstore.ErrCorrupt), "ScanRange of the store file: %v", err)
}
