package chunkstore_test

import (
	"math/rand/v2"
	"testing"

	"github.com/arksave/arksave/chunkstore"
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
		stats := s.Stats()
		maxSegments = max(maxSegments, stats.JournalSegments)
		if i%40 == 39 {
			s = reopen(t, s, cfg)
			expectSame(t, m, s, ^uint32(0))
			expect(t, s.Stats().JournalSegments == stats.JournalSegments, "reopen: %d segments, had %d", s.Stats().JournalSegments, stats.JournalSegments)
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
	stats := s.Stats()
	expect(t, stats.RecordBytes == 2*one, "live record bytes %d, want %d (each payload once)", stats.RecordBytes, 2*one)
	s = reopen(t, s, cfg)
	expect(t, s.Stats().RecordBytes == stats.RecordBytes, "reopen counts %d, had %d", s.Stats().RecordBytes, stats.RecordBytes)
	b = s.NewBatch()
	m.putChunk(b, chunkstore.Pos{X: 9, Y: 9}, stone)
	st = commit(t, s, b)
	expect(t, st.Shared == 1, "dictionary not rebuilt on open: %+v", st)
	expectSame(t, m, s, ^uint32(0))
	must(t, s.Compact())
	expectSame(t, m, s, ^uint32(0))
	expect(t, s.Stats().RecordBytes == 2*one, "compaction copied shared records more than once: %+v", s.Stats())
	mustCheck(t, s)
	s.Close()
}
