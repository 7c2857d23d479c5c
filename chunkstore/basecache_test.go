package chunkstore_test

import (
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/vfs"
)

// countingGen counts how often each chunk is generated.
type countingGen struct{ calls atomic.Int64 }

func (g *countingGen) Version() uint32 { return gen.Version() }
func (g *countingGen) Generate(x, y int32, seed uint64, dst []uint32) {
	g.calls.Add(1)
	gen.Generate(x, y, seed, dst)
}

// Saving the same dirty chunks again and reading them back does not run
// the generator again, and what is read is still exact.
func TestBaseCacheAvoidsRegeneration(t *testing.T) {
	for _, cache := range []int{0, -1, 2} {
		g := &countingGen{}
		cfg := testConfig(vfs.NewMem())
		cfg.Generator, cfg.BaseCache = g, cache
		s := must2[*chunkstore.Store](t)(chunkstore.Create("/c.pxsw", &cfg))
		rng := rand.New(rand.NewPCG(1, 1))
		pos := []chunkstore.Pos{{X: 0, Y: 0}, {X: 1, Y: 0}}
		var want [][]uint32
		for round := range 4 {
			b := s.NewBatch()
			want = want[:0]
			for _, p := range pos {
				pix := deltaChunk(p, small, 5+round, rng)
				b.PutChunk(p, pix)
				want = append(want, pix)
			}
			must2[chunkstore.CommitStats](t)(s.Commit(b))
		}
		dst := make([]uint32, npix)
		for i, p := range pos {
			must2[bool](t)(s.Get(p, dst))
			expect(t, slices.Equal(dst, want[i]), "cache %d: chunk %v read back wrong", cache, p)
		}
		calls := g.calls.Load()
		if cache < 0 {
			expect(t, calls == 4*2+2, "cache off: %d generations, want one per encode and read (10)", calls)
		} else {
			expect(t, calls == 2, "cache %d: %d generations, want one per chunk (2)", cache, calls)
		}
		mustCheck(t, s)
		must(t, s.Close())
	}
}

// With more chunks than the cache holds, the least recently used go.
func TestBaseCacheEvicts(t *testing.T) {
	g := &countingGen{}
	cfg := testConfig(vfs.NewMem())
	cfg.Generator, cfg.BaseCache = g, 2
	s := must2[*chunkstore.Store](t)(chunkstore.Create("/c.pxsw", &cfg))
	dst := make([]uint32, npix)
	for _, x := range []int32{0, 1, 2, 0} { // 0 is evicted by 2, then generated again
		must2[bool](t)(s.Get(chunkstore.Pos{X: x}, dst))
		expect(t, slices.Equal(dst, generated(chunkstore.Pos{X: x}, small)), "chunk %d", x)
	}
	expect(t, g.calls.Load() == 4, "%d generations, want 4", g.calls.Load())
	must(t, s.Close())
}
