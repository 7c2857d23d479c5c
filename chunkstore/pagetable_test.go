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

// A commit appends a journal segment of its changes, not the table: its
// size does not depend on how many chunks the store holds.
func TestCommitWritesOnlyChanges(t *testing.T) {
	cfg := testConfig(vfs.NewMem())
	s := create(t, cfg)
	defer s.Close()
	zero := make([]uint32, npix)
	b := s.NewBatch()
	for i := range 20000 {
		b.PutChunk(chunkstore.Pos{X: int32(i % 200), Y: int32(i/200) + 10}, zero) // Empty: entries only
	}
	st := commit(t, s, b)
	expect(t, st.Checkpoint && st.Empty == 20000, "first commit %+v", st)
	rng := rand.New(rand.NewPCG(8, 8))
	for i := range 20 {
		b := s.NewBatch()
		b.PutChunk(chunkstore.Pos{X: 1000 + int32(i), Y: 5}, randomChunk(small, rng))
		st := commit(t, s, b)
		// Two fsyncs; a commit that starts a data file also syncs the one
		// it leaves (when it wrote to it) and the directory.
		expect(t, !st.Checkpoint && (st.DataFiles == 0 && st.Syncs == 2 || st.DataFiles == 1 && st.Syncs >= 3 && st.Syncs <= 4), "commit %d: %+v", i, st)
		// The record, at most one merged segment's worth of entries, the
		// header slot and the header of a data file it started.
		limit := st.RecordBytes + 24 + 16 + 24*int64(1+i) + 64 + 64*int64(st.DataFiles)
		expect(t, st.BytesWritten <= limit, "commit %d wrote %d bytes, record %d (limit %d)", i, st.BytesWritten, st.RecordBytes, limit)
	}
	mustCheck(t, s)
}

// Journal segments merge in fan-ins of 8 so that opening reads few, and a
// checkpoint replaces the chain once the journal outgrows a fraction of the
// table; the contents survive every step and a reopen.
func TestJournalMergesAndCheckpoints(t *testing.T) {
	cfg := testConfig(vfs.NewMem())
	s := create(t, cfg)
	m := newModel()
	rng := rand.New(rand.NewPCG(9, 9))
	zero := make([]uint32, npix)
	b := s.NewBatch()
	for i := range 5000 {
		b.PutChunk(chunkstore.Pos{X: int32(i % 100), Y: int32(i / 100)}, zero)
		m.chunks[chunkstore.Pos{X: int32(i % 100), Y: int32(i / 100)}] = zero
	}
	commit(t, s, b)
	checkpoints, maxSegments := 0, 0
	for i := range 120 {
		b := s.NewBatch()
		for j := range 50 {
			p := chunkstore.Pos{X: int32(rng.IntN(400)), Y: int32(rng.IntN(60))}
			switch j % 5 {
			case 0:
				m.deleteChunk(b, p)
			case 1:
				m.putChunk(b, p, randomChunk(small, rng))
			case 2:
				m.putChunk(b, p, deltaChunk(p, small, 3, rng))
			default:
				m.putChunk(b, p, zero)
			}
		}
		st := commit(t, s, b)
		if st.Checkpoint {
			checkpoints++
		}
		stats := storetool.Tool.Stats(s)
		maxSegments = max(maxSegments, stats.JournalSegments)
		if i%40 == 39 {
			s = reopen(t, s, cfg)
			expectSame(t, m, s, ^uint32(0))
			expect(t, storetool.Tool.Stats(s).JournalSegments == stats.JournalSegments, "reopen: %d segments, had %d", storetool.Tool.Stats(s).JournalSegments, stats.JournalSegments)
		}
	}
	expect(t, checkpoints >= 1, "no checkpoint in 120 commits of 50 changes over a 5000-entry table")
	expect(t, maxSegments <= 2*7+1, "chain of %d segments: merging does not bound it", maxSegments)
	expectSame(t, m, s, ^uint32(0))
	mustCheck(t, s)
	s.Close()
}

