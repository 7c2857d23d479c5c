package chunkstore_test

import (
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/vfs"
)

// fileSizes returns the size of every data file of the store at storePath
// on disk, by number.
func fileSizes(t testing.TB, mem *vfs.Mem) map[uint32]int64 {
	t.Helper()
	out := map[uint32]int64{}
	for path, data := range storeFiles(t, mem) {
		if _, n, ok := storetool.Tool.ParseDataFileName(filepath.Base(path)); ok {
			out[n] = int64(len(data))
		}
	}
	return out
}

func TestDataFileNames(t *testing.T) {
	for _, tc := range []struct {
		store string
		n     uint32
		name  string
	}{
		{"chunks.pxsw", 1, "chunks-data-1.pxsd"},
		{"chunks-12.pxsw", 3, "chunks-12-data-3.pxsd"},
		{"chunks-12-backup-3.pxsw", 40, "chunks-12-backup-3-data-40.pxsd"},
		{"/save/w.pxsw", chunkstore.MaxDataFiles, "/save/w-data-4194303.pxsd"},
	} {
		got := storetool.Tool.DataFileName(tc.store, tc.n)
		expect(t, got == tc.name, "DataFileName(%q, %d) = %q, want %q", tc.store, tc.n, got, tc.name)
		store, n, ok := storetool.Tool.ParseDataFileName(got)
		expect(t, ok && store == tc.store && n == tc.n, "ParseDataFileName(%q) = %q, %d, %v", got, store, n, ok)
	}
	for _, bad := range []string{"chunks-data-0.pxsd", "chunks-data-01.pxsd", "chunks-data-4194304.pxsd", "chunks-data-.pxsd",
		"chunks-data-1.pxsw", "-data-1.pxsd", "chunks-data-1x.pxsd", "chunks-data--1.pxsd", "chunks-data-1.pxsd.tmp"} {
		_, _, ok := storetool.Tool.ParseDataFileName(bad)
		expect(t, !ok, "ParseDataFileName(%q) accepted", bad)
	}
}

// Data file rollover: records go to the newest data file until the next
// one would take it past DataFileSize; then the next data file starts, and
// the commit's root names it. Every data file but the newest is as full as
// its records allow, the store reopens and checks clean, and the store
// file holds the header slots only.
func TestDataFileRollover(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	cfg.DataFileSize = 4 << 10
	s := create(t, cfg)
	m := newModel()
	rng := rand.New(rand.NewPCG(21, 21))
	started := 0
	for i := range 30 {
		b := s.NewBatch()
		for k := range 3 {
			m.putChunk(b, chunkstore.Pos{X: int32(k), Y: int32(i)}, randomChunk(small, rng)) // ~1 KiB records
		}
		st := commit(t, s, b)
		started += st.DataFiles
		root := must2[storetool.RootInfo](t)(storetool.Tool.ParseRoot(s.Root()))
		newest := storetool.Tool.Files(s)[len(storetool.Tool.Files(s))-1]
		expect(t, storetool.Handle{Offset: root.Table}.File() == newest.Number, "commit %d: root in data file %d, newest %d",
			i, storetool.Handle{Offset: root.Table}.File(), newest.Number)
	}
	expect(t, started >= 20, "only %d data files started by 30 commits of 3 KiB", started)
	sizes := fileSizes(t, mem)
	files := storetool.Tool.Files(s)
	expect(t, files[0].Number == 0 && files[0].Size == 128, "store file: %+v", files[0])
	for _, f := range files[1:] {
		expect(t, sizes[f.Number] == f.Size, "data file %d: %d bytes on disk, %d in Files", f.Number, sizes[f.Number], f.Size)
		expect(t, f.Size <= cfg.DataFileSize, "data file %d: %d bytes, past the %d limit", f.Number, f.Size, cfg.DataFileSize)
		if !f.Newest {
			// Full: the next record (1048 bytes + a table record) did not fit.
			expect(t, f.Size > cfg.DataFileSize-1200, "data file %d left at %d bytes", f.Number, f.Size)
		}
	}
	s = reopen(t, s, cfg)
	defer s.Close()
	expectSame(t, m, s, ^uint32(0))
	mustCheck(t, s)
	names := storetool.Tool.DataFileNames(s)
	expect(t, len(names) == len(files)-1 && names[0] == "w-data-1.pxsd", "data file names %v", names)
}

