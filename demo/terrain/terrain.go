package terrain

import (
	"math"

	"github.com/arksave/arksave/demo/sand"
)

// World layout, in world pixels; y grows downwards.
const (
	// WaterLevel is the sea level: valleys whose ground lies below it hold lakes.
	WaterLevel  = 110
	surfaceBase = 40
	coarse      = 8 // cave noise is sampled every coarse pixels and interpolated
	treeCell    = 36
	oreCell     = 24
	maxTree     = 64 // trunk plus canopy above the ground, at most
	maxCanopy   = 14
	maxOre      = 5
	goldDepth   = 700 // gold only below this world y
)

// Salts that make each noise field independent under the same seed.
const (
	saltSurface1 = 0x1000 + iota
	saltSurface2
	saltSurface3
	saltSurface4
	saltMountain
	saltDesert
	saltDirt
	saltTop
	saltWarp
	saltTunnel1
	saltTunnel2
	saltCavern1
	saltCavern2
	saltTree
	saltOre
	saltBand
	saltMask
)

// Generator makes the terrain of the demo world. The zero value is ready to
// use; it holds no state, so one Generator is safe for concurrent use.
type Generator struct{}

// Version identifies the generator's output. Saves keep chunks as deltas
// against it, so bump it whenever any seed's pixels change.
func (Generator) Version() uint32 { return 1 }

// SurfaceY returns the world y of the ground's top pixel in column x: the
// pixels above it are sky (or lake water), the pixels from it down are ground.
func SurfaceY(x int, seed uint64) int {
	s := surfaceBase*one +
		96*value1(seed^saltSurface1, x, 1024) +
		36*value1(seed^saltSurface2, x, 256) +
		10*value1(seed^saltSurface3, x, 64) +
		2*value1(seed^saltSurface4, x, 16)
	if m := value1(seed^saltMountain, x, 4096) - one*4/10; m > 0 {
		s -= m * 600
	}
	q, _ := floorDiv(s, one)
	return q
}

// Home returns a good place to start exploring the world of seed: the
// grassland column nearest to x = 0 with a lake a little to its right, or
// failing that the nearest grassland, or 0.
func Home(seed uint64) int {
	grass := func(x int) bool {
		s := SurfaceY(x, seed)
		return s > -100 && s < WaterLevel-12 && value1(seed^saltDesert, x, 2048) <= one*3/10
	}
	lake := func(x int) bool {
		for dx := 100; dx <= 260; dx += 16 {
			if SurfaceY(x+dx, seed) > WaterLevel+4 {
				return true
			}
		}
		return false
	}
	fallback, found := 0, false
	for d := 0; d <= 1<<15; d += 64 {
		for _, x := range [2]int{d, -d} {
			if !grass(x) {
				continue
			}
			if lake(x) {
				return x
			}
			if !found {
				fallback, found = x, true
			}
		}
	}
	return fallback
}

// Generate fills dst with the pixels of chunk (x, y) for the given seed.
// dst holds size*size pixels, row-major, where size is the square root of
// len(dst) and a multiple of 8 (the demo uses multiples of 64). Each pixel is
// a components.Pixel: material in byte 0, colour shade in byte 1, no damage,
// no flags. Generate is pure and deterministic: the same arguments always
// give the same pixels, on every machine.
//
// Panics if len(dst) is not the square of a multiple of 8.
func (Generator) Generate(x, y int32, seed uint64, dst []uint32) {
	size := int(math.Sqrt(float64(len(dst))))
	if size*size != len(dst) || size%coarse != 0 || size == 0 {
		panic("terrain: Generate: len(dst) must be the square of a multiple of 8")
	}
	g := newChunkGen(int(x)*size, int(y)*size, size, seed, dst)
	g.fill()
	g.trees()
	g.ores()
}

// column is what the generator knows of one world column.
type column struct {
	surface int // world y of the ground's top pixel
	top     int // thickness of the top layer (grass or sand)
	dirt    int // depth of the dirt's bottom below the surface
	topMat  sand.Material
	warp    int // vertical offset of the stone strata
	dry     bool
}

