package chunkstore_test

import (
	"math/rand/v2"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/vfs"
)

func TestRoundTripEachType(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	s := must2[*chunkstore.Store](t)(chunkstore.Create("/w.pxsw", cfg))
	rng := rand.New(rand.NewPCG(1, 2))
	m := newModel()
	b := s.NewBatch()
	m.putChunk(b, chunkstore.Pos{0, 0}, deltaChunk(chunkstore.Pos{0, 0}, small, 10, rng))
	m.putChunk(b, chunkstore.Pos{1, 0}, randomChunk(small, rng))
	m.putChunk(b, chunkstore.Pos{-1, 3}, uniformChunk(small, 0))
	m.putChunk(b, chunkstore.Pos{2, 2}, generated(chunkstore.Pos{2, 2}, small))
	m.putBodies(b, chunkstore.Pos{0, 0}, []chunkstore.Body{body(1, 5, 3, rng), body(2, 9, 9, rng)})
	st := must2[chunkstore.CommitStats](t)(s.Commit(b))
	expect(t, st.Delta == 1 && st.Full == 1 && st.Empty == 1 && st.Reverted == 1 && st.BodyBlocks == 1, "stats %+v", st)
	expect(t, s.Generation() == 1, "generation %d", s.Generation())
	if d := m.diff(s, small, ^uint32(0)); d != "" {
		t.Fatal(d)
	}
	mustCheck(t, s)
	must(t, s.Close())
	s = must2[*chunkstore.Store](t)(chunkstore.Open("/w.pxsw", cfg))
	defer s.Close()
	if d := m.diff(s, small, ^uint32(0)); d != "" {
		t.Fatal(d)
	}
	stats := s.Stats()
	expect(t, stats.Chunks == 3 && stats.Delta == 1 && stats.Full == 1 && stats.Empty == 1 && stats.BodyBlocks == 1, "%+v", stats)
	mustCheck(t, s)
}
