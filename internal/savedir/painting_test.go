package savedir_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/conv"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/snapshot"
	"github.com/arksave/arksave/vfs"
)

// Many saves while the game paints: the writer reads each chunk of a
// snapshot when it compresses it, while the game goes on writing random
// pixels into every chunk, and every chunk a save commits holds exactly
// the pixels it had at that save's snapshot. Run it with -race: the writer
// and the game must never touch the same tile at once.
func TestSavesWhilePainting(t *testing.T) {
	const csize, nchunks, saves = 128, 6, 25 // 16 tiles a chunk
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: vfs.NewMem(),
		Store: chunkstore.Options{ChunkSize: csize, TileSize: components.TileSize, PixelSize: 4, Seed: 3, Generator: flatGen{}, Workers: 2}})
	must(t, err)
	defer w.Close()
	rng := rand.New(rand.NewPCG(4, 5))
	randPixel := func() components.Pixel { return components.Pixel(rng.Uint32()) & components.PersistMask }
	chunks := make([]components.Chunk, nchunks)
	for i := range chunks {
		chunks[i] = components.NewChunk(csize, nil)
		pix := chunks[i].MutRect(0, 0, chunks[i].Size, chunks[i].Size)
		for k := range pix {
			pix[k] = randPixel()
		}
	}
	copied, painted := 0, 0
	for g := 1; g <= saves; g++ {
		snap := &snapshot.Snapshot{World: []byte("world")}
		want := make([][]components.Pixel, nchunks)
		for i := range chunks {
			want[i] = slices.Clone(chunks[i].Pixels())
			snap.Chunks = append(snap.Chunks, snapshot.Chunk{Pos: components.ChunkPos{X: int32(i)}, Buf: chunks[i].Share(), Version: uint64(g)})
		}
		expect(t, w.Submit(savedir.Job{Snap: snap}), "writer busy")
		var res *autosave.Result
		for ok := false; !ok; res, ok = w.Poll() {
			for range 16 {
				chunks[rng.IntN(nchunks)].Set(rng.IntN(csize), rng.IntN(csize), randPixel())
				painted++
			}
		}
		must(t, res.Err)
		expect(t, int(res.Generation) == g, "save %d committed generation %d", g, res.Generation)
		got := make([]uint32, csize*csize)
		for i, c := range snap.Chunks {
			_, err := w.Get(conv.StorePos(c.Pos), got)
			must(t, err)
			expect(t, slices.Equal(conv.Pixels(got), want[i]), "save %d: chunk %d is not as it was at the snapshot", g, i)
			n, _ := c.Buf.CopyCost()
			copied += n
			expect(t, !chunks[i].Held(), "save %d: chunk %d still held after the save", g, i)
		}
	}
	t.Logf("%d pixels painted during %d saves, %d tiles copied", painted, saves, copied)
	expect(t, copied > 0, "no write met a tile a save still held: the test did not test copy-on-write")
}