type chunkGen struct {
	x0, y0, size int
	seed         uint64
	seed32       uint32
	dst          []uint32
	cols         []column // size+2 columns: x0-1 .. x0+size
	minSurface   int
	maxCaveFree  int // rows above this world y have no caves in any column
	deepFrom     int // rows from this world y on lie below every column's dirt
	band         []uint32
	bandFrom     int
}

func newChunkGen(x0, y0, size int, seed uint64, dst []uint32) *chunkGen {
	g := &chunkGen{x0: x0, y0: y0, size: size, seed: seed, seed32: uint32(seed ^ seed>>32), dst: dst}
	g.cols = make([]column, size+2)
	g.minSurface, g.maxCaveFree, g.deepFrom = math.MaxInt, math.MaxInt, math.MinInt
	for i := range g.cols {
		wx := x0 + i - 1
		c := &g.cols[i]
		c.surface = SurfaceY(wx, seed)
		c.dirt = 24 + 10*value1(seed^saltDirt, wx, 96)/one
		c.warp = 24 * value1(seed^saltWarp, wx, 128) / one
		desert := value1(seed^saltDesert, wx, 2048) > one*3/10
		c.dry = c.surface < WaterLevel-1
		switch {
		case desert:
			c.topMat, c.top = sand.Sand, 10+5*value1(seed^saltTop, wx, 48)/one
		case c.surface > WaterLevel-4: // lake bed and beach
			c.topMat, c.top = sand.Sand, 5+2*value1(seed^saltTop, wx, 24)/one
		case c.surface < -120: // high mountains: bare stone
			f := min(max(c.surface+220, 0), 100) // dirt thins out towards the peaks
			c.topMat, c.top, c.dirt = sand.Stone, 0, 4+(c.dirt-4)*f/100
		default:
			c.topMat, c.top = sand.Grass, 4+value1(seed^saltTop, wx, 12)/(one/2)
		}
		if i > 0 && i <= size {
			g.minSurface = min(g.minSurface, c.surface)
			g.maxCaveFree = min(g.maxCaveFree, c.surface+c.dirt)
			g.deepFrom = max(g.deepFrom, c.surface+c.dirt)
		}
	}
	return g
}

func (g *chunkGen) px(m sand.Material, shade int) uint32 {
	return uint32(m) | uint32(clamp8(shade))<<8
}

func clamp8(v int) uint8 {
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return uint8(v)
}

// fill writes sky, lakes, the ground's layers and the caves.
func (g *chunkGen) fill() {
	size, dst := g.size, g.dst
	if g.y0+size <= g.minSurface && g.y0+size <= WaterLevel {
		clear(dst) // all sky
		return
	}
	var field *caveField
	if g.y0+size > g.maxCaveFree {
		field = newCaveField(g.x0, g.y0, size, g.seed)
	}
	g.bands()
	var caveRow []int
	for j := 0; j < size; j++ {
		wy := g.y0 + j
		row := dst[j*size : (j+1)*size]
		if field != nil && wy >= g.maxCaveFree {
			caveRow = field.row(j)
		}
		if wy >= g.deepFrom {
			g.deepRow(row, wy, caveRow)
			continue
		}
		for i := range row {
			wx := g.x0 + i
			c := &g.cols[i+1]
			if wy < c.surface {
				switch {
				case wy >= WaterLevel:
					row[i] = g.px(sand.Water, 230-min(3*(wy-WaterLevel), 170)+int(pixHash(g.seed32, wx, wy)&15))
				case c.topMat == sand.Grass && wy >= c.surface-3 && g.blade(wx, c.surface-wy):
					row[i] = g.px(sand.Grass, 190+int(pixHash(g.seed32, wx, wy)&63))
				default:
					row[i] = 0
				}
				continue
			}
			h := pixHash(g.seed32, wx, wy)
			jit := int(h&31) - 16
			d := wy - c.surface
			switch {
			case d < c.top:
				m := c.topMat
				if m == sand.Sand && !g.sandRests(i+1, wy) {
					m = sand.Dirt
				}
				row[i] = g.px(m, 150+jit*2-d*6)
			case d < c.dirt:
				row[i] = g.px(sand.Dirt, 150+jit*2-(d-c.top)*2)
			default:
				below := d - c.dirt
				if caveRow != nil && below >= 0 {
					// caves open only some way below the dirt, widening with depth
					t := 0
					if below < 48 {
						t = (48 - below) * (one * 7 / 10) / 48
					}
					if caveRow[i]+int(h>>8&0xfff)-0x800 > t {
						row[i] = 0
						continue
					}
				}
				row[i] = g.stone(wy+c.warp, jit)
			}
		}
	}
}

