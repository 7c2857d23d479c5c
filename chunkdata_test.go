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
	g := newGame(t, gameOpts{fs: mem, dir: "/save", radius: 1})
	g.settle(t)
	p00, p11 := components.ChunkPos{X: 0, Y: 0}, components.ChunkPos{X: 1, Y: 1}
	chests := []byte("chest at (3, 4): 12 gold")

	_, st := g.chunk(t, 0, 0)
	expect(t, !st.IsDirty(), "chunk dirty before any change")
	must(t, g.pers.SetChunkData(p00, chests))
	expect(t, st.IsDirty() && g.pers.DirtyChunks() == 1, "extra data did not mark the chunk dirty (%d dirty)", g.pers.DirtyChunks())
	must(t, arksave.SetChunkValue(g.pers, p11, Biome{Name: "swamp", Humidity: 0.9, Heights: []int16{3, -2, 7}}))
	res := g.waitSave(t, g.pers.Save())
	must(t, res.Err)
	expect(t, !st.IsDirty(), "chunk still dirty after the save")

	// The same data again changes nothing.
	must(t, g.pers.SetChunkData(p00, bytes.Clone(chests)))
	expect(t, !st.IsDirty(), "unchanged extra data marked the chunk dirty")

	// The store holds (0, 0) with its pixels as generated and its data.
	expect(t, storedExtra(t, mem, p00) == string(chests), "store: %q", storedExtra(t, mem, p00))

	// Unload both chunks (and save meanwhile), come back: read from the store.
	g.moveFocus(t, 40*testChunk, 0)
	_, err := g.pers.ChunkData(p00)
	expect(t, errors.Is(err, arksave.ErrChunkNotLoaded), "ChunkData of an unloaded chunk: %v", err)
	must(t, g.waitSave(t, g.pers.Save()).Err)
	g.moveFocus(t, 0, 0)
	g.waitLoaded(t, p00)
	got, err := g.pers.ChunkData(p00)
	must(t, err)
	expect(t, bytes.Equal(got, chests), "after an unload: %q", got)
	must(t, g.pers.Close())

	// A fresh world loads the save: data and typed value come back.
	h := newGame(t, gameOpts{fs: mem, dir: "/save", load: true, radius: 1})
	h.moveFocus(t, 0, 0) // (the save was made with the focus far away)
	h.waitLoaded(t, p00)
	h.waitLoaded(t, p11)
	got, err = h.pers.ChunkData(p00)
	must(t, err)
	expect(t, bytes.Equal(got, chests), "fresh world: %q", got)
	b, ok, err := arksave.ChunkValue[Biome](h.pers, p11)
	must(t, err)
	expect(t, ok && b.Name == "swamp" && b.Humidity == 0.9 && len(b.Heights) == 3 && b.Heights[1] == -2, "biome %+v %v", b, ok)
	_, _, err = arksave.ChunkValue[Position](h.pers, p11)
	expect(t, err != nil, "a Biome read as a Position")
	none, ok, err := arksave.ChunkValue[Biome](h.pers, components.ChunkPos{X: -1, Y: 0})
	expect(t, err == nil && !ok && none.Name == "", "a chunk without data: %+v %v %v", none, ok, err)

	// Clearing the data: (0, 0) is as generated again and leaves the store.
	must(t, h.pers.SetChunkData(p00, nil))
	must(t, h.waitSave(t, h.pers.Save()).Err)
	expect(t, storedExtra(t, mem, p00) == "<not stored>", "cleared chunk: %q", storedExtra(t, mem, p00))
	must(t, h.pers.Close())
	k := newGame(t, gameOpts{fs: mem, dir: "/save", load: true, radius: 1})
	k.waitLoaded(t, p00)
	got, err = k.pers.ChunkData(p00)
	expect(t, err == nil && got == nil, "cleared data loads as %q, %v", got, err)
}

// waitLoaded ticks until the chunk at pos is loaded.
func (g *game) waitLoaded(t *testing.T, pos components.ChunkPos) {
	t.Helper()
	ix := ecs.GetResource[components.ChunkIndex](g.w)
	for range 5000 {
		if _, ok := ix.Get(pos); ok {
			return
		}
		g.tick()
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("chunk %v did not load", pos)
}

// storedExtra opens the save's committed chunk store and returns the extra
// data of the chunk at pos, or "<not stored>".
func storedExtra(t *testing.T, fsys vfs.FS, pos components.ChunkPos) string {
	t.Helper()
	s, _ := openCommittedStore(t, fsys, "/save")
	defer s.Close()
	pix := make([]uint32, testChunk*testChunk)
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
	g := newGame(t, gameOpts{fs: mem, dir: "/save", radius: 1})
	g.settle(t)
	g.paint(t, 0, 0, 1, 1, components.MakePixel(9, 2, 3, components.FlagPixelBody|1<<3)) // a simulation flag too
	must(t, g.waitSave(t, g.pers.Save()).Err)
	must(t, g.pers.Close())

	h := newGame(t, gameOpts{fs: mem, dir: "/save", load: true, radius: 1})
	h.settle(t)
	c, _ := h.chunk(t, 0, 0)
	expect(t, c.At(1, 1) == components.MakePixel(9, 2, 3, components.FlagPixelBody), "default layers: %08x", uint32(c.At(1, 1)))
	must(t, h.pers.Close())

	// The game now splits its simulation flags: bits 28..31 become a saved
	// "temperature" layer with default 6.
	layers := append(components.DefaultLayers()[:4],
		chunkstore.Layer{Name: "simulation-flags", Offset: 25, Bits: 3},
		chunkstore.Layer{Name: "temperature", Offset: 28, Bits: 4, Persist: true, Default: 6})
	withTemp := func(p *arksave.Plugin) { p.Layers = layers }
	k := newGame(t, gameOpts{fs: mem, dir: "/save", load: true, radius: 1, plugin: withTemp})
	k.settle(t)
	c, _ = k.chunk(t, 0, 0)
	expect(t, c.At(1, 1) == components.MakePixel(9, 2, 3, components.FlagPixelBody|6<<4), "old chunk, new layer: %08x", uint32(c.At(1, 1)))
	k.paint(t, 0, 0, 2, 2, components.MakePixel(9, 2, 3, 0)) // temperature 0, saved as 0
	must(t, k.waitSave(t, k.pers.Save()).Err)
	must(t, k.pers.Close())
	m := newGame(t, gameOpts{fs: mem, dir: "/save", load: true, radius: 1, plugin: withTemp})
	m.settle(t)
	c, _ = m.chunk(t, 0, 0)
	expect(t, c.At(2, 2) == components.MakePixel(9, 2, 3, 0), "new chunk record keeps temperature 0: %08x", uint32(c.At(2, 2)))
}