// Identical small Full payloads are stored once (the chunk dictionary),
// and stay correct through overwrites, reopen and compaction.
func TestChunkDictionary(t *testing.T) {
	cfg := testConfig(vfs.NewMem())
	cfg.Generator = nil
	s := create(t, cfg)
	m := newModel()
	stone := uniformChunk(small, 2)
	b := s.NewBatch()
	for i := range 10 {
		m.putChunk(b, chunkstore.Pos{X: int32(i)}, stone)
	}
	st := commit(t, s, b)
	expect(t, st.Full == 10 && st.Shared == 9, "%+v", st)
	one := st.RecordBytes
	b = s.NewBatch()
	for i := range 5 {
		m.putChunk(b, chunkstore.Pos{X: int32(i), Y: 1}, stone)
	}
	m.putChunk(b, chunkstore.Pos{X: 0}, uniformChunk(small, 3)) // overwrite one sharer
	st = commit(t, s, b)
	expect(t, st.Shared == 5, "%+v", st)
	stats := storetool.Tool.Stats(s)
	expect(t, stats.RecordBytes == 2*one, "live record bytes %d, want %d (each payload once)", stats.RecordBytes, 2*one)
	s = reopen(t, s, cfg)
	expect(t, storetool.Tool.Stats(s).RecordBytes == stats.RecordBytes, "reopen counts %d, had %d", storetool.Tool.Stats(s).RecordBytes, stats.RecordBytes)
	b = s.NewBatch()
	m.putChunk(b, chunkstore.Pos{X: 9, Y: 9}, stone)
	st = commit(t, s, b)
	expect(t, st.Shared == 1, "dictionary not rebuilt on open: %+v", st)
	expectSame(t, m, s, ^uint32(0))
	must(t, s.Compact())
	expectSame(t, m, s, ^uint32(0))
	expect(t, storetool.Tool.Stats(s).RecordBytes == 2*one, "compaction copied shared records more than once: %+v", storetool.Tool.Stats(s))
	mustCheck(t, s)
	s.Close()
}

// The chunk dictionary covers every record kind and size: large Full
// records (a painted chunk well over 16 KiB), Delta records (applied to
// each sharer's own generated chunk) and body blocks are stored once.
func TestChunkDictionaryEveryKind(t *testing.T) {
	const big = 128 // 64 KiB of pixels: its record is far over 16 KiB
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	cfg.ChunkSize = big
	cfg.DataFileSize = 1 << 20
	s := must2[*chunkstore.Store](t)(chunkstore.Create(storePath, &cfg))
	rng := rand.New(rand.NewPCG(3, 3))
	painted := make([]uint32, big*big)
	for i := range painted {
		painted[i] = rng.Uint32() // noise: incompressible, stored Full, identical in every chunk
	}
	genAt := func(p chunkstore.Pos) []uint32 {
		dst := make([]uint32, big*big)
		gen.Generate(p.X, p.Y, 7, dst)
		return dst
	}
	b := s.NewBatch()
	var want = map[chunkstore.Pos][]uint32{}
	for i := range 4 {
		p := chunkstore.Pos{X: int32(i), Y: 0}
		b.PutChunk(p, painted)
		want[p] = painted
	}
	// The same small change to the generated chunk of four positions deep
	// underground (where the generator gives the same chunk): one Delta
	// record, read against each position's own generated chunk.
	for i := range 4 {
		p := chunkstore.Pos{X: int32(i), Y: 40}
		pix := genAt(p)
		pix[7], pix[900] = 0x0104, 0
		b.PutChunk(p, pix)
		want[p] = pix
	}
	bodies := []chunkstore.Body{body(1, 40, 30, rng)}
	for i := range 3 {
		b.PutEntities(chunkstore.Pos{X: int32(i), Y: 5}, chunkstore.EntityBlock{Bodies: bodies})
	}
	st := commit(t, s, b)
	expect(t, st.Full == 4 && st.Delta == 4 && st.BodyBlocks == 3, "commit %+v", st)
	expect(t, st.Shared == 3+3+2, "shared %d records, want 8: %+v", st.Shared, st)
	one := func(kind chunkstore.StorageType) int64 {
		var h storetool.Handle
		storetool.Tool.Entries(s, func(e storetool.Entry) bool {
			if e.Type == kind {
				h = e.Handle
			}
			return true
		})
		return int64(h.Length)
	}
	expect(t, one(chunkstore.Full) > 16<<10, "the painted record is %d bytes", one(chunkstore.Full))
	expect(t, st.RecordBytes == one(chunkstore.Full)+one(chunkstore.Delta)+one(chunkstore.BodyBlock),
		"%d record bytes written, want each payload once", st.RecordBytes)
	check := func(s *chunkstore.Store) {
		t.Helper()
		dst := make([]uint32, big*big)
		for p, pix := range want {
			must2[bool](t)(s.Get(p, dst))
			expect(t, slices.Equal(dst, pix), "chunk %v differs", p)
		}
		for i := range 3 {
			got := must2[[]chunkstore.Body](t)(s.Bodies(chunkstore.Pos{X: int32(i), Y: 5}))
			expect(t, diffBodies(got, bodies, ^uint32(0)) == "", "bodies of (%d, 5) differ", i)
		}
		mustCheck(t, s)
	}
	check(s)
	must(t, s.Close())
	s = must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &cfg))
	defer s.Close()
	check(s)
	// After a reopen the dictionary knows the shared records again.
	b = s.NewBatch()
	b.PutChunk(chunkstore.Pos{X: 9, Y: 0}, painted)
	want[chunkstore.Pos{X: 9, Y: 0}] = painted
	st = commit(t, s, b)
	expect(t, st.Shared == 1 && st.RecordBytes == 0, "after reopen: %+v", st)
	// Compaction moves a shared record once, and the dictionary follows it.
	before := storetool.Tool.Stats(s).RecordBytes
	must2[chunkstore.CompactStats](t)(storetool.Tool.CompactFile(s, 1))
	expect(t, storetool.Tool.Stats(s).RecordBytes == before, "record bytes %d after compaction, %d before", storetool.Tool.Stats(s).RecordBytes, before)
	b = s.NewBatch()
	b.PutChunk(chunkstore.Pos{X: 10, Y: 0}, painted)
	want[chunkstore.Pos{X: 10, Y: 0}] = painted
	st = commit(t, s, b)
	expect(t, st.Shared == 1, "after compaction: %+v", st)
	check(s)
}

