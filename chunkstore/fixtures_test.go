package chunkstore_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/testkit/terrain"
	"github.com/arksave/arksave/vfs"
)

// fixtureConfig matches fixtures_internal_test.go, which writes the files.
func fixtureConfig(fsys vfs.FS) chunkstore.Options {
	return chunkstore.Options{ChunkSize: 8, TileSize: 4, PixelSize: 4, Seed: 7, Generator: terrain.Generator{Surface: 8}, FS: fsys}
}

// loadFixture returns a disk holding fixture name of testdata: a store
// file (format 1: v1/*.pxsw) at storePath, or a directory of a store's
// files (format 2: v2/*, format 3: v3/*) in the root.
func loadFixture(t testing.TB, name string) *vfs.Mem {
	t.Helper()
	p := filepath.Join("testdata", name)
	entries, err := os.ReadDir(p)
	if err != nil {
		return memWith(t, must2[[]byte](t)(os.ReadFile(p)))
	}
	files := map[string][]byte{}
	for _, e := range entries {
		files["/"+e.Name()] = must2[[]byte](t)(os.ReadFile(filepath.Join(p, e.Name())))
	}
	return memWithFiles(t, files)
}

func hasProblem(r chunkstore.Report, target error) bool {
	for _, p := range r.Problems {
		if errors.Is(p.Err, target) {
			return true
		}
	}
	return false
}

