package sand

import (
	"image/color"

	"github.com/arksave/arksave/components"
)

// Material is the material layer of a [components.Pixel]. Air is zero.
type Material uint8

// The materials of the demo. Their numbers are stored in saves: append new
// ones, never renumber.
const (
	Air Material = iota
	Stone
	Dirt
	Grass
	Sand
	Water
	Oil
	Wood
	Leaf
	Coal
	Gold
	Fire
	Smoke
	Steam
	NumMaterials
)

// Kind says how a material moves.
type Kind uint8

// Material kinds.
const (
	Empty  Kind = iota // air: anything may move into it
	Solid              // never moves; may burn
	Powder             // falls and piles (sand)
	Liquid             // falls, flows under pressure, levels (water, oil)
	Gas                // rises, drifts and fades (smoke, steam)
	Flame              // rises, spreads to flammable neighbours, dies into smoke
)

// Info describes one material.
type Info struct {
	Name string
	Kind Kind
	// Density orders what sinks through what: a powder or liquid displaces a
	// liquid or gas of lower density.
	Density uint8
	// Flammability is the chance, out of 256 per tick, that a neighbouring
	// flame sets the material burning. Zero never burns.
	Flammability uint8
	// BurnRate is how much a burning solid's damage grows per tick; at 255 the
	// pixel is consumed and becomes fire. For flames and gases it is how fast
	// they age.
	BurnRate uint8
	// Dark and Light are the ends of the material's colour ramp: the colour
	// layer of a pixel picks a shade between them.
	Dark, Light color.RGBA
}

// Materials is the material table, indexed by [Material].
var Materials = [NumMaterials]Info{
	Air:   {Name: "air", Kind: Empty},
	Stone: {Name: "stone", Kind: Solid, Density: 255, Dark: rgb(0x4a, 0x4c, 0x55), Light: rgb(0x8d, 0x8c, 0x93)},
	Dirt:  {Name: "dirt", Kind: Solid, Density: 255, Dark: rgb(0x5b, 0x3d, 0x26), Light: rgb(0x8a, 0x60, 0x3c)},
	Grass: {Name: "grass", Kind: Solid, Density: 255, Dark: rgb(0x3b, 0x7d, 0x2c), Light: rgb(0x7c, 0xc0, 0x4a)},
	Sand:  {Name: "sand", Kind: Powder, Density: 160, Dark: rgb(0xc9, 0xa4, 0x5c), Light: rgb(0xf0, 0xd6, 0x8c)},
	Water: {Name: "water", Kind: Liquid, Density: 100, Dark: rgb(0x1f, 0x5f, 0xbf), Light: rgb(0x3f, 0x8f, 0xe0)},
	Oil:   {Name: "oil", Kind: Liquid, Density: 80, Flammability: 128, Dark: rgb(0x1e, 0x17, 0x2a), Light: rgb(0x4a, 0x3a, 0x5c)},
	Wood:  {Name: "wood", Kind: Solid, Density: 255, Flammability: 48, BurnRate: 2, Dark: rgb(0x6b, 0x43, 0x22), Light: rgb(0xa0, 0x6c, 0x3a)},
	Leaf:  {Name: "leaf", Kind: Solid, Density: 255, Flammability: 96, BurnRate: 12, Dark: rgb(0x23, 0x6b, 0x2e), Light: rgb(0x4f, 0xa8, 0x3c)},
	Coal:  {Name: "coal", Kind: Solid, Density: 255, Flammability: 16, BurnRate: 1, Dark: rgb(0x18, 0x18, 0x1c), Light: rgb(0x3a, 0x3a, 0x40)},
	Gold:  {Name: "gold", Kind: Solid, Density: 255, Dark: rgb(0xc8, 0x9b, 0x1e), Light: rgb(0xff, 0xe0, 0x60)},
	Fire:  {Name: "fire", Kind: Flame, Density: 1, BurnRate: 9, Dark: rgb(0xff, 0xf2, 0x8a), Light: rgb(0xd0, 0x2a, 0x0c)},
	Smoke: {Name: "smoke", Kind: Gas, Density: 2, BurnRate: 2, Dark: rgb(0x3c, 0x3c, 0x42), Light: rgb(0x6e, 0x6e, 0x76)},
	Steam: {Name: "steam", Kind: Gas, Density: 3, BurnRate: 4, Dark: rgb(0xc8, 0xd8, 0xe8), Light: rgb(0xf0, 0xf6, 0xff)},
}

func rgb(r, g, b uint8) color.RGBA { return color.RGBA{R: r, G: g, B: b, A: 0xff} }

// Make returns a pixel of material m with colour shade c, no damage, no flags.
func Make(m Material, c uint8) components.Pixel {
	return components.MakePixel(uint8(m), c, 0, 0)
}

// MaterialOf returns the material of p.
func MaterialOf(p components.Pixel) Material { return Material(p.Material()) }

// KindOf returns how p moves. Pixels of pixel bodies are always Solid: the
// body system owns them.
func KindOf(p components.Pixel) Kind {
	if p.Flags()&components.FlagPixelBody != 0 {
		return Solid
	}
	m := p.Material()
	if m >= uint8(NumMaterials) {
		return Solid
	}
	return Materials[m].Kind
}

// Shade returns the colour of material m at shade c, interpolated along the
// material's ramp.
func Shade(m Material, c uint8) color.RGBA {
	if m >= NumMaterials {
		return color.RGBA{R: 0xff, B: 0xff, A: 0xff} // unknown material: magenta
	}
	info := &Materials[m]
	lerp := func(a, b uint8) uint8 { return uint8((int(a)*(255-int(c)) + int(b)*int(c)) / 255) }
	return color.RGBA{R: lerp(info.Dark.R, info.Light.R), G: lerp(info.Dark.G, info.Light.G), B: lerp(info.Dark.B, info.Light.B), A: 0xff}
}

// Paintable lists the materials the brush offers, in the order of the number
// keys 1..9.
var Paintable = []Material{Sand, Water, Stone, Wood, Fire, Oil, Dirt, Coal, Smoke}
