package bodies

import (
	"math"
	"slices"

	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/demo/sand"
	"github.com/mlange-42/ark/ecs"
)

// Physics constants, in world pixels and seconds.
const (
	Gravity     = 600.0 // px/s^2
	maxSpeed    = 900.0 // px/s
	dt          = 1.0 / 60
	restTicks   = 20 // ticks without its pixels moving before a body sleeps
	displaceMax = 48 // how far up a liquid pushed aside by a body may go
)

// Motion is the physics state of a pixel body that [components.PixelBody]
// does not hold: the unrounded position and angle, and whether it sleeps.
// The body system adds it to every PixelBody entity that lacks it (a new
// body, or one the plugin restored with a reloaded chunk), starting from the
// blitted transform and velocities. It is simulation state only.
type Motion struct {
	X, Y   float64 // physics position of the origin, world pixels
	Angle  float64 // radians
	Rest   int     // ticks spent without moving
	Asleep bool    // at rest; wakes when the world near it changes
	// Blitted reports whether the body's pixels are in the world at the
	// transform PixelBody holds, in the chunks listed in Chunks.
	Blitted bool
	Chunks  [4]ecs.Entity // chunks under the corners of its bounds when blitted
}

// Stats describes the bodies after the last tick.
type Stats struct {
	Bodies int // all pixel bodies
	Awake  int // bodies that moved or were checked
	Frozen int // bodies whose centre is in no loaded chunk
}

// System moves pixel bodies: each tick it erases a body's pixels from the
// world, applies gravity, buoyancy and drag, moves and turns it against the
// solid pixels of the world (sand, stone, other bodies; unloaded chunks are
// walls), writes its pixels back at the new transform with FlagPixelBody, and
// stores that blitted transform in PixelBody. A body at rest is not touched
// until the world near it changes, so it leaves its chunks clean. A body
// whose centre is in no loaded chunk stops where it is.
type System struct {
	field   *sand.Field
	index   ecs.Resource[components.ChunkIndex]
	all     *ecs.Filter1[components.PixelBody]
	fresh   *ecs.Filter1[components.PixelBody]
	bodies  *ecs.Map2[components.PixelBody, Motion]
	motion  *ecs.Map[Motion]
	pixel   *ecs.Map[components.PixelBody]
	list    []item
	adopt   []ecs.Entity
	vacated [][2]int
	own     ownCells
	stats   Stats
}

type item struct {
	id components.BodyID
	e  ecs.Entity
}

// Initialize looks up the [sand.Field] resource, which must exist.
func (s *System) Initialize(w *ecs.World) {
	s.field = ecs.GetResource[sand.Field](w)
	s.index = ecs.NewResource[components.ChunkIndex](w)
	s.all = ecs.NewFilter1[components.PixelBody](w).Register()
	s.fresh = ecs.NewFilter1[components.PixelBody](w).Without(ecs.C[Motion]()).Register()
	s.bodies = ecs.NewMap2[components.PixelBody, Motion](w)
	s.motion = ecs.NewMap[Motion](w)
	s.pixel = ecs.NewMap[components.PixelBody](w)
}

// Stats returns what the last tick did.
func (s *System) Stats() Stats { return s.stats }

// Update advances every body by one tick, in order of their ids.
func (s *System) Update(w *ecs.World) {
	s.adopt = s.adopt[:0]
	q := s.fresh.Query()
	for q.Next() {
		s.adopt = append(s.adopt, q.Entity())
	}
	for _, e := range s.adopt {
		t := Blitted(s.pixel.Get(e))
		s.motion.Add(e, &Motion{X: float64(t.X), Y: float64(t.Y), Angle: float64(t.Radians())})
	}

	s.list = s.list[:0]
	q2 := s.all.Query()
	for q2.Next() {
		s.list = append(s.list, item{q2.Get().ID, q2.Entity()})
	}
	slices.SortFunc(s.list, func(a, b item) int {
		switch {
		case a.id < b.id:
			return -1
		case a.id > b.id:
			return 1
		}
		return 0
	})

	s.stats = Stats{Bodies: len(s.list)}
	s.field.Begin()
	for _, it := range s.list {
		b, m := s.bodies.Get(it.e)
		s.step(b, m)
	}
	s.field.End()
}

