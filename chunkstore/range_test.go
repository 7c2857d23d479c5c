package chunkstore_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/vfs"
)

// rangeWorld is a store under random change for the range property test:
// keys crowd a small cube (so that the spatial tree splits its leaves and
// merges them again as keys come and go) and a few sit at the ends of
// int32.
type rangeWorld struct {
	n   int
	rng *rand.Rand
}

// key returns a random key: mostly in [-6, 6] on every axis, one in 16 with
// an axis at an extreme of int32 or far out.
func (w rangeWorld) key() chunkstore.Key {
	var c [chunkstore.MaxAxes]int32
	for i := range w.n {
		c[i] = int32(w.rng.IntN(13) - 6)
		if w.rng.IntN(16) == 0 {
			c[i] = []int32{math.MinInt32, math.MaxInt32, math.MinInt32 + 1, math.MaxInt32 - 1, 1 << 20, -1 << 20}[w.rng.IntN(6)]
		}
	}
	return keyOfAxes(w.n, c)
}

// change fills a batch with count random puts and deletions of chunks and
// body blocks, deletions as often as puts once the store holds enough.
func (w rangeWorld) change(b *chunkstore.Batch, count int, deletes bool) {
	for range count {
		k := w.key()
		switch op := w.rng.IntN(8); {
		case op < 3 || (!deletes && op < 6):
			b.PutChunkKey(k, uniformChunk(small, 0x01020304))
		case op < 6:
			b.DeleteChunkKey(k)
		case op == 6:
			b.PutEntitiesKey(k, chunkstore.EntityBlock{Bodies: []chunkstore.Body{body(w.rng.Uint64(), 2, 2, w.rng)}})
		default:
			b.PutEntitiesKey(k, chunkstore.EntityBlock{}) // deletes the block, if any
		}
	}
}

// box returns a random box of one of the kinds a range query meets: inside
// the crowd, thin (one key thick on one axis), huge (all of int32), outside
// every key, empty (Min above Max on an axis), or at the ends of int32.
func (w rangeWorld) box() (chunkstore.Box, string) {
	var lo, hi [chunkstore.MaxAxes]int32
	kind := []string{"inside", "thin", "huge", "outside", "empty", "edge"}[w.rng.IntN(6)]
	for i := range w.n {
		a, b := int32(w.rng.IntN(15)-7), int32(w.rng.IntN(15)-7)
		lo[i], hi[i] = min(a, b), max(a, b)
		switch kind {
		case "huge":
			lo[i], hi[i] = math.MinInt32, math.MaxInt32
		case "outside":
			lo[i], hi[i] = 1000+lo[i], 1000+hi[i]
		case "edge":
			if w.rng.IntN(2) == 0 {
				lo[i] = math.MinInt32
			} else {
				hi[i] = math.MaxInt32
			}
		}
	}
	switch kind {
	case "thin":
		a := w.rng.IntN(w.n)
		hi[a] = lo[a]
	case "empty":
		a := w.rng.IntN(w.n)
		lo[a], hi[a] = hi[a]+1, lo[a]
	}
	return chunkstore.Box{Min: keyOfAxes(w.n, lo), Max: keyOfAxes(w.n, hi)}, kind
}

// scanIn returns the entries of a full scan of the index (Entries) whose
// key lies in b, in page-table order.
func scanIn(s *chunkstore.Store, b chunkstore.Box) []chunkstore.Entry {
	var es []chunkstore.Entry
	s.Entries(func(e chunkstore.Entry) bool {
		if b.Contains(e.Key) {
			es = append(es, e)
		}
		return true
	})
	return es
}

// expectScan compares EntriesIn with a full scan over count random boxes.
func expectScan(t *testing.T, s *chunkstore.Store, w rangeWorld, count int, when string) {
	t.Helper()
	for range count {
		box, kind := w.box()
		got := must2[[]chunkstore.Entry](t)(s.EntriesIn(box))
		want := scanIn(s, box)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: %s box %v: %d entries, a full scan finds %d\ngot  %v\nwant %v", when, kind, box, len(got), len(want), got, want)
		}
	}
}

