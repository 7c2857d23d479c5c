package chunkstore_test

import (
	"math/rand/v2"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/benchenc"
	"github.com/arksave/arksave/internal/testkit/terrain"
)

// BenchmarkPalette_Records stores 512x512 chunks of the shapes a game
// writes in two stores, one choosing records as stores of format 2 did
// (EncodeDeltaFull: a delta under 75% changed, else full) and one the
// smallest (EncodeSmallest: palette records too), and loads them at
// random, alternating between the stores: bytes per chunk, load time and
// their ratios (package benchenc).
func BenchmarkPalette_Records(b *testing.B) {
	const size = 512
	g := terrain.Generator{Surface: size / 2}
	cfg := chunkstore.Options{ChunkSize: size, TileSize: 32, Seed: 7, Generator: g}
	rng := rand.New(rand.NewPCG(3, 3))
	shapes := []struct {
		name string
		edit func(pix []uint32, i int)
	}{
		{"terrain-dug5pct", func(pix []uint32, i int) { dig(pix, 0.05, size, i) }},
		{"terrain-dug25pct", func(pix []uint32, i int) { dig(pix, 0.25, size, i) }},
		{"terrain-scattered30pct", func(pix []uint32, _ int) {
			for _, j := range rng.Perm(len(pix))[:len(pix)*3/10] {
				pix[j] = uint32(1+rng.IntN(4)) | uint32(rng.IntN(4))<<8
			}
		}},
		{"painted", func(pix []uint32, i int) { benchenc.Paint(pix, size, uint64(i)) }},
	}
	for _, shape := range shapes {
		b.Run(shape.name, func(b *testing.B) {
			var chunks []benchenc.Chunk
			for i := range 8 {
				p := chunkstore.Pos{X: int32(i), Y: 0} // the surface crosses row 0
				pix := make([]uint32, size*size)
				g.Generate(p.X, p.Y, cfg.Seed, pix)
				shape.edit(pix, i)
				chunks = append(chunks, benchenc.Chunk{Pos: p, Pix: pix})
			}
			benchenc.Compare(b, cfg, chunks)
		})
	}
}

// dig clears frac of the chunk's pixels to air in a run of rows that ends
// 8+3i rows above the bottom, as a player digging (each chunk i elsewhere:
// identical deltas would be one record, shared by the chunk dictionary).
func dig(pix []uint32, frac float64, size, i int) {
	n := int(frac * float64(len(pix)))
	start := len(pix) - n - size*(8+3*i)
	clear(pix[start : start+n])
}
