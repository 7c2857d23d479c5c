package components_test

import (
	"fmt"
	"testing"

	"github.com/arksave/arksave/components"
)

func expect(t *testing.T, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Fatalf(format, args...)
	}
}

func TestChunkCopyOnWrite(t *testing.T) {
	c := components.NewChunk(4)
	c.Mut()[0] = 7
	snap := c.Share()
	expect(t, snap.Shared(), "shared buffer must report Shared")

	// Writing after Share must not touch the snapshot.
	expect(t, c.Set(0, 0, 9), "Set must report a change")
	expect(t, snap.Pix[0] == 7, "snapshot changed under the reader: %v", snap.Pix[0])
	expect(t, c.At(0, 0) == 9, "chunk lost its write: %v", c.At(0, 0))

	// The copy is private: further writes do not copy again.
	pix := c.Mut()
	pix[1] = 3
	expect(t, c.Pixels()[1] == 3, "second write went to a copy")
	snap.Release()
	expect(t, !snap.Shared(), "released buffer still shared")
}

func TestChunkNoCopyWithoutWrite(t *testing.T) {
	c := components.NewChunk(4)
	b := c.Share()
	expect(t, !c.Set(1, 1, 0), "setting the same value must not report a change")
	expect(t, &c.Pixels()[0] == &b.Pix[0], "a no-op Set copied the buffer")
	b.Release()
	c.Mut()[0] = 1
	expect(t, &c.Pixels()[0] == &b.Pix[0], "write after Release copied the buffer")
}

func TestChunkStateConfirm(t *testing.T) {
	var s components.ChunkState
	expect(t, s.Status == components.Clean && !s.IsDirty(), "zero state must be clean")
	s.MarkDirty()
	v := s.Version
	s.Confirm(v)
	expect(t, s.Status == components.Persisted, "confirm of current version: %v", s.Status)

	s.MarkDirty()
	v = s.Version
	s.MarkDirty() // changed after the snapshot
	s.Confirm(v)
	expect(t, s.IsDirty(), "a chunk changed after its snapshot must stay dirty")
}

func TestBodyIDs(t *testing.T) {
	g := components.BodyIDs{Session: 3, Counter: ^uint32(0) - 1}
	a := g.New()
	b := g.New()
	expect(t, a.Session() == 3 && a.Counter() == ^uint32(0), "a = %x", uint64(a))
	expect(t, b.Session() == 4 && b.Counter() == 1, "counter wrap must advance session: %x", uint64(b))
	var z components.BodyIDs
	expect(t, z.New() == components.BodyID(1<<32|1), "zero generator starts at session 1")
}

func TestChunkOf(t *testing.T) {
	cases := []struct {
		x, y float64
		want components.ChunkPos
	}{
		{0, 0, components.ChunkPos{}},
		{511.9, 512, components.ChunkPos{X: 0, Y: 1}},
		{-0.5, -512, components.ChunkPos{X: -1, Y: -1}},
		{-512.5, 1023, components.ChunkPos{X: -2, Y: 1}},
	}
	for _, c := range cases {
		got := components.ChunkOf(c.x, c.y, 512)
		expect(t, got == c.want, "ChunkOf(%v, %v) = %v, want %v", c.x, c.y, got, c.want)
	}
}

func TestPixelLayers(t *testing.T) {
	p := components.MakePixel(1, 2, 3, components.FlagPixelBody|0x80)
	expect(t, p.Material() == 1 && p.Color() == 2 && p.Damage() == 3 && p.Flags() == 0x81, "layers of %08x", uint32(p))
	expect(t, p&components.PersistMask == components.MakePixel(1, 2, 3, components.FlagPixelBody), "persist mask keeps %08x", uint32(p&components.PersistMask))
}

func TestPixelBodyEmptyAndClone(t *testing.T) {
	b := components.PixelBody{Width: 2, Height: 1, Pixels: []components.Pixel{1, 2}, Shape: []bool{false, true}}
	expect(t, !b.IsEmpty(), "body with a pixel is not empty")
	c := b.Clone()
	c.Shape[1] = false
	expect(t, c.IsEmpty() && !b.IsEmpty(), "clone must not share its shape")
}

// A save takes a chunk's buffer by reference; the game's next write copies.
func ExampleChunk_Share() {
	chunk := components.NewChunk(512)
	var state components.ChunkState

	if chunk.Set(10, 20, components.MakePixel(3, 0, 0, 0)) {
		state.MarkDirty()
	}

	saved := chunk.Share() // what the writer goroutine gets: no copy
	version := state.Version

	chunk.Set(10, 20, components.MakePixel(4, 0, 0, 0)) // copies, then writes
	state.MarkDirty()

	fmt.Println("saved:", saved.Pix[20*512+10].Material(), "live:", chunk.At(10, 20).Material())
	saved.Release()
	state.Confirm(version) // the save committed, but the chunk changed since
	fmt.Println(state.Status)
	// Output:
	// saved: 3 live: 4
	// dirty
}