// A record larger than DataFileSize gets a data file of its own.
func TestRecordLargerThanDataFile(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	cfg.DataFileSize = 1 << 10
	s := create(t, cfg)
	m := newModel()
	b := s.NewBatch()
	zero := make([]uint32, npix)
	for i := range 200 { // a journal segment of 200 entries: 4.8 KiB
		m.putChunk(b, chunkstore.Pos{X: int32(i), Y: 3}, zero)
	}
	rng := rand.New(rand.NewPCG(2, 2))
	m.putChunk(b, chunkstore.Pos{X: 0, Y: 0}, randomChunk(small, rng))
	st := commit(t, s, b)
	expect(t, st.TableBytes > cfg.DataFileSize && st.DataFiles == 2, "commit: %+v", st)
	// Each data file past the limit holds one record.
	for n, size := range fileSizes(t, mem) {
		records := 0
		must(t, storetool.Tool.Scan(mem, storetool.Tool.DataFileName(storePath, n), func(storetool.ScanRecord) bool {
			records++
			return true
		}))
		expect(t, size <= cfg.DataFileSize || records == 1, "data file %d: %d bytes, %d records", n, size, records)
	}
	s = reopen(t, s, cfg)
	defer s.Close()
	expectSame(t, m, s, ^uint32(0))
	mustCheck(t, s)
}

// Sparse edits across far-apart regions do not create many tiny files:
// however scattered the chunks a commit changes, the data files fill up in
// order, so their number follows the bytes written, not the regions
// touched.
func TestSparseEditsDoNotCreateTinyFiles(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	cfg.DataFileSize = 16 << 10
	s := create(t, cfg)
	defer s.Close()
	m := newModel()
	rng := rand.New(rand.NewPCG(5, 6))
	var written int64
	for i := range 60 {
		b := s.NewBatch()
		for range 4 {
			// Regions a million chunks apart in both directions.
			p := chunkstore.Pos{X: int32(rng.IntN(2_000_000) - 1_000_000), Y: int32(rng.IntN(2_000_000) - 1_000_000)}
			m.putChunk(b, p, deltaChunk(p, small, 20, rng))
		}
		st := commit(t, s, b)
		written += st.BytesWritten - 64
		_ = i
	}
	sizes := fileSizes(t, mem)
	maxFiles := int(written/(cfg.DataFileSize-1200)) + 1
	expect(t, len(sizes) <= maxFiles, "%d data files for %d bytes written (at most %d)", len(sizes), written, maxFiles)
	small := 0
	for n, size := range sizes {
		if n != uint32(len(sizes)) && size < cfg.DataFileSize/2 {
			small++
		}
	}
	expect(t, small == 0, "%d data files below half their size: %v", small, sizes)
	expectSame(t, m, s, ^uint32(0))
	mustCheck(t, s)
}

// deadStore builds a store whose older data files are mostly dead: the
// same few chunks rewritten over and over, beside chunks written once.
func deadStore(t testing.TB, mem *vfs.Mem, cfg chunkstore.Options, commits int) (*chunkstore.Store, *model) {
	t.Helper()
	cfg.FS = mem
	s := must2[*chunkstore.Store](t)(chunkstore.Create(storePath, &cfg))
	m := newModel()
	rng := rand.New(rand.NewPCG(uint64(commits), 31))
	for i := range commits {
		b := s.NewBatch()
		for k := range 2 {
			m.putChunk(b, chunkstore.Pos{X: int32(k), Y: 0}, randomChunk(small, rng))
		}
		m.putChunk(b, chunkstore.Pos{X: int32(i), Y: 9}, deltaChunk(chunkstore.Pos{X: int32(i), Y: 9}, small, 5, rng))
		if i%3 == 0 {
			m.putBodies(b, chunkstore.Pos{X: int32(i), Y: 9}, []chunkstore.Body{body(uint64(i), 3, 2, rng)})
		}
		must2[chunkstore.CommitStats](t)(s.Commit(b))
	}
	return s, m
}

