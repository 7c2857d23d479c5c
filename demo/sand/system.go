package sand

import (
	"slices"

	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/demo/internal/rng"
	"github.com/mlange-42/ark/ecs"
)

// Behaviours of the cellular automaton, by material.
const (
	bInert    uint8 = iota // air and solids that do not burn
	bBurnable              // a solid that acts only while burning (damage > 0)
	bPowder
	bLiquid
	bGas
	bFlame
)

const bodyFlag = components.FlagPixelBody << components.FlagsShift

// Stats describes the last tick of the sand system.
type Stats struct {
	Chunks int // chunks with an awake tile
	Tiles  int // tiles simulated
}

// System is the cellular automaton: sand falls and piles, water and oil fall,
// flow under pressure and level, fire spreads to what burns, rises and dies
// into smoke, smoke and steam rise and fade. It simulates only awake tiles,
// so a world at rest costs next to nothing, and it is deterministic for a
// seed: its randomness comes from a PRNG seeded by Seed, and it visits
// chunks, tiles and pixels in a fixed order.
//
// It fits ark-tools' system shape: Initialize, Update (one tick), Finalize.
type System struct {
	Seed uint64

	field   *Field
	chunks  *ecs.Filter2[components.ChunkPos, Tiles]
	active  []*view
	pending []components.ChunkPos
	rng     rng.Rand
	tick    uint64
	stats   Stats

	behave [256]uint8
	disp   [256][256]bool // disp[a][b]: a falling or flowing pixel of a displaces b
}

// Initialize looks up the [Field] resource, which must exist.
func (s *System) Initialize(w *ecs.World) {
	s.field = ecs.GetResource[Field](w)
	s.chunks = ecs.NewFilter2[components.ChunkPos, Tiles](w).Register()
	s.rng = rng.New(s.Seed)
	for m := range NumMaterials {
		info := &Materials[m]
		switch info.Kind {
		case Solid:
			if info.Flammability > 0 {
				s.behave[m] = bBurnable
			}
		case Powder:
			s.behave[m] = bPowder
		case Liquid:
			s.behave[m] = bLiquid
		case Gas:
			s.behave[m] = bGas
		case Flame:
			s.behave[m] = bFlame
		}
	}
	for a := range NumMaterials {
		ka := Materials[a].Kind
		if ka != Powder && ka != Liquid {
			continue
		}
		for b := range NumMaterials {
			kb := Materials[b].Kind
			s.disp[a][b] = b == Air || ((kb == Gas || kb == Flame || kb == Liquid) && Materials[a].Density > Materials[b].Density)
		}
	}
}

// Stats returns what the last tick simulated.
func (s *System) Stats() Stats { return s.stats }

// Update advances the automaton by one tick.
func (s *System) Update(w *ecs.World) {
	f := s.field
	f.Begin()
	defer f.End()

	s.pending = s.pending[:0]
	q := s.chunks.Query()
	for q.Next() {
		pos, t := q.Get()
		if t.pending() {
			s.pending = append(s.pending, *pos)
		}
	}
	s.active = s.active[:0]
	for _, pos := range s.pending {
		if v := f.view(pos); v != nil && v.tiles != nil {
			s.active = append(s.active, v)
		}
	}
	// Bottom rows of chunks first, as pixels inside a chunk: what falls moves
	// into space already settled this tick.
	slices.SortFunc(s.active, func(a, b *view) int {
		if a.pos.Y != b.pos.Y {
			return int(b.pos.Y) - int(a.pos.Y)
		}
		return int(a.pos.X) - int(b.pos.X)
	})
	s.stats = Stats{}
	for _, v := range s.active {
		if v.tiles.advance(f.size) {
			s.stats.Chunks++
		}
	}
	for _, v := range s.active {
		s.stepChunk(v)
	}
	s.tick++
}

// Finalize does nothing.
func (s *System) Finalize(w *ecs.World) {}

func (s *System) stepChunk(v *view) {
	n := s.field.size
	t := v.tiles
	for ty := t.side - 1; ty >= 0; ty-- {
		mask := t.cur[ty]
		if mask == 0 {
			continue
		}
		s.stats.Tiles += popcount(mask)
		for y := ty*TileSize + TileSize - 1; y >= ty*TileSize; y-- {
			if (uint64(y)+s.tick)&1 == 0 {
				for tx := 0; tx < t.side; tx++ {
					if mask>>tx&1 == 0 {
						continue
					}
					for x := tx * TileSize; x < (tx+1)*TileSize; x++ {
						if b := s.behave[uint8(v.pix[y*n+x])]; b != bInert {
							s.cell(v, x, y, b)
						}
					}
				}
			} else {
				for tx := t.side - 1; tx >= 0; tx-- {
					if mask>>tx&1 == 0 {
						continue
					}
					for x := (tx+1)*TileSize - 1; x >= tx*TileSize; x-- {
						if b := s.behave[uint8(v.pix[y*n+x])]; b != bInert {
							s.cell(v, x, y, b)
						}
					}
				}
			}
		}
	}
}

// cell updates the pixel at chunk-local (x, y), whose behaviour is b.
func (s *System) cell(v *view, x, y int, b uint8) {
	i := y*s.field.size + x
	p := v.pix[i]
	if p&bodyFlag != 0 || v.tiles.moved[i>>6]>>(i&63)&1 != 0 {
		return
	}
	switch b {
	case bPowder:
		s.powder(v, x, y, p)
	case bLiquid:
		s.liquid(v, x, y, p)
	case bGas:
		s.gas(v, x, y, p)
	case bFlame:
		s.flame(v, x, y, p)
	case bBurnable:
		if p.Damage() != 0 {
			s.burn(v, x, y, p)
		}
	}
}

// next returns the next random number.
func (s *System) next() uint64 { return s.rng.Next() }

// dir returns -1 or 1.
func (s *System) dir() int { return int(s.next()>>63)*2 - 1 }

func popcount(m uint64) int {
	n := 0
	for ; m != 0; m &= m - 1 {
		n++
	}
	return n
}
