package chunkstore

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/arksave/arksave/internal/testkit/terrain"
)

// The design's chunk: 512x512 pixels of 4 bytes.
const seedSize = 512

var seedGen = terrain.Generator{Surface: seedSize / 2}

// terrainChunk is the generated chunk at (1, 0): the surface crosses it.
func terrainChunk() []uint32 {
	pix := make([]uint32, seedSize*seedSize)
	seedGen.Generate(1, 0, 7, pix)
	return pix
}

// patterns are the compression patterns of the chunk store's design, with the sizes it estimated.
func patterns() []struct {
	name string
	seed string // the design's estimated size
	pix  []uint32
} {
	rng := rand.New(rand.NewPCG(7, 7))
	n := seedSize * seedSize
	sparse := func(frac float64) []uint32 {
		pix := make([]uint32, n)
		for _, i := range rng.Perm(n)[:int(frac*float64(n))] {
			pix[i] = uint32(1+rng.IntN(4)) | uint32(rng.IntN(4))<<8
		}
		return pix
	}
	uniform := make([]uint32, n)
	random := make([]uint32, n)
	for i := range uniform {
		uniform[i] = terrain.Stone
		random[i] = rng.Uint32()
	}
	return []struct {
		name string
		seed string
		pix  []uint32
	}{
		{"Empty (air)", "4 KB", make([]uint32, n)},
		{"Uniform", "4 KB", uniform},
		{"Sparse 1%", "18 KB", sparse(0.01)},
		{"Sparse 5%", "67 KB", sparse(0.05)},
		{"Terrain", "187 KB", terrainChunk()},
		{"Sparse 25%", "202 KB", sparse(0.25)},
		{"Random", "1,053 KB", random},
	}
}

func kb(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f KB", float64(n)/1024)
}

// modify changes frac of a terrain chunk: "dug" clears a run of whole rows
// below the surface to air (a player digging), "scattered" sets random
// pixels to random materials.
func modify(pix []uint32, frac float64, scattered bool, rng *rand.Rand) []uint32 {
	out := append([]uint32(nil), pix...)
	n := int(frac * float64(len(out)))
	if scattered {
		for _, i := range rng.Perm(len(out))[:n] {
			out[i] = uint32(1+rng.IntN(4)) | uint32(rng.IntN(4))<<8
		}
		return out
	}
	start := len(out) - n - seedSize*8 // above the bottom rows, below the surface
	for i := start; i < start+n; i++ {
		out[i] = terrain.Air
	}
	return out
}

// TestDesignTables prints the chunk store design's estimated compression beside ours, for a
// 512x512x4 chunk (go test -run TestDesignTables -v ./chunkstore). Our sizes
// are whole records: the 24-byte header plus the LZ4 payload.
func TestDesignTables(t *testing.T) {
	e := &encoder{}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| Pattern | design | ours: full | ratio | ours: palette | stored as |\n| --- | --- | --- | --- | --- | --- |\n")
	plain := &chunkCodec{npix: seedSize * seedSize, mask: ^uint32(0), threshold: DefaultDeltaThreshold}
	for _, p := range patterns() {
		sizes := encodingSizes(e, plain, Key2(0, 0), p.pix)
		res, err := plain.encode(e, Key2(0, 0), p.pix, nil)
		if err != nil {
			t.Fatal(err)
		}
		stored := res.typ.String()
		if res.typ == Empty {
			stored = "empty: no record, entry only"
		}
		pal := "-"
		if n, ok := sizes[Palette]; ok {
			pal = kb(n)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.1fx | %s | %s |\n", p.name, p.seed, kb(sizes[Full]), float64(4*len(p.pix))/float64(sizes[Full]), pal, stored)
	}
	cc := &chunkCodec{npix: seedSize * seedSize, mask: ^uint32(0), seed: 7, gen: oneChunk(terrainChunk()), threshold: DefaultDeltaThreshold}
	base := terrainChunk()
	seedRows := map[int][3]string{1: {"2,605", "87 B", "195 KB"}, 5: {"12,761", "366 B", "226 KB"}, 10: {"24,898", "699 B", "255 KB"},
		25: {"58,027", "1.6 KB", "305 KB"}, 50: {"103,238", "2.8 KB", "328 KB"}}
	for _, scattered := range []bool{false, true} {
		name := "dug (contiguous rows cleared to air)"
		if scattered {
			name = "scattered (random pixels, random materials)"
		}
		fmt.Fprintf(&b, "\nDelta vs Full vs Palette, terrain base, %s:\n\n| Modification | design: entries / delta / full | ours: entries | ours: delta | ours: full | ours: palette | stored as |\n| --- | --- | --- | --- | --- | --- | --- |\n", name)
		rng := rand.New(rand.NewPCG(9, 9))
		for _, pct := range []int{1, 5, 10, 25, 50} {
			pix := modify(base, float64(pct)/100, scattered, rng)
			res, err := cc.encode(e, Key2(1, 0), pix, nil)
			if err != nil {
				t.Fatalf("%d%%: %v", pct, err)
			}
			sizes := encodingSizes(e, cc, Key2(1, 0), pix)
			sr := seedRows[pct]
			fmt.Fprintf(&b, "| %d%% | %s / %s / %s | %d | %s | %s | %s | %s |\n", pct, sr[0], sr[1], sr[2], res.diff,
				kb(sizes[Delta]), kb(sizes[Full]), kb(sizes[Palette]), res.typ)
		}
	}
	t.Log(b.String())
}

// oneChunk is a generator that returns the same chunk everywhere.
type oneChunk []uint32

func (oneChunk) Version() uint32                               { return 1 }
func (c oneChunk) Generate(_, _ int32, _ uint64, dst []uint32) { copy(dst, c) }

// encodingSizes returns the record size of pix at pos in every encoding that
// applies to it (Delta with a generator and under the threshold, Palette up
// to 65,536 distinct pixels, Full), for comparing with what encode chose.
func encodingSizes(e *encoder, cc *chunkCodec, pos Key, pix []uint32) map[StorageType]int {
	sizes := map[StorageType]int{}
	e.setExt(cc, nil)
	sizes[Full] = len(e.encodeFull(pos, pix, cc.mask))
	if rec, ok := e.encodePalette(pos, pix, cc.mask); ok {
		sizes[Palette] = len(rec)
	}
	if cc.gen != nil {
		gen := make([]uint32, cc.npix)
		cc.run(pos, gen)
		maskPixels(gen, cc.mask)
		diff := 0
		for i, p := range pix {
			if p&cc.mask != gen[i] {
				diff++
			}
		}
		if diff > 0 && float64(diff) < cc.threshold*float64(cc.npix) {
			sizes[Delta] = len(e.encodeDelta(pos, pix, gen, cc.mask, diff))
		}
	}
	return sizes
}
