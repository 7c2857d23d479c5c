package components_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/testkit"
)

var expect = testkit.Expect

// pattern returns size*size distinct pixels.
func pattern(size int) []components.Pixel {
	pix := make([]components.Pixel, size*size)
	for i := range pix {
		pix[i] = components.Pixel(uint32(i)*2654435761 + 1)
	}
	return pix
}

// read copies what a share holds.
func read(t *testing.T, s components.SharedPixels) []components.Pixel {
	t.Helper()
	dst := make([]components.Pixel, s.Size()*s.Size())
	if err := s.CopyTo(dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestChunkCopyOnWrite(t *testing.T) {
	c := components.NewChunk(4, nil)
	c.MutRect(0, 0, c.Size, c.Size)[0] = 7
	snap := c.Share()
	expect(t, components.Shared(snap) && c.Held(), "a shared chunk must report Shared and Held")

	// Writing after Share must not touch the snapshot.
	expect(t, c.Set(0, 0, 9), "Set must report a change")
	expect(t, c.At(0, 0) == 9, "chunk lost its write: %v", c.At(0, 0))
	got := read(t, snap)
	expect(t, got[0] == 7, "snapshot changed under the reader: %v", got[0])
	expect(t, !components.Shared(snap) && !c.Held(), "a read share is over")
	tiles, _ := snap.CopyCost()
	expect(t, tiles == 1, "one write copies one tile, copied %d", tiles)
	snap.Release()
}

// The first write into a tile of a shared chunk copies that tile (4 KiB),
// once; other tiles are not copied; the save reads every pixel as it was at
// Share.
func TestChunkCopiesOneTilePerWrite(t *testing.T) {
	const size = 512
	orig := pattern(size)
	c := components.NewChunk(size, slices.Clone(orig))
	live := &c.Pixels()[0]
	s := c.Share()

	c.Set(3*components.TileSize+5, 7*components.TileSize+9, 1)
	c.Set(3*components.TileSize+6, 7*components.TileSize+9, 2) // same tile
	tiles, spent := s.CopyCost()
	expect(t, tiles == 1 && spent > 0, "two writes into one tile: %d tiles copied in %v", tiles, spent)
	c.Set(size-1, size-1, 3) // the last tile
	tiles, _ = s.CopyCost()
	expect(t, tiles == 2, "a write into a second tile: %d tiles copied", tiles)
	expect(t, &c.Pixels()[0] == live, "the chunk's pixels moved: the whole chunk was copied")

	got := read(t, s)
	expect(t, slices.Equal(got, orig), "the share does not hold the pixels at Share")
	expect(t, c.At(size-1, size-1) == 3 && c.At(3*components.TileSize+5, 7*components.TileSize+9) == 1, "the chunk lost its writes")

	// Read: the game writes without copying.
	c.Set(0, 0, 4)
	tiles, _ = s.CopyCost()
	expect(t, tiles == 2, "a write after the save read the chunk copied a tile")
}

func TestChunkNoCopyWithoutWrite(t *testing.T) {
	c := components.NewChunk(64, nil)
	s := c.Share()
	expect(t, !c.Set(1, 1, 0), "setting the same value must not report a change")
	tiles, _ := s.CopyCost()
	expect(t, tiles == 0, "a no-op Set copied a tile")
	s.Release()
	expect(t, !c.Held(), "a released chunk is still held")
	c.MutRect(0, 0, c.Size, c.Size)[0] = 1
	tiles, _ = s.CopyCost()
	expect(t, tiles == 0, "a write after Release copied a tile")
	expect(t, errors.Is(s.CopyTo(make([]components.Pixel, 64*64)), components.ErrNotShared), "CopyTo after Release must fail")
}

// MutRect copies exactly the held tiles its rectangle touches, clipped to
// the chunk; Mut copies every tile.
func TestChunkMutRect(t *testing.T) {
	const size = 128 // 4x4 tiles
	orig := pattern(size)
	c := components.NewChunk(size, slices.Clone(orig))
	s := c.Share()
	pix := c.MutRect(30, 30, 34, 34) // the corners of four tiles
	pix[31*size+31], pix[33*size+33] = 0, 0
	tiles, _ := s.CopyCost()
	expect(t, tiles == 4, "a rectangle over four tiles copied %d", tiles)
	c.MutRect(-10, -10, 2, 2) // clipped into tile (0,0), copied already
	c.MutRect(50, 50, 50, 60) // empty
	c.MutRect(size, 0, size+5, 5)
	tiles, _ = s.CopyCost()
	expect(t, tiles == 4, "clipped and empty rectangles copied: %d tiles", tiles)
	c.MutRect(0, 0, c.Size, c.Size)
	tiles, _ = s.CopyCost()
	expect(t, tiles == 16, "Mut copies every held tile: %d", tiles)
	expect(t, slices.Equal(read(t, s), orig), "the share does not hold the pixels at Share")
}

// A chunk whose size is not a multiple of TileSize has narrower tiles at
// its right and bottom edges.
func TestChunkPartialTiles(t *testing.T) {
	const size = components.TileSize + 8
	orig := pattern(size)
	c := components.NewChunk(size, slices.Clone(orig))
	s := c.Share()
	for _, xy := range [][2]int{{size - 1, 0}, {0, size - 1}, {size - 1, size - 1}, {0, 0}} {
		c.Set(xy[0], xy[1], 0)
	}
	tiles, _ := s.CopyCost()
	expect(t, tiles == 4, "four corners are four tiles, copied %d", tiles)
	expect(t, slices.Equal(read(t, s), orig), "edge tiles were read wrong")
}

// A second share while the first is unread keeps the first's pixels.
func TestChunkShareTwice(t *testing.T) {
	const size = 64
	orig := pattern(size)
	c := components.NewChunk(size, slices.Clone(orig))
	first := c.Share()
	c.Set(1, 1, 0)
	second := c.Share()
	c.Set(40, 40, 0)
	c.Set(1, 1, 5)
	want := slices.Clone(orig)
	want[1*size+1] = 0
	expect(t, slices.Equal(read(t, second), want), "the second share does not hold the pixels at its Share")
	expect(t, slices.Equal(read(t, first), orig), "the first share lost its pixels to the second")
}

// Once a save has read a chunk, the next share reuses the tile states and
// keeps the copied tiles as spares: in steady state a save's copies do not
// allocate on the game loop (only the share itself does, once).
func TestChunkCopyReusesTiles(t *testing.T) {
	const size = 128
	c := components.NewChunk(size, pattern(size))
	dst := make([]components.Pixel, size*size)
	v := components.Pixel(0)
	allocs := testing.AllocsPerRun(50, func() {
		s := c.Share()
		for ty := range 4 {
			v++
			c.Set(5, ty*components.TileSize+5, v)
		}
		if err := s.CopyTo(dst); err != nil {
			t.Fatal(err)
		}
	})
	expect(t, allocs <= 1, "a share and four tile copies allocated %v times", allocs)
	expect(t, dst[(3*components.TileSize+5)*size+5] == v-4, "the last save read %v", dst[(3*components.TileSize+5)*size+5])
}

func TestSharedPixelsMisuse(t *testing.T) {
	c := components.NewChunk(64, nil)
	s := c.Share()
	expect(t, s.CopyTo(make([]components.Pixel, 10)) != nil, "CopyTo into a short dst must fail")
	expect(t, components.Shared(s), "a failed CopyTo ended the hold")
	read(t, s)
	expect(t, errors.Is(s.CopyTo(make([]components.Pixel, 64*64)), components.ErrNotShared), "a second CopyTo must fail")
	s.Release()
	s.Release()
}

// The reader copies while the game writes random tiles: the reader gets
// the pixels at Share, exactly, and the game keeps all its writes. Run
// with -race: neither side may touch a tile the other is writing.
func TestSharedPixelsConcurrentWrites(t *testing.T) {
	const size = 256
	rng := rand.New(rand.NewPCG(1, 2))
	c := components.NewChunk(size, pattern(size))
	copied := 0
	for round := range 30 {
		want := slices.Clone(c.Pixels())
		s := c.Share()
		got := make([]components.Pixel, size*size)
		done := make(chan error)
		go func() { done <- s.CopyTo(got) }()
		mirror := slices.Clone(want)
	writing:
		for {
			for range 64 {
				x, y, p := rng.IntN(size), rng.IntN(size), components.Pixel(rng.Uint32())
				c.Set(x, y, p)
				mirror[y*size+x] = p
			}
			select {
			case err := <-done:
				expect(t, err == nil, "round %d: %v", round, err)
				break writing
			default:
			}
		}
		expect(t, slices.Equal(got, want), "round %d: the reader did not get the pixels at Share", round)
		expect(t, slices.Equal(c.Pixels(), mirror), "round %d: the game lost writes", round)
		n, _ := s.CopyCost()
		copied += n
		s.Release()
	}
	expect(t, copied > 0, "no write ever met a held tile: the test did not test copy-on-write")
}
func TestChunkStateMarkDirty(t *testing.T) {
	var s components.ChunkState
	expect(t, s.Status == components.Clean && !s.IsDirty(), "zero state must be clean")
	s.MarkDirty()
	s.MarkDirty()
	expect(t, s.IsDirty() && s.Status == components.Dirty && s.Version == 2, "after two changes: %v %d", s.Status, s.Version)
}

func TestBodyIDs(t *testing.T) {
	g := components.BodyIDs{Session: 3, Counter: ^uint32(0) - 1}
	a := g.New()
	b := g.New()
	expect(t, a == components.BodyID(3<<32|uint64(^uint32(0))), "a = %x", uint64(a))
	expect(t, b == components.BodyID(4<<32|1), "counter wrap must advance session: %x", uint64(b))
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

// A save takes a chunk's pixels by reference; the game's first write into
// a tile the save has not read yet copies that tile (32x32 pixels), not the
// chunk. The save's writer goroutine reads the pixels as they were.
func ExampleChunk_Share() {
	chunk := components.NewChunk(512, nil)
	var state components.ChunkState

	if chunk.Set(10, 20, components.MakePixel(3, 0, 0, 0)) {
		state.MarkDirty()
	}

	saved := chunk.Share() // what the writer goroutine gets: no copy
	version := state.Version

	chunk.Set(10, 20, components.MakePixel(4, 0, 0, 0)) // copies one tile, then writes
	state.MarkDirty()

	pix := make([]components.Pixel, 512*512)
	done := make(chan error)
	go func() { done <- saved.CopyTo(pix) }() // the writer, while the game plays on
	if err := <-done; err != nil {
		fmt.Println(err)
	}
	tiles, _ := saved.CopyCost()
	fmt.Println("saved:", pix[20*512+10].Material(), "live:", chunk.At(10, 20).Material(), "tiles copied:", tiles)
	saved.Release()
	fmt.Println(state.Status, state.Version > version) // changed since the save's snapshot
	// Output:
	// saved: 3 live: 4 tiles copied: 1
	// dirty true
}

// A system that writes many pixels of a region asks for the region once.
func ExampleChunk_MutRect() {
	chunk := components.NewChunk(512, nil)
	saved := chunk.Share()

	// Fill a 40x8 strip: it touches two tiles, so at most two are copied.
	pix := chunk.MutRect(20, 100, 60, 108)
	for y := 100; y < 108; y++ {
		for x := 20; x < 60; x++ {
			pix[y*512+x] = components.MakePixel(2, 0, 0, 0)
		}
	}
	tiles, _ := saved.CopyCost()
	fmt.Println("tiles copied:", tiles)
	saved.Release()
	// Output:
	// tiles copied: 2
}

// Chunk.SetData reports only real changes and keeps its own copy.
func TestChunkSetData(t *testing.T) {
	c := components.NewChunk(8, nil)
	buf := []byte("chest")
	expect(t, c.SetData(buf) && string(c.Data()) == "chest", "SetData")
	buf[0] = 'X'
	expect(t, string(c.Data()) == "chest", "SetData kept the caller's slice")
	expect(t, !c.SetData([]byte("chest")), "the same data reported as a change")
	expect(t, c.SetData(nil) && c.Data() == nil && !c.SetData([]byte{}), "clearing")
}

// A chunk's extra data: SetData reports a change (for ChunkState.MarkDirty).
func ExampleChunk_SetData() {
	c := components.NewChunk(32, nil)
	fmt.Println(c.SetData([]byte("chest at (3, 4)")), c.SetData([]byte("chest at (3, 4)")), string(c.Data()))
	// Output: true false chest at (3, 4)
}
