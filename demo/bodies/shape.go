package bodies

import (
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/demo/sand"
)

// Kind is the kind of a body, kept in the first byte of
// [components.PixelBody.Extension] so that it survives saves.
type Kind uint8

// Body kinds.
const (
	Crate Kind = 1 + iota // a wooden crate: light, floats on water
	Rock                  // a lump of stone: heavy, sinks
)

// density relative to water, by kind.
var density = map[Kind]float64{Crate: 0.55, Rock: 2.6}

// KindOf returns the kind of body b (Crate if it does not say).
func KindOf(b *components.PixelBody) Kind {
	if len(b.Extension) > 0 && (Kind(b.Extension[0]) == Crate || Kind(b.Extension[0]) == Rock) {
		return Kind(b.Extension[0])
	}
	return Crate
}

// New returns a body of the given kind with id, its origin (centre) at world
// (x, y), at rest. variant varies the shape and shading of rocks.
func New(kind Kind, id components.BodyID, x, y float32, variant uint64) components.PixelBody {
	var b components.PixelBody
	switch kind {
	case Rock:
		b = rock(variant)
	default:
		kind = Crate
		b = crate()
	}
	b.ID = id
	b.X, b.Y = x, y
	b.OriginX, b.OriginY = int32(b.Width/2), int32(b.Height/2)
	b.Extension = []byte{byte(kind)}
	return b
}

func crate() components.PixelBody {
	const n = 16
	b := components.PixelBody{Width: n, Height: n, Pixels: make([]components.Pixel, n*n), Shape: make([]bool, n*n)}
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			shade := 150 + 25*((y/4)%2) // planks
			switch {
			case x < 2 || y < 2 || x >= n-2 || y >= n-2:
				shade = 55 // frame
			case x == y || x == y+1 || x+y == n-1 || x+y == n-2:
				shade = 95 // braces
			case y%4 == 0:
				shade = 120 // gaps between planks
			}
			shade += int(hash(uint64(x), uint64(y))&15) - 8
			b.Pixels[y*n+x] = sand.Make(sand.Wood, uint8(shade))
			b.Shape[y*n+x] = true
		}
	}
	return b
}

func rock(variant uint64) components.PixelBody {
	const n = 19
	b := components.PixelBody{Width: n, Height: n, Pixels: make([]components.Pixel, n*n), Shape: make([]bool, n*n)}
	c := n / 2
	// a radius per eighth of a turn, smoothed around: lumpy but convex enough
	var radius [8]int
	for k := range radius {
		radius[k] = 6 + int(hash(variant, uint64(k))%4)
	}
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			dx, dy := x-c, y-c
			r := radius[octant(dx, dy)]
			d2 := dx*dx + dy*dy
			if d2 > r*r+int(hash(variant^0xabc, uint64(y*n+x))%5) {
				continue
			}
			shade := 120 - dy*5 - dx*2 + int(hash(variant, uint64(y*n+x))&31) - 16
			if d2 >= (r-1)*(r-1) {
				shade -= 45 // darker rim
			}
			b.Pixels[y*n+x] = sand.Make(sand.Stone, uint8(max(10, min(shade, 250))))
			b.Shape[y*n+x] = true
		}
	}
	return b
}

func octant(dx, dy int) int {
	k := 0
	if dy < 0 {
		k += 4
		dx, dy = -dx, -dy
	}
	switch {
	case dx > 0 && dy <= dx:
		return k
	case dy > 0 && dx > 0:
		return k + 1
	case dx <= 0 && dy > -dx:
		return k + 2
	}
	return k + 3
}

func hash(a, b uint64) uint64 {
	h := a*0x9E3779B97F4A7C15 ^ b*0xC2B2AE3D27D4EB4F
	h ^= h >> 31
	h *= 0xBF58476D1CE4E5B9
	h ^= h >> 29
	return h
}