// File-by-file compaction: CompactNext empties the data file with the most
// dead bytes into the newest one, as a commit that changes no chunk; the
// emptied file leaves the generation (a save directory removes it), the
// generation before still opens through its root, and the dead bytes drop.
func TestCompactFileByFile(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	cfg.DataFileSize = 8 << 10
	s, m := deadStore(t, mem, cfg, 40)
	before := storetool.Tool.Stats(s)
	expect(t, s.NeedsCompaction(), "no compaction due: %+v", before)
	var most storetool.FileStats
	for _, f := range storetool.Tool.Files(s) {
		if f.Dead > most.Dead {
			most = f
		}
	}
	oldRoot := s.Root()
	gen := s.Generation()
	st, did, err := s.CompactNext()
	must(t, err)
	expect(t, did && slices.Equal(st.Files, []uint32{most.Number}), "compacted %v, the most dead is %d", st.Files, most.Number)
	expect(t, st.Generation == gen+1 && s.Generation() == gen+1, "generation %d after compacting %d", s.Generation(), gen)
	expect(t, st.Moved <= most.Live && st.Freed == most.Size, "moved %d of %d live, freed %d of %d", st.Moved, most.Live, st.Freed, most.Size)
	for _, f := range storetool.Tool.Files(s) {
		expect(t, f.Number != most.Number, "data file %d still in the generation", most.Number)
	}
	after := storetool.Tool.Stats(s)
	expect(t, after.DeadBytes < before.DeadBytes, "dead bytes %d, before %d", after.DeadBytes, before.DeadBytes)
	expectSame(t, m, s, ^uint32(0))
	mustCheck(t, s)
	// Until the next compaction of it, the old generation reads the
	// emptied file through its root.
	old := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, atRoot(cfg, oldRoot)))
	expectSame(t, m, old, ^uint32(0))
	must(t, old.Close())
	// Compacting until none is due leaves at most a quarter dead.
	for {
		_, did, err := s.CompactNext()
		must(t, err)
		if !did {
			break
		}
	}
	final := storetool.Tool.Stats(s)
	expect(t, float64(final.DeadBytes) <= 0.25*float64(final.FileSize) || final.DeadBytes < 16<<10, "left %+v", final)
	s = reopen(t, s, cfg)
	defer s.Close()
	expectSame(t, m, s, ^uint32(0))
	mustCheck(t, s)
}

// Compacting the data file that holds the checkpoint writes a new one;
// compacting one that holds journal segments of the live chain replaces
// them (and every newer one) by one merged segment. Either way the page
// table stays whole.
func TestCompactFileWithTableRecords(t *testing.T) {
	for _, withCheckpoint := range []bool{true, false} {
		mem := vfs.NewMem()
		cfg := testConfig(mem)
		cfg.DataFileSize = 64 << 10
		s := create(t, cfg)
		m := newModel()
		zero := make([]uint32, npix)
		b := s.NewBatch()
		if withCheckpoint {
			// 5,000 entries: the first commit writes a checkpoint, larger
			// than a data file: data file 1 holds it alone.
			for i := range 5000 {
				m.putChunk(b, chunkstore.Pos{X: int32(i % 100), Y: 50 + int32(i/100)}, zero)
			}
		}
		st := commit(t, s, b)
		expect(t, st.Checkpoint == withCheckpoint, "first commit %+v", st)
		rng := rand.New(rand.NewPCG(4, 4))
		for i := range 12 {
			b := s.NewBatch()
			m.putChunk(b, chunkstore.Pos{X: int32(i % 3), Y: 1}, randomChunk(small, rng))
			commit(t, s, b)
		}
		expect(t, storetool.Tool.Stats(s).JournalSegments > 1, "stats %+v", storetool.Tool.Stats(s))
		cs := must2[chunkstore.CompactStats](t)(storetool.Tool.CompactFile(s, 1))
		expect(t, cs.Commit.Checkpoint == withCheckpoint, "compaction of data file 1 (checkpoint %v): %+v", withCheckpoint, cs.Commit)
		if !withCheckpoint {
			// Every segment was in data file 1: one merged segment replaces them.
			expect(t, storetool.Tool.Stats(s).JournalSegments == 1, "journal segments after compaction: %d", storetool.Tool.Stats(s).JournalSegments)
		}
		for _, f := range storetool.Tool.Files(s) {
			expect(t, f.Number != 1, "data file 1 still used")
		}
		s = reopen(t, s, cfg)
		expectSame(t, m, s, ^uint32(0))
		mustCheck(t, s)
		must(t, s.Close())
	}
}

