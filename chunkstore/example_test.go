package chunkstore_test

import (
	"errors"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/vfs"
)

// flatWorld is a game's generator: stone (material 2) below world row 40,
// air above.
type flatWorld struct{}

func (flatWorld) Version() uint32 { return 1 }

func (flatWorld) Generate(x, y int32, seed uint64, dst []uint32) {
	const size = 64
	for i := range dst {
		if int(y)*size+i/size >= 40 {
			dst[i] = 2
		} else {
			dst[i] = 0
		}
	}
}

// The README's example: create a store, commit a changed chunk (stored as
// a delta against the generator), reopen it and read the chunk back.
func Example() {
	dir, err := os.MkdirTemp("", "chunkstore")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "chunks.pxsw")
	opts := chunkstore.Options{
		ChunkSize: 64, TileSize: 16, PixelSize: 4, // the game's constants
		Seed:      42,
		Generator: flatWorld{},
		Layers: []chunkstore.Layer{ // what the store keeps of a pixel
			{Name: "material, colour, damage", Offset: 0, Bits: 24, Persist: true},
			{Name: "pixel-body flag", Offset: 24, Bits: 1, Persist: true},
			{Name: "simulation flags", Offset: 25, Bits: 7}, // not kept: read as 0
		},
	}
	s, err := chunkstore.Create(path, &opts)
	if err != nil {
		log.Fatal(err)
	}
	pos := chunkstore.Pos{X: 3, Y: 0}
	pix := make([]uint32, 64*64)
	stored, _ := s.Get(pos, pix) // not stored yet: generated
	fmt.Println("stored:", stored, "pixel 4000:", pix[4000])

	pix[4000] = 0    // the player digs a hole
	pix[10] = 0x0104 // and pours water (material 4, colour 1)
	b := s.NewBatch()
	b.PutChunk(pos, pix)
	st, err := s.Commit(b) // durable when it returns
	if err != nil {
		log.Fatal(err)
	}
	// The first commit starts data file 1: the records, the directory
	// entry of the new file and the header slot are synced.
	fmt.Println("generation", st.Generation, "delta chunks", st.Delta, "fsyncs", st.Syncs, "data files started", st.DataFiles)
	s.Close()

	s, err = chunkstore.Open(path, &opts)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	stored, _ = s.Get(pos, pix)
	fmt.Println("stored:", stored, "pixel 4000:", pix[4000], "pixel 10:", pix[10])
	fmt.Println("check:", s.Check().OK())
	// Output:
	// stored: false pixel 4000: 2
	// generation 1 delta chunks 1 fsyncs 3 data files started 1
	// stored: true pixel 4000: 0 pixel 10: 260
	// check: true
}

func newExampleStore() (*chunkstore.Store, chunkstore.Options) {
	cfg := chunkstore.Options{ChunkSize: 64, TileSize: 16, PixelSize: 4, Seed: 42, Generator: flatWorld{}, FS: vfs.NewMem()}
	s, err := chunkstore.Create("/chunks.pxsw", &cfg)
	if err != nil {
		log.Fatal(err)
	}
	return s, cfg
}

func ExampleStore_Bodies() {
	s, _ := newExampleStore()
	defer s.Close()
	crate := chunkstore.Body{
		ID: 1<<32 | 7, X: 200.5, Y: 30, Width: 3, Height: 2,
		Pixels:    []uint32{5, 5, 5, 5, 5, 5},
		Shape:     []bool{true, true, true, false, true, false},
		Extension: []byte(`{"hp":3}`),
	}
	debris := chunkstore.Body{ID: 1<<32 | 8, Width: 2, Height: 1, Pixels: []uint32{1, 1}, Shape: []bool{false, false}}
	b := s.NewBatch()
	b.PutEntities(chunkstore.Pos{X: 3, Y: 0}, chunkstore.EntityBlock{Bodies: []chunkstore.Body{crate, debris}}) // debris is empty: dropped
	if _, err := s.Commit(b); err != nil {
		log.Fatal(err)
	}
	bodies, _ := s.Bodies(chunkstore.Pos{X: 3, Y: 0})
	fmt.Println(len(bodies), bodies[0].ID&0xFFFFFFFF, bodies[0].Shape, string(bodies[0].Extension))
	// Output: 1 7 [true true true false true false] {"hp":3}
}

