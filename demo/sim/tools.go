package sim

import (
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/demo/bodies"
	"github.com/arksave/arksave/demo/internal/rng"
	"github.com/arksave/arksave/demo/sand"
	"github.com/mlange-42/ark/ecs"
)

// Commands is what the player asks of one tick; a resource. The window's
// input or the scripted player fills it before the tick, the Tools system
// carries it out and clears it.
type Commands struct {
	PanX, PanY float64 // move the camera, world pixels
	Brush      Brush
	Drop       Drop
}

// Brush paints a disc of the world.
type Brush struct {
	Active   bool
	X, Y     int // world pixel at the centre
	Radius   int
	Material sand.Material
	Erase    bool // dig: everything but bodies becomes air, bodies under it vanish
}

// Drop asks for a pixel body.
type Drop struct {
	Active bool
	X, Y   int // world pixel; the body goes to the nearest free place above
	Kind   bodies.Kind
}

// Tools carries out the player's commands: moves the camera, paints and
// erases, drops bodies. Its randomness (spray patterns) comes from a PRNG
// seeded by Seed.
type Tools struct {
	Seed   uint64
	Camera ecs.Entity

	field    *sand.Field
	commands ecs.Resource[Commands]
	ids      ecs.Resource[components.BodyIDs]
	focus    *ecs.Map1[components.Focus]
	bodies   *ecs.Map2[components.PixelBody, components.Regional]
	pixel    *ecs.Map1[components.PixelBody]
	all      *ecs.Filter1[components.PixelBody]
	rng      rng.Rand
	remove   []ecs.Entity
}

// Initialize looks up the resources.
func (t *Tools) Initialize(w *ecs.World) {
	t.field = ecs.GetResource[sand.Field](w)
	t.commands = ecs.NewResource[Commands](w)
	t.ids = ecs.NewResource[components.BodyIDs](w)
	t.focus = ecs.NewMap1[components.Focus](w)
	t.bodies = ecs.NewMap2[components.PixelBody, components.Regional](w)
	t.pixel = ecs.NewMap1[components.PixelBody](w)
	t.all = ecs.NewFilter1[components.PixelBody](w).Register()
	t.rng = rng.New(t.Seed ^ 0x70015)
}

// Update applies the commands of this tick and clears them.
func (t *Tools) Update(w *ecs.World) {
	c := t.commands.Get()
	if c.PanX != 0 || c.PanY != 0 {
		f := t.focus.Get(t.Camera)
		f.X += c.PanX
		f.Y += c.PanY
	}
	if c.Brush.Active {
		t.paint(w, c.Brush)
	}
	if c.Drop.Active {
		t.drop(c.Drop)
	}
	*c = Commands{}
}

// Finalize does nothing.
func (t *Tools) Finalize(w *ecs.World) {}

func (t *Tools) next() uint64 { return t.rng.Next() }

func (t *Tools) paint(w *ecs.World, b Brush) {
	f := t.field
	f.Begin()
	r := max(b.Radius, 0)
	for dy := -r; dy <= r; dy++ {
		for dx := -r; dx <= r; dx++ {
			if dx*dx+dy*dy > r*r+r/2 {
				continue
			}
			x, y := b.X+dx, b.Y+dy
			p, ok := f.At(x, y)
			if !ok || p.Flags()&components.FlagPixelBody != 0 {
				continue
			}
			if b.Erase {
				f.Set(x, y, 0)
				continue
			}
			if q, ok := t.brushPixel(b.Material, p, x, y); ok {
				f.Set(x, y, q)
			}
		}
	}
	if b.Erase {
		t.remove = t.remove[:0]
		q := t.all.Query()
		for q.Next() {
			pb := q.Get()
			if dx, dy := int(pb.X)-b.X, int(pb.Y)-b.Y; dx*dx+dy*dy <= (r+6)*(r+6) {
				t.remove = append(t.remove, q.Entity())
			}
		}
		for _, e := range t.remove {
			bodies.Erase(f, t.pixel.Get(e))
		}
	}
	f.End()
	for _, e := range t.remove {
		w.RemoveEntity(e)
	}
	t.remove = t.remove[:0]
}

// brushPixel returns what painting material m turns pixel p at (x, y) into.
// Loose materials are sprayed into empty space; solids build over anything
// that is not solid; fire sets what burns alight.
func (t *Tools) brushPixel(m sand.Material, p components.Pixel, x, y int) (components.Pixel, bool) {
	r := t.next()
	here := sand.KindOf(p)
	empty := here == sand.Empty || here == sand.Gas
	shade := uint8(r >> 8)
	switch info := &sand.Materials[m]; info.Kind {
	case sand.Flame:
		pm := sand.MaterialOf(p)
		switch {
		case here == sand.Solid && sand.Materials[pm].Flammability > 0 && p.Damage() == 0:
			return p | 1<<components.DamageShift, true
		case sand.Materials[pm].Kind == sand.Liquid && sand.Materials[pm].Flammability > 0:
			return sand.Make(sand.Fire, shade), true
		case empty && r&3 == 0:
			return sand.Make(sand.Fire, shade), true
		}
	case sand.Solid:
		if here != sand.Solid {
			// a texture that stays put: shade from the position, not the PRNG
			h := uint32(x)*0x9E3779B1 ^ uint32(y)*0x85EBCA77
			h ^= h >> 15
			h *= 0x2C1B3C6D
			return sand.Make(m, uint8(100+h>>24%80)), true
		}
	default: // powder, liquid, gas: a spray
		if empty && r&1 == 0 {
			return sand.Make(m, shade), true
		}
	}
	return 0, false
}

func (t *Tools) drop(d Drop) {
	f := t.field
	ids := t.ids.Get()
	f.Begin()
	body := bodies.New(d.Kind, 0, 0, 0, t.next())
	placed := false
	for up := 0; up < 96 && !placed; up += 2 {
		tr := bodies.Transform{X: d.X, Y: d.Y - up}
		if bodies.Fits(f, &body, tr) {
			body.X, body.Y = float32(tr.X), float32(tr.Y)
			placed = true
		}
	}
	f.End()
	if placed {
		// A regional entity: saved with the chunk it stands in, unloaded and
		// spawned again with it, its stable id the body's.
		body.ID = ids.New()
		t.bodies.NewEntity(&body, &components.Regional{ID: uint64(body.ID)})
	}
}
