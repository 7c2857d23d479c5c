package systems_test

import (
	"sync"
	"testing"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/vfs"
)

// countingGen is the test game's generator, counting its calls per chunk
// and keeping their order.
type countingGen struct {
	mu    sync.Mutex
	calls map[components.ChunkPos]int
	order []components.ChunkPos
}

func (g *countingGen) Version() uint32 { return gametest.Gen{}.Version() }
func (g *countingGen) Generate(x, y int32, seed uint64, dst []uint32) {
	g.mu.Lock()
	pos := components.ChunkPos{X: x, Y: y}
	g.calls[pos]++
	g.order = append(g.order, pos)
	g.mu.Unlock()
	gametest.Gen{}.Generate(x, y, seed, dst)
}

// take returns the calls since the last take and their order.
func (g *countingGen) take() (map[components.ChunkPos]int, []components.ChunkPos) {
	g.mu.Lock()
	defer g.mu.Unlock()
	calls, order := g.calls, g.order
	g.calls, g.order = map[components.ChunkPos]int{}, nil
	return calls, order
}

// A save runs the game's generator at most once per chunk, and not at all
// for a chunk whose generated base the store holds (the last 16 chunks it
// generated, chunkstore.DefaultBaseCache), however many chunks the save
// holds: 25 loaded chunks, each changed, saved twice through the plugin's
// save path.
func TestSaveGeneratesEachChunkAtMostOnce(t *testing.T) {
	for _, radius := range []int32{1, 2} {
		g := &countingGen{calls: map[components.ChunkPos]int{}}
		gm := gametest.New(t, gametest.Opts{FS: vfs.NewMem(), Dir: "/w", Radius: radius, Plugin: func(p *arksave.Plugin) { p.Generator = g }})
		gm.Settle(t)
		loaded, order := g.take()
		n := int(2*radius+1) * int(2*radius+1)
		expect(t, len(loaded) == n, "radius %d: %d chunks generated while loading, want %d", radius, len(loaded), n)
		// The chunks the store generated last are the ones it holds.
		cached := map[components.ChunkPos]bool{}
		for i := len(order) - 1; i >= 0 && len(cached) < 16; i-- {
			cached[order[i]] = true
		}
		for round := range 2 {
			for pos := range loaded {
				gm.Paint(t, pos.X, pos.Y, round, 5, components.MakePixel(9, uint8(round), 0, 0))
			}
			res := gm.WaitSave(t, gm.Pers.Save())
			must(t, res.Err)
			expect(t, res.ChunksWritten == n, "radius %d, save %d: %d chunks written, want %d", radius, round, res.ChunksWritten, n)
			calls, _ := g.take()
			total := 0
			for pos, c := range calls {
				total += c
				expect(t, c <= 1, "radius %d, save %d: chunk %v generated %d times", radius, round, pos, c)
				expect(t, round > 0 || !cached[pos], "radius %d, save %d: chunk %v generated though its base was cached", radius, round, pos)
			}
			// However the cache turned over, it held 16 bases (all of them
			// at radius 1) when the save began.
			expect(t, total <= n-min(n, 16), "radius %d, save %d: %d generations for %d chunks, the store held the bases of %d", radius, round, total, n, min(n, 16))
		}
	}
}
