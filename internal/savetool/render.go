package savetool

import (
	"cmp"
	"fmt"
	"image"
	"image/color"
	"math"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/storetool"
)

// RenderOptions configure [RenderDir] and [RenderStore].
type RenderOptions struct {
	Options
	// Generation is the generation of the save directory to render: 0 for
	// the committed one, else a backup's. RenderStore ignores it.
	Generation uint64
	// Generator is the game's chunk generator, if at hand: chunks that are
	// not stored are drawn as generated, and Delta chunks as their changed
	// pixels over the generated chunk. Without it, unstored chunks are
	// drawn hatched grey and Delta chunks over flat grey.
	Generator chunkstore.Generator
	// Palette colours the pixels; nil means DefaultPalette.
	Palette Palette
	// Region is the rectangle of world pixels to draw, [Min, Max); empty
	// means every stored chunk's bounds.
	Region image.Rectangle
	// Scale is how many world pixels one image pixel covers on a side
	// (their colours averaged); 0 picks the smallest that keeps the image
	// within 4096 pixels a side.
	Scale int
	// Zoom, at scale 1, draws each world pixel as Zoom×Zoom image pixels,
	// for small chunks and close looks; 0 means 1.
	Zoom int
	// Grid draws chunk borders: dim lines between chunks, and around each
	// stored chunk a border by its storage type (Full orange, Palette
	// violet, Delta cyan, Empty white, damaged red).
	Grid bool
	// NoBodies leaves the stored pixel bodies out; by default they are
	// drawn over the chunks at their saved transform.
	NoBodies bool
	// Damaged, when set, names chunks to draw as damaged (hatched red)
	// whatever the store holds for them: those a store opened with
	// chunkstore's Repair lost with their records.
	Damaged func(chunkstore.Pos) bool
	// At chooses the 2-D slice a store of 3 or 4 axes draws: the z (At[0])
	// and w (At[1]) of the chunks drawn; zero draws the slice at 0. A value
	// for an axis the store does not have is an error matching
	// chunkstore.ErrAxes.
	At [2]int32
}

// RenderStats says what [RenderDir] or [RenderStore] drew.
type RenderStats struct {
	Region    image.Rectangle // world pixels drawn
	Scale     int             // world pixels per image pixel, on a side
	Full      int             // stored chunks drawn, by type
	Delta     int
	Palette   int
	Empty     int
	Generated int // unstored chunks drawn from the Generator
	Unstored  int // unstored chunks drawn hatched (no Generator)
	Damaged   int // stored chunks whose record does not read, drawn red
	Bodies    int // bodies with pixels in the region
	Warnings  []string

	keyErr error // an encrypted record that did not open: RenderStore fails
}

// Colours of what a render draws besides pixels.
var (
	unstoredA  = rgb(0x58, 0x5b, 0x63)
	unstoredB  = rgb(0x4c, 0x4f, 0x56)
	deltaBase  = rgb(0x80, 0x84, 0x8c)
	damagedA   = rgb(0xb0, 0x20, 0x20)
	damagedB   = rgb(0x60, 0x10, 0x10)
	gridColour = color.RGBA{0, 0, 0, 0x50}
	borders    = map[chunkstore.StorageType]color.RGBA{
		chunkstore.Full: rgb(0xff, 0x9a, 0x1f), chunkstore.Palette: rgb(0xb0, 0x5c, 0xff), chunkstore.Delta: rgb(0x2f, 0xe0, 0xf0), chunkstore.Empty: rgb(0xff, 0xff, 0xff),
	}
)

// Limits of a render.
const (
	autoMaxSide  = 4096
	maxImageSide = 32768
	maxImagePix  = 1 << 28
)

// RenderDir draws a generation of the save directory at dir as an image:
// stored chunks as saved, the rest generated or hatched. It opens the store
// read-only and takes no lock: it works while a game saves into the
// directory, on one consistent generation.
func RenderDir(dir string, o RenderOptions) (*image.RGBA, *RenderStats, error) {
	s, _, err := OpenStore(dir, o.Generation, o.Options)
	if err != nil {
		return nil, nil, err
	}
	defer s.Close()
	return RenderStore(s, o)
}