// EntriesIn finds exactly what a full scan of the index finds, for boxes
// of every kind, on stores of 2, 3 and 4 axes: as commits put and delete
// chunks and body blocks (the spatial tree, built by the first query,
// splitting and merging its leaves as it follows them), and after the
// store is reopened (the tree built again from the loaded index).
func TestEntriesInMatchesFullScan(t *testing.T) {
	for _, n := range []int{2, 3, 4} {
		t.Run(fmt.Sprint(n, " axes"), func(t *testing.T) {
			mem := vfs.NewMem()
			cfg := axesConfig(mem, n)
			cfg.DataFileSize = 0
			s := must2[*chunkstore.Store](t)(chunkstore.Create(storePath, &cfg))
			w := rangeWorld{n: n, rng: rand.New(rand.NewPCG(uint64(n), 26))}
			b := s.NewBatch()
			w.change(b, 600, false)
			commit(t, s, b)
			expectScan(t, s, w, 100, "first commit")
			for i := range 12 {
				b := s.NewBatch()
				w.change(b, 300, i >= 4)
				commit(t, s, b)
				expectScan(t, s, w, 40, fmt.Sprint("commit ", i+2))
			}
			// Deletions only, down to a few keys: the tree merges its
			// leaves back.
			var all []chunkstore.Entry
			s.Entries(func(e chunkstore.Entry) bool {
				all = append(all, e)
				return true
			})
			b = s.NewBatch()
			for i, e := range all {
				if i%10 != 0 {
					b.DeleteChunkKey(e.Key)
					b.PutEntitiesKey(e.Key, chunkstore.EntityBlock{})
				}
			}
			commit(t, s, b)
			expect(t, len(scanIn(s, chunkstore.Box{Min: w.hugeCorner(math.MinInt32), Max: w.hugeCorner(math.MaxInt32)})) < len(all)/5,
				"deletions left too many entries")
			expectScan(t, s, w, 100, "after deletions")
			b = s.NewBatch()
			w.change(b, 400, false)
			commit(t, s, b)
			expectScan(t, s, w, 40, "refilled")
			mustCheck(t, s)
			must(t, s.Close())

			s = must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &cfg))
			defer s.Close()
			expectScan(t, s, w, 100, "reopened")
		})
	}
}

// hugeCorner returns the key with every axis v.
func (w rangeWorld) hugeCorner(v int32) chunkstore.Key {
	return keyOfAxes(w.n, [chunkstore.MaxAxes]int32{v, v, v, v})
}

// Range queries run while commits change the keys they walk: every answer
// is a set of distinct entries inside its box, and once the commits end
// EntriesIn finds what a full scan finds.
func TestEntriesInDuringCommits(t *testing.T) {
	mem := vfs.NewMem()
	cfg := axesConfig(mem, 4)
	cfg.DataFileSize = 0
	s := must2[*chunkstore.Store](t)(chunkstore.Create(storePath, &cfg))
	defer s.Close()
	w := rangeWorld{n: 4, rng: rand.New(rand.NewPCG(4, 27))}
	b := s.NewBatch()
	w.change(b, 400, false)
	commit(t, s, b)
	done := make(chan struct{})
	errs := make(chan error, 2)
	for g := range 2 {
		go func() {
			rw := rangeWorld{n: 4, rng: rand.New(rand.NewPCG(uint64(g), 28))}
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				box, kind := rw.box()
				es, err := s.EntriesIn(box)
				if err != nil {
					errs <- err
					return
				}
				for i, e := range es {
					if !box.Contains(e.Key) || (i > 0 && es[i-1] == e) {
						errs <- fmt.Errorf("%s box %v: entry %v outside or repeated", kind, box, e)
						return
					}
				}
			}
		}()
	}
	for i := range 10 {
		b := s.NewBatch()
		w.change(b, 100, i >= 3)
		commit(t, s, b)
	}
	close(done)
	for range 2 {
		must(t, <-errs)
	}
	expectScan(t, s, w, 50, "after concurrent queries")
}