// A format 1 store keeps its records in the store file: a store continued
// by this version commits into data files, its old roots still open, and
// file-by-file compaction moves the store file's records out.
func TestFormat1StoreContinues(t *testing.T) {
	mem := loadFixture(t, "v1/good.pxsw")
	cfg := fixtureConfig(mem)
	cfg.DataFileSize = 1 << 10
	s := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &cfg))
	oldRoot := s.Root()
	info := must2[storetool.RootInfo](t)(storetool.Tool.ParseRoot(oldRoot))
	expect(t, storetool.Handle{Offset: info.Table}.File() == 0, "format 1 root in data file")
	dst := make([]uint32, 64)
	want := map[chunkstore.Pos][]uint32{}
	storetool.Tool.Entries(s, func(e storetool.Entry) bool {
		if e.Type != chunkstore.BodyBlock {
			must2[bool](t)(s.Get(e.Pos, dst))
			want[e.Pos] = slices.Clone(dst)
		}
		return true
	})
	pix := make([]uint32, 64)
	pix[3] = 0x0707
	b := s.NewBatch()
	b.PutChunk(chunkstore.Pos{X: 9, Y: 9}, pix)
	st := commit(t, s, b)
	expect(t, st.DataFiles == 1, "commit %+v", st)
	want[chunkstore.Pos{X: 9, Y: 9}] = pix
	// The store file's records move out; the store file is not rewritten.
	expect(t, storetool.Tool.Files(s)[0].Live > 128, "store file holds no records: %+v", storetool.Tool.Files(s)[0])
	must2[chunkstore.CompactStats](t)(storetool.Tool.CompactFile(s, 0))
	expect(t, storetool.Tool.Files(s)[0].Live == 128, "store file records after compaction: %+v", storetool.Tool.Files(s)[0])
	for p, pixels := range want {
		must2[bool](t)(s.Get(p, dst))
		expect(t, slices.Equal(dst, pixels), "chunk %v differs", p)
	}
	mustCheck(t, s)
	must(t, s.Close())
	old := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, atRoot(cfg, oldRoot)))
	defer old.Close()
	expect(t, old.Generation() >= info.Generation, "old root at %d", old.Generation())
	_, err := old.Get(chunkstore.Pos{X: 0, Y: 20}, dst)
	must(t, err)
}

