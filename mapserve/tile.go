package mapserve

import (
	"bytes"
	"hash/maphash"
	"image"
	"image/draw"

	"github.com/arksave/arksave/internal/savetool"
)

// Tiles.
const (
	// tileSize is a tile's edge in image pixels.
	tileSize = 256
	// maxLevel is the coarsest zoom level: at level z a tile pixel covers
	// 2^z x 2^z world pixels, so a tile of level 8 covers 65536 world
	// pixels a side.
	maxLevel = 8
	// maxTileCoord bounds tile coordinates, whatever the level, so that
	// world coordinates stay far from overflowing.
	maxTileCoord = 1 << 24
)

// tileRect returns the world pixels of tile (x, y) of level z.
func tileRect(z, x, y int) image.Rectangle {
	span := tileSize << z
	return image.Rect(x*span, y*span, (x+1)*span, (y+1)*span)
}

// keyOf returns the key of tile (x, y) of level z of view v: a hash of
// every chunk record and body drawn in it.
func (s *Server) keyOf(v *view, z, x, y int) tileKey {
	r := tileRect(z, x, y)
	var h maphash.Hash
	h.SetSeed(s.seed)
	maphash.WriteComparable(&h, v.identity)
	// What lies outside the map's extent is left transparent.
	maphash.WriteComparable(&h, r.Intersect(v.extent).Sub(r.Min))
	n := 0
	v.eachStored(r, func(p chunkPos, c *chunkRec) {
		maphash.WriteComparable(&h, p)
		maphash.WriteComparable(&h, c.typ)
		maphash.WriteComparable(&h, c.version)
		maphash.WriteComparable(&h, c.damaged != nil)
		n++
	})
	for _, b := range v.bodies {
		if b.bounds.Overlaps(r) {
			maphash.WriteComparable(&h, b.Chunk)
			maphash.WriteComparable(&h, v.chunks[chunkPos{X: b.Chunk[0], Y: b.Chunk[1]}].bodyVer)
			maphash.WriteComparable(&h, b.body.ID)
			n++
		}
	}
	if n == 0 && s.opts.Generator == nil {
		// Nothing but the hatch, which repeats every 16 pixels: the same
		// tile anywhere on its level.
		return tileKey{z: int32(z), sum: h.Sum64()}
	}
	maphash.WriteComparable(&h, [3]int{z, x, y})
	return tileKey{z: int32(z), x: int32(x), y: int32(y), sum: h.Sum64()}
}

// pixels returns the pixels of tile (x, y) of level z: rendered from the
// chunks at level 0, built from the four tiles below it at the others.
func (s *Server) pixels(v *view, z, x, y int) (*image.RGBA, error) {
	return s.pixelsOf(v, z, x, y, s.keyOf(v, z, x, y))
}

// pixelsOf is pixels for the tile's key.
func (s *Server) pixelsOf(v *view, z, x, y int, key tileKey) (*image.RGBA, error) {
	t, err := s.cache.get(key, false, func() (tile, error) {
		if z == 0 {
			img, err := s.renderLevel0(v, x, y)
			return tile{rgba: img}, err
		}
		var quads [4]*image.RGBA
		for i := range quads {
			cx, cy := 2*x+i%2, 2*y+i/2
			if !tileRect(z-1, cx, cy).Overlaps(v.extent) {
				continue // outside the map: transparent
			}
			q, err := s.pixels(v, z-1, cx, cy)
			if err != nil {
				return tile{}, err
			}
			quads[i] = q
		}
		s.work <- struct{}{}
		defer func() { <-s.work }()
		img := image.NewRGBA(image.Rect(0, 0, tileSize, tileSize))
		for i, q := range quads {
			if q != nil {
				halve(img, q, (i%2)*tileSize/2, (i/2)*tileSize/2)
			}
		}
		return tile{rgba: img}, nil
	})
	return t.rgba, err
}

// renderLevel0 draws tile (x, y) of level 0: the chunks as stored (or
// generated, or hatched), then the bodies over them; what lies outside the
// map's extent stays transparent.
func (s *Server) renderLevel0(v *view, x, y int) (*image.RGBA, error) {
	s.work <- struct{}{}
	defer func() { <-s.work }()
	r := tileRect(0, x, y)
	clip := r.Intersect(v.extent)
	img, _, err := savetool.RenderStore(v.store, savetool.RenderOptions{
		Region: clip, Scale: 1, Generator: s.gen, Palette: s.opts.Palette, NoBodies: true, Damaged: v.isDamaged, At: v.at,
	})
	if err != nil {
		return nil, err
	}
	for _, b := range v.bodies {
		if b.bounds.Overlaps(clip) {
			savetool.DrawBody(img, clip, 1, b.body, s.opts.Palette)
		}
	}
	if clip == r {
		return img, nil
	}
	out := image.NewRGBA(image.Rect(0, 0, tileSize, tileSize))
	draw.Draw(out, clip.Sub(r.Min), img, image.Point{}, draw.Src)
	return out, nil
}

// halve draws src at half its size into dst at (x0, y0), each pixel the
// mean of four.
func halve(dst, src *image.RGBA, x0, y0 int) {
	w, h := src.Rect.Dx()/2, src.Rect.Dy()/2
	for y := 0; y < h; y++ {
		a := src.Pix[2*y*src.Stride:]
		b := src.Pix[(2*y+1)*src.Stride:]
		d := dst.Pix[(y0+y)*dst.Stride+4*x0:]
		for x := 0; x < w; x++ {
			i := 8 * x
			for c := 0; c < 4; c++ {
				d[4*x+c] = uint8((uint32(a[i+c]) + uint32(a[i+4+c]) + uint32(b[i+c]) + uint32(b[i+4+c])) / 4)
			}
		}
	}
}

// pngOf returns the PNG of tile (x, y) of level z with its key.
func (s *Server) pngOf(v *view, z, x, y int, key tileKey) ([]byte, error) {
	t, err := s.cache.get(key, true, func() (tile, error) {
		img, err := s.pixelsOf(v, z, x, y, key)
		if err != nil {
			return tile{}, err
		}
		s.work <- struct{}{}
		defer func() { <-s.work }()
		var buf bytes.Buffer
		buf.Grow(64 << 10)
		if err := encodePNG(&buf, img); err != nil {
			return tile{}, err
		}
		return tile{png: bytes.Clone(buf.Bytes())}, nil
	})
	return t.png, err
}
