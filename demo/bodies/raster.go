package bodies

import (
	"math"

	"github.com/arksave/arksave/components"
)

// Rotations are quantised to turns/256 and applied in 16.16 fixed point, so
// a body's cells at a blitted transform are the same on every machine: the
// pixels erased are exactly the pixels written.
const (
	turnSteps = 256
	fixOne    = 1 << 16
)

var sinTab, cosTab [turnSteps]int

func init() {
	for i := range turnSteps {
		s, c := math.Sincos(float64(i) * 2 * math.Pi / turnSteps)
		sinTab[i] = int(math.Round(s * fixOne))
		cosTab[i] = int(math.Round(c * fixOne))
	}
}

// Transform is where a body's pixels go: its origin at world pixel (X, Y),
// turned by Turn/256 of a full turn (clockwise on screen, y down).
type Transform struct {
	X, Y int
	Turn uint8
}

// Radians returns the rotation of t.
func (t Transform) Radians() float32 { return float32(float64(t.Turn) * 2 * math.Pi / turnSteps) }

// Quantize returns the transform nearest to position (x, y) and angle a.
func Quantize(x, y, a float64) Transform {
	turn := int(math.Round(a/(2*math.Pi)*turnSteps)) % turnSteps
	if turn < 0 {
		turn += turnSteps
	}
	return Transform{X: int(math.Floor(x + 0.5)), Y: int(math.Floor(y + 0.5)), Turn: uint8(turn)}
}

// Blitted returns the transform stored in b: where its pixels were last
// written into the world.
func Blitted(b *components.PixelBody) Transform {
	return Quantize(float64(b.X), float64(b.Y), float64(b.Rotation))
}

// cells calls fn for every world pixel (x, y) that cell k of body b covers at
// transform t, until fn returns false.
func cells(b *components.PixelBody, t Transform, fn func(x, y, k int) bool) {
	w, h := int(b.Width), int(b.Height)
	ox, oy := int(b.OriginX), int(b.OriginY)
	if t.Turn == 0 {
		for j := 0; j < h; j++ {
			for i := 0; i < w; i++ {
				if k := j*w + i; b.Shape[k] && !fn(t.X-ox+i, t.Y-oy+j, k) {
					return
				}
			}
		}
		return
	}
	// Map each world pixel of the bounding circle back into the grid, so the
	// turned body has no holes.
	r := int(math.Ceil(math.Hypot(float64(max(ox, w-ox)), float64(max(oy, h-oy))))) + 1
	s, c := sinTab[t.Turn], cosTab[t.Turn]
	for y := t.Y - r; y <= t.Y+r; y++ {
		dy := (y-t.Y)*fixOne + fixOne/2
		for x := t.X - r; x <= t.X+r; x++ {
			dx := (x-t.X)*fixOne + fixOne/2
			lx := (c*dx+s*dy)>>16 + ox*fixOne
			ly := (-s*dx+c*dy)>>16 + oy*fixOne
			if lx < 0 || ly < 0 {
				continue
			}
			i, j := lx>>16, ly>>16
			if i >= w || j >= h {
				continue
			}
			if k := j*w + i; b.Shape[k] && !fn(x, y, k) {
				return
			}
		}
	}
}

// bounds returns a world rectangle that holds body b at transform t.
func bounds(b *components.PixelBody, t Transform) (x0, y0, x1, y1 int) {
	w, h := int(b.Width), int(b.Height)
	r := int(math.Ceil(math.Hypot(float64(w), float64(h)))) + 1
	return t.X - r, t.Y - r, t.X + r, t.Y + r
}