// A data file of the generation that is missing, cut short or not the
// store's is damage, reported with its name, by Open and by Check; the
// chunks in it read as generated with an error naming it.
func TestDamagedDataFiles(t *testing.T) {
	build := func(t *testing.T) (*vfs.Mem, chunkstore.Options, *model) {
		mem := vfs.NewMem()
		cfg := testConfig(mem)
		cfg.DataFileSize = 4 << 10
		s, m := deadStore(t, mem, cfg, 12)
		expect(t, len(storetool.Tool.Files(s)) > 3, "files %+v", storetool.Tool.Files(s))
		must(t, s.Close())
		return mem, cfg, m
	}
	name1 := storetool.Tool.DataFileName(storePath, 1)
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, mem *vfs.Mem)
		is     error
	}{
		{"missing", func(t *testing.T, mem *vfs.Mem) { must(t, mem.Remove(name1)) }, chunkstore.ErrCorrupt},
		{"truncated", func(t *testing.T, mem *vfs.Mem) {
			// Inside the last record the generation uses in it.
			c := testConfig(mem)
			s := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &c))
			var end int64
			storetool.Tool.Entries(s, func(e storetool.Entry) bool {
				if e.Handle.File() == 1 {
					end = max(end, e.Handle.FileOffset()+int64(e.Handle.Length))
				}
				return true
			})
			must(t, s.Close())
			f := must2[vfs.File](t)(mem.OpenRW(name1))
			must(t, f.Truncate(end-10))
			must(t, f.Close())
		}, io.ErrUnexpectedEOF},
		{"foreign", func(t *testing.T, mem *vfs.Mem) {
			f := must2[vfs.File](t)(mem.OpenRW(name1))
			b := []byte{0}
			_, err := f.ReadAt(b, 20) // the seed
			must(t, err)
			b[0] ^= 1
			_, err = f.WriteAt(b, 20)
			must(t, err)
			must(t, f.Close())
		}, chunkstore.ErrChecksum},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem, cfg, m := build(t)
			var in []chunkstore.Pos
			s := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &cfg))
			storetool.Tool.Entries(s, func(e storetool.Entry) bool {
				if e.Handle.File() == 1 && e.Type != chunkstore.BodyBlock {
					in = append(in, e.Pos)
				}
				return true
			})
			must(t, s.Close())
			expect(t, len(in) > 0, "no chunk in data file 1")
			tc.damage(t, mem)
			s = must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &cfg))
			defer s.Close()
			named := func(r chunkstore.Report) bool {
				for _, p := range r.Problems {
					if p.File == "w-data-1.pxsd" && errors.Is(p.Err, tc.is) && errors.Is(p.Err, chunkstore.ErrCorrupt) {
						return true
					}
				}
				return false
			}
			expect(t, named(s.OpenReport()), "open report does not name the data file:\n%s", s.OpenReport())
			r := s.Check()
			expect(t, named(r), "check does not name the data file:\n%s", r)
			dst := make([]uint32, npix)
			for _, p := range in {
				stored, err := s.Get(p, dst)
				if tc.name == "truncated" && err == nil {
					continue // its record lies before the cut
				}
				expect(t, !stored && errors.Is(err, chunkstore.ErrCorrupt), "chunk %v: stored %v, %v", p, stored, err)
				expect(t, slices.Equal(dst, generated(p, small)), "chunk %v does not read as generated", p)
			}
			// Chunks elsewhere read as saved.
			for p, pix := range m.chunks {
				if !slices.Contains(in, p) {
					must2[bool](t)(s.Get(p, dst))
					expect(t, slices.Equal(dst, pix), "chunk %v differs", p)
				}
			}
		})
	}
}

// Revert removes the data files the commits since the mark started and cuts
// the one they appended to: the files are as they were.
func TestRevertRemovesStartedDataFiles(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	cfg.DataFileSize = 2 << 10
	s, m := deadStore(t, mem, cfg, 5)
	before := storeFiles(t, mem)
	gen := s.Generation()
	mark := must2[storetool.Mark](t)(storetool.Tool.Mark(s))
	rng := rand.New(rand.NewPCG(7, 7))
	started := 0
	for i := range 6 {
		b := s.NewBatch()
		b.PutChunk(chunkstore.Pos{X: int32(i), Y: 70}, randomChunk(small, rng))
		started += commit(t, s, b).DataFiles
	}
	expect(t, started > 1, "%d data files started", started)
	must(t, storetool.Tool.Revert(s, mark))
	after := storeFiles(t, mem)
	expect(t, len(after) == len(before), "%d files after revert, %d before", len(after), len(before))
	for name, data := range before {
		expect(t, slices.Equal(after[name], data), "%s differs after revert", name)
	}
	s = must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &cfg))
	defer s.Close()
	expect(t, s.Generation() == gen, "generation %d after revert, want %d", s.Generation(), gen)
	expectSame(t, m, s, ^uint32(0))
	mustCheck(t, s)
}

