package sim

import (
	"github.com/arksave/arksave/demo/bodies"
	"github.com/arksave/arksave/demo/sand"
	"github.com/arksave/arksave/demo/terrain"
)

// ScriptPeriod is the length, in ticks, of one round of the scripted player.
const ScriptPeriod = 720

// Script is the scripted player of the headless run (and of the window's
// -autoplay): every round of ScriptPeriod ticks it pours sand and water, builds
// a wooden platform and sets it alight, digs a shaft and pours oil into it,
// drops a crate and a rock, then pans the camera Away pixels to the right, so
// that the chunks at home unload, and back, so that they reload, and drops one
// more body. It is a pure function of the tick, so runs are repeatable.
type Script struct {
	Seed  uint64
	HomeX int // world x of home; the camera starts there
	Away  int // how far the camera pans away and back, world pixels
}

// NewScript returns the scripted player for s, at terrain.Home, where a new
// world's camera starts, panning far enough (the load radius plus two and a
// half chunks) that home unloads.
func NewScript(s *Sim) *Script {
	size := s.Config.ChunkSize
	return &Script{Seed: s.Config.Seed, HomeX: terrain.Home(s.Config.Seed), Away: int(s.Config.Radius+2)*size + size/2}
}

// Plan fills c with the player's commands for the world's tick t (Sim.Tick,
// saved with the world, so that a loaded run carries on the round where
// the saved one stopped).
func (p *Script) Plan(t uint64, c *Commands) {
	k := int(t % ScriptPeriod)
	hx := p.HomeX
	ground := terrain.SurfaceY(hx, p.Seed)
	shaft := hx + 110
	shaftTop := terrain.SurfaceY(shaft, p.Seed)
	brush := func(x, y, r int, m sand.Material) {
		c.Brush = Brush{Active: true, X: x, Y: y, Radius: r, Material: m}
	}
	switch {
	case k < 90:
		brush(hx-70+k%5, ground-90, 6, sand.Sand)
	case k < 150:
		brush(hx+40, ground-100, 7, sand.Water)
	case k < 190: // a platform of wood, laid left to right
		brush(hx-40+(k-150)*2, ground-40, 3, sand.Wood)
	case k < 200:
		brush(hx, ground-46, 5, sand.Fire)
	case k < 225: // a shaft into the ground
		c.Brush = Brush{Active: true, X: shaft, Y: shaftTop - 4 + (k-200)*3, Radius: 9, Erase: true}
	case k < 240:
		brush(shaft, shaftTop-30, 5, sand.Oil)
	case k < 420: // away, and back
		c.PanX = float64(p.Away) / 180
	case k < 600:
		c.PanX = -float64(p.Away) / 180
	case k < 660:
		brush(hx+70, ground-120, 5, sand.Sand)
	}
	switch k {
	case 60:
		c.Drop = Drop{Active: true, X: hx - 10, Y: ground - 130, Kind: bodies.Crate}
	case 120:
		c.Drop = Drop{Active: true, X: hx + 50, Y: ground - 150, Kind: bodies.Rock}
	case 640:
		c.Drop = Drop{Active: true, X: hx + 20, Y: ground - 140, Kind: bodies.Rock}
	}
}
