package chunkstore_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/vfs"
)

// The entity sections kept with a chunk come back as they were, beside its bodies, after a
// reopen and a compaction; a block of sections alone is stored; an empty block removes it.
func TestEntitiesRoundTrip(t *testing.T) {
	cfg := testConfig(vfs.NewMem())
	s := create(t, cfg)
	rng := rand.New(rand.NewPCG(3, 3))
	bodies := []chunkstore.Body{body(7, 3, 2, rng)}
	secs := [][]byte{[]byte("section one"), bytes.Repeat([]byte{0xab}, 3000)}
	b := s.NewBatch()
	b.PutEntities(chunkstore.Pos{X: 1, Y: 2}, chunkstore.EntityBlock{Bodies: bodies, Sections: secs})
	b.PutEntities(chunkstore.Pos{X: 2, Y: 2}, chunkstore.EntityBlock{Sections: secs[:1]})
	b.PutEntities(chunkstore.Pos{X: 3, Y: 2}, chunkstore.EntityBlock{})
	st := commit(t, s, b)
	expect(t, st.BodyBlocks == 2, "%+v", st)
	same := func(what string, s *chunkstore.Store) {
		t.Helper()
		blk := must2[chunkstore.EntityBlock](t)(s.Entities(chunkstore.Pos{X: 1, Y: 2}))
		expect(t, len(blk.Bodies) == 1 && blk.Bodies[0].ID == 7 && len(blk.Sections) == 2, "%s: %+v", what, blk)
		for i := range secs {
			expect(t, bytes.Equal(blk.Sections[i], secs[i]), "%s: section %d", what, i)
		}
		alone := must2[chunkstore.EntityBlock](t)(s.Entities(chunkstore.Pos{X: 2, Y: 2}))
		expect(t, len(alone.Bodies) == 0 && len(alone.Sections) == 1 && bytes.Equal(alone.Sections[0], secs[0]), "%s: %+v", what, alone)
		none := must2[chunkstore.EntityBlock](t)(s.Entities(chunkstore.Pos{X: 3, Y: 2}))
		expect(t, none.IsEmpty(), "%s: %+v", what, none)
		mustCheck(t, s)
	}
	same("after the commit", s)
	// A block read first keeps its sections when another is read after it
	// (reads share buffers).
	first := must2[chunkstore.EntityBlock](t)(s.Entities(chunkstore.Pos{X: 2, Y: 2}))
	_ = must2[chunkstore.EntityBlock](t)(s.Entities(chunkstore.Pos{X: 1, Y: 2}))
	expect(t, bytes.Equal(first.Sections[0], secs[0]), "a later read changed an earlier block's section: %q", first.Sections[0])
	s = reopen(t, s, cfg)
	same("after a reopen", s)
	must(t, s.Compact())
	same("after a compaction", s)

	b = s.NewBatch()
	b.PutEntities(chunkstore.Pos{X: 2, Y: 2}, chunkstore.EntityBlock{})
	st = commit(t, s, b)
	expect(t, st.BodyRemovals == 1, "%+v", st)
	gone := must2[chunkstore.EntityBlock](t)(s.Entities(chunkstore.Pos{X: 2, Y: 2}))
	expect(t, gone.IsEmpty(), "%+v", gone)
	mustCheck(t, s)
	s.Close()
}