// A crash at every mutating call of a commit that starts a data file
// leaves the old generation or the new one, whole.
func TestCrashDuringRollover(t *testing.T) {
	cfg := testConfig(nil)
	base, gens := history(t, cfg, 3)
	old := gens[len(gens)-1]
	next := generation{old.gen + 1, old.m.clone()}
	b := (&chunkstore.Store{}).NewBatch()
	rng := rand.New(rand.NewPCG(8, 8))
	for i := range 5 {
		next.m.putChunk(b, chunkstore.Pos{X: int32(i), Y: 40}, randomChunk(small, rng))
	}
	started := 0
	crashEvery(t, base, cfg, -1, func(s *chunkstore.Store) error {
		st, err := s.Commit(b)
		started = st.DataFiles
		return err
	}, func(t *testing.T, disk *vfs.Mem, finished bool) {
		if finished {
			expectOneOf(t, disk, cfg, next).Close()
			return
		}
		expectOneOf(t, disk, cfg, old, next).Close()
	})
	expect(t, started >= 2, "the commit started %d data files", started)
}

// A crash at every mutating call of a file-by-file compaction leaves the
// old generation or the compacted one, with the same contents, and the old
// one keeps opening through its root.
func TestCrashDuringCompactFile(t *testing.T) {
	cfg := testConfig(nil)
	cfg.DataFileSize = 4 << 10
	mem := vfs.NewMem()
	s, m := deadStore(t, mem, cfg, 12)
	old := generation{s.Generation(), m}
	next := generation{old.gen + 1, m}
	root := s.Root()
	target, ok := func() (uint32, bool) {
		for _, f := range storetool.Tool.Files(s) {
			if f.Number != 0 && !f.Newest && f.Dead > 0 {
				return f.Number, true
			}
		}
		return 0, false
	}()
	expect(t, ok, "no data file with dead bytes: %+v", storetool.Tool.Files(s))
	must(t, s.Close())
	for _, n := range []uint32{target, 0} {
		if n == 0 {
			// The newest data file: compaction starts the next one.
			c := cfg
			c.FS = mem
			s := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &c))
			n = storetool.Tool.Files(s)[len(storetool.Tool.Files(s))-1].Number
			must(t, s.Close())
		}
		crashEvery(t, mem, cfg, -1, func(s *chunkstore.Store) error {
			_, err := storetool.Tool.CompactFile(s, n)
			return err
		}, func(t *testing.T, disk *vfs.Mem, finished bool) {
			s := expectOneOf(t, disk, cfg, old, next)
			defer s.Close()
			if finished {
				expect(t, s.Generation() == next.gen, "compaction did not land")
				for _, f := range storetool.Tool.Files(s) {
					expect(t, f.Number != n, "data file %d still used", n)
				}
			}
			c := cfg
			c.FS = disk
			at := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, atRoot(c, root)))
			if d := old.m.diff(at, small, ^uint32(0)); d != "" {
				t.Fatal(d)
			}
			at.Close()
		})
	}
}

// A fault at any mutating call of a compaction leaves the store at its
// generation, usable; the files as a crash would leave them open at the
// old or the compacted generation; and once the disk is healthy the
// compaction succeeds.
func TestFaultsDuringCompactFile(t *testing.T) {
	cfg := testConfig(nil)
	cfg.DataFileSize = 4 << 10
	mem := vfs.NewMem()
	s, m := deadStore(t, mem, cfg, 10)
	old := generation{s.Generation(), m}
	next := generation{old.gen + 1, m}
	must(t, s.Close())
	faultEvery(t, mem, cfg, func(s *chunkstore.Store) error {
		_, err := storetool.Tool.CompactFile(s, 1)
		return err
	}, func(t *testing.T, s *chunkstore.Store, disk *vfs.Mem, sw *switchable) {
		expect(t, s.Generation() == old.gen, "generation %d after a failed compaction", s.Generation())
		if d := old.m.diff(s, small, ^uint32(0)); d != "" {
			t.Fatal(d)
		}
		expectOneOf(t, disk.Crash(1, nil), cfg, old, next).Close()
		expectOneOf(t, disk.Crash(0, nil), cfg, old, next).Close()
		sw.on = false
		must2[chunkstore.CompactStats](t)(storetool.Tool.CompactFile(s, 1))
		mustCheck(t, s)
		expectOneOf(t, disk.Crash(0, nil), cfg, next).Close()
	})
}