// RenderStore draws the chunks of an open store; of a store of 3 or 4
// axes, the 2-D slice at o.At; see [RenderOptions]. The store may be
// opened for inspection (read-only, without a generator): RenderStore
// applies Delta chunks to o.Generator itself.
func RenderStore(s *chunkstore.Store, o RenderOptions) (*image.RGBA, *RenderStats, error) {
	sl, err := newSlice(s.Options().Axes, o.At)
	if err != nil {
		return nil, nil, err
	}
	t, _ := newTracker(o.Options)
	cfg := s.Options()
	size := int(cfg.ChunkSize)
	st := &RenderStats{}
	var ix sliceIndex
	region := o.Region.Canon()
	// The index is listed only for what needs it: the bounds, the grid's
	// frames, the body blocks. A tile of a map needs none of them.
	if region.Empty() || o.Grid || !o.NoBodies {
		ix = sl.index(s, size)
	}
	stored, bodies, bounds := ix.stored, ix.bodies, ix.bounds
	if region.Empty() {
		if bounds.Empty() && sl.axes > 2 {
			return nil, nil, fmt.Errorf("%w (none in the slice at z=%d, w=%d of its %d axes: give another --at)", ErrNothingToRender, sl.at[0], sl.at[1], sl.axes)
		}
		if bounds.Empty() {
			return nil, nil, ErrNothingToRender
		}
		region = bounds
	}
	scale := o.Scale
	if scale <= 0 {
		scale = max(1, (max(region.Dx(), region.Dy())+autoMaxSide-1)/autoMaxSide)
	}
	zoom := max(o.Zoom, 1)
	if scale > 1 {
		zoom = 1
	}
	w, h := (region.Dx()+scale-1)/scale, (region.Dy()+scale-1)/scale
	if w*zoom > maxImageSide || h*zoom > maxImageSide || w*h*zoom*zoom > maxImagePix {
		return nil, nil, fmt.Errorf("savetool: a %dx%d image is too large: give a smaller region or a larger scale", w*zoom, h*zoom)
	}
	st.Region, st.Scale = region, scale
	pal := o.Palette
	if pal == nil {
		pal = DefaultPalette()
	}
	if o.Generator != nil && o.Generator.Version() != s.GeneratorVersion() {
		st.Warnings = append(st.Warnings, fmt.Sprintf("the store was written with generator version %d, the generator given is version %d: delta chunks may look wrong",
			s.GeneratorVersion(), o.Generator.Version()))
	}

	img := image.NewRGBA(image.Rect(0, 0, w, h))
	acc := newAccumulator(img, region, scale)
	pix := make([]uint32, size*size)
	cx0, cy0 := floorDiv(region.Min.X, size), floorDiv(region.Min.Y, size)
	cx1, cy1 := floorDiv(region.Max.X-1, size), floorDiv(region.Max.Y-1, size)
	total := int64(cx1-cx0+1) * int64(cy1-cy0+1)
	t.begin("rendering", total)
	defer t.end()
	damaged := map[chunkstore.Pos]bool{}
	for cy := cy0; cy <= cy1; cy++ {
		for cx := cx0; cx <= cx1; cx++ {
			pos := chunkstore.Pos{X: int32(cx), Y: int32(cy)}
			kind := drawDamaged
			if o.Damaged != nil && o.Damaged(pos) {
				st.Damaged++
			} else {
				kind = chunkPixels(s, sl.key(pos), o.Generator, pix, st)
			}
			if kind == drawDamaged {
				damaged[pos] = true
			}
			if st.keyErr != nil {
				return nil, nil, keyFailure(st.keyErr)
			}
			acc.chunk(pos, size, pix, kind, pal)
			t.add(1)
		}
		acc.flush(min((cy+1)*size, region.Max.Y))
	}
	if !o.NoBodies {
		if err := drawBodies(img, s, sl, bodies, region, scale, pal, st); err != nil {
			return nil, nil, err
		}
	}
	if zoom > 1 {
		img = enlarge(img, zoom)
	}
	if o.Grid {
		drawGrid(img, region, scale, zoom, size, stored, damaged)
	}
	return img, st, nil
}