// Finalize does nothing.
func (s *System) Finalize(w *ecs.World) {}

func (s *System) step(b *components.PixelBody, m *Motion) {
	f := s.field
	t := Blitted(b)
	if !f.Loaded(t.X, t.Y) {
		m.Blitted = false
		s.stats.Frozen++
		return
	}
	if !m.Blitted || m.Chunks != s.chunksUnder(b, t) {
		// new, or a chunk under it was (re)loaded: put its pixels (back)
		// where it was; where they are already, nothing changes
		blit(f, b, t)
		m.Blitted, m.Chunks = true, s.chunksUnder(b, t)
		m.Asleep = false
	}
	if m.Asleep {
		x0, y0, x1, y1 := bounds(b, t)
		if !f.AwakeNear(x0, y0, x1, y1) {
			return
		}
		m.Asleep, m.Rest = false, 0
	}
	s.stats.Awake++

	wet, total := submerged(f, b, t)
	s.own.set(b, t) // its pixels stay in the world unless it moves
	vx, vy, w := float64(b.VX), float64(b.VY), float64(b.AngularVelocity)

	// gravity, buoyancy and drag
	vy += Gravity * dt
	if wet > 0 {
		frac := float64(wet) / float64(total)
		vy -= Gravity * dt * frac / density[KindOf(b)]
		drag := 1 - 0.1*frac
		vx, vy, w = vx*drag, vy*drag, w*drag
	}
	if sp := math.Hypot(vx, vy); sp > maxSpeed {
		vx, vy = vx*maxSpeed/sp, vy*maxSpeed/sp
	}

	// move in sub-steps of at most a pixel, x then y then the turn
	steps := int(math.Ceil(max(math.Abs(vx), math.Abs(vy)) * dt))
	steps = max(1, min(steps, 16))
	h := dt / float64(steps)
	grounded := false
	for range steps {
		if nx := m.X + vx*h; Quantize(nx, m.Y, m.Angle) != Quantize(m.X, m.Y, m.Angle) {
			if s.collides(b, Quantize(nx, m.Y, m.Angle)) {
				// a step of one pixel up lets a body slide over small bumps
				if up := Quantize(nx, m.Y-1, m.Angle); math.Abs(vx) > 20 && !s.collides(b, up) {
					m.X, m.Y = nx, m.Y-1
				} else {
					vx = -vx * 0.2
				}
			} else {
				m.X = nx
			}
		} else {
			m.X = nx
		}
		if ny := m.Y + vy*h; Quantize(m.X, ny, m.Angle) != Quantize(m.X, m.Y, m.Angle) {
			if s.collides(b, Quantize(m.X, ny, m.Angle)) {
				if vy > 0 {
					grounded = true
					if a := s.tip(b, Quantize(m.X, m.Y, m.Angle)); a != 0 {
						// toppling: turn, and slide off the side that holds it
						w += a * h
						vx += math.Copysign(240, a) * h
					} else {
						vx *= 0.85
					}
				}
				vy = -vy * 0.2
				if math.Abs(vy) < 25 {
					vy = 0
				}
			} else {
				m.Y = ny
			}
		} else {
			m.Y = ny
		}
		if na := m.Angle + w*h; Quantize(m.X, m.Y, na) != Quantize(m.X, m.Y, m.Angle) {
			if s.collides(b, Quantize(m.X, m.Y, na)) {
				w = -w * 0.3
			} else {
				m.Angle = na
			}
		} else {
			m.Angle = na
		}
	}
	if grounded {
		w *= 0.9
		if math.Abs(w) < 0.2 {
			w = 0
		}
	}
	m.Angle = math.Remainder(m.Angle, 2*math.Pi)

	nt := Quantize(m.X, m.Y, m.Angle)
	if nt != t {
		Erase(f, b)
		s.vacated = vacated(b, t, nt, s.vacated[:0])
		s.vacated = blitInto(f, b, nt, s.vacated)
	}
	b.X, b.Y, b.Rotation = float32(nt.X), float32(nt.Y), nt.Radians()
	b.VX, b.VY, b.AngularVelocity = float32(vx), float32(vy), float32(w)
	m.Chunks = s.chunksUnder(b, nt)

	// A body whose pixels have not moved for restTicks is at rest, whatever
	// is left of its velocities (a crate wedged on a slope keeps trying).
	if nt == t {
		m.Rest++
		if m.Rest >= restTicks {
			m.Asleep = true
			b.VX, b.VY, b.AngularVelocity = 0, 0, 0
			m.X, m.Y, m.Angle = float64(nt.X), float64(nt.Y), float64(nt.Radians())
		}
	} else {
		m.Rest = 0
	}
}