// blade reports whether column wx grows a grass blade at least up pixels tall.
func (g *chunkGen) blade(wx, up int) bool {
	h := pixHash(g.seed32^0xb1ade, wx, 0)
	return h&3 == 0 && int(h>>2%3)+1 >= up
}

// bands prepares the shades of the stone strata, 8 pixels thick, that the
// chunk's rows cross.
func (g *chunkGen) bands() {
	g.bandFrom = (g.y0 - 32) >> 3
	g.band = make([]uint32, (g.size+64)>>3+1)
	for k := range g.band {
		g.band[k] = 70 + pixHash(g.seed32^saltBand, 0, g.bandFrom+k)&127
	}
}

// stone returns a stone pixel at strata row y (world y plus the column's warp).
func (g *chunkGen) stone(y, jit int) uint32 {
	return uint32(sand.Stone) | uint32(int(g.band[y>>3-g.bandFrom])+jit)<<8
}

// deepRow fills a row below every column's dirt: stone and caves only.
func (g *chunkGen) deepRow(row []uint32, wy int, caveRow []int) {
	cols := g.cols[1 : len(row)+1]
	for i := range row {
		c := &cols[i]
		h := pixHash(g.seed32, g.x0+i, wy)
		if caveRow != nil {
			t := 0
			if below := wy - c.surface - c.dirt; below < 48 {
				t = (48 - below) * (one * 7 / 10) / 48
			}
			if caveRow[i]+int(h>>8&0xfff)-0x800 > t {
				row[i] = 0
				continue
			}
		}
		row[i] = g.stone(wy+c.warp, int(h&31)-16)
	}
}

// sandRests reports whether a sand pixel in column ci at world row wy would
// stay put: the pixels below it, left and right are ground. Sand anywhere else
// would slide, and a freshly generated chunk must be at rest.
func (g *chunkGen) sandRests(ci, wy int) bool {
	return wy+1 >= g.cols[ci-1].surface && wy+1 >= g.cols[ci+1].surface
}

// caveField is the cave noise of one chunk, sampled every coarse pixels.
type caveField struct {
	n    int   // samples per edge: size/coarse + 1
	v    []int // n*n samples
	rowv []int
	size int
}

func newCaveField(x0, y0, size int, seed uint64) *caveField {
	n := size/coarse + 1
	f := &caveField{n: n, v: make([]int, n*n), rowv: make([]int, size), size: size}
	for j := 0; j < n; j++ {
		for i := 0; i < n; i++ {
			wx, wy := x0+i*coarse, y0+j*coarse
			// winding tunnels where a noise crosses zero ...
			t := gradient2(seed^saltTunnel1, wx, wy, 128) + gradient2(seed^saltTunnel2, wx, wy, 48)/3
			if t < 0 {
				t = -t
			}
			tunnel := one - t*18
			if m := gradient2(seed^saltMask, wx, wy, 320); m < 0 {
				tunnel += m * 8 // no tunnels in a good part of the rock
			}
			// ... and caverns where another is high
			c := gradient2(seed^saltCavern1, wx, wy, 192) + gradient2(seed^saltCavern2, wx, wy, 64)/3
			cavern := (c - one*30/100) * 8
			f.v[j*n+i] = max(tunnel, cavern)
		}
	}
	return f
}

// row returns the interpolated field of chunk row j, one value per pixel.
func (f *caveField) row(j int) []int {
	cj, fy := j/coarse, (j%coarse)*one/coarse
	a, b := f.v[cj*f.n:(cj+1)*f.n], f.v[(cj+1)*f.n:(cj+2)*f.n]
	for ci := 0; ci < f.n-1; ci++ {
		l := a[ci] + (b[ci]-a[ci])*fy/one
		r := a[ci+1] + (b[ci+1]-a[ci+1])*fy/one
		step := (r - l) / coarse
		out := f.rowv[ci*coarse : (ci+1)*coarse]
		for k := range out {
			out[k] = l
			l += step
		}
	}
	return f.rowv
}