// drawBodies draws the pixel bodies of the chunks at bodies on img; a
// block that does not read is a warning, one that is encrypted without
// its key (or with another) the error.
func drawBodies(img *image.RGBA, s *chunkstore.Store, sl slice, bodies map[chunkstore.Pos]bool, region image.Rectangle, scale int, pal Palette, st *RenderStats) error {
	for pos := range bodies {
		blk, err := s.EntitiesKey(sl.key(pos))
		if isKeyError(err) {
			return keyFailure(err)
		}
		if err != nil {
			st.Warnings = append(st.Warnings, err.Error())
			continue
		}
		for i := range blk.Bodies {
			if DrawBody(img, region, scale, &blk.Bodies[i], pal) {
				st.Bodies++
			}
		}
	}
	return nil
}

// enlarge draws each pixel of img as a zoom×zoom square.
func enlarge(img *image.RGBA, zoom int) *image.RGBA {
	b := img.Rect
	out := image.NewRGBA(image.Rect(0, 0, b.Dx()*zoom, b.Dy()*zoom))
	for y := 0; y < out.Rect.Dy(); y++ {
		src := img.Pix[(y/zoom)*img.Stride:]
		dst := out.Pix[y*out.Stride:]
		for x := 0; x < out.Rect.Dx(); x++ {
			copy(dst[4*x:4*x+4], src[4*(x/zoom):4*(x/zoom)+4])
		}
	}
	return out
}

// How a chunk's pixels are drawn.
type drawKind uint8

const (
	drawPixels   drawKind = iota // pix holds the chunk
	drawUnstored                 // hatched: not stored, no generator
	drawDamaged                  // hatched red: the record does not read
)

// slice is the 2-D slice of a store's keys a render draws: the chunks of
// its axes whose z and w are at.
type slice struct {
	axes int
	at   [2]int32
}

// newSlice returns the slice at of a store of n axes, or an error matching
// chunkstore.ErrAxes when at gives a value for an axis the store lacks.
func newSlice(n int, at [2]int32) (slice, error) {
	if err := CheckSlice(n, at); err != nil {
		return slice{}, fmt.Errorf("render: %w", err)
	}
	return slice{axes: n, at: at}, nil
}

// CheckSlice returns an error matching chunkstore.ErrAxes when at, the z
// and w of a 2-D slice of a store whose chunk keys have n axes (see
// RenderOptions.At), gives a value for an axis the store does not have.
func CheckSlice(n int, at [2]int32) error {
	names := [2]string{"z", "w"}
	for i := max(n-2, 0); i < len(at); i++ {
		if at[i] != 0 {
			return fmt.Errorf("%w: %s=%d, but the store's chunk keys have %d axes (%s): give only the axes it has",
				chunkstore.ErrAxes, names[i], at[i], n, []string{"", "", "x, y", "x, y, z", "x, y, z, w"}[min(max(n, 0), 4)])
		}
	}
	return nil
}

// SliceKey returns the key, of a store whose chunk keys have n axes, of
// the chunk at pos in the 2-D slice at (RenderOptions.At).
func SliceKey(n int, pos chunkstore.Pos, at [2]int32) chunkstore.Key {
	switch n {
	case 3:
		return chunkstore.Key3(pos.X, pos.Y, at[0])
	case 4:
		return chunkstore.Key4(pos.X, pos.Y, at[0], at[1])
	}
	return pos.Key()
}

// key returns the key of the chunk at pos in the slice.
func (sl slice) key(pos chunkstore.Pos) chunkstore.Key { return SliceKey(sl.axes, pos, sl.at) }

// sliceIndex is what a store holds in a slice: the stored chunks' types
// and the chunks with a body block by position, and their bounds in world
// pixels.
type sliceIndex struct {
	stored map[chunkstore.Pos]chunkstore.StorageType
	bodies map[chunkstore.Pos]bool
	bounds image.Rectangle
}