// A commit writes its records through a buffer of at most 4 MiB that the
// next commit reuses: records that fill it past that (1 MiB each, half
// random) are written in pieces, and a record larger than the buffer (a
// random 1024x1024 chunk, 4 MiB) is written past it; all read back
// exactly, over two commits and a reopen.
func TestCommitBufferAndLargeRecords(t *testing.T) {
	const size = 1024
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	cfg.ChunkSize, cfg.TileSize, cfg.DataFileSize = size, 32, 0
	s := create(t, cfg)
	m := newModel()
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 2 {
		b := s.NewBatch()
		for i := range 9 {
			pix := make([]uint32, size*size)
			n := len(pix) / 4 // about 1 MiB of random pixels
			if i%4 == 3 {
				n = len(pix) // the whole chunk: a record over 4 MiB
			}
			for j := range n {
				pix[j] = rng.Uint32()
			}
			m.putChunk(b, chunkstore.Pos{X: int32(i), Y: int32(round)}, pix)
		}
		st := commit(t, s, b)
		expect(t, st.RecordBytes > 10<<20, "round %d: %d record bytes", round, st.RecordBytes)
		if d := m.diff(s, size, ^uint32(0)); d != "" {
			t.Fatalf("round %d: %s", round, d)
		}
	}
	s = reopen(t, s, cfg)
	defer s.Close()
	if d := m.diff(s, size, ^uint32(0)); d != "" {
		t.Fatalf("after reopening: %s", d)
	}
	mustCheck(t, s)
}

// A compaction that empties the newest data file seals it at the append
// point before it starts the next one. Records after that point (here one
// byte of a record a killed save began) would otherwise stay in a file that
// is no longer the newest, where the checker reads every byte: reopened at
// the generation before the compaction (a save directory whose manifest
// still names it) and committed on, the store checked with "unreferenced
// bytes (1)" (TestKillDuringSaves, one run in about a hundred).
func TestCompactNewestSealsIt(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	cfg.DataFileSize = 64 << 10
	s := create(t, cfg)
	m := newModel()
	rng := rand.New(rand.NewPCG(9, 9))
	b := s.NewBatch()
	for i := range 3 {
		m.putChunk(b, chunkstore.Pos{X: int32(i)}, randomChunk(small, rng))
	}
	commit(t, s, b)
	b = s.NewBatch()
	m.putChunk(b, chunkstore.Pos{X: 0}, randomChunk(small, rng)) // a dead record in file 1
	commit(t, s, b)
	root := s.Root()
	newest := storetool.Tool.Files(s)[len(storetool.Tool.Files(s))-1]
	expect(t, newest.Number == 1 && newest.Newest, "files %+v", storetool.Tool.Files(s))
	must(t, s.Close())

	// A save that did not commit began a record after the append point.
	name := storetool.Tool.DataFileName(storePath, 1)
	f := must2[vfs.File](t)(mem.OpenRW(name))
	must2[int](t)(f.WriteAt([]byte{0x42}, newest.Size))
	must(t, f.Close())

	s = must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &cfg))
	must2[chunkstore.CompactStats](t)(storetool.Tool.CompactFile(s, 1))
	must(t, s.Close())
	size := must2[os.FileInfo](t)(mem.Stat(name)).Size()
	expect(t, size == newest.Size, "data file 1 after its compaction: %d bytes, sealed at %d", size, newest.Size)

	// The manifest's generation, committed on.
	s = must2[*chunkstore.Store](t)(chunkstore.Open(storePath, atRoot(cfg, root)))
	defer s.Close()
	b = s.NewBatch()
	m.putChunk(b, chunkstore.Pos{X: 7}, randomChunk(small, rng))
	commit(t, s, b)
	expectSame(t, m, s, ^uint32(0))
	mustCheck(t, s)
}
