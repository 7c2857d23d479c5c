// Package ndsave builds save directories whose chunk store has keys of 3
// or 4 axes, for the tests of every tool that reads a save. The plugin is
// 2-D (components.ChunkPos), so the kit works below it: a chunk store
// created with chunkstore.Options.Axes, committed generation by generation
// through internal/savedir (Dir.Commit) with an empty world. Keys differ
// only in z and w as well as in x and y, and cross zero; the chunks are of
// every storage type, with pixel bodies.
package ndsave

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/testkit"
	"github.com/arksave/arksave/vfs"
)

// The save's constants.
const (
	ChunkSize  = 16
	TileSize   = 8
	Seed       = 7
	MaxBackups = 2
	// StoreName is the chunk store's file name in the save directory.
	StoreName = "chunks.pxsw"
)

// Gen is the save's generator, a chunkstore.KeyGenerator: a pattern that
// depends on every axis, so that chunks at keys that differ only in z or w
// are generated apart.
type Gen struct{}

// Version is the generator's version: 3.
func (Gen) Version() uint32 { return 3 }

// Generate fills dst with the chunk at (x, y, 0, 0).
func (g Gen) Generate(x, y int32, seed uint64, dst []uint32) {
	g.GenerateKey(chunkstore.Key2(x, y), seed, dst)
}

// GenerateKey fills dst with the chunk at k: stone of a colour by z and w
// below y = 0, air (0) above.
func (Gen) GenerateKey(k chunkstore.Key, seed uint64, dst []uint32) {
	for i := range dst {
		if k.Axis(1) < 0 {
			dst[i] = 0
			continue
		}
		shade := uint32(int64(k.Axis(2))*3+int64(k.Axis(3))*5+int64(i%7)+int64(seed)) & 0xF
		dst[i] = 3 | shade<<8
	}
}

// Generated returns the chunk the generator makes at k.
func Generated(k chunkstore.Key) []uint32 {
	dst := make([]uint32, ChunkSize*ChunkSize)
	Gen{}.GenerateKey(k, Seed, dst)
	return dst
}

// Key returns the key of n axes at (x, y, z, w); the axes beyond n are
// ignored.
func Key(n int, x, y, z, w int32) chunkstore.Key {
	switch n {
	case 3:
		return chunkstore.Key3(x, y, z)
	case 4:
		return chunkstore.Key4(x, y, z, w)
	}
	return chunkstore.Key2(x, y)
}

// ForAxes runs fn as a subtest for a save of 3 axes and one of 4.
func ForAxes(t *testing.T, fn func(t *testing.T, n int)) {
	for _, n := range []int{3, 4} {
		t.Run(fmt.Sprint(n, " axes"), func(t *testing.T) { fn(t, n) })
	}
}

// Options returns the chunk store options of a save of n axes on fsys.
func Options(fsys vfs.FS, n int) chunkstore.Options {
	return chunkstore.Options{FS: fsys, Axes: n, ChunkSize: ChunkSize, TileSize: TileSize, PixelSize: 4, Seed: Seed, Generator: Gen{}}
}

// Save is a save directory the kit built and what its committed
// generation holds.
type Save struct {
	Dir  string
	Axes int
	// Generation is the committed generation; Generation-1 is kept as a
	// backup.
	Generation uint64
	// Chunks holds every stored chunk's pixels (Empty chunks: all zero)
	// and Types its storage type, by key.
	Chunks map[chunkstore.Key][]uint32
	Types  map[chunkstore.Key]chunkstore.StorageType
	// Bodies holds the stored body sets by key.
	Bodies map[chunkstore.Key][]chunkstore.Body
	// Previous holds the chunks of the backup generation as Chunks does.
	Previous map[chunkstore.Key][]uint32
}

// Build writes a save of n axes (3 or 4) into dir, on the real file
// system: two generations, the first kept as a backup.
func Build(t testing.TB, dir string, n int) *Save {
	t.Helper()
	return BuildFS(t, vfs.OS, dir, n)
}

