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
	total := 1
	for range n {
		total *= side
	}
	keys := make([]Key, total)
	for i := range total {
		var c [MaxAxes]int32
		for a, r := 0, i; a < n; a++ {
			c[a], r = int32(r%side-side/2), r/side
		}
		keys[i] = Key{c: c, n: uint8(n)}
	}
	return keyStore(t, n, keys)
}

// keyStore returns a store of n axes on an in-memory disk whose index
// holds keys (Empty chunks), committed as one checkpoint.
func keyStore(t testing.TB, n int, keys []Key) *Store {
	t.Helper()
	cfg := Options{ChunkSize: 8, PixelSize: 4, Seed: 7, Axes: n, FS: vfs.NewMem()}
	s, err := Create("/w.pxsw", &cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.chunks = newIndexAxes(len(keys), n)
	for _, k := range keys {
		s.chunks.set(k.ik(), ival{typ: Empty})
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
// store of 1,048,576 chunks (2 axes: 1024^2; 4 axes: 32^4) with the
// spatial tree, and with a full scan: a walk over every slot of the runtime index
// (the fastest way without the cells), keeping the keys in the box, in
// page-table order: 32x32 keys in 2-D, 8^4 in 4-D. It also reports the
// heap the tree takes once built, per stored chunk.
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
		if _, err := s.EntriesIn(box); err != nil { // builds the tree
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		treeBytes := float64(after.HeapAlloc-before.HeapAlloc) / float64(s.chunks.Len())
		want := 1
		for range tc.n {
			want *= tc.edge
		}
		b.Run(fmt.Sprintf("axes=%d/tree", tc.n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				es, visited, err := s.entriesInBox(box)
				if err != nil || len(es) != want {
					b.Fatal(err, len(es))
				}
				b.ReportMetric(float64(visited.keys), "visited/op")
			}
			b.ReportMetric(treeBytes, "tree-B/chunk")
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

// In a sparse world of 4 axes (200 clusters of 4^4 keys spread over 2^16
// on every axis, 51,200 keys) a range query reads only what its box
// touches: a slab one key thick across the world, a box around one
// cluster, a box in the space between clusters and one at a corner of
// int32 each read at most 16 nodes (one node's children) per key found
// plus the 16 children of each of the 32 levels above a single key, and
// look at no more than 2 keys per key found plus one leaf. The flat grid
// of 4^4-key cells (the structure before the tree) reads every one of its
// 1,930 occupied cells for the slab, the empty box and the corner (each
// covers more cells than are occupied): 3.8 times the budget for the
// empty box, 1.3 times for the slab.
func TestRangeSparseWorldReadsOnlyWhatTheBoxTouches(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 2))
	var keys []Key
	var origins [][4]int32
	for range 200 {
		var o [4]int32
		for a := range o {
			o[a] = int32(rng.IntN(1 << 16))
		}
		origins = append(origins, o)
		for i := range int32(256) {
			keys = append(keys, Key4(o[0]+i%4, o[1]+i/4%4, o[2]+i/16%4, o[3]+i/64))
		}
	}
	s := keyStore(t, 4, keys)
	defer s.Close()
	o := origins[7]
	boxes := []struct {
		name string
		box  Box
	}{
		{"slab", box4([4]int32{math.MinInt32, math.MinInt32, math.MinInt32, o[3] + 1}, [4]int32{math.MaxInt32, math.MaxInt32, math.MaxInt32, o[3] + 1})},
		{"cluster", box4([4]int32{o[0], o[1], o[2], o[3]}, [4]int32{o[0] + 3, o[1] + 3, o[2] + 3, o[3] + 3})},
		{"between", box4([4]int32{-1 << 20, -1 << 20, -1 << 20, 1 << 17}, [4]int32{1 << 20, 1 << 20, 1 << 20, 1 << 20})},
		{"corner", box4([4]int32{math.MinInt32, math.MinInt32, math.MinInt32, math.MinInt32}, [4]int32{-1, -1, -1, -1})},
	}
	g := newCellGrid(4, func() []ikey {
		ks := make([]ikey, len(keys))
		for i, k := range keys {
			ks[i] = k.ik()
		}
		return ks
	}())
	for _, tc := range boxes {
		es, st, err := s.entriesInBox(tc.box)
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, k := range keys {
			if tc.box.Contains(k) {
				found++
			}
		}
		if len(es) != found {
			t.Fatalf("%s: %d entries, %d keys in the box", tc.name, len(es), found)
		}
		gst := g.query(tc.box, func(ikey) {})
		t.Logf("%s: %d keys found; the tree read %d nodes and looked at %d keys, the grid %d cells and %d keys",
			tc.name, found, st.nodes, st.keys, gst.nodes, gst.keys)
		if nodes := 16*found + 16*treeMaxDepth; st.nodes > nodes {
			t.Errorf("%s: %d keys found, %d nodes read, at most %d expected", tc.name, found, st.nodes, nodes)
		}
		if keys := 2*found + treeLeafMax; st.keys > keys {
			t.Errorf("%s: %d keys found, %d keys looked at, at most %d expected", tc.name, found, st.keys, keys)
		}
	}
}
