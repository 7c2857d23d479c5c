package chunkstore

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arksave/arksave/internal/terrain"
	"github.com/arksave/arksave/vfs"
)

var update = flag.Bool("update", false, "rewrite the corrupt fixtures and fuzz seeds in testdata")

// fixtureConfig is the configuration every fixture is written with
// (fixtures_test.go opens them with the same).
func fixtureConfig(fsys vfs.FS) Options {
	return Options{ChunkSize: 8, TileSize: 4, PixelSize: 4, Seed: 7, Generator: terrain.Generator{Surface: 8}, FS: fsys}
}

// goodFixture writes the fixtures' base store: two commits with full,
// delta (one pixel: its payload is stored uncompressed), empty chunks and
// bodies at row y = 20.
func goodFixture(t *testing.T) []byte {
	mem := vfs.NewMem()
	cfg := fixtureConfig(mem)
	s, err := Create("/good.pxsw", &cfg)
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
	delta := func(p Pos) []uint32 {
		pix := make([]uint32, 64)
		cfg.Generator.Generate(p.X, p.Y, 7, pix)
		pix[5] = 0x0404
		return pix
	}
	body := Body{ID: 1<<32 | 1, X: 3, Y: 4, Width: 3, Height: 2, Pixels: []uint32{1, 2, 3, 4, 5, 6},
		Shape: []bool{true, true, false, true, true, true}, Extension: []byte("ext")}
	b := s.NewBatch()
	b.PutChunk(Pos{0, 20}, random())
	b.PutChunk(Pos{1, 20}, delta(Pos{1, 20}))
	b.PutChunk(Pos{2, 20}, make([]uint32, 64))
	b.PutBodies(Pos{0, 20}, []Body{body})
	if _, err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	b = s.NewBatch()
	b.PutChunk(Pos{3, 20}, random())
	b.PutChunk(Pos{4, 20}, delta(Pos{4, 20}))
	if _, err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	if r := s.Check(); !r.OK() {
		t.Fatal(r)
	}
	s.Close()
	data, err := vfs.ReadFile(mem, "/good.pxsw")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// recordsOf lists the records of a good file in order.
func recordsOf(t *testing.T, data []byte) (hs []Handle, kinds []RecordKind) {
	mem := vfs.NewMem()
	f, _ := mem.Create("/f")
	f.WriteAt(data, 0)
	err := scanRecords(f, dataStart, int64(len(data)), func(ev scanEvent) bool {
		if ev.bad != nil {
			t.Fatal(ev.bad)
		}
		hs = append(hs, Handle{ev.off, uint32(ev.length)})
		kinds = append(kinds, ev.hdr.kind)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return hs, kinds
}

// reseal recomputes the CRC32-C of the record at h, so that only the
// damage inside it is left to find.
func reseal(data []byte, h Handle) {
	rec := data[h.Offset:h.end()]
	binary.LittleEndian.PutUint32(rec[recordCRCOff:], recordCRC(rec))
}

func clone(b []byte) []byte { return append([]byte(nil), b...) }

// TestWriteFixtures rewrites testdata/*.pxsw and the fuzz seeds; run it
// with -update after a format change. Each fixture is named after its
// defect; fixtures_test.go says what each must produce.
func TestWriteFixtures(t *testing.T) {
	if !*update {
		t.Skip("run with -update to rewrite testdata")
	}
	good := goodFixture(t)
	hs, kinds := recordsOf(t, good)
	last := func(k RecordKind) Handle {
		var h Handle
		for i := range hs {
			if kinds[i] == k {
				h = hs[i]
			}
		}
		return h
	}
	out := map[string][]byte{"good.pxsw": good}

	out["truncated-header.pxsw"] = good[:40]

	b := clone(good)
	b[0], b[64] = 'X', 'X'
	out["bad-magic.pxsw"] = b

	b = clone(good)
	b[4], b[68] = 9, 9
	out["bad-version.pxsw"] = b

	b = clone(good)
	b[9] ^= 0x10
	b[64+9] ^= 0x10
	out["bad-header-crc.pxsw"] = b

	b = clone(good) // generation 2 lives in slot A
	b[20] ^= 1
	out["bad-newest-slot.pxsw"] = b

	b = clone(good)
	clear(b[:dataStart])
	out["no-header.pxsw"] = b

	b = clone(good)
	j := last(RecordJournal)
	b[j.Offset+recordHeaderSize+tableHeaderSize+2] ^= 4 // first entry's x
	reseal(b, j)
	out["bad-entry-crc.pxsw"] = b

	b = clone(good)
	fr := last(RecordFull)
	b[fr.Offset+recordHeaderSize+3] ^= 0x80
	out["bad-record-crc.pxsw"] = b

	b = clone(good)
	br := last(RecordBodies)
	b[br.Offset+recordHeaderSize+bodyBlockHeaderSize+8] ^= 1 // body X
	reseal(b, br)
	out["bad-body-crc.pxsw"] = b

	b = clone(good)
	dr := last(RecordDelta)
	at := dr.Offset + recordHeaderSize + deltaCountSize
	b[at], b[at+1], b[at+2] = 0xFF, 0xFF, 0x00 // pixel 65535 of 64
	reseal(b, dr)
	out["delta-out-of-range.pxsw"] = b

	out["truncated-pagetable.pxsw"] = good[:j.Offset+int64(j.Length)/2]
	out["truncated-record.pxsw"] = good[:dr.Offset+int64(dr.Length)/2]

	for name, data := range out {
		if err := os.WriteFile(filepath.Join("testdata", name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Fuzz seeds: every fixture for FuzzOpen, every record for FuzzRecord.
	seed := func(target, name string, data []byte) {
		dir := filepath.Join("testdata", "fuzz", target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range out {
		seed("FuzzOpen", name, data)
	}
	for i, h := range hs {
		seed("FuzzRecord", fmt.Sprintf("%02d-%s", i, strings.ReplaceAll(kinds[i].String(), " ", "-")), good[h.Offset:h.end()])
	}
}
