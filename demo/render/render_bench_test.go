package render_test

import (
	"testing"
	"unsafe"

	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/demo/render"
	"github.com/arksave/arksave/demo/terrain"
	"github.com/mlange-42/ark/ecs"
)

// BenchmarkRender_640x360 draws one screen of the world across four
// generated 512-pixel chunks: the work of the game's Draw before WritePixels.
func BenchmarkRender_640x360(b *testing.B) {
	const size, seed = 512, 1
	w := ecs.NewWorld()
	index := components.NewChunkIndex()
	ecs.AddResource(w, index)
	chunks := ecs.NewMap3[components.ChunkPos, components.Chunk, components.ChunkState](w)
	for y := int32(-1); y <= 0; y++ {
		for x := int32(-1); x <= 0; x++ {
			pix := make([]components.Pixel, size*size)
			terrain.Generator{}.Generate(x, y, seed, unsafe.Slice((*uint32)(unsafe.Pointer(&pix[0])), len(pix)))
			pos := components.ChunkPos{X: x, Y: y}
			c := components.NewChunk(size, pix)
			index.Set(pos, chunks.NewEntity(&pos, &c, &components.ChunkState{}))
		}
	}
	r := render.New(w, size, seed)
	buf := make([]byte, 640*360*4)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		r.Render(buf, -320, terrain.SurfaceY(0, seed)-180, 640, 360)
	}
}