// index lists what s holds in the slice; size is the chunks' edge.
func (sl slice) index(s *chunkstore.Store, size int) sliceIndex {
	ix := sliceIndex{stored: map[chunkstore.Pos]chunkstore.StorageType{}, bodies: map[chunkstore.Pos]bool{}}
	s.Entries(func(e chunkstore.Entry) bool {
		if !sl.holds(e.Key) {
			return true
		}
		if e.Type == chunkstore.BodyBlock {
			ix.bodies[e.Pos] = true
		} else {
			ix.stored[e.Pos] = e.Type
		}
		r := image.Rect(int(e.Pos.X)*size, int(e.Pos.Y)*size, int(e.Pos.X+1)*size, int(e.Pos.Y+1)*size)
		ix.bounds = ix.bounds.Union(r)
		return true
	})
	return ix
}

// holds reports whether k lies in the slice.
func (sl slice) holds(k chunkstore.Key) bool {
	return sl.key(k.Pos()) == k
}

// generate fills pix with the chunk gen generates at k: through
// GenerateKey for a key of 3 or 4 axes.
func generate(gen chunkstore.Generator, k chunkstore.Key, seed uint64, pix []uint32) {
	if kg, ok := gen.(chunkstore.KeyGenerator); ok && k.Axes() > 2 {
		kg.GenerateKey(k, seed, pix)
		return
	}
	gen.Generate(k.Axis(0), k.Axis(1), seed, pix)
}

// chunkPixels fills pix with the chunk at k, as stored or generated.
func chunkPixels(s *chunkstore.Store, k chunkstore.Key, gen chunkstore.Generator, pix []uint32, st *RenderStats) drawKind {
	raw, ok, err := storetool.Tool.ReadRawKey(s, k)
	switch {
	case isKeyError(err):
		st.keyErr = cmp.Or(st.keyErr, err) // not damage: RenderStore fails naming --key-file
		return drawDamaged
	case err != nil:
		st.Damaged++
		return drawDamaged
	case !ok && gen == nil:
		st.Unstored++
		return drawUnstored
	case !ok:
		st.Generated++
		generate(gen, k, s.Options().Seed, pix)
	case raw.Type == chunkstore.Empty:
		st.Empty++
		clear(pix)
	case raw.Type == chunkstore.Full:
		st.Full++
		copy(pix, raw.Pixels)
	case raw.Type == chunkstore.Palette:
		st.Palette++
		copy(pix, raw.Pixels)
	default:
		st.Delta++
		if gen != nil {
			generate(gen, k, s.Options().Seed, pix)
		} else {
			for i := range pix {
				pix[i] = neutralPixel
			}
		}
		for _, d := range raw.Delta {
			pix[d.Index] = d.Pixel
		}
	}
	return drawPixels
}

// neutralPixel marks the unknown base of a Delta chunk without a generator;
// the accumulator draws it flat grey. No game pixel has these flags.
const neutralPixel = 0xFE000000

// accumulator averages world pixels into image pixels, a band of chunk
// rows at a time.
type accumulator struct {
	img    *image.RGBA
	region image.Rectangle
	scale  int
	row0   int        // image row of sums[0]
	sums   [][]uint32 // per image row: r, g, b, n per image column
	free   [][]uint32 // flushed rows, for reuse
	line   []color.RGBA
}

func newAccumulator(img *image.RGBA, region image.Rectangle, scale int) *accumulator {
	return &accumulator{img: img, region: region, scale: scale}
}

