package render

import (
	"encoding/binary"
	"image/color"

	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/demo/terrain"
	"github.com/mlange-42/ark/ecs"
)

// Background colours.
var (
	skyTop     = RGBA(color.RGBA{0x3d, 0x6f, 0xb8, 0xff})
	skyHorizon = RGBA(color.RGBA{0xb4, 0xdc, 0xf2, 0xff})
	caveNear   = RGBA(color.RGBA{0x3a, 0x30, 0x2a, 0xff})
	caveDeep   = RGBA(color.RGBA{0x1c, 0x1a, 0x1e, 0xff})
	unloaded   = RGBA(color.RGBA{0x12, 0x12, 0x18, 0xff})
	unloaded2  = RGBA(color.RGBA{0x1a, 0x1a, 0x22, 0xff})
)

// Renderer draws a rectangle of the world into an RGBA byte buffer. It only
// reads the world.
type Renderer struct {
	Seed    uint64
	Size    int // chunk size in pixels
	Palette *Palette

	index  ecs.Resource[components.ChunkIndex]
	chunks *ecs.Map[components.Chunk]
	surf   []int
}

// New returns a renderer for world w with chunks of size pixels, generated
// from seed (the sky line behind caves follows the generator's surface).
func New(w *ecs.World, size int, seed uint64) *Renderer {
	return &Renderer{
		Seed: seed, Size: size, Palette: NewPalette(),
		index:  ecs.NewResource[components.ChunkIndex](w),
		chunks: ecs.NewMap[components.Chunk](w),
	}
}

// Render fills dst, an RGBA buffer of width*height pixels, with the world
// pixels [x0, x0+width) x [y0, y0+height).
func (r *Renderer) Render(dst []byte, x0, y0, width, height int) {
	size := r.Size
	if cap(r.surf) < width {
		r.surf = make([]int, width)
	}
	surf := r.surf[:width]
	for i := range surf {
		surf[i] = terrain.SurfaceY(x0+i, r.Seed)
	}
	index := r.index.Get()
	cx0 := floorDiv(x0, size)
	ncx := floorDiv(x0+width-1, size) - cx0 + 1
	rows := make([][]components.Pixel, ncx)
	lastCY := int(^uint(0) >> 1)
	for sy := 0; sy < height; sy++ {
		wy := y0 + sy
		cy := floorDiv(wy, size)
		if cy != lastCY {
			lastCY = cy
			for k := range rows {
				rows[k] = nil
				if e, ok := index.Get(components.ChunkPos{X: int32(cx0 + k), Y: int32(cy)}); ok {
					rows[k] = r.chunks.Get(e).Pixels()
				}
			}
		}
		ly := wy - cy*size
		sky := mix(skyTop, skyHorizon, clamp((wy+700)*256/(terrain.WaterLevel+700), 0, 256))
		line := dst[sy*width*4 : (sy+1)*width*4]
		for sx := 0; sx < width; {
			wx := x0 + sx
			k := floorDiv(wx, size) - cx0
			lx := wx - (cx0+k)*size
			n := min(size-lx, width-sx)
			pix := rows[k]
			if pix == nil {
				for i := 0; i < n; i++ {
					c := unloaded
					if ((wx+i)>>4+wy>>4)&1 == 0 {
						c = unloaded2
					}
					binary.LittleEndian.PutUint32(line[(sx+i)*4:], c)
				}
				sx += n
				continue
			}
			src := pix[ly*size+lx : ly*size+lx+n]
			for i, p := range src {
				bg := sky
				if p&0xff == 0 || r.Palette.gas[p&0xff] {
					if d := wy - surf[sx+i]; d > 2 {
						bg = cave(wx+i, wy, d)
					}
				}
				binary.LittleEndian.PutUint32(line[(sx+i)*4:], r.Palette.Color(p, bg))
			}
			sx += n
		}
	}
}

// cave is the background of underground air, d pixels below the surface.
func cave(x, y, d int) uint32 {
	h := uint32(x)*0x9E3779B1 ^ uint32(y)*0x85EBCA77
	h ^= h >> 15
	h *= 0x2C1B3C6D
	h ^= h >> 13
	c := mix(caveNear, caveDeep, clamp(d/3, 0, 256))
	if h&7 == 0 {
		c = mix(c, 0xff000000, 40)
	}
	return c
}

func clamp(v, lo, hi int) int { return max(lo, min(hi, v)) }

func floorDiv(a, b int) int {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}