// The save directory's manifest names generation 1, but the file already
// holds generation 2: open it at 1.
func ExampleOpen_generation() {
	s, cfg := newExampleStore()
	for v := range uint32(2) {
		pix := make([]uint32, 64*64)
		pix[0] = 100 + v
		b := s.NewBatch()
		b.PutChunk(chunkstore.Pos{}, pix)
		s.Commit(b)
	}
	s.Close()
	cfg.Generation = 1
	s, err := chunkstore.Open("/chunks.pxsw", &cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	pix := make([]uint32, 64*64)
	s.Get(chunkstore.Pos{}, pix)
	fmt.Println(s.Generation(), pix[0])
	// Output: 1 100
}

func ExampleStore_Compact() {
	s, _ := newExampleStore()
	defer s.Close()
	pix := make([]uint32, 64*64)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		for i := range pix {
			pix[i] = rng.Uint32() & 0xFF // random bytes: incompressible
		}
		b := s.NewBatch()
		b.PutChunk(chunkstore.Pos{}, pix)
		s.Commit(b)
	}
	fmt.Println("needs compaction:", s.NeedsCompaction())
	if err := s.Compact(); err != nil {
		log.Fatal(err)
	}
	st := storetool.Tool.Stats(s)
	fmt.Println("generation", st.Generation, "dead bytes", st.DeadBytes, "needs compaction:", s.NeedsCompaction())
	// Output:
	// needs compaction: true
	// generation 21 dead bytes 0 needs compaction: false
}