// Corrupt fixtures, each named after its defect, and what each must give:
// the same defects in stores of format 1 (a single file, written by the
// code of that version) and of format 2 (a store file and two data files),
// and the defects of data files.
func TestCorruptFixtures(t *testing.T) {
	p := func(x int32) *chunkstore.Pos { return &chunkstore.Pos{X: x, Y: 20} }
	type fixture struct {
		file   string
		open   []error          // Open fails matching each of these
		report error            // else OpenReport has a problem matching it
		gen    uint64           // else the generation it opens at
		get    *chunkstore.Pos  // Get of this chunk fails matching getErr
		getErr []error          //
		bodies *chunkstore.Pos  // Bodies of this chunk fails matching bodiesErr
		check  error            // Check reports a problem matching it
		stored []chunkstore.Pos // chunks that must still read as stored
		names  string           // a problem of the open report or the check names this file
	}
	both := []fixture{
		{file: "good", gen: 2, stored: []chunkstore.Pos{{0, 20}, {1, 20}, {2, 20}, {3, 20}, {4, 20}}},
		{file: "truncated-header", open: []error{chunkstore.ErrNoValidHeader, io.ErrUnexpectedEOF}},
		{file: "bad-magic", open: []error{chunkstore.ErrNoValidHeader, chunkstore.ErrBadMagic}},
		{file: "bad-version", open: []error{chunkstore.ErrNoValidHeader, chunkstore.ErrVersion}},
		{file: "bad-header-crc", open: []error{chunkstore.ErrNoValidHeader, chunkstore.ErrChecksum}},
		{file: "no-header", open: []error{chunkstore.ErrNoValidHeader, chunkstore.ErrBadMagic}},
		{file: "bad-newest-slot", report: chunkstore.ErrChecksum, gen: 1, check: chunkstore.ErrChecksum,
			stored: []chunkstore.Pos{{0, 20}, {1, 20}, {2, 20}}},
		{file: "bad-entry-crc", report: chunkstore.ErrChecksum, gen: 2, check: chunkstore.ErrChecksum,
			stored: []chunkstore.Pos{{0, 20}, {1, 20}, {2, 20}, {4, 20}}},
		{file: "bad-record-crc", gen: 2, get: p(3), getErr: []error{chunkstore.ErrCorrupt, chunkstore.ErrChecksum},
			check: chunkstore.ErrChecksum, stored: []chunkstore.Pos{{0, 20}, {1, 20}, {2, 20}, {4, 20}}},
		{file: "bad-body-crc", gen: 2, bodies: p(0), check: chunkstore.ErrChecksum,
			stored: []chunkstore.Pos{{0, 20}, {1, 20}, {2, 20}, {3, 20}, {4, 20}}},
		{file: "delta-out-of-range", gen: 2, get: p(4), getErr: []error{chunkstore.ErrCorrupt}, check: chunkstore.ErrCorrupt},
		{file: "truncated-pagetable", report: io.ErrUnexpectedEOF, gen: 2, check: io.ErrUnexpectedEOF,
			stored: []chunkstore.Pos{{0, 20}, {1, 20}, {2, 20}, {3, 20}, {4, 20}}},
		{file: "truncated-record", report: io.ErrUnexpectedEOF, gen: 2, check: io.ErrUnexpectedEOF,
			stored: []chunkstore.Pos{{0, 20}, {1, 20}, {2, 20}, {3, 20}}},
	}
	var fixtures []fixture
	for _, f := range both {
		v1 := f
		v1.file = "v1/" + f.file + ".pxsw"
		v2 := f
		v2.file = "v2/" + f.file
		fixtures = append(fixtures, v1, v2)
	}
	for _, f := range both {
		// Format 3 has the same fixtures and a palette chunk with extra
		// data at (5, 20).
		v3 := f
		v3.file = "v3/" + f.file
		if f.file != "bad-newest-slot" && f.file != "truncated-record" { // (cut before it, or its generation)
			v3.stored = append(slices.Clone(f.stored), chunkstore.Pos{X: 5, Y: 20})
		}
		fixtures = append(fixtures, v3)
	}
	fixtures = append(fixtures,
		// A palette index past the palette, and extra data longer than
		// its record: the chunk regenerates, the others load.
		fixture{file: "v3/palette-index-out-of-range", gen: 2, get: p(5), getErr: []error{chunkstore.ErrCorrupt}, check: chunkstore.ErrCorrupt,
			stored: []chunkstore.Pos{{0, 20}, {1, 20}, {2, 20}, {3, 20}, {4, 20}}},
		fixture{file: "v3/extra-too-long", gen: 2, get: p(5), getErr: []error{chunkstore.ErrCorrupt}, check: chunkstore.ErrCorrupt,
			stored: []chunkstore.Pos{{0, 20}, {1, 20}, {2, 20}, {3, 20}, {4, 20}}},
	)
	for _, v := range []string{"v2", "v3"} {
		var palette []chunkstore.Pos // the palette chunk of format 3, in data file 2
		if v == "v3" {
			palette = []chunkstore.Pos{{5, 20}}
		}
		fixtures = append(fixtures,
			// Data file 1 is gone: the page table is rebuilt from data file 2,
			// whose chunks are kept; those of data file 1 regenerate.
			fixture{file: v + "/missing-data-file", report: chunkstore.ErrCorrupt, gen: 2, names: "w-data-1.pxsd",
				stored: append([]chunkstore.Pos{{3, 20}, {4, 20}}, palette...)},
			// Data file 1 ends inside the body block: the records before the
			// cut and data file 2 are kept.
			// (The Empty chunk (2, 20) had only its entry in the first commit's
			// journal segment, after the cut.)
			fixture{file: v + "/truncated-data-file", report: io.ErrUnexpectedEOF, gen: 2, check: io.ErrUnexpectedEOF, names: "w-data-1.pxsd",
				stored: append([]chunkstore.Pos{{0, 20}, {1, 20}, {3, 20}, {4, 20}}, palette...)},
			// Data file 2 belongs to another store: it is not read; data file 1
			// gives the first commit's chunks.
			fixture{file: v + "/foreign-data-file", report: chunkstore.ErrCorrupt, gen: 2, names: "w-data-2.pxsd",
				stored: []chunkstore.Pos{{0, 20}, {1, 20}, {2, 20}}},
		)
	}
	for _, tc := range fixtures {
		t.Run(tc.file, func(t *testing.T) {
			cfg := fixtureConfig(loadFixture(t, tc.file))
			s, err := chunkstore.Open(storePath, &cfg)
			if tc.open != nil {
				expect(t, err != nil, "opened")
				for _, target := range tc.open {
					expect(t, errors.Is(err, target), "open: %v does not match %v", err, target)
				}
				return
			}
			must(t, err)
			defer s.Close()
			expect(t, s.Generation() == tc.gen, "generation %d, want %d", s.Generation(), tc.gen)
			if tc.report != nil {
				expect(t, hasProblem(s.OpenReport(), tc.report), "open report lacks %v:\n%s", tc.report, s.OpenReport())
			}
			dst := make([]uint32, 64)
			for _, p := range tc.stored {
				stored, err := s.Get(p, dst)
				expect(t, err == nil && stored, "chunk %v: stored=%v err=%v", p, stored, err)
			}
			if tc.get != nil {
				_, err := s.Get(*tc.get, dst)
				for _, target := range tc.getErr {
					expect(t, errors.Is(err, target), "get %v: %v does not match %v", *tc.get, err, target)
				}
			}
			if tc.bodies != nil {
				_, err := s.Bodies(*tc.bodies)
				expect(t, errors.Is(err, chunkstore.ErrCorrupt) && errors.Is(err, chunkstore.ErrChecksum), "bodies: %v", err)
			}
			r := s.Check()
			if tc.names != "" {
				named := false
				for _, p := range append(s.OpenReport().Problems, r.Problems...) {
					named = named || p.File == tc.names || strings.Contains(p.Err.Error(), tc.names)
				}
				expect(t, named, "no problem names %s:\n%s\n%s", tc.names, s.OpenReport(), r)
			}
			if tc.check == nil {
				expect(t, r.OK() || tc.names != "", "check: %s", r)
			} else {
				expect(t, hasProblem(r, tc.check), "check lacks %v:\n%s", tc.check, r)
				expect(t, errors.Is(r.Err(), tc.check), "Report.Err does not match %v", tc.check)
			}
		})
	}
}

