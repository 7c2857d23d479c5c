package savetest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/testkit/terrain"
)

// The saves of another pixel size: what an older or other build of a game,
// whose pixel is 1, 2 or 8 bytes, wrote. Each holds two generations (the
// first a backup) of the same world: a Delta chunk (0, 1), a Full chunk
// (1, 0) of values that differ pixel by pixel, a Palette chunk (-1, 1) of
// three materials and two pixel bodies in chunk (1, 1). Every value fits in
// 16 bits. BuildPixels writes the same save with 4-byte pixels: what each
// of them holds once migrated.
const (
	// PixelMarker is the value at pixel MarkerPixel of chunk (1, 0); the
	// misfit fixture stores it with high bits set (see MarkerWide).
	PixelMarker = 0x7EEE
	MarkerPixel = 7*ChunkSize + 5
	// MarkerWide is how the misfit fixture stores PixelMarker: 8 bytes
	// whose high 32 bits are not zero.
	MarkerWide = 0xAB<<40 | PixelMarker
)

// Where the pixel fixtures keep each record kind.
var (
	PixelDeltaAt   = chunkstore.Pos{X: 0, Y: 1}
	PixelFullAt    = chunkstore.Pos{X: 1, Y: 0}
	PixelPaletteAt = chunkstore.Pos{X: -1, Y: 1}
	PixelBodiesAt  = chunkstore.Pos{X: 1, Y: 1}
)

// BuildPixel8 writes into dir the committed save of 8-byte pixels whose
// values all fit in 32 bits (testdata/pixel-8).
func BuildPixel8(dir string) error { return writeFixture("testdata/pixel-8", dir) }

// BuildPixel8Misfit writes into dir the committed save of 8-byte pixels in
// which pixel MarkerPixel of chunk PixelFullAt holds MarkerWide, which does
// not fit in 32 bits (testdata/pixel-8-misfit).
func BuildPixel8Misfit(dir string) error { return writeFixture("testdata/pixel-8-misfit", dir) }

// BuildPixel2 writes into dir the committed save of 2-byte pixels
// (testdata/pixel-2).
func BuildPixel2(dir string) error { return writeFixture("testdata/pixel-2", dir) }

// BuildPixels makes in dir the save the pixel fixtures hold, with this
// module's 4-byte pixels.
func BuildPixels(dir string) error { return buildPixels(dir, 4) }

// PixelFixtures are the committed pixel fixtures: their directory under
// testdata, the pixel size and how each value is written.
var PixelFixtures = []struct {
	Name  string
	Size  int
	Widen func(uint32) uint64
}{
	{"pixel-8", 8, nil},
	{"pixel-8-misfit", 8, func(v uint32) uint64 {
		if v == PixelMarker {
			return MarkerWide
		}
		return uint64(v)
	}},
	{"pixel-2", 2, nil},
}

// GeneratePixelFixture writes the pixel fixture name into dir (which must
// not hold a save) with the chunk store's pixel writer set to size bytes
// and widen: how the committed fixtures are made.
func GeneratePixelFixture(dir string, size int, widen func(uint32) uint64) error {
	defer storetool.Tool.SetPixelWriter(size, widen)()
	if err := buildPixels(dir, size); err != nil {
		return err
	}
	// The writer's mirrors and the lock are not part of the fixture.
	extra, err := filepath.Glob(filepath.Join(dir, savedir.BackupDir, "mirror-*"))
	if err != nil {
		return err
	}
	extra = append(extra, filepath.Join(dir, savedir.LockName))
	for _, m := range extra {
		err = errors.Join(err, os.Remove(m))
	}
	return err
}

