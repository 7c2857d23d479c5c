package chunkstore_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/vfs"
)

// stamped is chunk version v: every pixel carries v and its own index, so
// a reader can tell a whole version from a mix.
func stamped(v uint32) []uint32 {
	pix := make([]uint32, npix)
	for i := range pix {
		pix[i] = v<<16 | uint32(i)
	}
	return pix
}

// Readers on other goroutines see each chunk at a committed version, never
// a mix and never going back, while commits and a compaction run.
func TestConcurrentReadsDuringCommit(t *testing.T) {
	cfg := testConfig(vfs.NewMem())
	s := create(t, cfg)
	defer s.Close()
	positions := []chunkstore.Pos{{X: 0, Y: 0}, {X: 1, Y: 0}, {X: 0, Y: 1}, {X: -5, Y: 7}}
	b := s.NewBatch()
	for _, p := range positions {
		b.PutChunk(p, stamped(1))
	}
	commit(t, s, b)
	const versions = 40
	var done atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for r := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dst := make([]uint32, npix)
			last := map[chunkstore.Pos]uint32{}
			for i := 0; !done.Load(); i++ {
				p := positions[(i+r)%len(positions)]
				stored, err := s.Get(p, dst)
				if err != nil || !stored {
					errs <- err.Error()
					return
				}
				v := dst[0] >> 16
				for j, px := range dst {
					if px != v<<16|uint32(j) {
						errs <- "a chunk mixes versions"
						return
					}
				}
				if v < last[p] {
					errs <- "a reader went back to an older version"
					return
				}
				last[p] = v
				if _, err := s.Bodies(p); err != nil {
					errs <- err.Error()
					return
				}
				storetool.Tool.Stats(s)
			}
		}()
	}
	for v := uint32(2); v <= versions; v++ {
		b := s.NewBatch()
		for _, p := range positions {
			b.PutChunk(p, stamped(v))
		}
		b.PutEntities(positions[0], chunkstore.EntityBlock{Bodies: []chunkstore.Body{{ID: uint64(v), Width: 1, Height: 1, Pixels: []uint32{v}, Shape: []bool{true}}}})
		commit(t, s, b)
		if v == versions/2 {
			must(t, s.Compact())
		}
	}
	done.Store(true)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	mustCheck(t, s)
}