// tip returns the angular acceleration (rad/s^2) of a body standing at t:
// when everything that holds it up lies to one side of its centre, it topples
// towards the other.
func (s *System) tip(b *components.PixelBody, t Transform) float64 {
	left, right := 0, 0
	cells(b, t, func(x, y, k int) bool {
		if p, _ := s.field.At(x, y+1); blocks(p) && !s.own.has(x, y+1, p) {
			switch {
			case x < t.X-1:
				left++
			case x > t.X+1:
				right++
			}
		}
		return true
	})
	switch {
	case left > 0 && right == 0:
		return 120 // held on the left only: turns clockwise
	case right > 0 && left == 0:
		return -120
	}
	return 0
}

// collides reports whether body b at t would overlap a solid pixel or a
// chunk that is not loaded.
func (s *System) collides(b *components.PixelBody, t Transform) bool {
	hit := false
	cells(b, t, func(x, y, k int) bool {
		p, ok := s.field.At(x, y)
		hit = !ok || (blocks(p) && !s.own.has(x, y, p))
		return !hit
	})
	return hit
}

// ownCells is where a body's own pixels are in the world while it steps:
// they do not block it.
type ownCells struct {
	x0, y0, w, h int
	pix          []components.Pixel // 0 where the body has no pixel
}

func (o *ownCells) set(b *components.PixelBody, t Transform) {
	x0, y0, x1, y1 := bounds(b, t)
	o.x0, o.y0, o.w, o.h = x0, y0, x1-x0+1, y1-y0+1
	if cap(o.pix) < o.w*o.h {
		o.pix = make([]components.Pixel, o.w*o.h)
	}
	o.pix = o.pix[:o.w*o.h]
	clear(o.pix)
	cells(b, t, func(x, y, k int) bool {
		o.pix[(y-o.y0)*o.w+x-o.x0] = pixel(b, k)
		return true
	})
}

// has reports whether world pixel (x, y), holding p, is the body's own.
func (o *ownCells) has(x, y int, p components.Pixel) bool {
	x, y = x-o.x0, y-o.y0
	return x >= 0 && y >= 0 && x < o.w && y < o.h && o.pix[y*o.w+x] == p
}

// blocks reports whether a body cannot move into pixel p.
func blocks(p components.Pixel) bool {
	k := sand.KindOf(p)
	return k == sand.Solid || k == sand.Powder
}

func (s *System) chunksUnder(b *components.PixelBody, t Transform) [4]ecs.Entity {
	x0, y0, x1, y1 := bounds(b, t)
	index := s.index.Get()
	size := s.field.Size()
	var out [4]ecs.Entity
	for k, c := range [4][2]int{{x0, y0}, {x1, y0}, {x0, y1}, {x1, y1}} {
		out[k], _ = index.Get(components.ChunkOf(float64(c[0]), float64(c[1]), size))
	}
	return out
}

