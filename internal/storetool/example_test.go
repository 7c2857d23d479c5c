package storetool_test

import (
	"fmt"
	"log"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/vfs"
)

// air is a generator of empty chunks.
type air struct{}

func (air) Version() uint32 { return 1 }

func (air) Generate(x, y int32, seed uint64, dst []uint32) { clear(dst) }

// newExampleStore creates a store of 64x64 chunks in memory.
func newExampleStore() (*chunkstore.Store, chunkstore.Options) {
	cfg := chunkstore.Options{ChunkSize: 64, TileSize: 8, Generator: air{}, FS: vfs.NewMem()}
	s, err := chunkstore.Create("/chunks.pxsw", &cfg)
	if err != nil {
		log.Fatal(err)
	}
	return s, cfg
}

// A store keeps its records in data files next to the store file.
func ExampleTools_DataFileName() {
	fmt.Println(storetool.Tool.DataFileName("chunks.pxsw", 1))
	fmt.Println(storetool.Tool.DataFileName("/save/chunks-12.pxsw", 3))
	store, n, ok := storetool.Tool.ParseDataFileName("chunks-12-data-3.pxsd")
	fmt.Println(store, n, ok)
	// Output:
	// chunks-data-1.pxsd
	// /save/chunks-12-data-3.pxsd
	// chunks-12.pxsw 3 true
}

func ExampleTools_Files() {
	s, _ := newExampleStore()
	defer s.Close()
	pix := make([]uint32, 64*64)
	pix[9] = 0x0104
	b := s.NewBatch()
	b.PutChunk(chunkstore.Pos{}, pix)
	s.Commit(b)
	for _, f := range storetool.Tool.Files(s) {
		fmt.Println(f.Number, f.Name, f.Newest)
	}
	fmt.Println(storetool.Tool.DataFileNames(s))
	// Output:
	// 0 chunks.pxsw false
	// 1 chunks-data-1.pxsd true
	// [chunks-data-1.pxsd]
}

// A repair tool's view: walk the records without the page table, then
// write a clean copy.
func ExampleTools_Scan() {
	s, cfg := newExampleStore()
	pix := make([]uint32, 64*64)
	s.Get(chunkstore.Pos{}, pix)
	pix[1] = 1
	b := s.NewBatch()
	b.PutChunk(chunkstore.Pos{}, pix)
	s.Commit(b)
	s.Close()
	storetool.Tool.Scan(cfg.FS, "/chunks.pxsw", func(r storetool.ScanRecord) bool {
		fmt.Println(r.Kind, r.Pos, r.Err == nil)
		return true
	})
	cfg.Generator = nil // a tool may not have the game's generator
	cfg.Repair = true
	s, err := chunkstore.Open("/chunks.pxsw", &cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	raw, _, _ := storetool.Tool.ReadRaw(s, chunkstore.Pos{})
	fmt.Println(s.OpenReport().OK(), raw.Type, raw.Delta)
	fixed, err := s.CompactTo("/fixed.pxsw")
	if err != nil {
		log.Fatal(err)
	}
	defer fixed.Close()
	fmt.Println(fixed.Generation(), fixed.Check().OK())
	// Output:
	// delta chunk (0, 0) true
	// journal segment (0, 0) true
	// true delta [{1 1}]
	// 2 true
}

// A save that committed its chunk store and then failed (its world file or
// manifest could not be written) takes the store back to its mark: the
// file is as it was, and reopens at the generation before.
func ExampleTools_Revert() {
	s, cfg := newExampleStore()
	b := s.NewBatch()
	b.PutChunk(chunkstore.Pos{}, make([]uint32, 64*64))
	s.Commit(b)
	before := storetool.Tool.Stats(s).FileSize

	mark, err := storetool.Tool.Mark(s)
	if err != nil {
		log.Fatal(err)
	}
	b = s.NewBatch()
	b.PutChunk(chunkstore.Pos{X: 1}, make([]uint32, 64*64))
	s.Commit(b) // ... and the save's next step fails
	if err := storetool.Tool.Revert(s, mark); err != nil {
		log.Fatal(err)
	}
	s, err = chunkstore.Open("/chunks.pxsw", &cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	fmt.Println("generation", s.Generation(), "same size:", storetool.Tool.Stats(s).FileSize == before)
	// Output: generation 1 same size: true
}
