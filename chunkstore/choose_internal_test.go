package chunkstore

import (
	"math/rand/v2"
	"testing"

	"github.com/arksave/arksave/internal/testkit/terrain"
)

// choiceCase is a chunk to store and the generator its store has.
type choiceCase struct {
	name string
	gen  Generator // nil: no deltas
	seed uint64
	pos  Key
	pix  []uint32
}

// choiceCorpus returns the chunks of the record-choice test: the demo's
// terrain (the surface crossing the chunk) dug, painted and flooded; the
// benchmarks' chunks (1% water on the generated terrain, as
// BenchmarkCommitLatency saves them, 5% and 20%); a mostly-air chunk, a
// chunk of a few colours, noisy chunks; the crafted shapes of
// TestSmallestEncoding and the design's compression patterns. Every chunk
// with a base is also stored without a generator.
func choiceCorpus() []choiceCase {
	const size = 512
	n := size * size
	rng := rand.New(rand.NewPCG(11, 12))
	gen := func(g Generator, pos Key) []uint32 {
		pix := make([]uint32, n)
		g.Generate(pos.c[0], pos.c[1], 1, pix)
		return pix
	}
	water := func(pix []uint32, frac float64) []uint32 {
		pix = append([]uint32(nil), pix...)
		for range int(frac * float64(n)) {
			pix[rng.IntN(n)] = terrain.Water | uint32(rng.IntN(4))<<8
		}
		return pix
	}
	dig := func(pix []uint32, x0, y0, w, h int) []uint32 {
		pix = append([]uint32(nil), pix...)
		for y := y0; y < y0+h; y++ {
			clear(pix[y*size+x0 : y*size+x0+w])
		}
		return pix
	}
	var out []choiceCase
	seed := uint64(1)
	add := func(name string, g Generator, pos Key, pix []uint32) {
		out = append(out, choiceCase{name, g, seed, pos, pix})
		if g != nil {
			out = append(out, choiceCase{name + ", no generator", nil, seed, pos, pix})
		}
	}
	demo := terrain.Generator{Surface: size / 2}
	for _, x := range []int32{0, 3, 7} {
		pos := Key2(x, 0)
		base := gen(demo, pos)
		add("demo terrain dug 64x64", demo, pos, dig(base, 200, 250, 64, 64))
		add("demo terrain shaft 12x300", demo, pos, dig(base, 100, 200, 12, 300))
		add("demo terrain 1% water", demo, pos, water(base, 0.01))
		add("demo terrain 0.1% water", demo, pos, water(base, 0.001))
	}
	bench := terrain.Generator{}
	for x := int32(10); x < 15; x++ {
		pos := Key2(x, 0)
		add("benchmark chunk 1%", bench, pos, water(gen(bench, pos), 0.01))
	}
	for _, frac := range []float64{0.05, 0.20} {
		pos := Key2(40, 2)
		add("benchmark chunk more water", bench, pos, water(gen(bench, pos), frac))
	}
	air := make([]uint32, n)
	for range n / 50 {
		air[rng.IntN(n)] = terrain.Stone | uint32(rng.IntN(2))<<8
	}
	add("mostly air", demo, Key2(2, -3), air)
	few := make([]uint32, n)
	for i := range few {
		few[i] = uint32(1 + (i%size/40+i/size/40)%4)
	}
	add("four colours in squares", demo, Key2(2, 0), few)
	noisy := make([]uint32, n)
	for i := range noisy {
		noisy[i] = rng.Uint32()
	}
	add("noise", demo, Key2(1, 0), noisy)
	seed = 7 // craftedChunks' base
	for _, c := range craftedChunks(size) {
		add("crafted "+c.name, demo, Key2(1, 0), c.pix)
	}
	for _, p := range patterns() {
		add("pattern "+p.name, nil, Key2(1, 0), p.pix)
	}
	return out
}