// chunk adds a chunk's pixels (or hatch) within the region.
func (a *accumulator) chunk(pos chunkstore.Pos, size int, pix []uint32, kind drawKind, pal Palette) {
	x0, y0 := int(pos.X)*size, int(pos.Y)*size
	r := image.Rect(x0, y0, x0+size, y0+size).Intersect(a.region)
	if r.Empty() {
		return
	}
	if cap(a.line) < r.Dx() {
		a.line = make([]color.RGBA, r.Dx())
	}
	line := a.line[:r.Dx()]
	mp, fast := pal.(*MaterialPalette)
	for wy := r.Min.Y; wy < r.Max.Y; wy++ {
		// The colours of this world row, then into the image.
		switch kind {
		case drawUnstored:
			for i := range line {
				line[i] = hatch(r.Min.X+i, wy, unstoredA, unstoredB)
			}
		case drawDamaged:
			for i := range line {
				line[i] = hatch(r.Min.X+i, wy, damagedA, damagedB)
			}
		default:
			src := pix[(wy-y0)*size+r.Min.X-x0:]
			for i := range line {
				switch p := src[i]; {
				case p == neutralPixel:
					line[i] = deltaBase
				case fast:
					line[i] = mp.Color(p)
				default:
					line[i] = pal.Color(p)
				}
			}
		}
		iy := (wy - a.region.Min.Y) / a.scale
		if a.scale == 1 {
			at := a.img.PixOffset(r.Min.X-a.region.Min.X, iy)
			for i, c := range line {
				a.img.Pix[at+4*i], a.img.Pix[at+4*i+1], a.img.Pix[at+4*i+2], a.img.Pix[at+4*i+3] = c.R, c.G, c.B, c.A
			}
			continue
		}
		row := a.sumsRow(iy)
		ix, rem := (r.Min.X-a.region.Min.X)/a.scale, (r.Min.X-a.region.Min.X)%a.scale
		for _, c := range line {
			sum := row[4*ix : 4*ix+4]
			sum[0] += uint32(c.R)
			sum[1] += uint32(c.G)
			sum[2] += uint32(c.B)
			sum[3]++
			if rem++; rem == a.scale {
				rem, ix = 0, ix+1
			}
		}
	}
}

func hatch(x, y int, a, b color.RGBA) color.RGBA {
	if ((x+y)>>3)&1 == 0 {
		return a
	}
	return b
}

func (a *accumulator) sumsRow(iy int) []uint32 {
	if a.scale == 1 {
		return nil
	}
	for iy-a.row0 >= len(a.sums) {
		if n := len(a.free); n > 0 {
			a.sums = append(a.sums, a.free[n-1])
			a.free = a.free[:n-1]
		} else {
			a.sums = append(a.sums, make([]uint32, 4*a.img.Rect.Dx()))
		}
	}
	return a.sums[iy-a.row0]
}

// flush writes the image rows whose world rows all lie before wy.
func (a *accumulator) flush(wy int) {
	if a.scale == 1 {
		return
	}
	done := (wy - a.region.Min.Y) / a.scale
	if wy >= a.region.Max.Y {
		done = a.img.Rect.Dy()
	}
	for a.row0 < done && len(a.sums) > 0 {
		row := a.sums[0]
		for ix := 0; ix < len(row); ix += 4 {
			if n := row[ix+3]; n > 0 {
				a.img.SetRGBA(ix/4, a.row0, color.RGBA{uint8(row[ix] / n), uint8(row[ix+1] / n), uint8(row[ix+2] / n), 0xff})
			}
		}
		clear(row)
		a.free = append(a.free, row)
		a.sums = a.sums[1:]
		a.row0++
	}
}

// DrawBody draws a pixel body's pixels at its saved transform into img,
// which shows the world pixels of region at one image pixel per scale×scale
// world pixels (img's origin is region.Min), and reports whether any of
// them fell within region. Each world pixel near the body is mapped back
// into its grid, so a turned body has no holes. A body whose grid does not
// match its pixels and shape, or whose transform is not finite, is not
// drawn. A nil pal means [DefaultPalette]; a scale below 1 means 1.
func DrawBody(img *image.RGBA, region image.Rectangle, scale int, b *chunkstore.Body, pal Palette) bool {
	w, h := int(b.Width), int(b.Height)
	if w*h == 0 || len(b.Shape) != w*h || len(b.Pixels) != w*h {
		return false
	}
	if pal == nil {
		pal = sharedPalette()
	}
	scale = max(scale, 1)
	clip := BodyBounds(b).Intersect(region)
	if clip.Empty() {
		return false
	}
	drawn := false
	ox, oy := float64(b.OriginX), float64(b.OriginY)
	sin, cos := math.Sincos(float64(b.Rotation))
	tx, ty := math.Floor(float64(b.X)+0.5), math.Floor(float64(b.Y)+0.5)
	for wy := clip.Min.Y; wy < clip.Max.Y; wy++ {
		for wx := clip.Min.X; wx < clip.Max.X; wx++ {
			dx, dy := float64(wx)-tx+0.5, float64(wy)-ty+0.5
			lx, ly := cos*dx+sin*dy+ox, -sin*dx+cos*dy+oy
			if lx < 0 || ly < 0 || lx >= float64(w) || ly >= float64(h) {
				continue
			}
			k := int(ly)*w + int(lx)
			if !b.Shape[k] {
				continue
			}
			img.SetRGBA((wx-region.Min.X)/scale, (wy-region.Min.Y)/scale, pal.Color(b.Pixels[k]))
			drawn = true
		}
	}
	return drawn
}