// buildPixels builds the pixel save in dir and checks that its store has
// size-byte pixels (the caller sets the writer).
func buildPixels(dir string, size int) error {
	g, err := openEncoding(dir, false, -1, chunkstore.EncodeSmallest)
	if err != nil {
		return err
	}
	defer g.Close() // after the Close below, a no-op
	if err := g.Settle(); err != nil {
		return err
	}
	for i := range 6 {
		if err := g.Paint(PixelDeltaAt.X, PixelDeltaAt.Y, i%ChunkSize, 5+i/ChunkSize, components.MakePixel(terrain.Water, uint8(i), 0, 0)); err != nil {
			return err
		}
	}
	if err := g.Save(); err != nil {
		return err
	}
	if err := g.Fill(PixelFullAt.X, PixelFullAt.Y, fullPixel); err != nil {
		return err
	}
	if err := g.Fill(PixelPaletteAt.X, PixelPaletteAt.Y, func(px, py int) components.Pixel {
		return components.MakePixel(uint8(1+(px*7+py*13+px*py)%3), 0, 0, 0)
	}); err != nil {
		return err
	}
	ids := ecs.GetResource[components.BodyIDs](g.W)
	bodies := ecs.NewMap2[components.PixelBody, components.Persistable](g.W)
	for i, w := range []uint32{5, 3} {
		b := components.PixelBody{ID: ids.New(), X: 40 + float32(i), Y: 40, Rotation: 0.5, VX: 1.5, VY: -2, Width: w, Height: 4,
			OriginX: int32(w / 2), OriginY: 2}
		for j := range w * 4 {
			b.Pixels = append(b.Pixels, components.MakePixel(terrain.Sand+uint8(i), uint8(j*37), 0, 0))
			b.Shape = append(b.Shape, j%7 != 3)
		}
		bodies.NewEntity(&b, &components.Persistable{})
	}
	if err := g.Save(); err != nil {
		return err
	}
	if err := g.Close(); err != nil {
		return err
	}
	return checkPixelKinds(dir, size)
}

// fullPixel is the Full chunk's value at (px, py): no two alike, 16 bits,
// PixelMarker at MarkerPixel.
func fullPixel(px, py int) components.Pixel {
	if py*ChunkSize+px == MarkerPixel {
		return PixelMarker
	}
	v := uint32(py*ChunkSize+px)*40503 + 1
	v &= 0xFFFF
	if v == PixelMarker {
		v ^= 0x100
	}
	return components.Pixel(v)
}

// checkPixelKinds checks that the committed store of the save in dir has
// size-byte pixels and holds every record kind the fixtures are for.
func checkPixelKinds(dir string, size int) error {
	s, err := OpenPixelStore(dir)
	if err != nil {
		return err
	}
	defer s.Close()
	st := storetool.Tool.Stats(s)
	if p := storetool.Tool.PixelSize(s); p != size || st.Full == 0 || st.Delta == 0 || st.Palette == 0 || st.BodyBlocks == 0 {
		return fmt.Errorf("savetest: the %d-byte pixel save holds %d-byte pixels in %+v: want Full, Delta and Palette chunks and bodies", size, p, st)
	}
	return nil
}

// OpenPixelStore opens the committed chunk store of the save in dir, of
// any pixel size, read-only as a migration does.
func OpenPixelStore(dir string) (*chunkstore.Store, error) {
	d, m, err := committed(dir)
	if err != nil {
		return nil, err
	}
	p, err := d.File(m.Chunks.Name)
	if err != nil {
		return nil, err
	}
	o := storetool.Tool.ForPixelMigration(chunkstore.Options{Root: m.Chunks.Root})
	return chunkstore.Open(p, &o)
}

// Files returns every file under dir by its slash-separated path relative
// to dir, with its bytes: what a test compares to show that an operation
// left a directory as it was.
func Files(dir string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = data
		return err
	})
	return out, err
}

// SameFiles describes the first difference between two results of Files,
// or returns "".
func SameFiles(got, want map[string][]byte) string {
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			return name + " is gone"
		case !bytes.Equal(g, w):
			return name + " changed"
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			return name + " is new"
		}
	}
	return ""
}

// LoadedPixels returns the pixels of the chunk at pos as the game holds
// it, and false when it is not loaded.
func (g *Game) LoadedPixels(pos chunkstore.Pos) ([]uint32, bool) {
	e, ok := ecs.GetResource[components.ChunkIndex](g.W).Get(components.ChunkPos{X: pos.X, Y: pos.Y})
	if !ok {
		return nil, false
	}
	c := ecs.NewMap1[components.Chunk](g.W).Get(e)
	out := make([]uint32, 0, ChunkSize*ChunkSize)
	for _, p := range c.Pixels() {
		out = append(out, uint32(p))
	}
	return out, true
}
