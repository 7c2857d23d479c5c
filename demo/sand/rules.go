package sand

import "github.com/arksave/arksave/components"

// peek returns the pixel at chunk-local (x, y) relative to v, with its view
// and index; beyond the loaded world it returns wall and a nil view.
func (s *System) peek(v *view, x, y int) (components.Pixel, *view, int) {
	tv, lx, ly := s.field.rel(v, x, y)
	if tv == nil {
		return wall, nil, 0
	}
	i := ly*s.field.size + lx
	return tv.pix[i], tv, i
}

// swap exchanges the pixel at index ai of a with the one at bi of b, where
// (ax, ay) and (bx, by) are their chunk-local coordinates. The pixel that
// arrives at b is marked as moved, so it is not updated again this tick.
func (s *System) swap(a *view, ai, ax, ay int, b *view, bi, bx, by int) {
	pa, pb := a.pix[ai], b.pix[bi]
	a.write(ai, pb)
	b.write(bi, pa)
	b.setMoved(bi)
	if pb != 0 {
		a.setMoved(ai)
	}
	s.field.wakeNear(a, ax, ay)
	s.field.wakeNear(b, bx, by)
}

// displaces reports whether falling or flowing material m may move into the
// place of pixel t.
func (s *System) displaces(m uint8, t components.Pixel) bool {
	return t&bodyFlag == 0 && s.disp[m][uint8(t)]
}

// fall moves the pixel at (x, y), of material m, to (x+dx, y+dy) if it
// displaces what is there.
func (s *System) fall(v *view, x, y int, m uint8, dx, dy int) bool {
	t, tv, ti := s.peek(v, x+dx, y+dy)
	if tv == nil || !s.displaces(m, t) {
		return false
	}
	n := s.field.size
	tx, ty := ti%n, ti/n
	s.swap(v, y*n+x, x, y, tv, ti, tx, ty)
	return true
}

// drop moves the pixel at (x, y), of material m, straight down: through up
// to fallMax pixels of air at once, or into the place of a lighter liquid or
// gas below.
func (s *System) drop(v *view, x, y int, m uint8) bool {
	t, tv, ti := s.peek(v, x, y+1)
	if tv == nil || !s.displaces(m, t) {
		return false
	}
	if t == 0 {
		for k := 2; k <= fallMax; k++ {
			u, uv, ui := s.peek(v, x, y+k)
			if uv == nil || u != 0 {
				break
			}
			tv, ti = uv, ui
		}
	}
	n := s.field.size
	s.swap(v, y*n+x, x, y, tv, ti, ti%n, ti/n)
	return true
}

// powder: fall straight down, else slide down a diagonal.
func (s *System) powder(v *view, x, y int, p components.Pixel) {
	m := uint8(p)
	if s.drop(v, x, y, m) {
		return
	}
	d := s.dir()
	if s.fall(v, x, y, m, d, 1) {
		return
	}
	s.fall(v, x, y, m, -d, 1)
}

// liquid: fall like a powder; otherwise look along the row, up to seek
// pixels each way, for a place to fall, and flow there (falling at once if it
// is within spread pixels) or spread pixels towards it. Under pressure (a
// liquid or powder rests on it) it also flows sideways into free space. A
// surface pixel with nowhere to fall within reach stays put, so a basin
// comes to rest with a level surface instead of jittering for ever.
func (s *System) liquid(v *view, x, y int, p components.Pixel) {
	m := uint8(p)
	if s.drop(v, x, y, m) {
		return
	}
	d := s.dir()
	if s.fall(v, x, y, m, d, 1) || s.fall(v, x, y, m, -d, 1) {
		return
	}
	// resting on liquid that is itself still falling: wait, do not fan out
	if below, bv, _ := s.peek(v, x, y+1); bv != nil && s.behave[uint8(below)] == bLiquid {
		if under, uv, _ := s.peek(v, x, y+2); uv != nil && under == 0 {
			s.field.wakeNear(v, x, y)
			return
		}
	}
	pressed := false
	if above, _, _ := s.peek(v, x, y-1); above&bodyFlag == 0 {
		b := s.behave[uint8(above)]
		pressed = b == bPowder || b == bLiquid
	}
	if !s.flow(v, x, y, m, d, pressed) {
		s.flow(v, x, y, m, -d, pressed)
	}
}

// flow moves the liquid at (x, y) in direction d: into the place to fall if
// one is within spread pixels, else spread pixels towards one within seek
// pixels, else (if pressed) spread pixels into free space.
func (s *System) flow(v *view, x, y int, m uint8, d int, pressed bool) bool {
	var to *view
	ti := 0
	for k := 1; k <= seek; k++ {
		t, tv, i := s.peek(v, x+d*k, y)
		if tv == nil || !s.displaces(m, t) {
			if pressed && to != nil {
				break
			}
			return false
		}
		if k <= spread {
			to, ti = tv, i
		}
		if below, bv, bi := s.peek(v, x+d*k, y+1); bv != nil && s.displaces(m, below) {
			if k <= spread {
				to, ti = bv, bi // fall into it now
			}
			break
		}
		if k == seek || (pressed && k == spread) {
			if !pressed {
				return false
			}
			break
		}
	}
	n := s.field.size
	s.swap(v, y*n+x, x, y, to, ti, ti%n, ti/n)
	return true
}