// Between saves, a game compacts data file by data file: each step costs
// one data file, however large the world.
func ExampleStore_CompactNext() {
	cfg := chunkstore.Options{ChunkSize: 64, TileSize: 16, PixelSize: 4, Seed: 42, Generator: flatWorld{}, FS: vfs.NewMem(),
		DataFileSize: 64 << 10} // small data files, for the example
	s, err := chunkstore.Create("/chunks.pxsw", &cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	pix := make([]uint32, 64*64)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 40 {
		for j := range pix {
			pix[j] = rng.Uint32()
		}
		b := s.NewBatch()
		b.PutChunk(chunkstore.Pos{X: int32(i % 2)}, pix) // two chunks, saved over and over
		s.Commit(b)
	}
	fmt.Println("data files:", storetool.Tool.Stats(s).DataFiles, "needs compaction:", s.NeedsCompaction())
	for {
		st, did, err := s.CompactNext()
		if err != nil {
			log.Fatal(err)
		}
		if !did {
			break
		}
		fmt.Println("emptied data file", st.Files, "moving", st.Moved, "bytes") // 0: only page-table records were left in it
	}
	fmt.Println("data files:", storetool.Tool.Stats(s).DataFiles, "needs compaction:", s.NeedsCompaction())
	// Output:
	// data files: 6 needs compaction: true
	// emptied data file [3] moving 0 bytes
	// emptied data file [13] moving 16412 bytes
	// data files: 1 needs compaction: false
}

func ExampleStore_Check() {
	s, _ := newExampleStore()
	defer s.Close()
	r := s.Check()
	fmt.Println(r.OK(), r)
	// Output: true 0 problems found (1 slot, 0 table records, 0 entries, 0 records checked)
}

func ExampleStore_Entries() {
	s, _ := newExampleStore()
	defer s.Close()
	b := s.NewBatch()
	b.PutChunk(chunkstore.Pos{X: 1, Y: 1}, make([]uint32, 64*64)) // all air below ground: Empty
	full := make([]uint32, 64*64)
	full[0] = 9
	b.PutChunk(chunkstore.Pos{X: 0, Y: -1}, full) // sky: air generated, differs in one pixel
	s.Commit(b)
	s.Entries(func(e chunkstore.Entry) bool {
		fmt.Println(e.Pos, e.Type)
		return true
	})
	// Output:
	// (0, -1) delta
	// (1, 1) empty
}

// What a chunk keeps besides its pixels: its pixel bodies and its entity sections (opaque to
// the store: package archetype writes and reads them).
func ExampleStore_Entities() {
	s, _ := newExampleStore()
	defer s.Close()
	crate := chunkstore.Body{ID: 1<<32 | 7, Width: 1, Height: 1, Pixels: []uint32{5}, Shape: []bool{true}}
	b := s.NewBatch()
	b.PutEntities(chunkstore.Pos{X: 3, Y: 0}, chunkstore.EntityBlock{
		Bodies:   []chunkstore.Body{crate},
		Sections: [][]byte{[]byte("an entity section")},
	})
	if _, err := s.Commit(b); err != nil {
		log.Fatal(err)
	}
	blk, err := s.Entities(chunkstore.Pos{X: 3, Y: 0})
	fmt.Println(err, len(blk.Bodies), string(blk.Sections[0]))
	// Output: <nil> 1 an entity section
}

// A game's extra data for a chunk (here a sign's text) is saved in the
// chunk's record, even where the pixels are as generated.
func ExampleBatch_PutChunkExtra() {
	s, _ := newExampleStore()
	defer s.Close()
	pos := chunkstore.Pos{X: 2, Y: 1}
	pix := make([]uint32, 64*64)
	s.Get(pos, pix) // as generated
	b := s.NewBatch()
	b.PutChunkExtra(pos, pix, []byte(`sign: "beware of sand"`))
	st, _ := s.Commit(b)
	stored, extra, _ := s.GetExtra(pos, pix)
	fmt.Println("delta chunks:", st.Delta, "stored:", stored, "extra:", string(extra))
	// Output: delta chunks: 1 stored: true extra: sign: "beware of sand"
}

// The game registers its pixel layers; a layer it adds later reads as its
// default in the chunks saved before.
func ExampleLayer() {
	layers := []chunkstore.Layer{
		{Name: "material", Offset: 0, Bits: 8, Persist: true},
		{Name: "color", Offset: 8, Bits: 8, Persist: true},
		{Name: "heat", Offset: 16, Bits: 8, Persist: false}, // rebuilt by the simulation: loads as 0
	}
	fsys := vfs.NewMem()
	cfg := chunkstore.Options{ChunkSize: 64, TileSize: 16, Seed: 42, Generator: flatWorld{}, FS: fsys, Layers: layers}
	s, _ := chunkstore.Create("/chunks.pxsw", &cfg)
	pix := make([]uint32, 64*64)
	pix[0] = 0x00330102 // heat 0x33, colour 1, material 2
	b := s.NewBatch()
	b.PutChunk(chunkstore.Pos{}, pix)
	s.Commit(b)
	s.Close()

	// A later version of the game keeps a temperature in bits 24..31.
	cfg.Layers = append(layers, chunkstore.Layer{Name: "temperature", Offset: 24, Bits: 8, Persist: true, Default: 20})
	s, _ = chunkstore.Open("/chunks.pxsw", &cfg)
	defer s.Close()
	s.Get(chunkstore.Pos{}, pix)
	fmt.Printf("pixel 0: %08x, kept: %08x\n", pix[0], chunkstore.LayerMask(cfg.Layers))
	// Output: pixel 0: 14000102, kept: ff00ffff
}

// How a chunk is stored: the smallest record (here a palette of two
// colours) or, for comparison, format 2's choice (a delta under 75%
// changed, else every pixel).
func ExampleEncoding() {
	for _, enc := range []chunkstore.Encoding{chunkstore.EncodeSmallest, chunkstore.EncodeDeltaFull} {
		cfg := chunkstore.Options{ChunkSize: 64, TileSize: 16, Seed: 42, Generator: flatWorld{}, FS: vfs.NewMem(), Encoding: enc}
		s, _ := chunkstore.Create("/chunks.pxsw", &cfg)
		pix := make([]uint32, 64*64)
		for i := range pix {
			pix[i] = 0x0307 + uint32(i*7919%5/4)<<8 // painted brick, two shades
		}
		b := s.NewBatch()
		b.PutChunk(chunkstore.Pos{X: 1}, pix)
		st, _ := s.Commit(b)
		fmt.Printf("palette %d, delta %d, full %d: %d bytes\n", st.Palette, st.Delta, st.Full, st.RecordBytes)
		fmt.Println(storetool.Tool.TypeCounts(s.Check().Types))
		s.Close()
	}
	// Output:
	// palette 1, delta 0, full 0: 84 bytes
	// 1 palette
	// palette 0, delta 0, full 1: 128 bytes
	// 1 full
}

// voxelWorld is the generator of a 4-axis world: stone below w = 0, air
// above; GenerateKey makes it a KeyGenerator.
type voxelWorld struct{}

func (voxelWorld) Version() uint32 { return 1 }

func (voxelWorld) Generate(x, y int32, seed uint64, dst []uint32) { clear(dst) }

func (voxelWorld) GenerateKey(k chunkstore.Key, seed uint64, dst []uint32) {
	for i := range dst {
		dst[i] = 0
		if k.Axis(3) < 0 {
			dst[i] = 2
		}
	}
}

// A store of 4-axis chunk keys: the axes are fixed when it is created and
// read back from its header; a range query lists the chunks stored in a
// box, and a key of other axes is refused.
func ExampleKey() {
	mem := vfs.NewMem()
	opts := chunkstore.Options{ChunkSize: 16, PixelSize: 4, Seed: 1, Axes: 4, Generator: voxelWorld{}, FS: mem}
	s, err := chunkstore.Create("/chunks.pxsw", &opts)
	if err != nil {
		log.Fatal(err)
	}
	b := s.NewBatch()
	for w := int32(0); w < 3; w++ {
		pix := make([]uint32, 16*16)
		pix[0] = 7 // a torch in each
		b.PutChunkKey(chunkstore.Key4(1, 2, 3, w), pix)
	}
	if _, err := s.Commit(b); err != nil {
		log.Fatal(err)
	}
	s.Close()

	s, err = chunkstore.Open("/chunks.pxsw", &chunkstore.Options{Generator: voxelWorld{}, FS: mem})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	fmt.Println("axes:", s.Options().Axes)
	es, err := s.EntriesIn(chunkstore.Box{Min: chunkstore.Key4(0, 0, 0, 1), Max: chunkstore.Key4(9, 9, 9, 9)})
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range es {
		fmt.Println(e.Key, e.Type)
	}
	_, err = s.Get(chunkstore.Pos{X: 1, Y: 2}, make([]uint32, 16*16))
	fmt.Println(errors.Is(err, chunkstore.ErrAxes))
	// Output:
	// axes: 4
	// (1, 2, 3, 1) delta
	// (1, 2, 3, 2) delta
	// true
}