// BodyBounds returns the world pixels a pixel body may cover at its saved
// transform, whatever its rotation: the square around its position that
// holds its grid turned any way. It is empty for a body without pixels or
// with a transform that is not finite or lies beyond ±2^30.
func BodyBounds(b *chunkstore.Body) image.Rectangle {
	w, h := float64(b.Width), float64(b.Height)
	if w*h == 0 {
		return image.Rectangle{}
	}
	ox, oy := float64(b.OriginX), float64(b.OriginY)
	tx, ty := math.Floor(float64(b.X)+0.5), math.Floor(float64(b.Y)+0.5)
	r := math.Ceil(math.Hypot(math.Max(math.Abs(ox), math.Abs(w-ox)), math.Max(math.Abs(oy), math.Abs(h-oy)))) + 1
	const limit = 1 << 30
	if !(math.Abs(tx)+r < limit && math.Abs(ty)+r < limit) { // also false for NaN and Inf
		return image.Rectangle{}
	}
	return image.Rect(int(tx-r), int(ty-r), int(tx+r)+1, int(ty+r)+1)
}

// drawGrid draws chunk borders.
func drawGrid(img *image.RGBA, region image.Rectangle, scale, zoom, size int, stored map[chunkstore.Pos]chunkstore.StorageType, damaged map[chunkstore.Pos]bool) {
	ix := func(wx int) int { return (wx - region.Min.X) * zoom / scale }
	iy := func(wy int) int { return (wy - region.Min.Y) * zoom / scale }
	cx0, cy0 := floorDiv(region.Min.X, size), floorDiv(region.Min.Y, size)
	cx1, cy1 := floorDiv(region.Max.X-1, size), floorDiv(region.Max.Y-1, size)
	b := img.Rect
	for cx := cx0; cx <= cx1+1; cx++ {
		if x := ix(cx * size); x >= 0 && x < b.Dx() && cx*size >= region.Min.X {
			for y := 0; y < b.Dy(); y++ {
				blend(img, x, y, gridColour)
			}
		}
	}
	for cy := cy0; cy <= cy1+1; cy++ {
		if y := iy(cy * size); y >= 0 && y < b.Dy() && cy*size >= region.Min.Y {
			for x := 0; x < b.Dx(); x++ {
				blend(img, x, y, gridColour)
			}
		}
	}
	outline := func(pos chunkstore.Pos, c color.RGBA) {
		r := image.Rect(ix(int(pos.X)*size), iy(int(pos.Y)*size), ix(int(pos.X+1)*size)-1, iy(int(pos.Y+1)*size)-1)
		for x := r.Min.X; x <= r.Max.X; x++ {
			setIn(img, x, r.Min.Y, c)
			setIn(img, x, r.Max.Y, c)
		}
		for y := r.Min.Y; y <= r.Max.Y; y++ {
			setIn(img, r.Min.X, y, c)
			setIn(img, r.Max.X, y, c)
		}
	}
	for pos, typ := range stored {
		if !damaged[pos] {
			outline(pos, borders[typ])
		}
	}
	for pos := range damaged {
		outline(pos, damagedA)
	}
}

func setIn(img *image.RGBA, x, y int, c color.RGBA) {
	if (image.Point{x, y}).In(img.Rect) {
		img.SetRGBA(x, y, c)
	}
}

func blend(img *image.RGBA, x, y int, c color.RGBA) {
	o := img.RGBAAt(x, y)
	a := uint32(c.A)
	mix := func(p, q uint8) uint8 { return uint8((uint32(p)*(255-a) + uint32(q)*a) / 255) }
	img.SetRGBA(x, y, color.RGBA{mix(o.R, c.R), mix(o.G, c.G), mix(o.B, c.B), 0xff})
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