// rise moves a gas or flame at (x, y) into air above it, straight or
// diagonally, or drifts it sideways.
func (s *System) rise(v *view, x, y int, r uint64) {
	n := s.field.size
	d := int(r>>62&1)*2 - 1
	for _, off := range [3][2]int{{0, -1}, {d, -1}, {d, 0}} {
		if off[0] == 0 && r>>60&3 == 0 {
			continue // sometimes skip straight up: flicker
		}
		t, tv, ti := s.peek(v, x+off[0], y+off[1])
		if tv != nil && t == 0 {
			s.swap(v, y*n+x, x, y, tv, ti, ti%n, ti/n)
			return
		}
	}
}

// gas ages by its material's rate, vanishes when old, and rises.
func (s *System) gas(v *view, x, y int, p components.Pixel) {
	n := s.field.size
	i := y*n + x
	r := s.next()
	rate := int(Materials[uint8(p)].BurnRate)
	age := int(p.Damage()) + rate + int(r&3)
	if age >= 255 {
		v.write(i, 0)
		s.field.wakeNear(v, x, y)
		return
	}
	v.write(i, p&^(0xff<<components.DamageShift)|components.Pixel(age)<<components.DamageShift)
	s.field.wakeNear(v, x, y)
	s.rise(v, x, y, r)
}

var neighbours = [4][2]int{{0, -1}, {-1, 0}, {1, 0}, {0, 1}}

// spreadFire sets flammable neighbours of (x, y) burning, each with its
// material's chance, using random bits r. It reports whether water touches
// (x, y), in which case it turns that water to steam and ignites nothing.
func (s *System) spreadFire(v *view, x, y int, r uint64) (wet bool) {
	for k, off := range neighbours {
		q, qv, qi := s.peek(v, x+off[0], y+off[1])
		if qv == nil || q&bodyFlag != 0 {
			continue
		}
		qm := uint8(q)
		if Material(qm) == Water {
			qv.write(qi, Make(Steam, uint8(r>>8)))
			s.field.wakeNear(qv, qi%s.field.size, qi/s.field.size)
			return true
		}
		chance := Materials[qm].Flammability
		if chance == 0 || uint8(r>>(16+8*k)) >= chance {
			continue
		}
		switch s.behave[qm] {
		case bBurnable:
			if q.Damage() == 0 {
				qv.write(qi, q|1<<components.DamageShift)
			}
		case bLiquid:
			qv.write(qi, Make(Fire, uint8(r>>48)))
		default:
			continue
		}
		s.field.wakeNear(qv, qi%s.field.size, qi/s.field.size)
	}
	return false
}

// flame ages quickly, lights flammable neighbours, is put out by water (into
// steam), rises, and dies into smoke or air. Its shade follows its age, from
// yellow to red.
func (s *System) flame(v *view, x, y int, p components.Pixel) {
	n := s.field.size
	i := y*n + x
	r := s.next()
	if s.spreadFire(v, x, y, r) {
		v.write(i, Make(Steam, uint8(r)))
		s.field.wakeNear(v, x, y)
		return
	}
	age := int(p.Damage()) + int(Materials[Fire].BurnRate) + int(r&7)
	switch {
	case age >= 255 && r>>58&1 == 0:
		v.write(i, Make(Smoke, uint8(r>>24))|components.Pixel(96)<<components.DamageShift)
	case age >= 255:
		v.write(i, 0)
	default:
		shade := min(age+int(r>>40&31), 255)
		v.write(i, components.MakePixel(uint8(Fire), uint8(shade), uint8(age), 0))
		s.field.wakeNear(v, x, y)
		s.rise(v, x, y, r)
		return
	}
	s.field.wakeNear(v, x, y)
}

// burn advances a burning solid: water next to it puts it out, it lights its
// neighbours, throws flames into the air above or beside it, and when its
// damage reaches 255 it is consumed and becomes fire.
func (s *System) burn(v *view, x, y int, p components.Pixel) {
	n := s.field.size
	i := y*n + x
	r := s.next()
	if s.spreadFire(v, x, y, r) {
		v.write(i, p&^(0xff<<components.DamageShift)) // put out, unburnt
		s.field.wakeNear(v, x, y)
		return
	}
	if r>>56&3 == 0 {
		d := int(r>>58&1)*2 - 1
		for _, off := range [3][2]int{{0, -1}, {d, -1}, {d, 0}} {
			if t, tv, ti := s.peek(v, x+off[0], y+off[1]); tv != nil && t == 0 {
				tv.write(ti, components.MakePixel(uint8(Fire), uint8(r>>8), 64, 0))
				s.field.wakeNear(tv, ti%n, ti/n)
				break
			}
		}
	}
	rate := int(Materials[uint8(p)].BurnRate)
	dmg := int(p.Damage()) + max(1, rate/2+int(r>>32%uint64(rate+1)))
	if dmg >= 255 {
		v.write(i, components.MakePixel(uint8(Fire), uint8(r>>8), 96, 0))
	} else {
		v.write(i, p&^(0xff<<components.DamageShift)|components.Pixel(dmg)<<components.DamageShift)
	}
	s.field.wakeNear(v, x, y)
}