// BuildFS is Build on fsys.
func BuildFS(t testing.TB, fsys vfs.FS, dir string, n int) *Save {
	t.Helper()
	var world bytes.Buffer
	testkit.Must(t, archetype.Encode(&world, ecs.NewWorld()))
	d, err := savedir.OpenDir(fsys, dir)
	testkit.Must(t, err)
	defer d.Close()
	p, err := d.File(StoreName)
	testkit.Must(t, err)
	o := Options(fsys, n)
	s, err := chunkstore.Create(p, &o)
	testkit.Must(t, err)
	defer s.Close()

	commit := func(fill func(b *chunkstore.Batch)) {
		b := s.NewBatch()
		fill(b)
		_, err := s.Commit(b)
		testkit.Must(t, err)
		_, _, err = d.Commit(savedir.Commit{World: world.Bytes(), MaxBackups: MaxBackups,
			Chunks: savedir.StoreRef{Name: StoreName, Generation: s.Generation(), Root: s.Root(), Data: storetool.Tool.DataFileNames(s)}})
		testkit.Must(t, err)
	}
	commit(func(b *chunkstore.Batch) {
		for z := int32(-1); z <= 1; z++ {
			b.PutChunkKey(Key(n, 0, 0, z, -z), Painted(Key(n, 0, 0, z, -z), 5))
			b.PutChunkKey(Key(n, 1, 0, z, z), Full(Key(n, 1, 0, z, z)))
		}
		b.PutChunkKey(Key(n, -1, 1, 2, 1), Full(Key(n, -1, 1, 2, 1)))
	})
	prev := Read(t, fsys, dir, n).Chunks
	commit(func(b *chunkstore.Batch) {
		b.PutChunkKey(Key(n, 0, 0, 1, -1), Painted(Key(n, 0, 0, 1, -1), 9)) // changed
		b.DeleteChunkKey(Key(n, -1, 1, 2, 1))                               // gone
		b.PutChunkKey(Key(n, 2, -1, -2, 3), Palette(4))                     // a palette chunk
		b.PutChunkKey(Key(n, 2, 1, -3, -3), make([]uint32, ChunkSize*ChunkSize))
		b.PutEntitiesKey(Key(n, 0, 0, 1, -1), chunkstore.EntityBlock{Bodies: []chunkstore.Body{Body(11), Body(12)}})
		b.PutEntitiesKey(Key(n, 1, 0, -1, -1), chunkstore.EntityBlock{Bodies: []chunkstore.Body{Body(13)}})
	})
	sv := Read(t, fsys, dir, n)
	sv.Previous = prev
	return sv
}

// Painted returns the chunk generated at k with a few pixels painted,
// stored as Delta.
func Painted(k chunkstore.Key, v uint32) []uint32 {
	pix := Generated(k)
	for i := 0; i < len(pix); i += 37 {
		pix[i] = 0x0200 | v<<16 | 4
	}
	return pix
}

// Full returns a chunk unlike the generated one in every pixel, stored as
// Full or Palette by the store's choice.
func Full(k chunkstore.Key) []uint32 {
	pix := make([]uint32, ChunkSize*ChunkSize)
	for i := range pix {
		pix[i] = uint32(uint64(i)*2654435761)&0x00FF_FF00 | 5 + uint32(k.Axis(2)&3)
	}
	return pix
}

// Palette returns a chunk of c colours scattered at random (no pattern
// that would let a Full record compress as small as the palette).
func Palette(c int) []uint32 {
	r := rand.New(rand.NewPCG(uint64(c), 11))
	pix := make([]uint32, ChunkSize*ChunkSize)
	for i := range pix {
		pix[i] = 6 + uint32(r.IntN(c))
	}
	return pix
}

// Body returns a small pixel body of the given id.
func Body(id uint64) chunkstore.Body {
	return chunkstore.Body{ID: id, Width: 2, Height: 2, X: float32(id), Y: 1, Pixels: []uint32{6, 7, 8, 9}, Shape: []bool{true, true, true, true}}
}

// Read reads the committed generation of the save of n axes in dir:
// every stored chunk and body set.
func Read(t testing.TB, fsys vfs.FS, dir string, n int) *Save {
	t.Helper()
	d, err := savedir.OpenDirReadOnly(fsys, dir)
	testkit.Must(t, err)
	defer d.Close()
	m := d.Manifest()
	testkit.Expect(t, m != nil, "%s: no committed generation", dir)
	return ReadGeneration(t, d, m, n)
}

