package terrain_test

import (
	"slices"
	"testing"

	"github.com/arksave/arksave/internal/testkit/terrain"
)

func TestDeterministicLayers(t *testing.T) {
	g := terrain.Generator{}
	a := make([]uint32, 64*64)
	b := make([]uint32, 64*64)
	g.Generate(3, 0, 42, a)
	g.Generate(3, 0, 42, b)
	if !slices.Equal(a, b) {
		t.Fatal("same input, different output")
	}
	g.Generate(3, 0, 43, b)
	if slices.Equal(a, b) {
		t.Fatal("seed does not change the output")
	}
	// Column 0: air on top, then dirt, then stone, in that order.
	last := uint32(terrain.Air)
	for j := range 64 {
		m := a[j*64] & 0xFF
		if m < last {
			t.Fatalf("row %d: material %d after %d", j, m, last)
		}
		last = m
	}
	deep := make([]uint32, 16*16)
	g.Generate(0, 100, 42, deep)
	for i, p := range deep {
		if p&0xFF != terrain.Stone {
			t.Fatalf("deep pixel %d is %#x, want stone", i, p)
		}
	}
	if (terrain.Generator{Rev: 1}).Version() == g.Version() {
		t.Fatal("Rev must change the version")
	}
}

func BenchmarkGenerate512(b *testing.B) {
	dst := make([]uint32, 512*512)
	g := terrain.Generator{}
	b.SetBytes(int64(len(dst) * 4))
	b.ReportAllocs()
	for b.Loop() {
		g.Generate(1, 0, 7, dst)
	}
}