// Without any header, the repair path rebuilds the index from a forward
// scan and writes a clean copy.
func TestRepairWithoutHeader(t *testing.T) {
	mem := loadFixture(t, "v1/no-header.pxsw")
	cfg := fixtureConfig(mem)
	_, _, err := openForRepair(storePath, chunkstore.Options{FS: mem}, nil)
	expect(t, errors.Is(err, chunkstore.ErrNoValidHeader), "repair without a chunk size: %v", err)
	s, rep, err := openForRepair(storePath, cfg, nil)
	must(t, err)
	defer s.Close()
	expect(t, !rep.OK() && s.Generation() == 2, "report %s, generation %d", rep, s.Generation())
	good := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, ptr(fixtureConfig(loadFixture(t, "v1/good.pxsw")))))
	defer good.Close()
	fixed := must2[*chunkstore.Store](t)(s.CompactTo("/fixed.pxsw"))
	defer fixed.Close()
	mustCheck(t, fixed)
	a, b := make([]uint32, 64), make([]uint32, 64)
	var n int
	good.Entries(func(e chunkstore.Entry) bool {
		n++
		if e.Type == chunkstore.BodyBlock {
			x, _ := good.Bodies(e.Pos)
			y, err := fixed.Bodies(e.Pos)
			must(t, err)
			expect(t, diffBodies(y, x, ^uint32(0)) == "", "bodies %v", e.Pos)
			return true
		}
		_, err := good.Get(e.Pos, a)
		must(t, err)
		stored, err := fixed.Get(e.Pos, b)
		must(t, err)
		expect(t, stored && string(pixelsAsBytes(a)) == string(pixelsAsBytes(b)), "chunk %v differs after repair", e.Pos)
		return true
	})
	expect(t, n == 6, "%d entries", n)

	// Scan sees every record of the damaged file.
	var kinds []storetool.RecordKind
	must(t, storetool.Tool.Scan(mem, storePath, func(r storetool.ScanRecord) bool {
		kinds = append(kinds, r.Kind)
		return true
	}))
	expect(t, len(kinds) == 7, "scan found %v", kinds)
}

func pixelsAsBytes(p []uint32) []byte {
	b := make([]byte, 0, 4*len(p))
	for _, v := range p {
		b = append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	}
	return b
}

// A store opened by a rebuilding scan takes commits (the first writes a
// fresh checkpoint) and compacts back to a file the checker passes.
func TestCommitAfterRebuild(t *testing.T) {
	mem := loadFixture(t, "v1/truncated-record.pxsw")
	cfg := fixtureConfig(mem)
	s := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &cfg))
	b := s.NewBatch()
	pix := make([]uint32, 64)
	for i := range pix {
		pix[i] = uint32(i) * 77
	}
	b.PutChunk(chunkstore.Pos{X: 9, Y: 9}, pix)
	st := commit(t, s, b)
	expect(t, st.Checkpoint, "first commit after a rebuild wrote no checkpoint: %+v", st)
	s = reopen(t, s, cfg)
	defer s.Close()
	expect(t, s.OpenReport().OK(), "still damaged after the commit: %s", s.OpenReport())
	dst := make([]uint32, 64)
	for _, p := range []chunkstore.Pos{{0, 20}, {1, 20}, {2, 20}, {3, 20}, {9, 9}} {
		stored, err := s.Get(p, dst)
		expect(t, err == nil && stored, "chunk %v: %v %v", p, stored, err)
	}
	expect(t, !s.Check().OK(), "the cut record is still in the file")
	must(t, s.Compact())
	mustCheck(t, s)
}
