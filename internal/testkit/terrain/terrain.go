// Package terrain is a small deterministic terrain generator for tests,
// benchmarks and tools: air above a rolling surface, then dirt, then stone,
// each pixel with a little colour noise, the way a falling-sand game's
// procedural world looks. It satisfies chunkstore.Generator without
// importing it.
//
// Pixels follow the game's layout (little-endian uint32: material, colour,
// damage, flags); see the Material constants.
package terrain

import "math"

// Materials the generator places (byte 0 of a pixel).
const (
	Air   = 0
	Dirt  = 1
	Stone = 2
	Sand  = 3
	Water = 4
)

// Generator produces terrain. The zero value is ready to use; it is pure,
// deterministic and safe for concurrent use.
type Generator struct {
	// Surface is the world y (in pixels, growing downwards) around which the
	// surface rolls. Zero means 0: chunk row 0 holds the surface.
	Surface int32
	// Rev changes the generator's output and version, for tests that need a
	// second, incompatible generator.
	Rev uint32
}

// Version returns the generator's version: 1 + Rev.
func (g Generator) Version() uint32 { return 1 + g.Rev }

// Generate fills dst, a square chunk of side sqrt(len(dst)) pixels, row-major,
// for chunk (x, y) of the world with the given seed.
func (g Generator) Generate(x, y int32, seed uint64, dst []uint32) {
	size := int(math.Sqrt(float64(len(dst))))
	seed ^= uint64(g.Rev) * 0x9E3779B97F4A7C15
	wx0 := int64(x) * int64(size)
	wy0 := int64(y) * int64(size)
	surf := make([]int64, 2*size)
	dirt := surf[size:]
	for i := range size {
		wx := wx0 + int64(i)
		surf[i] = int64(g.Surface) + height(wx, seed)
		dirt[i] = surf[i] + 12 + int64(mix(uint64(wx)^seed)%6)
	}
	minSurf, maxDirt := surf[0], dirt[0]
	for i := range size {
		minSurf = min(minSurf, surf[i])
		maxDirt = max(maxDirt, dirt[i])
	}
	for j := range size {
		wy := wy0 + int64(j)
		row := dst[j*size : (j+1)*size]
		if wy < minSurf {
			clear(row)
			continue
		}
		// A xorshift stream per row gives two bits of colour noise per
		// pixel, 32 pixels per step: deterministic and cheap.
		r := mix(uint64(wy)*0xC2B2AE3D27D4EB4F^uint64(wx0)^seed) | 1
		var bits uint64
		for i := range row {
			if i&31 == 0 {
				r ^= r << 13
				r ^= r >> 7
				r ^= r << 17
				bits = r
			}
			c := uint32(bits) & 3
			bits >>= 2
			n := uint32(0)
			if c == 0 { // one pixel in four gets a colour variant
				n = 1
			}
			switch {
			case wy >= maxDirt || wy >= dirt[i]:
				row[i] = Stone | n<<8
			case wy < surf[i]:
				row[i] = Air
			default:
				row[i] = Dirt | (n+uint32(bits)&1)<<8
			}
		}
	}
}

// height is the surface offset at world column wx: a sum of two smooth
// waves built from hashed control points, in pixels.
func height(wx int64, seed uint64) int64 {
	return wave(wx, 64, 24, seed) + wave(wx, 13, 4, seed^0xA5A5A5A5)
}

// wave interpolates linearly between hashed control points every period
// pixels, with the given amplitude.
func wave(wx int64, period, amp int64, seed uint64) int64 {
	cell := floorDiv(wx, period)
	t := wx - cell*period
	a := int64(mix(uint64(cell)^seed)%uint64(2*amp+1)) - amp
	b := int64(mix(uint64(cell+1)^seed)%uint64(2*amp+1)) - amp
	return a + (b-a)*t/period
}

func mix(z uint64) uint64 {
	z ^= z >> 31
	z *= 0x7FB5D329728EA185
	z ^= z >> 27
	z *= 0x81DADEF4BC2DD44D
	z ^= z >> 33
	return z
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
