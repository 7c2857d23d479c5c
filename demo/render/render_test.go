package render_test

import (
	"encoding/binary"
	"testing"

	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/demo/render"
	"github.com/arksave/arksave/demo/sand"
	"github.com/mlange-42/ark/ecs"
)

func TestRender(t *testing.T) {
	const size, seed = 64, 1
	w := ecs.NewWorld()
	index := components.NewChunkIndex()
	ecs.AddResource(w, index)
	chunks := ecs.NewMap3[components.ChunkPos, components.Chunk, components.ChunkState](w)
	// one chunk high in the sky with a single sand pixel and a body pixel
	pos := components.ChunkPos{X: 0, Y: -10}
	c := components.NewChunk(size, nil)
	c.Set(5, 5, sand.Make(sand.Sand, 255))
	c.Set(6, 5, sand.Make(sand.Stone, 0)|components.FlagPixelBody<<components.FlagsShift)
	index.Set(pos, chunks.NewEntity(&pos, &c, &components.ChunkState{}))

	r := render.New(w, size, seed)
	buf := make([]byte, 2*size*size*4)
	r.Render(buf, 0, -10*size, 2*size, size) // the chunk and its unloaded neighbour
	at := func(x, y int) uint32 { return binary.LittleEndian.Uint32(buf[(y*2*size+x)*4:]) }

	if got, want := at(5, 5), render.RGBA(sand.Shade(sand.Sand, 255)); got != want {
		t.Errorf("sand pixel drawn %08x, want %08x", got, want)
	}
	if got, want := at(6, 5), render.RGBA(sand.Shade(sand.Stone, 0)); got != want {
		t.Errorf("body pixel drawn %08x, want its material's colour %08x", got, want)
	}
	sky := at(20, 20)
	if r, g, b := sky&0xff, sky>>8&0xff, sky>>16&0xff; b <= r || b <= g || sky>>24 != 0xff {
		t.Errorf("air high up is not sky blue: %08x", sky)
	}
	if a, b := at(size+3, 3), at(size+20, 20); a == sky || b == sky || a>>24 != 0xff {
		t.Errorf("an unloaded chunk must not look like sky: %08x %08x", a, b)
	}
}

func TestPaletteFadesGas(t *testing.T) {
	p := render.NewPalette()
	bg := uint32(0xff102030)
	young := p.Color(components.MakePixel(uint8(sand.Smoke), 128, 0, 0), bg)
	old := p.Color(components.MakePixel(uint8(sand.Smoke), 128, 250, 0), bg)
	if young == bg || old == young {
		t.Errorf("smoke must show when young and fade with age: young %08x old %08x bg %08x", young, old, bg)
	}
	if p.Color(0, bg) != bg {
		t.Errorf("air must show the background")
	}
}
