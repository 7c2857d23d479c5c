package savetool

import (
	"image/color"
	"sync"
)

// Palette turns a pixel as stored (little-endian bytes: material, colour,
// damage, flags) into a colour.
type Palette interface {
	Color(pixel uint32) color.RGBA
}

// PaletteFunc adapts a function to a [Palette]: a game can render with its
// own colours.
type PaletteFunc func(pixel uint32) color.RGBA

// Color returns f(pixel).
func (f PaletteFunc) Color(pixel uint32) color.RGBA { return f(pixel) }

// Ramp is the colours of one material: a pixel's colour byte picks a shade
// from Dark (0) to Light (255).
type Ramp struct{ Dark, Light color.RGBA }

// MaterialPalette colours a pixel by its material (byte 0) and shade
// (byte 1), darkened by its damage (byte 2). Material 0 is air, drawn as
// Air. A material without a ramp gets a colour of its own, derived from its
// id, so that another game's materials stay apart.
type MaterialPalette struct {
	Air   color.RGBA
	Ramps map[uint8]Ramp
	lut   []color.RGBA // by material | shade<<8
}

// DefaultPalette returns the colours of the falling-sand demo's materials:
// 0 air, 1 stone, 2 dirt, 3 grass, 4 sand, 5 water, 6 oil, 7 wood, 8 leaf,
// 9 coal, 10 gold, 11 fire, 12 smoke, 13 steam.
func DefaultPalette() *MaterialPalette {
	return &MaterialPalette{
		Air: rgb(0x9c, 0xc8, 0xec),
		Ramps: map[uint8]Ramp{
			1:  {rgb(0x4a, 0x4c, 0x55), rgb(0x8d, 0x8c, 0x93)}, // stone
			2:  {rgb(0x5b, 0x3d, 0x26), rgb(0x8a, 0x60, 0x3c)}, // dirt
			3:  {rgb(0x3b, 0x7d, 0x2c), rgb(0x7c, 0xc0, 0x4a)}, // grass
			4:  {rgb(0xc9, 0xa4, 0x5c), rgb(0xf0, 0xd6, 0x8c)}, // sand
			5:  {rgb(0x1f, 0x5f, 0xbf), rgb(0x3f, 0x8f, 0xe0)}, // water
			6:  {rgb(0x1e, 0x17, 0x2a), rgb(0x4a, 0x3a, 0x5c)}, // oil
			7:  {rgb(0x6b, 0x43, 0x22), rgb(0xa0, 0x6c, 0x3a)}, // wood
			8:  {rgb(0x23, 0x6b, 0x2e), rgb(0x4f, 0xa8, 0x3c)}, // leaf
			9:  {rgb(0x18, 0x18, 0x1c), rgb(0x3a, 0x3a, 0x40)}, // coal
			10: {rgb(0xc8, 0x9b, 0x1e), rgb(0xff, 0xe0, 0x60)}, // gold
			11: {rgb(0xff, 0xf2, 0x8a), rgb(0xd0, 0x2a, 0x0c)}, // fire
			12: {rgb(0x3c, 0x3c, 0x42), rgb(0x6e, 0x6e, 0x76)}, // smoke
			13: {rgb(0xc8, 0xd8, 0xe8), rgb(0xf0, 0xf6, 0xff)}, // steam
		},
	}
}

// sharedPalette is one DefaultPalette, its lookup table built, for the
// functions that take a nil palette.
var sharedPalette = sync.OnceValue(func() *MaterialPalette {
	p := DefaultPalette()
	p.build()
	return p
})

func rgb(r, g, b uint8) color.RGBA { return color.RGBA{R: r, G: g, B: b, A: 0xff} }

// Color returns the colour of a pixel. It builds a lookup table on first
// use: share a palette between goroutines only after a first call.
func (p *MaterialPalette) Color(pixel uint32) color.RGBA {
	if p.lut == nil {
		p.build()
	}
	c := p.lut[pixel&0xffff]
	if d := uint32(pixel>>16) & 0xff; d != 0 && pixel&0xff != 0 {
		k := 255 - d/2
		c.R, c.G, c.B = uint8(uint32(c.R)*k/255), uint8(uint32(c.G)*k/255), uint8(uint32(c.B)*k/255)
	}
	return c
}

// build fills the lookup table.
func (p *MaterialPalette) build() {
	lut := make([]color.RGBA, 1<<16)
	for m := 0; m < 256; m++ {
		ramp, ok := p.Ramps[uint8(m)]
		if !ok {
			base := derived(uint8(m))
			ramp = Ramp{scale(base, 170), scale(base, 255)}
		}
		for s := 0; s < 256; s++ {
			c := p.Air
			if m != 0 {
				c = lerp(ramp.Dark, ramp.Light, s)
			}
			lut[m|s<<8] = c
		}
	}
	p.lut = lut
}

// derived is a stable, saturated colour for a material id without a ramp.
func derived(m uint8) color.RGBA {
	h := uint32(m) * 0x9E3779B1
	h ^= h >> 15
	return rgb(uint8(80+h%160), uint8(80+(h>>8)%160), uint8(80+(h>>16)%160))
}

func scale(c color.RGBA, k uint32) color.RGBA {
	return rgb(uint8(uint32(c.R)*k/255), uint8(uint32(c.G)*k/255), uint8(uint32(c.B)*k/255))
}

func lerp(a, b color.RGBA, t int) color.RGBA {
	mix := func(x, y uint8) uint8 { return uint8((int(x)*(255-t) + int(y)*t) / 255) }
	return color.RGBA{R: mix(a.R, b.R), G: mix(a.G, b.G), B: mix(a.B, b.B), A: 0xff}
}