// submerged estimates how much of body b at t is under a liquid: the cells
// of every row of its pixels that has liquid just beyond both of its ends.
// Call it while the body's pixels are in the world.
func submerged(f *sand.Field, b *components.PixelBody, t Transform) (wet, total int) {
	_, y0, _, y1 := bounds(b, t)
	type span struct{ lo, hi, n int }
	rows := make([]span, y1-y0+1)
	cells(b, t, func(x, y, k int) bool {
		r := &rows[y-y0]
		if r.n == 0 || x < r.lo {
			r.lo = x
		}
		if r.n == 0 || x > r.hi {
			r.hi = x
		}
		r.n++
		total++
		return true
	})
	liquid := func(x, y int) bool {
		p, ok := f.At(x, y)
		return ok && sand.KindOf(p) == sand.Liquid
	}
	for i, r := range rows {
		if r.n > 0 && liquid(r.lo-1, y0+i) && liquid(r.hi+1, y0+i) {
			wet += r.n
		}
	}
	return wet, total
}

// pixel is the world pixel of cell k of body b.
func pixel(b *components.PixelBody, k int) components.Pixel {
	return b.Pixels[k] | components.FlagPixelBody<<components.FlagsShift
}

// vacated appends to out the cells body b leaves when it goes from t to nt.
func vacated(b *components.PixelBody, t, nt Transform, out [][2]int) [][2]int {
	next := map[[2]int]bool{}
	cells(b, nt, func(x, y, k int) bool {
		next[[2]int{x, y}] = true
		return true
	})
	cells(b, t, func(x, y, k int) bool {
		if !next[[2]int{x, y}] {
			out = append(out, [2]int{x, y})
		}
		return true
	})
	return out
}

// blit writes body b's pixels at t into the world. Air, gas and flame give
// way; a liquid is pushed up to the nearest air above; a cell over a solid
// or powder is left out.
func blit(f *sand.Field, b *components.PixelBody, t Transform) { blitInto(f, b, t, nil) }

// blitInto is blit, except that a liquid the body moves into goes first to
// the free cells in spare (the cells it just left), so that a body moving in
// water swaps places with it instead of pumping it upwards. It returns what
// is left of spare.
func blitInto(f *sand.Field, b *components.PixelBody, t Transform, spare [][2]int) [][2]int {
	cells(b, t, func(x, y, k int) bool {
		p, ok := f.At(x, y)
		if !ok {
			return true
		}
		switch sand.KindOf(p) {
		case sand.Empty, sand.Gas, sand.Flame:
			f.Set(x, y, pixel(b, k))
		case sand.Liquid:
			for len(spare) > 0 {
				c := spare[0]
				spare = spare[1:]
				if q, ok := f.At(c[0], c[1]); ok && q == 0 {
					f.Set(c[0], c[1], p)
					f.Set(x, y, pixel(b, k))
					return true
				}
			}
			for up := y - 1; up > y-displaceMax; up-- {
				q, ok := f.At(x, up)
				if !ok {
					break
				}
				if q == 0 {
					f.Set(x, up, p)
					f.Set(x, y, pixel(b, k))
					break
				}
				if kind := sand.KindOf(q); kind != sand.Liquid && q&(components.FlagPixelBody<<components.FlagsShift) == 0 {
					break
				}
			}
		}
		return true
	})
	return spare
}

// Erase removes body b's pixels from the world at its blitted transform:
// every cell that still holds the pixel the body wrote there becomes air.
func Erase(f *sand.Field, b *components.PixelBody) {
	cells(b, Blitted(b), func(x, y, k int) bool {
		if p, ok := f.At(x, y); ok && p == pixel(b, k) {
			f.Set(x, y, 0)
		}
		return true
	})
}

// Fits reports whether body b fits at t: no solid pixel, no unloaded chunk.
func Fits(f *sand.Field, b *components.PixelBody, t Transform) bool {
	s := System{field: f}
	return !s.collides(b, t) // s.own is empty: nothing is the body's own
}
