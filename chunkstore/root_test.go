package chunkstore_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/vfs"
)

// Roots let an older generation be reopened after both header slots have
// moved on, which is what backups of a save directory need.
func TestOpenAtRoot(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	s := must2[*chunkstore.Store](t)(chunkstore.Create("/w.pxsw", &cfg))
	rng := rand.New(rand.NewPCG(1, 1))
	pos := chunkstore.Pos{X: 2, Y: 1}
	var roots [][]byte
	var contents [][]uint32
	for g := 1; g <= 5; g++ {
		pix := deltaChunk(pos, small, g, rng)
		b := s.NewBatch()
		b.PutChunk(pos, pix)
		b.PutEntities(pos, chunkstore.EntityBlock{Bodies: []chunkstore.Body{{ID: uint64(g), Width: 1, Height: 1, Pixels: []uint32{1}, Shape: []bool{true}}}})
		must2[chunkstore.CommitStats](t)(s.Commit(b))
		roots = append(roots, s.Root())
		contents = append(contents, pix)
	}
	must(t, s.Close())

	read := func(s *chunkstore.Store) ([]uint32, uint64) {
		dst := make([]uint32, npix)
		must2[bool](t)(s.Get(pos, dst))
		bodies := must2[[]chunkstore.Body](t)(s.Bodies(pos))
		expect(t, len(bodies) == 1, "bodies %v", bodies)
		return dst, bodies[0].ID
	}

	r := must2[*chunkstore.Store](t)(chunkstore.Open("/w.pxsw", atRoot(cfg, roots[2])))
	got, id := read(r)
	expect(t, slices.Equal(got, contents[2]) && id == 3, "root of generation 3 reads other contents (body %d)", id)
	expect(t, r.Generation() == 5, "a store opened at an old root must continue after the newest slot, at %d", r.Generation())

	// Committing from the old root creates generation 6 with 3's contents plus
	// the change, and leaves the other roots valid.
	b := r.NewBatch()
	other := chunkstore.Pos{X: -1, Y: 0}
	b.PutChunk(other, deltaChunk(other, small, 3, rng))
	st := must2[chunkstore.CommitStats](t)(r.Commit(b))
	expect(t, st.Generation == 6, "commit from root made generation %d", st.Generation)
	mustCheck(t, r)
	must(t, r.Close())

	n := must2[*chunkstore.Store](t)(chunkstore.Open("/w.pxsw", &cfg))
	got, id = read(n)
	expect(t, n.Generation() == 6 && slices.Equal(got, contents[2]) && id == 3, "newest after commit from root: generation %d body %d", n.Generation(), id)
	must(t, n.Close())
	for g := 1; g <= 5; g++ {
		o := must2[*chunkstore.Store](t)(chunkstore.Open("/w.pxsw", atRoot(cfg, roots[g-1])))
		got, id := read(o)
		expect(t, slices.Equal(got, contents[g-1]) && id == uint64(g), "root of generation %d no longer reads its contents", g)
		must(t, o.Close())
	}

	// Damaged roots are refused.
	for i := 0; i < len(roots[0])*8; i += 7 {
		bad := slices.Clone(roots[0])
		bad[i/8] ^= 1 << (i % 8)
		_, err := chunkstore.Open("/w.pxsw", atRoot(cfg, bad))
		expect(t, err != nil, "flip of root bit %d accepted", i)
	}
	_, err := chunkstore.Open("/w.pxsw", atRoot(cfg, make([]byte, 64)))
	expect(t, errors.Is(err, chunkstore.ErrCorrupt), "zero root: %v", err)
}
