package chunkstore

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/arksave/arksave/vfs"
)

// gridStore returns a store on an in-memory disk whose index holds every
// key of a grid of side^n keys (Empty chunks), committed as one
// checkpoint.
func gridStore(t testing.TB, n, side int) *Store {
	t.Helper()
	cfg := Options{ChunkSize: 8, PixelSize: 4, Seed: 7, Axes: n, FS: vfs.NewMem()}
	s, err := Create("/w.pxsw", &cfg)
	if err != nil {
		t.Fatal(err)
	}
	total := 1
	for range n {
		total *= side
	}
	s.chunks = newIndexAxes(total, n)
	for i := range total {
		var c [MaxAxes]int32
		for a, r := 0, i; a < n; a++ {
			c[a], r = int32(r%side-side/2), r/side
		}
		s.chunks.set(Key{c: c, n: uint8(n)}.ik(), ival{typ: Empty})
	}
	s.recount()
	s.needCheckpoint = true
	if _, err := s.Commit(s.NewBatch()); err != nil {
		t.Fatal(err)
	}
	return s
}

// A range query visits the keys of the leaves its box meets, not the
// index: on a grid of 65,536 keys (2 axes: 256^2; 3: about 40^3; 4: 16^4)
// a box of 4 keys per axis looks at most at the keys of the 2 leaves per
// axis it can meet (leaves of 8x8, 4x4x4 and 2x2x2x2 keys here: the
// largest power-of-two cubes of at most treeLeafMax keys), and finds
// exactly the keys a full scan finds.
func TestRangeVisitsOnlyItsLeaves(t *testing.T) {
	for _, tc := range []struct{ n, side int }{{2, 256}, {3, 40}, {4, 16}} {
		t.Run(fmt.Sprint(tc.n, " axes"), func(t *testing.T) {
			s := gridStore(t, tc.n, tc.side)
			defer s.Close()
			total := s.chunks.Len()
			rng := rand.New(rand.NewPCG(uint64(tc.n), 5))
			cube := func(side int) int { return int(math.Pow(float64(side), float64(tc.n))) }
			side := 1 // of a leaf
			for cube(2*side) <= treeLeafMax {
				side *= 2
			}
			bound := 1 // keys of the leaves a box of 4 per axis can meet
			for range tc.n {
				bound *= (4+side-2)/side + 1 // leaves an unaligned run of 4 meets
				bound *= side
			}
			var all []Key
			s.Entries(func(e Entry) bool {
				all = append(all, e.Key)
				return true
			})
			for range 20 {
				var lo, hi [MaxAxes]int32
				for a := range tc.n {
					lo[a] = int32(rng.IntN(tc.side) - tc.side/2)
					hi[a] = lo[a] + 3
				}
				box := Box{Min: Key{c: lo, n: uint8(tc.n)}, Max: Key{c: hi, n: uint8(tc.n)}}
				es, visited, err := s.entriesInBox(box)
				if err != nil {
					t.Fatal(err)
				}
				var want []Key
				for _, k := range all {
					if box.Contains(k) {
						want = append(want, k)
					}
				}
				got := make([]Key, len(es))
				for i, e := range es {
					got[i] = e.Key
				}
				if !slices.Equal(got, want) {
					t.Fatalf("box %v: %d keys, a full scan finds %d", box, len(got), len(want))
				}
				if visited.keys > bound || visited.keys > total/16 {
					t.Fatalf("box %v: looked at %d of %d keys, at most %d expected", box, visited.keys, total, bound)
				}
			}
		})
	}
}

// BenchmarkEntriesIn_Box answers "every stored chunk in this box" on a
// store of 1,048,576 chunks (2 axes: 1024^2; 4 axes: 32^4) with the cell
// index, and with a full scan: a walk over every slot of the runtime index
// (the fastest way without the cells), keeping the keys in the box, in
// page-table order: 32x32 keys in 2-D, 8^4 in 4-D. It also reports the
// heap the cell grid takes once built, per stored chunk.
func BenchmarkEntriesIn_Box(b *testing.B) {
	for _, tc := range []struct{ n, side, edge int }{{2, 1024, 32}, {4, 32, 8}} {
		s := gridStore(b, tc.n, tc.side)
		var lo, hi [MaxAxes]int32
		for a := range tc.n {
			lo[a], hi[a] = 3, int32(3+tc.edge-1)
		}
		box := Box{Min: Key{c: lo, n: uint8(tc.n)}, Max: Key{c: hi, n: uint8(tc.n)}}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := s.EntriesIn(box); err != nil { // builds the cell index
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		gridBytes := float64(after.HeapAlloc-before.HeapAlloc) / float64(s.chunks.Len())
		want := 1
		for range tc.n {
			want *= tc.edge
		}
		b.Run(fmt.Sprintf("axes=%d/cells", tc.n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				es, visited, err := s.entriesInBox(box)
				if err != nil || len(es) != want {
					b.Fatal(err, len(es))
				}
				b.ReportMetric(float64(visited.keys), "visited/op")
			}
			b.ReportMetric(gridBytes, "grid-B/chunk")
		})
		b.Run(fmt.Sprintf("axes=%d/fullscan", tc.n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var es []Entry
				visited := 0
				s.mu.RLock()
				for _, ix := range []*index{s.chunks, s.bodies} {
					ix.each(func(ik ikey, v ival) bool {
						visited++
						if k := keyOf(ik, s.axes); box.Contains(k) {
							es = append(es, Entry{Pos: k.Pos(), Key: k, Type: v.typ})
						}
						return true
					})
				}
				s.mu.RUnlock()
				slices.SortFunc(es, func(a, b Entry) int {
					return compareEntries(tableEntry{pos: a.Key, typ: a.Type}, tableEntry{pos: b.Key, typ: b.Type})
				})
				if len(es) != want {
					b.Fatal(len(es))
				}
				b.ReportMetric(float64(visited), "visited/op")
			}
		})
		s.Close()
	}
}
