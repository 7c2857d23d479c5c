package chunkstore

import (
	"encoding/binary"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arksave/arksave/internal/pxsw"
	"github.com/arksave/arksave/internal/testkit/terrain"
	"github.com/arksave/arksave/vfs"
)

var update = flag.Bool("update", false, "rewrite the corrupt fixtures of format 3 and the fuzz seeds in testdata")

// fixtureConfig is the configuration every fixture is written with
// (fixtures_test.go opens them with the same).
func fixtureConfig(fsys vfs.FS) Options {
	return Options{ChunkSize: 8, TileSize: 4, PixelSize: 4, Seed: 7, Generator: terrain.Generator{Surface: 8}, FS: fsys}
}

// goodFixture writes the fixtures' base store: two commits with full,
// delta (one pixel: its payload is stored uncompressed), empty chunks and
// bodies at row y = 20, the first in data file 1, the second in data file
// 2, which also holds a palette chunk with extra data at (5, 20). It returns
// the store's files by base name.
func goodFixture(t *testing.T) map[string][]byte {
	mem := vfs.NewMem()
	cfg := fixtureConfig(mem)
	s, err := Create("/w.pxsw", &cfg)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	random := func() []uint32 {
		p := make([]uint32, 64)
		for i := range p {
			p[i] = rng.Uint32()
		}
		return p
	}
	delta := func(p Pos, v uint32) []uint32 {
		pix := make([]uint32, 64)
		cfg.Generator.Generate(p.X, p.Y, 7, pix)
		pix[5] = v
		return pix
	}
	body := Body{ID: 1<<32 | 1, X: 3, Y: 4, Width: 3, Height: 2, Pixels: []uint32{1, 2, 3, 4, 5, 6},
		Shape: []bool{true, true, false, true, true, true}, Extension: []byte("ext")}
	b := s.NewBatch()
	b.PutChunk(Pos{0, 20}, random())
	b.PutChunk(Pos{1, 20}, delta(Pos{1, 20}, 0x0404))
	b.PutChunk(Pos{2, 20}, make([]uint32, 64))
	b.PutEntities(Pos{0, 20}, EntityBlock{Bodies: []Body{body}})
	if _, err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	// As if data file 1 were full: the second commit starts data file 2.
	s.setAppend(storeOffset(2, dataHeaderSize))
	b = s.NewBatch()
	b.PutChunk(Pos{3, 20}, random())
	b.PutChunk(Pos{4, 20}, delta(Pos{4, 20}, 0x0405)) // not the same delta: the dictionary would share it
	b.PutChunkExtra(Pos{5, 20}, paletteFixture(), []byte("chest at (3, 4)"))
	if _, err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	return fixtureFiles(t, s, mem)
}

// fixtureFiles checks and closes a fixture's store and returns its files
// by base name.
func fixtureFiles(t *testing.T, s *Store, mem *vfs.Mem) map[string][]byte {
	t.Helper()
	if r := s.Check(); !r.OK() {
		t.Fatal(r)
	}
	s.Close()
	out := map[string][]byte{}
	for _, name := range []string{"w.pxsw", "w-data-1.pxsd", "w-data-2.pxsd"} {
		data, err := vfs.ReadFile(mem, "/"+name)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = data
	}
	return out
}