// ReadGeneration reads the chunks and bodies of the generation m of d.
func ReadGeneration(t testing.TB, d *savedir.Dir, m *savedir.Manifest, n int) *Save {
	t.Helper()
	p, err := d.File(m.Chunks.Name)
	testkit.Must(t, err)
	o := Options(d.FS(), 0)
	o.ReadOnly, o.Root = true, m.Chunks.Root
	o.ChunkSize, o.TileSize, o.PixelSize, o.Seed = 0, 0, 0, 0
	s, err := chunkstore.Open(p, &o)
	testkit.Must(t, err)
	defer s.Close()
	testkit.Expect(t, s.Options().Axes == n, "%s: %d axes, want %d", p, s.Options().Axes, n)
	sv := &Save{Dir: d.Path(), Axes: n, Generation: m.Generation, Chunks: map[chunkstore.Key][]uint32{},
		Types: map[chunkstore.Key]chunkstore.StorageType{}, Bodies: map[chunkstore.Key][]chunkstore.Body{}}
	var keys []chunkstore.Key
	s.Entries(func(e chunkstore.Entry) bool {
		keys = append(keys, e.Key)
		if e.Type != chunkstore.BodyBlock {
			sv.Types[e.Key] = e.Type
		}
		return true
	})
	for _, k := range slices.Compact(keys) {
		if _, ok := sv.Types[k]; ok {
			dst := make([]uint32, ChunkSize*ChunkSize)
			_, err := s.GetKey(k, dst)
			testkit.Must(t, err)
			sv.Chunks[k] = dst
		}
		blk, err := s.EntitiesKey(k)
		testkit.Must(t, err)
		if len(blk.Bodies) > 0 {
			sv.Bodies[k] = blk.Bodies
		}
	}
	return sv
}

// Keys returns the stored chunks' keys in page-table order (the last axis
// first).
func (s *Save) Keys() []chunkstore.Key {
	ks := make([]chunkstore.Key, 0, len(s.Chunks))
	for k := range s.Chunks {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b chunkstore.Key) int {
		for i := chunkstore.MaxAxes - 1; i >= 0; i-- {
			if a.Axis(i) != b.Axis(i) {
				return int(a.Axis(i)) - int(b.Axis(i))
			}
		}
		return 0
	})
	return ks
}

// String says what the save holds, for failure messages.
func (s *Save) String() string {
	return fmt.Sprintf("save of %d axes at generation %d: %d chunks, %d body sets", s.Axes, s.Generation, len(s.Chunks), len(s.Bodies))
}

// Damage flips a bit in the middle of the record of the chunk at k (its
// body block when bodies is set) in the committed generation of the save
// at dir, on the real file system, and returns the file it damaged,
// relative to dir.
func Damage(t testing.TB, dir string, k chunkstore.Key, bodies bool) string {
	t.Helper()
	return DamageFS(t, vfs.OS, dir, k, bodies)
}

// DamageFS is Damage on fsys.
func DamageFS(t testing.TB, fsys vfs.FS, dir string, k chunkstore.Key, bodies bool) string {
	t.Helper()
	d, err := savedir.OpenDirReadOnly(fsys, dir)
	testkit.Must(t, err)
	defer d.Close()
	m := d.Manifest()
	p, err := d.File(m.Chunks.Name)
	testkit.Must(t, err)
	s, err := chunkstore.Open(p, &chunkstore.Options{FS: fsys, ReadOnly: true, Root: m.Chunks.Root})
	testkit.Must(t, err)
	defer s.Close()
	var h storetool.Handle
	storetool.Tool.Entries(s, func(e storetool.Entry) bool {
		if e.Key == k && (e.Type == chunkstore.BodyBlock) == bodies {
			h = e.Handle
		}
		return h.IsZero()
	})
	testkit.Expect(t, !h.IsZero(), "%s: no record at %v", dir, k)
	name := m.Chunks.Name
	if h.File() != 0 {
		name = storetool.Tool.DataFileName(name, h.File())
	}
	path, err := d.File(name)
	testkit.Must(t, err)
	f, err := fsys.OpenRW(path)
	testkit.Must(t, err)
	defer f.Close()
	b := make([]byte, 1)
	off := h.FileOffset() + int64(h.Length)/2
	_, err = f.ReadAt(b, off)
	testkit.Must(t, err)
	b[0] ^= 0x10
	_, err = f.WriteAt(b, off)
	testkit.Must(t, err)
	testkit.Must(t, f.Sync())
	return name
}
