package conv_test

import (
	"testing"

	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/conv"
)

func TestMergeByID(t *testing.T) {
	type item struct {
		id  uint64
		val string
	}
	id := func(i *item) uint64 { return i.id }
	got := conv.MergeByID([]item{{1, "a"}, {2, "b"}, {3, "c"}}, []item{{2, "B"}, {4, "D"}}, id)
	want := []item{{1, "a"}, {3, "c"}, {2, "B"}, {4, "D"}}
	if len(got) != len(want) {
		t.Fatalf("merge: %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("merge: %v, want %v", got, want)
		}
	}
}

// The body hash changes with every field a save keeps.
func TestHashBodiesCoversSavedFields(t *testing.T) {
	base := components.PixelBody{ID: 7, X: 1, Y: 2, Rotation: 0.5, VX: 1, VY: 2, AngularVelocity: 3,
		Width: 2, Height: 1, OriginX: 1, OriginY: 0, Pixels: []components.Pixel{5, 6}, Shape: []bool{true, false},
		Extension: []byte("crate")}
	h := conv.HashBodies([]components.PixelBody{base})
	if h == 0 || conv.HashBodies(nil) != 0 {
		t.Fatal("0 is reserved for no bodies")
	}
	changes := []func(b *components.PixelBody){
		func(b *components.PixelBody) { b.ID++ },
		func(b *components.PixelBody) { b.X++ },
		func(b *components.PixelBody) { b.Y++ },
		func(b *components.PixelBody) { b.Rotation++ },
		func(b *components.PixelBody) { b.VX++ },
		func(b *components.PixelBody) { b.VY++ },
		func(b *components.PixelBody) { b.AngularVelocity++ },
		func(b *components.PixelBody) { b.Width++ },
		func(b *components.PixelBody) { b.OriginY++ },
		func(b *components.PixelBody) { b.Pixels[1]++ },
		func(b *components.PixelBody) { b.Shape[1] = true },
		func(b *components.PixelBody) { b.Extension[0] = 'C' },
	}
	for i, change := range changes {
		b := base.Clone()
		change(&b)
		if conv.HashBodies([]components.PixelBody{b}) == h {
			t.Errorf("change %d does not change the hash", i)
		}
	}
}

func TestPixelViewsShareMemory(t *testing.T) {
	pix := []components.Pixel{1, 2, 3}
	u := conv.Uint32s(pix)
	u[1] = 9
	if pix[1] != 9 || &conv.Pixels(u)[0] != &pix[0] {
		t.Fatal("the views must share memory")
	}
	if conv.Uint32s(nil) != nil || conv.Pixels(nil) != nil {
		t.Fatal("empty views must be nil")
	}
}
