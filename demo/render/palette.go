package render

import (
	"image/color"

	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/demo/sand"
	"github.com/arksave/arksave/internal/savetool"
)

// RGBA packs a colour the way a little-endian RGBA byte buffer holds it.
func RGBA(c color.RGBA) uint32 {
	return uint32(c.R) | uint32(c.G)<<8 | uint32(c.B)<<16 | uint32(c.A)<<24
}

func unpack(c uint32) (r, g, b int) { return int(c & 0xff), int(c >> 8 & 0xff), int(c >> 16 & 0xff) }

// mix returns a*(256-t)/256 + b*t/256 for t in [0, 256].
func mix(a, b uint32, t int) uint32 {
	ar, ag, ab := unpack(a)
	br, bg, bb := unpack(b)
	return uint32(ar+(br-ar)*t/256) | uint32(ag+(bg-ag)*t/256)<<8 | uint32(ab+(bb-ab)*t/256)<<16 | 0xff<<24
}

// Palette turns pixels into colours: the material's ramp at the pixel's
// shade, with gases fading into the background as they age and burning
// solids glowing and charring with their damage.
type Palette struct {
	lut   [1 << 16]uint32 // by material | shade<<8
	gas   [256]bool
	burns [256]bool
}

// NewPalette builds the palette from [sand.Materials].
func NewPalette() *Palette {
	p := &Palette{}
	for m := sand.Material(0); m < sand.NumMaterials; m++ {
		for c := 0; c < 256; c++ {
			p.lut[int(m)|c<<8] = RGBA(sand.Shade(m, uint8(c)))
		}
		p.gas[m] = sand.Materials[m].Kind == sand.Gas
		p.burns[m] = sand.Materials[m].Kind == sand.Solid && sand.Materials[m].Flammability > 0
	}
	for m := int(sand.NumMaterials); m < 256; m++ {
		for c := 0; c < 256; c++ {
			p.lut[m|c<<8] = RGBA(sand.Shade(sand.Material(m), 0))
		}
	}
	return p
}

var ember = [...]uint32{
	RGBA(color.RGBA{0xff, 0xd0, 0x40, 0xff}),
	RGBA(color.RGBA{0xff, 0x80, 0x20, 0xff}),
	RGBA(color.RGBA{0xe0, 0x40, 0x10, 0xff}),
	RGBA(color.RGBA{0x90, 0x20, 0x10, 0xff}),
}

// Color returns the colour of px drawn over the background bg.
func (p *Palette) Color(px components.Pixel, bg uint32) uint32 {
	if px&0xff == 0 {
		return bg
	}
	m := px.Material()
	c := p.lut[px&0xffff]
	d := int(px.Damage())
	switch {
	case p.gas[m]:
		return mix(bg, c, (255-d)*7/8)
	case d != 0 && p.burns[m]:
		charred := mix(c, 0xff000000, d*3/4)
		return mix(charred, ember[(int(px.Color())+d)&3], 150)
	}
	return c
}

// MapSky is the flat sky behind air on maps of the demo's saves.
var MapSky = color.RGBA{0x8e, 0xc0, 0xe6, 0xff}

// MapPalette returns the demo's colours for maps of its saves
// (savetool.RenderDir, arksave serve's mapserve): each pixel as the game
// draws it, air as MapSky. It is safe for concurrent use.
func MapPalette() savetool.PaletteFunc {
	pal := NewPalette()
	sky := RGBA(MapSky)
	return func(p uint32) color.RGBA {
		c := pal.Color(components.Pixel(p), sky)
		return color.RGBA{uint8(c), uint8(c >> 8), uint8(c >> 16), 0xff}
	}
}
