package mapserve

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"testing"
)

// encodePNG's output is a PNG that image/png reads back as the image:
// exactly where opaque or transparent, within rounding where partly
// transparent (PNG stores colours unpremultiplied).
func TestEncodePNG(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name   string
		w, h   int
		alphas []uint8
	}{
		{"opaque", 256, 256, []uint8{255}},
		{"edge of the map", 256, 256, []uint8{255, 0}},
		{"halved edge", 37, 5, []uint8{255, 0, 128, 64, 191, 1}},
		{"one pixel", 1, 1, []uint8{200}},
	} {
		img := image.NewRGBA(image.Rect(0, 0, tc.w, tc.h))
		for i := 0; i < len(img.Pix); i += 4 {
			a := tc.alphas[rng.IntN(len(tc.alphas))]
			for c := range 3 {
				img.Pix[i+c] = uint8(rng.IntN(int(a) + 1))
			}
			img.Pix[i+3] = a
		}
		var buf bytes.Buffer
		if err := encodePNG(&buf, img); err != nil {
			t.Fatal(err)
		}
		got, err := png.Decode(&buf)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got.Bounds() != img.Rect {
			t.Fatalf("%s: bounds %v, want %v", tc.name, got.Bounds(), img.Rect)
		}
		for y := range tc.h {
			for x := range tc.w {
				want := img.RGBAAt(x, y)
				g := color.RGBAModel.Convert(got.At(x, y)).(color.RGBA)
				tol := 0
				if want.A != 0 && want.A != 255 {
					tol = 1
				}
				for i, v := range []int{int(g.R) - int(want.R), int(g.G) - int(want.G), int(g.B) - int(want.B), int(g.A) - int(want.A)} {
					if v > tol || v < -tol {
						t.Fatalf("%s: pixel %d,%d channel %d: %v, want %v", tc.name, x, y, i, g, want)
					}
				}
			}
		}
	}
}
