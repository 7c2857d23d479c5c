package arksave_test

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/vfs"
)

// Biome is a game's own value kept with a chunk.
type Biome struct {
	Name     string
	Humidity float32
	Heights  []int16
}

// A game's extra data for a chunk goes through the plugin: setting it marks
// the chunk dirty, a save writes a chunk whose only change is its extra
// data, and it comes back with the chunk after an unload, after a load in a
// fresh world, and as a typed value.
func TestChunkDataThroughThePlugin(t *testing.T) {
	mem := vfs.NewMem()
	g := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 1})
	g.Settle(t)
	p00, p11 := components.ChunkPos{X: 0, Y: 0}, components.ChunkPos{X: 1, Y: 1}
	chests := []byte("chest at (3, 4): 12 gold")

	_, st := g.Chunk(t, 0, 0)
	expect(t, !st.IsDirty(), "chunk dirty before any change")
	must(t, g.Pers.SetChunkData(p00, chests))
	expect(t, st.IsDirty() && g.Pers.DirtyChunks() == 1, "extra data did not mark the chunk dirty (%d dirty)", g.Pers.DirtyChunks())
	must(t, arksave.SetChunkValue(g.Pers, p11, Biome{Name: "swamp", Humidity: 0.9, Heights: []int16{3, -2, 7}}))
	res := g.WaitSave(t, g.Pers.Save())
	must(t, res.Err)
	expect(t, !st.IsDirty(), "chunk still dirty after the save")

	// The same data again changes nothing.
	must(t, g.Pers.SetChunkData(p00, bytes.Clone(chests)))
	expect(t, !st.IsDirty(), "unchanged extra data marked the chunk dirty")

	// The store holds (0, 0) with its pixels as generated and its data.
	expect(t, storedExtra(t, mem, p00) == string(chests), "store: %q", storedExtra(t, mem, p00))

	// Unload both chunks (and save meanwhile), come back: read from the store.
	g.MoveFocus(t, 40*gametest.ChunkSize, 0)
	_, err := g.Pers.ChunkData(p00)
	expect(t, errors.Is(err, arksave.ErrChunkNotLoaded), "ChunkData of an unloaded chunk: %v", err)
	must(t, g.WaitSave(t, g.Pers.Save()).Err)
	g.MoveFocus(t, 0, 0)
	waitLoaded(g, t, p00)
	got, err := g.Pers.ChunkData(p00)
	must(t, err)
	expect(t, bytes.Equal(got, chests), "after an unload: %q", got)
	must(t, g.Pers.Close())

	// A fresh world loads the save: data and typed value come back.
	h := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
	h.MoveFocus(t, 0, 0) // (the save was made with the focus far away)
	waitLoaded(h, t, p00)
	waitLoaded(h, t, p11)
	got, err = h.Pers.ChunkData(p00)
	must(t, err)
	expect(t, bytes.Equal(got, chests), "fresh world: %q", got)
	b, ok, err := arksave.ChunkValue[Biome](h.Pers, p11)
	must(t, err)
	expect(t, ok && b.Name == "swamp" && b.Humidity == 0.9 && len(b.Heights) == 3 && b.Heights[1] == -2, "biome %+v %v", b, ok)
	_, _, err = arksave.ChunkValue[gametest.Position](h.Pers, p11)
	expect(t, err != nil, "a Biome read as a Position")
	none, ok, err := arksave.ChunkValue[Biome](h.Pers, components.ChunkPos{X: -1, Y: 0})
	expect(t, err == nil && !ok && none.Name == "", "a chunk without data: %+v %v %v", none, ok, err)

	// Clearing the data: (0, 0) is as generated again and leaves the store.
	must(t, h.Pers.SetChunkData(p00, nil))
	must(t, h.WaitSave(t, h.Pers.Save()).Err)
	expect(t, storedExtra(t, mem, p00) == "<not stored>", "cleared chunk: %q", storedExtra(t, mem, p00))
	must(t, h.Pers.Close())
	k := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
	waitLoaded(k, t, p00)
	got, err = k.Pers.ChunkData(p00)
	expect(t, err == nil && got == nil, "cleared data loads as %q, %v", got, err)
}

// waitLoaded ticks until the chunk at pos is loaded.
func waitLoaded(g *gametest.Game, t *testing.T, pos components.ChunkPos) {
	t.Helper()
	ix := ecs.GetResource[components.ChunkIndex](g.W)
	for range 5000 {
		if _, ok := ix.Get(pos); ok {
			return
		}
		g.Tick()
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("chunk %v did not load", pos)
}

// storedExtra opens the save's committed chunk store and returns the extra
// data of the chunk at pos, or "<not stored>".
func storedExtra(t *testing.T, fsys vfs.FS, pos components.ChunkPos) string {
	t.Helper()
	s, _ := gametest.OpenCommittedStore(t, fsys, "/save")
	defer s.Close()
	pix := make([]uint32, gametest.ChunkSize*gametest.ChunkSize)
	stored, extra, err := s.GetExtra(chunkstore.Pos{X: pos.X, Y: pos.Y}, pix)
	must(t, err)
	if !stored {
		return "<not stored>"
	}
	return string(extra)
}

// The plugin's default layers keep material, colour, damage and the
// pixel-body flag, not the simulation flags; a layer the game registers
// later loads with its default in chunks saved before.
func TestPluginLayers(t *testing.T) {
	mem := vfs.NewMem()
	g := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 1})
	g.Settle(t)
	g.Paint(t, 0, 0, 1, 1, components.MakePixel(9, 2, 3, components.FlagPixelBody|1<<3)) // a simulation flag too
	must(t, g.WaitSave(t, g.Pers.Save()).Err)
	must(t, g.Pers.Close())

	h := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
	h.Settle(t)
	c, _ := h.Chunk(t, 0, 0)
	expect(t, c.At(1, 1) == components.MakePixel(9, 2, 3, components.FlagPixelBody), "default layers: %08x", uint32(c.At(1, 1)))
	must(t, h.Pers.Close())

	// The game now splits its simulation flags: bits 28..31 become a saved
	// "temperature" layer with default 6.
	layers := append(arksave.DefaultLayers()[:4],
		chunkstore.Layer{Name: "simulation-flags", Offset: 25, Bits: 3},
		chunkstore.Layer{Name: "temperature", Offset: 28, Bits: 4, Persist: true, Default: 6})
	withTemp := func(p *arksave.Plugin) { p.Layers = layers }
	k := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1, Plugin: withTemp})
	k.Settle(t)
	c, _ = k.Chunk(t, 0, 0)
	expect(t, c.At(1, 1) == components.MakePixel(9, 2, 3, components.FlagPixelBody|6<<4), "old chunk, new layer: %08x", uint32(c.At(1, 1)))
	k.Paint(t, 0, 0, 2, 2, components.MakePixel(9, 2, 3, 0)) // temperature 0, saved as 0
	must(t, k.WaitSave(t, k.Pers.Save()).Err)
	must(t, k.Pers.Close())
	m := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1, Plugin: withTemp})
	m.Settle(t)
	c, _ = m.Chunk(t, 0, 0)
	expect(t, c.At(2, 2) == components.MakePixel(9, 2, 3, 0), "new chunk record keeps temperature 0: %08x", uint32(c.At(2, 2)))
}
