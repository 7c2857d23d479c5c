package savetool_test

import (
	"errors"
	"image"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
	"github.com/arksave/arksave/vfs"
)

func TestRenderStoredAndGenerated(t *testing.T) {
	c, err := savetest.Read(base)
	must(t, err)
	pal := savetool.DefaultPalette()
	img, st, err := savetool.RenderDir(base, savetool.RenderOptions{Generator: savetest.Generator})
	must(t, err)
	const n = savetest.ChunkSize
	expect(t, img.Rect == image.Rect(0, 0, 3*n, 3*n) && st.Region == image.Rect(-n, -n, 2*n, 2*n) && st.Scale == 1,
		"image %v of region %v at %d", img.Rect, st.Region, st.Scale)
	expect(t, st.Full == 2 && st.Delta == 3 && st.Empty == 1 && st.Generated == 3 && st.Unstored == 0 && st.Bodies == 2,
		"stats %+v", st)
	// (1, 0) is Full: every pixel as stored.
	full := c.Chunks[chunkstore.Pos{X: 1, Y: 0}]
	for _, p := range []image.Point{{0, 0}, {5, 7}, {31, 31}} {
		got := img.RGBAAt(2*n+p.X, n+p.Y)
		expect(t, got == pal.Color(full[p.Y*n+p.X]), "full chunk pixel %v: %v, want %v", p, got, pal.Color(full[p.Y*n+p.X]))
	}
	// (0, -1) is not stored: as generated.
	gen := make([]uint32, n*n)
	savetest.Generator.Generate(0, -1, savetest.Seed, gen)
	for _, p := range []image.Point{{0, 0}, {20, 31}} {
		expect(t, img.RGBAAt(n+p.X, p.Y) == pal.Color(gen[p.Y*n+p.X]), "generated pixel %v", p)
	}

	// Without the generator: unstored chunks hatched, deltas over grey.
	img, st, err = savetool.RenderDir(base, savetool.RenderOptions{})
	must(t, err)
	expect(t, st.Generated == 0 && st.Unstored == 3, "stats %+v", st)
	hatch := map[color.RGBA]bool{}
	for y := 0; y < n; y++ {
		hatch[img.RGBAAt(n+y, y)] = true
	}
	expect(t, len(hatch) == 2, "unstored chunk drawn in %d colours, want a two-colour hatch", len(hatch))
	delta := c.Chunks[chunkstore.Pos{}]
	savetest.Generator.Generate(0, 0, savetest.Seed, gen)
	grey, changed := 0, 0
	for i := range delta {
		got := img.RGBAAt(n+i%n, n+i/n)
		if delta[i] == gen[i] {
			if got != (color.RGBA{0x80, 0x84, 0x8c, 0xff}) {
				t.Fatalf("unchanged pixel %d of a delta chunk is %v, not the grey base", i, got)
			}
			grey++
		} else {
			expect(t, got == pal.Color(delta[i]), "changed pixel %d: %v", i, got)
			changed++
		}
	}
	expect(t, grey > 0 && changed > 0, "delta chunk: %d grey, %d changed", grey, changed)
}

func TestRenderScaleZoomGridRegion(t *testing.T) {
	const n = savetest.ChunkSize
	big, _, err := savetool.RenderDir(base, savetool.RenderOptions{Generator: savetest.Generator})
	must(t, err)
	half, st, err := savetool.RenderDir(base, savetool.RenderOptions{Generator: savetest.Generator, Scale: 2})
	must(t, err)
	expect(t, half.Rect.Dx() == 3*n/2 && st.Scale == 2, "scale 2: %v", half.Rect)
	// An image pixel is the average of its four world pixels.
	var r, g, b int
	for _, p := range []image.Point{{10, 12}, {11, 12}, {10, 13}, {11, 13}} {
		c := big.RGBAAt(p.X, p.Y)
		r, g, b = r+int(c.R), g+int(c.G), b+int(c.B)
	}
	got := half.RGBAAt(5, 6)
	expect(t, int(got.R) == r/4 && int(got.G) == g/4 && int(got.B) == b/4, "averaged %v, want %d %d %d", got, r/4, g/4, b/4)

	zoom, _, err := savetool.RenderDir(base, savetool.RenderOptions{Zoom: 3, Region: image.Rect(0, 0, 10, 5)})
	must(t, err)
	expect(t, zoom.Rect.Dx() == 30 && zoom.Rect.Dy() == 15, "zoom 3 of 10x5: %v", zoom.Rect)

	grid, _, err := savetool.RenderDir(base, savetool.RenderOptions{Grid: true})
	must(t, err)
	orange := color.RGBA{0xff, 0x9a, 0x1f, 0xff}
	expect(t, grid.RGBAAt(2*n, n+9) == orange && grid.RGBAAt(3*n-1, n+9) == orange, "the full chunk (1, 0) is not framed orange")
	expect(t, grid.RGBAAt(2*n+5, n+9) == big.RGBAAt(2*n+5, n+9), "the grid drew inside a chunk")

	auto, st, err := savetool.RenderDir(base, savetool.RenderOptions{Region: image.Rect(0, 0, 20000, 100)})
	must(t, err)
	expect(t, st.Scale == 5 && auto.Rect.Dx() == 4000, "automatic scale %d for 20000 pixels: %v", st.Scale, auto.Rect)
	_, _, err = savetool.RenderDir(base, savetool.RenderOptions{Region: image.Rect(0, 0, 1<<20, 1<<20), Scale: 1})
	expect(t, err != nil, "a 1M x 1M image was not refused")
}