// The dictionary forgets a record once no entry points at it: an identical
// payload saved later is written anew, never pointed at a dead record that
// compaction may have dropped with its data file.
func TestChunkDictionaryForgetsDeadRecords(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	cfg.Generator = nil
	s := must2[*chunkstore.Store](t)(chunkstore.Create(storePath, &cfg))
	defer s.Close()
	stone := uniformChunk(small, 2)
	p := chunkstore.Pos{X: 1, Y: 1}
	b := s.NewBatch()
	b.PutChunk(p, stone)
	commit(t, s, b)
	b = s.NewBatch()
	b.PutChunk(p, uniformChunk(small, 3)) // the stone record is dead now
	commit(t, s, b)
	for {
		_, did, err := s.CompactNext()
		must(t, err)
		if !did {
			break
		}
	}
	b = s.NewBatch()
	b.PutChunk(chunkstore.Pos{X: 5, Y: 5}, stone)
	st := commit(t, s, b)
	expect(t, st.Shared == 0 && st.RecordBytes > 0, "a dead record was shared: %+v", st)
	var h storetool.Handle
	storetool.Tool.Entries(s, func(e storetool.Entry) bool {
		if e.Pos == (chunkstore.Pos{X: 5, Y: 5}) {
			h = e.Handle
		}
		return true
	})
	expect(t, h.File() == storetool.Tool.Files(s)[len(storetool.Tool.Files(s))-1].Number, "the new stone record is in data file %d", h.File())
	mustCheck(t, s)
}

// Options.Dictionary: DictionaryOff writes every record; DictionarySmallFull
// shares only Full records of at most 16 KiB, as format 1 stores did.
func TestDictionaryModes(t *testing.T) {
	for _, tc := range []struct {
		mode   chunkstore.Dictionary
		shared int
	}{{chunkstore.DictionaryAll, 6}, {chunkstore.DictionarySmallFull, 3}, {chunkstore.DictionaryOff, 0}} {
		mem := vfs.NewMem()
		cfg := testConfig(mem)
		cfg.Generator = nil // stone is stored Full
		cfg.Dictionary = tc.mode
		s := must2[*chunkstore.Store](t)(chunkstore.Create(storePath, &cfg))
		rng := rand.New(rand.NewPCG(1, 2))
		b := s.NewBatch()
		stone := uniformChunk(small, 2)
		bodies := []chunkstore.Body{body(3, 4, 4, rng)}
		for i := range 4 {
			b.PutChunk(chunkstore.Pos{X: int32(i), Y: 60}, stone)
			b.PutEntities(chunkstore.Pos{X: int32(i), Y: 61}, chunkstore.EntityBlock{Bodies: bodies})
		}
		st := commit(t, s, b)
		expect(t, st.Shared == tc.shared, "mode %d: shared %d, want %d", tc.mode, st.Shared, tc.shared)
		mustCheck(t, s)
		must(t, s.Close())
	}
	cfg := testConfig(vfs.NewMem())
	cfg.Dictionary = 9
	_, err := chunkstore.Create(storePath, &cfg)
	expect(t, errors.Is(err, chunkstore.ErrInvalidConfig), "dictionary mode 9: %v", err)
}
