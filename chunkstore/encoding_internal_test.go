package chunkstore

import (
	"math/rand/v2"
	"testing"

	"github.com/arksave/arksave/internal/testkit/terrain"
)

// craftedChunks are chunks of the shapes a game produces, on a terrain
// base (the generated chunk at (1, 0), where the surface crosses it).
func craftedChunks(size int) []struct {
	name string
	pix  []uint32
} {
	n := size * size
	base := make([]uint32, n)
	terrain.Generator{Surface: int32(size / 2)}.Generate(1, 0, 7, base)
	rng := rand.New(rand.NewPCG(5, 5))
	with := func(fn func(pix []uint32)) []uint32 {
		pix := append([]uint32(nil), base...)
		fn(pix)
		return pix
	}
	block := func(frac float64) []uint32 { // contiguous rows cleared, as a player digs
		return with(func(pix []uint32) {
			k := int(frac * float64(n))
			start := (n - k) / 2
			clear(pix[start : start+k])
		})
	}
	scatter := func(frac float64, noise bool) []uint32 {
		return with(func(pix []uint32) {
			for _, i := range rng.Perm(n)[:int(frac*float64(n))] {
				if noise {
					pix[i] = rng.Uint32()
				} else {
					pix[i] = terrain.Water | uint32(rng.IntN(4))<<8
				}
			}
		})
	}
	return []struct {
		name string
		pix  []uint32
	}{
		{"terrain, one pixel", with(func(pix []uint32) { pix[n/3] = terrain.Water })},
		{"uniform paint", with(func(pix []uint32) {
			for i := range pix {
				pix[i] = 0x00030207
			}
		})},
		{"paint of 300 colours", with(func(pix []uint32) {
			for i := range pix {
				pix[i] = 0x00000100 * uint32(1+(i/7)%300)
			}
		})},
		{"scattered water 1%", scatter(0.01, false)},
		{"scattered water 30%", scatter(0.30, false)},
		{"scattered noise 5%", scatter(0.05, true)},
		{"scattered noise 100%", scatter(1, true)},
		{"contiguous block 5%", block(0.05)},
		{"contiguous block 10%", block(0.10)},
		{"contiguous block 25%", block(0.25)},
		{"contiguous block 50%", block(0.50)},
		{"contiguous block 74%", block(0.74)},
	}
}

// The record a commit writes is the smallest of the encodings that apply
// (Delta under the 75% threshold, Palette up to 65,536 distinct pixels,
// Full), on chunks of the design's size and on small ones.
func TestSmallestEncoding(t *testing.T) {
	for _, size := range []int{512, 16} {
		base := make([]uint32, size*size)
		g := terrain.Generator{Surface: int32(size / 2)}
		g.Generate(1, 0, 7, base)
		cc := &chunkCodec{npix: size * size, mask: ^uint32(0), seed: 7, gen: oneChunk(base), threshold: DefaultDeltaThreshold}
		e := &encoder{}
		seen := map[StorageType]bool{}
		for _, c := range craftedChunks(size) {
			res, err := cc.encode(e, Key2(1, 0), c.pix, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.remove {
				continue // as generated: nothing to store
			}
			chosen := len(res.rec)
			sizes := encodingSizes(e, cc, Key2(1, 0), c.pix)
			for typ, n := range sizes {
				if n < chosen {
					t.Errorf("%d, %s: stored as %s in %d bytes, %s takes %d (%v)", size, c.name, res.typ, chosen, typ, n, sizes)
				}
			}
			if sizes[res.typ] != chosen {
				t.Errorf("%d, %s: %s record of %d bytes, encoding it alone gives %d", size, c.name, res.typ, chosen, sizes[res.typ])
			}
			if res.typ == Delta && float64(res.diff) >= DefaultDeltaThreshold*float64(cc.npix) {
				t.Errorf("%d, %s: delta with %d of %d pixels changed", size, c.name, res.diff, cc.npix)
			}
			seen[res.typ] = true
			t.Logf("%d, %s: %s, %d bytes of %v", size, c.name, res.typ, chosen, sizes)
		}
		if size == 512 && !(seen[Delta] && seen[Palette] && seen[Full]) {
			t.Errorf("the crafted chunks do not exercise every encoding: %v", seen)
		}
	}
}

// Past about 10% of contiguous change the delta is no longer the smallest
// record: it is not chosen there, while it still would be under 75%.
func TestDeltaNotChosenWhereLarger(t *testing.T) {
	base := make([]uint32, seedSize*seedSize)
	seedGen.Generate(1, 0, 7, base)
	cc := &chunkCodec{npix: len(base), mask: ^uint32(0), seed: 7, gen: oneChunk(base), threshold: DefaultDeltaThreshold}
	e := &encoder{}
	for _, c := range craftedChunks(seedSize) {
		if c.name != "contiguous block 50%" {
			continue
		}
		res, err := cc.encode(e, Key2(1, 0), c.pix, nil)
		if err != nil {
			t.Fatal(err)
		}
		sizes := encodingSizes(e, cc, Key2(1, 0), c.pix)
		if res.typ == Delta || sizes[Delta] <= 4*len(res.rec) {
			t.Fatalf("50%% dug: stored as %s (%d bytes), delta %d bytes: want a record at least 4x smaller than the delta", res.typ, len(res.rec), sizes[Delta])
		}
	}
}