// recordsOf lists the records of a good data file in order, as store
// offsets of data file n.
func recordsOf(t *testing.T, data []byte, n uint32) (hs []handle, kinds []recordKind) {
	mem := vfs.NewMem()
	f, _ := mem.Create("/f")
	f.WriteAt(data, 0)
	err := scanRecords(f, storeOffset(n, firstRecord(n)), storeOffset(n, int64(len(data))), func(ev scanEvent) bool {
		if ev.bad != nil {
			t.Fatal(ev.bad)
		}
		hs = append(hs, handle{Offset: ev.off, Length: uint32(ev.length)})
		kinds = append(kinds, ev.hdr.kind)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return hs, kinds
}

// reseal recomputes the CRC32-C of the record at h in its file's bytes, so
// that only the damage inside it is left to find.
func reseal(data []byte, h handle) {
	rec := data[h.FileOffset() : h.FileOffset()+int64(h.Length)]
	binary.LittleEndian.PutUint32(rec[recordCRCOff:], recordCRC(rec))
}

// paletteFixture is the pixels of the fixtures' palette chunk: four
// materials, scattered (so that LZ4 does not pay and the payload is stored
// as is).
func paletteFixture() []uint32 {
	rng := rand.New(rand.NewPCG(4, 4))
	var materials [16]uint32
	for i := range materials {
		materials[i] = rng.Uint32()
	}
	pix := make([]uint32, 64)
	for i := range pix {
		pix[i] = materials[rng.IntN(16)]
	}
	return pix
}

// payloadAt returns the offset in its file of the payload of the record at
// h: after its header and the parts its flags announce.
func payloadAt(data []byte, h handle) int64 {
	at := h.FileOffset() + recordHeaderSize
	flags := data[h.FileOffset()+recordFlagsOff]
	if flags&flagLayers != 0 {
		at += layersSize
	}
	if flags&flagExtra != 0 {
		at += extraLenSz + int64(binary.LittleEndian.Uint32(data[at:]))
	}
	return at
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// with returns a copy of the fixture's files with name replaced by data
// (removed when data is nil).
func with(files map[string][]byte, name string, data []byte) map[string][]byte {
	out := maps.Clone(files)
	if data == nil {
		delete(out, name)
	} else {
		out[name] = data
	}
	return out
}

// TestWriteFixtures rewrites testdata/v3/* and the fuzz seeds; run it with
// -update after a format change. Each fixture is a directory named after
// its defect holding a store's files; fixtures_test.go says what each must
// produce. testdata/v1 and testdata/v2 hold the same defects in stores
// written by the code of formats 1 and 2: never rewritten, they hold this
// version to reading those formats.
func TestWriteFixtures(t *testing.T) {
	if !*update {
		t.Skip("run with -update to rewrite testdata")
	}
	good := goodFixture(t)
	const main, d1, d2 = "w.pxsw", "w-data-1.pxsd", "w-data-2.pxsd"
	hs1, kinds1 := recordsOf(t, good[d1], 1)
	hs2, kinds2 := recordsOf(t, good[d2], 2)
	last := func(hs []handle, kinds []recordKind, k recordKind) handle {
		var h handle
		for i := range hs {
			if kinds[i] == k {
				h = hs[i]
			}
		}
		return h
	}
	out := map[string]map[string][]byte{"good": good}
	edit := func(name, file string, fn func(b []byte) []byte) {
		out[name] = with(good, file, fn(clone(good[file])))
	}
	edit("truncated-header", main, func(b []byte) []byte { return b[:40] })
	edit("bad-magic", main, func(b []byte) []byte { b[0], b[64] = 'X', 'X'; return b })
	edit("bad-version", main, func(b []byte) []byte { b[4], b[68] = 9, 9; return b })
	edit("bad-header-crc", main, func(b []byte) []byte { b[9] ^= 0x10; b[64+9] ^= 0x10; return b })
	edit("bad-newest-slot", main, func(b []byte) []byte { b[20] ^= 1; return b }) // generation 2 lives in slot A
	edit("no-header", main, func(b []byte) []byte { clear(b[:dataStart]); return b })
	j := last(hs2, kinds2, pxsw.RecordJournal)
	edit("bad-entry-crc", d2, func(b []byte) []byte {
		b[j.FileOffset()+recordHeaderSize+tableHeaderSize+2] ^= 4 // first entry's x
		reseal(b, j)
		return b
	})
	fr := last(hs2, kinds2, pxsw.RecordFull)
	edit("bad-record-crc", d2, func(b []byte) []byte { b[payloadAt(b, fr)+3] ^= 0x80; return b })
	br := last(hs1, kinds1, pxsw.RecordBodies)
	edit("bad-body-crc", d1, func(b []byte) []byte {
		b[br.FileOffset()+recordHeaderSize+bodyBlockHeaderSize+8] ^= 1 // body X
		reseal(b, br)
		return b
	})
	dr := last(hs2, kinds2, pxsw.RecordDelta)
	edit("delta-out-of-range", d2, func(b []byte) []byte {
		at := payloadAt(b, dr) + deltaCountSize
		b[at], b[at+1], b[at+2] = 0xFF, 0xFF, 0x00 // pixel 65535 of 64
		reseal(b, dr)
		return b
	})
	pr := last(hs2, kinds2, pxsw.RecordPalette)
	if pr.IsZero() || good[d2][pr.FileOffset()+recordHeaderSize-7] != codecNone {
		t.Fatalf("the palette chunk is not a stored palette record: %v", pr)
	}
	edit("palette-index-out-of-range", d2, func(b []byte) []byte {
		at := payloadAt(b, pr)
		b[at+paletteHeadSize+4*16+9] = 16 // pixel 9's index: the palette holds 16
		reseal(b, pr)
		return b
	})
	edit("extra-too-long", d2, func(b []byte) []byte {
		at := pr.FileOffset() + recordHeaderSize + layersSize
		binary.LittleEndian.PutUint32(b[at:], 1<<20) // more than the record holds
		reseal(b, pr)
		return b
	})
	edit("truncated-pagetable", d2, func(b []byte) []byte { return b[:j.FileOffset()+int64(j.Length)/2] })
	edit("truncated-record", d2, func(b []byte) []byte { return b[:dr.FileOffset()+int64(dr.Length)/2] })
	out["missing-data-file"] = with(good, d1, nil)
	edit("truncated-data-file", d1, func(b []byte) []byte { return b[:br.FileOffset()+int64(br.Length)/2] })
	edit("foreign-data-file", d2, func(b []byte) []byte {
		b[16] ^= 1 // the seed: another store's data file 2
		binary.LittleEndian.PutUint32(b[dataHeaderCRC:], dataHeaderChecksum(b))
		return b
	})

	if err := os.RemoveAll(filepath.Join("testdata", "v3")); err != nil {
		t.Fatal(err)
	}
	for name, files := range out {
		dir := filepath.Join("testdata", "v3", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for file, data := range files {
			if err := os.WriteFile(filepath.Join(dir, file), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Fuzz seeds: every fixture of both versions for FuzzOpen (the store
	// file and data files 1 and 2), every record for FuzzRecord.
	seed := func(target, name string, args ...[]byte) { writeSeed(t, target, name, args...) }
	for name, files := range out {
		seed("FuzzOpen", "v3-"+name, files[main], files[d1], files[d2])
	}
	v2, _ := filepath.Glob(filepath.Join("testdata", "v2", "*"))
	for _, dir := range v2 {
		files := map[string][]byte{}
		for _, f := range []string{main, d1, d2} {
			files[f], _ = os.ReadFile(filepath.Join(dir, f))
		}
		seed("FuzzOpen", "v2-"+filepath.Base(dir), files[main], files[d1], files[d2])
	}
	v1, _ := filepath.Glob(filepath.Join("testdata", "v1", "*.pxsw"))
	for _, p := range v1 {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		seed("FuzzOpen", "v1-"+filepath.Base(p), data, nil, nil)
	}
	for i, h := range append(hs1, hs2...) {
		kinds := append(kinds1, kinds2...)
		file := good[dataFileName(main, h.File())]
		seed("FuzzRecord", fmt.Sprintf("v3-%02d-%s", i, strings.ReplaceAll(kinds[i].String(), " ", "-")), file[h.FileOffset():h.FileOffset()+int64(h.Length)])
	}
	writeAxesFixtures(t)
}

// axesFixtureGen is the KeyGenerator of the fixtures of 3 and 4 axes
// (fixtures_test.go opens them with the same): the terrain of another
// (x, y) for each z and w.
type axesFixtureGen struct{ terrain.Generator }

func (g axesFixtureGen) GenerateKey(k Key, seed uint64, dst []uint32) {
	g.Generate(k.Axis(0)+37*k.Axis(2), k.Axis(1)-53*k.Axis(3), seed, dst)
}

// axesFixture writes a store of n axes: a Full, a Delta and an Empty
// chunk, a Palette chunk with extra data and a body set at keys that
// differ only in z and w, a journal
// segment, a deletion, then a checkpoint, across two data files.
func axesFixture(t *testing.T, n int) map[string][]byte {
	mem := vfs.NewMem()
	cfg := fixtureConfig(mem)
	cfg.Axes, cfg.Generator = n, axesFixtureGen{terrain.Generator{Surface: 8}}
	s, err := Create("/w.pxsw", &cfg)
	if err != nil {
		t.Fatal(err)
	}
	key := func(x, y, z int32) Key {
		if n == 3 {
			return Key3(x, y, z)
		}
		return Key4(x, y, z, -z)
	}
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	random := func() []uint32 {
		p := make([]uint32, 64)
		for i := range p {
			p[i] = rng.Uint32()
		}
		return p
	}
	delta := func(k Key) []uint32 {
		pix := make([]uint32, 64)
		cfg.Generator.(KeyGenerator).GenerateKey(k, 7, pix)
		pix[5] ^= 0x0404
		return pix
	}
	body := Body{ID: 1<<32 | 1, X: 3, Y: 4, Width: 3, Height: 2, Pixels: []uint32{1, 2, 3, 4, 5, 6},
		Shape: []bool{true, true, false, true, true, true}, Extension: []byte("ext")}
	b := s.NewBatch()
	b.PutChunkKey(key(0, 20, 1), random())
	b.PutChunkKey(key(0, 20, 2), delta(key(0, 20, 2)))
	b.PutChunkKey(key(0, 20, 3), make([]uint32, 64))
	painted := make([]uint32, 64)
	for i := range painted {
		painted[i] = 0x0307 + uint32(rng.IntN(4))<<8 // four shades of brick
	}
	b.PutChunkExtraKey(key(2, 20, 1), painted, []byte("sign"))
	b.PutEntitiesKey(key(0, 20, 1), EntityBlock{Bodies: []Body{body}})
	if _, err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	s.setAppend(storeOffset(2, dataHeaderSize))
	b = s.NewBatch()
	b.PutChunkKey(key(0, 20, -1), random())
	b.DeleteChunkKey(key(0, 20, 3))
	if _, err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	s.needCheckpoint = true
	b = s.NewBatch()
	b.PutChunkKey(key(1, 20, 1), delta(key(1, 20, 1)))
	if _, err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	return fixtureFiles(t, s, mem)
}

// writeAxesFixtures writes testdata/v3/axes-3 and axes-4, stores of 3
// and 4 axes, and their fuzz seeds (TestWriteFixtures calls it).
func writeAxesFixtures(t *testing.T) {
	for _, n := range []int{3, 4} {
		files := axesFixture(t, n)
		name := fmt.Sprintf("axes-%d", n)
		dir := filepath.Join("testdata", "v3", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for file, data := range files {
			if err := os.WriteFile(filepath.Join(dir, file), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		seed := func(target, name string, args ...[]byte) { writeSeed(t, target, name, args...) }
		seed("FuzzOpen", "v3-"+name, files["w.pxsw"], files["w-data-1.pxsd"], files["w-data-2.pxsd"])
		for _, d := range []uint32{1, 2} {
			hs, kinds := recordsOf(t, files[dataFileName("w.pxsw", d)], d)
			for i, h := range hs {
				file := files[dataFileName("w.pxsw", h.File())]
				seed("FuzzRecord", fmt.Sprintf("v3-%s-%d-%02d-%s", name, d, i, strings.ReplaceAll(kinds[i].String(), " ", "-")),
					file[h.FileOffset():h.FileOffset()+int64(h.Length)])
			}
		}
	}
}

// writeSeed writes a seed of fuzz target in testdata/fuzz.
func writeSeed(t *testing.T, target, name string, args ...[]byte) {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	body := "go test fuzz v1\n"
	for _, a := range args {
		body += fmt.Sprintf("[]byte(%q)\n", a)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