func TestRenderDamagedAndEmpty(t *testing.T) {
	dir := fresh(t)
	l := layoutOf(t, dir)
	h, err := l.Record(savetest.FullChunk, chunkstore.Full)
	must(t, err)
	must(t, l.Flip(h.Offset+40))
	img, st, err := savetool.RenderDir(dir, savetool.RenderOptions{Grid: true})
	must(t, err)
	expect(t, st.Damaged == 1, "stats %+v", st)
	red := color.RGBA{0xb0, 0x20, 0x20, 0xff}
	expect(t, img.RGBAAt(0, 5) == red, "the damaged chunk is not framed red: %v", img.RGBAAt(0, 5))

	mem := vfs.NewMem()
	s, err := chunkstore.Create("/empty.pxsw", &chunkstore.Options{FS: mem, ChunkSize: 8, TileSize: 4})
	must(t, err)
	defer s.Close()
	_, _, err = savetool.RenderStore(s, savetool.RenderOptions{})
	expect(t, errors.Is(err, savetool.ErrNothingToRender), "%v", err)
	img, _, err = savetool.RenderStore(s, savetool.RenderOptions{Region: image.Rect(-4, -4, 12, 4)})
	must(t, err)
	expect(t, img.Rect.Dx() == 16 && img.Rect.Dy() == 8, "%v", img.Rect)
}

func TestPalette(t *testing.T) {
	p := savetool.DefaultPalette()
	sky := p.Color(0)
	expect(t, sky == p.Air, "air is %v", sky)
	dark, light := p.Color(4), p.Color(4|255<<8)
	expect(t, dark == p.Ramps[4].Dark && light == p.Ramps[4].Light, "sand ramp %v %v", dark, light)
	damaged := p.Color(4 | 200<<16)
	expect(t, damaged.R < dark.R, "damage does not darken: %v", damaged)
	a, b := p.Color(200), p.Color(201)
	expect(t, a != b && a.A == 0xff, "unknown materials share a colour: %v %v", a, b)
	f := savetool.PaletteFunc(func(uint32) color.RGBA { return color.RGBA{1, 2, 3, 4} })
	expect(t, f.Color(9) == color.RGBA{1, 2, 3, 4}, "PaletteFunc")
}

// RenderStore draws the 2-D slice RenderOptions.At names of the chunk
// stores of 3 and 4 axes in the chunk store's test data: the chunks of
// that slice alone (three at z = 1, one at z = 2); a value for an axis the
// store does not have is refused with chunkstore.ErrAxes, before anything
// is drawn.
func TestRenderStoreSliceOfMoreAxes(t *testing.T) {
	for _, name := range []string{"axes-3", "axes-4"} {
		mem := vfs.NewMem()
		for _, f := range []string{"w.pxsw", "w-data-1.pxsd", "w-data-2.pxsd"} {
			data, err := os.ReadFile(filepath.Join("..", "..", "chunkstore", "testdata", "v3", name, f))
			if err != nil {
				t.Fatal(err)
			}
			file, err := mem.Create("/" + f)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := file.WriteAt(data, 0); err != nil {
				t.Fatal(err)
			}
			file.Close()
		}
		s, err := chunkstore.Open("/w.pxsw", &chunkstore.Options{FS: mem, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		four := name == "axes-4"
		at := func(z int32) [2]int32 { // the fixtures of 4 axes have w = -z
			if four {
				return [2]int32{z, -z}
			}
			return [2]int32{z, 0}
		}
		_, st, err := savetool.RenderStore(s, savetool.RenderOptions{At: at(1)})
		if err != nil || st.Full != 1 || st.Delta != 1 || st.Palette != 1 {
			t.Fatalf("%s: z=1: %+v %v", name, st, err)
		}
		_, st, err = savetool.RenderStore(s, savetool.RenderOptions{At: at(2)})
		if err != nil || st.Delta != 1 || st.Full+st.Palette != 0 {
			t.Fatalf("%s: z=2: %+v %v", name, st, err)
		}
		bad := [2]int32{1, 1}
		if four {
			bad = [2]int32{2, 2} // no chunk there
		}
		img, _, err := savetool.RenderStore(s, savetool.RenderOptions{At: bad})
		if four && !errors.Is(err, savetool.ErrNothingToRender) || !four && !errors.Is(err, chunkstore.ErrAxes) || img != nil {
			t.Fatalf("%s: render at %v: %v", name, bad, err)
		}
		s.Close()
	}
}

// A body whose stored transform is not finite (a hostile file can hold
// one under a valid checksum) is left out; rendering ends.
func TestRenderBodyNotFinite(t *testing.T) {
	mem := vfs.NewMem()
	s, err := chunkstore.Create("/bodies.pxsw", &chunkstore.Options{FS: mem, ChunkSize: 8, TileSize: 4})
	must(t, err)
	defer s.Close()
	var bodies []chunkstore.Body
	for i, xy := range [][2]float64{{math.Inf(1), 2}, {2, math.Inf(-1)}, {math.NaN(), 2}, {1 << 40, 2}, {3, 3}} {
		bodies = append(bodies, chunkstore.Body{ID: uint64(i + 1), X: float32(xy[0]), Y: float32(xy[1]), Width: 2, Height: 2,
			Pixels: []uint32{1, 1, 1, 1}, Shape: []bool{true, true, true, true}})
	}
	b := s.NewBatch()
	b.PutEntities(chunkstore.Pos{}, chunkstore.EntityBlock{Bodies: bodies})
	_, err = s.Commit(b)
	must(t, err)
	for _, body := range bodies[:4] {
		expect(t, savetool.BodyBounds(&body).Empty(), "body at %v,%v has bounds %v", body.X, body.Y, savetool.BodyBounds(&body))
	}
	_, st, err := savetool.RenderStore(s, savetool.RenderOptions{Region: image.Rect(0, 0, 8, 8)})
	must(t, err)
	expect(t, st.Bodies == 1, "%d bodies drawn, want the finite one", st.Bodies)
}