// The record encode chooses is within 10% of the smallest of Delta,
// Palette and Full (each built here), while it compresses fewer than two
// payloads a chunk on average the first time a position is encoded (its
// base measured once) and about one when the base is known: it estimates
// which record wins instead of compressing every one.
func TestChoiceWithinTenPercent(t *testing.T) {
	corpus := choiceCorpus()
	var first, again, chunks int
	for _, c := range corpus {
		cc := &chunkCodec{npix: len(c.pix), mask: ^uint32(0), seed: c.seed, gen: c.gen, threshold: DefaultDeltaThreshold, bases: newBaseCache(4)}
		e := &encoder{}
		for round := range 2 {
			before := e.compressions
			res, err := cc.encode(e, c.pos, c.pix, nil)
			if err != nil {
				t.Fatal(err)
			}
			spent := e.compressions - before
			if res.rec == nil {
				continue // as generated, or Empty: no record
			}
			if round == 0 {
				first += spent
				chunks++
			} else {
				again += spent
			}
			chosen := len(res.rec)
			sizes := encodingSizes(e, cc, c.pos, c.pix)
			best := chosen
			for _, n := range sizes {
				best = min(best, n)
			}
			if 10*chosen > 11*best {
				t.Errorf("%s: %s of %d bytes, %.0f%% over the smallest of %v", c.name, res.typ, chosen, 100*float64(chosen-best)/float64(best), sizes)
			}
			if round == 0 {
				t.Logf("%-45s %-7s %7d bytes, %d compressions, of %v", c.name, res.typ, chosen, spent, sizes)
			}
		}
	}
	t.Logf("%d chunks: %.2f compressions a chunk the first time, %.2f again", chunks, float64(first)/float64(chunks), float64(again)/float64(chunks))
	if first >= 2*chunks || 2*again > 3*chunks {
		t.Errorf("%d chunks took %d compressions the first time, %d again: want under 2 and at most 1.5 a chunk", chunks, first, again)
	}
}

// The Delta record built from the payload the change scan laid out is the
// one a second scan builds, byte for byte, for every count of changed
// pixels around the limit of what the scan lays out (and past it, where
// the record is built by scanning again), with and without a layer mask;
// the scan's counts are those of a plain comparison.
func TestDeltaLaidInTheScan(t *testing.T) {
	const size = 128
	n := size * size
	limit := n / laidMaxDiv
	gen := make([]uint32, n)
	terrain.Generator{Surface: size / 2}.Generate(3, 0, 1, gen)
	rng := rand.New(rand.NewPCG(21, 22))
	for _, mask := range []uint32{^uint32(0), 0x00ff00ff} {
		base := append([]uint32(nil), gen...)
		maskPixels(base, mask)
		for _, diff := range []int{0, 1, 2, limit - 1, limit, limit + 1, 3 * limit} {
			pix := append([]uint32(nil), base...)
			for _, i := range rng.Perm(n)[:diff] {
				pix[i] = (base[i] ^ 0x00010001) | 0xff00ff00 // differs under both masks, bits outside mask set
			}
			var want chunkChanges
			was := false
			for i, p := range pix {
				p &= mask
				want.nonzero = want.nonzero || p != 0
				is := p != base[i]
				if is {
					want.diff++
					if !was {
						want.runs++
					}
				}
				was = is
			}
			e := &encoder{}
			e.setExt(&chunkCodec{mask: mask}, nil)
			ch := e.scanChanges(pix, base, mask)
			if ch.diff != want.diff || ch.runs != want.runs || ch.nonzero != want.nonzero || ch.laid != (diff <= limit) {
				t.Fatalf("mask %#x, %d changed: scan found %+v, want %+v (laid %v)", mask, diff, ch, want, diff <= limit)
			}
			got := append([]byte(nil), e.deltaOf(Key2(3, 0), pix, base, mask, ch)...)
			rescanned := e.encodeDelta(Key2(3, 0), pix, base, mask, want.diff)
			if string(got) != string(rescanned) {
				t.Errorf("mask %#x, %d changed: the Delta from the scan (%d bytes) differs from a second scan's (%d bytes)", mask, diff, len(got), len(rescanned))
			}
		}
	}
}

// A generated base of a 512x512 chunk is measured on an eighth of its
// pixels (whole rows, spread over the chunk), and the size so estimated is
// within 10% of what measuring all of it gives, for the demo's terrain (the
// surface crossing the chunk, and below it) and the benchmarks' chunks.
func TestBaseMeasuredOnASample(t *testing.T) {
	const size = 512
	e := &encoder{}
	for _, g := range []terrain.Generator{{Surface: size / 2}, {}} {
		for _, pos := range []Key{Key2(0, 0), Key2(3, 0), Key2(7, 1), Key2(10, 0), Key2(12, 2)} {
			pix := make([]uint32, size*size)
			g.Generate(pos.c[0], pos.c[1], 1, pix)
			exact := e.measurePlain(pix, 1)
			est := e.basePlain(pix)
			if len(e.pal.sample) != len(pix)/8 {
				t.Fatalf("%v: measured on %d pixels, want an eighth of %d", pos, len(e.pal.sample), len(pix))
			}
			if est.typ != exact.typ || 10*est.payload < 9*exact.payload || 10*est.payload > 11*exact.payload {
				t.Errorf("surface %d, chunk %v: the sample gives %s of %d bytes, all of it %s of %d", g.Surface, pos, est.typ, est.payload, exact.typ, exact.payload)
			}
		}
	}
}
