package chunkstore

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// The spatial tree against the flat cell grid it replaced, on 10,000,000
// keys of 4 axes, the index alone (no store, no files).

// spatialIndex is what both structures answer.
type spatialIndex interface {
	query(b Box, fn func(ikey)) treeStats
}

// indexQuery is a box and how many keys it holds.
type indexQuery struct {
	name string
	box  Box
	want int
}

// indexWorld is a set of keys and the queries to run on it.
type indexWorld struct {
	name    string
	keys    []ikey
	queries []indexQuery
}

// box4 returns the 4-axis box from lo to hi.
func box4(lo, hi [4]int32) Box {
	return Box{Min: Key4(lo[0], lo[1], lo[2], lo[3]), Max: Key4(hi[0], hi[1], hi[2], hi[3])}
}

// denseWorld is 10,000,000 keys filling the block [0,50)x[0,50)x[0,50)x
// [0,80): a world explored everywhere near its origin.
func denseWorld() indexWorld {
	keys := make([]ikey, 0, 10_000_000)
	for w := range int32(80) {
		for z := range int32(50) {
			for y := range int32(50) {
				for x := range int32(50) {
					keys = append(keys, Key4(x, y, z, w).ik())
				}
			}
		}
	}
	return indexWorld{name: "dense", keys: keys, queries: []indexQuery{
		{"1", box4([4]int32{17, 23, 5, 61}, [4]int32{17, 23, 5, 61}), 1},
		{"1000", box4([4]int32{13, 7, 21, 40}, [4]int32{22, 16, 30, 40}), 1000},
		{"100000", box4([4]int32{3, 0, 11, 33}, [4]int32{22, 49, 20, 42}), 100_000},
		{"slab", box4([4]int32{math.MinInt32, math.MinInt32, math.MinInt32, 41}, [4]int32{math.MaxInt32, math.MaxInt32, math.MaxInt32, 41}), 125_000},
	}}
}

// sparseWorld is 10,000,000 keys in 1,000 clusters of 10^4 keys (planets,
// or the places players went): 10 in a row along x from the origin, the
// rest at random in [2^16, 2^20) on every axis.
func sparseWorld() indexWorld {
	keys := make([]ikey, 0, 10_000_000)
	rng := rand.New(rand.NewPCG(26, 2))
	for c := range 1000 {
		var o [4]int32
		if c < 10 {
			o[0] = int32(20 * c)
		} else {
			for a := range o {
				o[a] = int32(1<<16 + rng.IntN(1<<20-1<<16))
			}
		}
		for i := range int32(10_000) {
			keys = append(keys, Key4(o[0]+i%10, o[1]+i/10%10, o[2]+i/100%10, o[3]+i/1000).ik())
		}
	}
	return indexWorld{name: "sparse", keys: keys, queries: []indexQuery{
		{"1", box4([4]int32{45, 3, 7, 2}, [4]int32{45, 3, 7, 2}), 1},
		{"1000", box4([4]int32{40, 0, 0, 6}, [4]int32{49, 9, 9, 6}), 1000},
		{"100000", box4([4]int32{0, 0, 0, 0}, [4]int32{199, 9, 9, 9}), 100_000},
		{"slab", box4([4]int32{math.MinInt32, math.MinInt32, math.MinInt32, 5}, [4]int32{math.MaxInt32, math.MaxInt32, math.MaxInt32, 5}), 10_000},
	}}
}

// builtIndex is an index and what building it cost.
type builtIndex struct {
	ix     spatialIndex
	cpu    time.Duration // of the building thread
	perKey float64       // heap held per key, the key array included
}

// measureBuild builds an index of a copy of keys.
func measureBuild(keys []ikey, build func([]ikey) spatialIndex) builtIndex {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	runtime.LockOSThread()
	cpu := threadCPU()
	own := append([]ikey(nil), keys...)
	bi := builtIndex{ix: build(own)}
	bi.cpu = threadCPU() - cpu
	runtime.UnlockOSThread()
	runtime.GC()
	runtime.ReadMemStats(&after)
	bi.perKey = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(len(keys))
	return bi
}

// BenchmarkSpatialIndex10M answers box queries over 10,000,000 keys of 4
// axes with the 16-way spatial tree and with the flat cell grid (cells of
// 4^4 keys, the structure before it), built in the same run from the same
// keys, in two worlds: dense (a 50x50x50x80 block) and sparse (1,000
// clusters of 10^4 keys spread over 2^20 on every axis). The boxes hold 1,
// 1,000 and 100,000 keys, and a slab one key thick on w spans every other
// axis. A query reports ns/op, cpu-ns/op (the CPU time of the querying
// thread: on a shared machine wall time counts other work too), nodes/op
// (tree nodes or grid cells read), keys/op (stored keys looked at) and
// found/op; a build its time (ns/op, and build-cpu-ms of the building
// thread) and the heap it holds per key (B/key, the key array included).
// It needs about 2 GB of heap and a few minutes; it is not part of the
// tests. Run it with
//
//	go test -run '^$' -bench SpatialIndex10M -timeout 30m ./chunkstore
func BenchmarkSpatialIndex10M(b *testing.B) {
	for _, mk := range []func() indexWorld{denseWorld, sparseWorld} {
		w := mk()
		structures := []struct {
			name  string
			build func([]ikey) spatialIndex
		}{
			{"tree", func(k []ikey) spatialIndex { return newSpatialTree(4, k) }},
			{"grid", func(k []ikey) spatialIndex { return newCellGrid(4, k) }},
		}
		built := make([]builtIndex, len(structures))
		for i, st := range structures {
			b.Run(fmt.Sprintf("%s/build/%s", w.name, st.name), func(b *testing.B) {
				for b.Loop() {
					built[i] = builtIndex{} // for the heap the next build takes
					built[i] = measureBuild(w.keys, st.build)
				}
				b.ReportMetric(float64(built[i].cpu.Milliseconds()), "build-cpu-ms")
				b.ReportMetric(built[i].perKey, "B/key")
			})
			if built[i].ix == nil { // the build was not selected
				built[i] = measureBuild(w.keys, st.build)
			}
		}
		for _, q := range w.queries {
			for i, st := range structures {
				ix := built[i].ix
				b.Run(fmt.Sprintf("%s/box=%s/%s", w.name, q.name, st.name), func(b *testing.B) {
					var work treeStats
					found := 0
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					cpu := threadCPU()
					for b.Loop() {
						found = 0
						work = ix.query(q.box, func(ikey) { found++ })
					}
					b.ReportMetric(float64(threadCPU()-cpu)/float64(b.N), "cpu-ns/op")
					if found != q.want {
						b.Fatalf("%s found %d keys in %v, want %d", st.name, found, q.box, q.want)
					}
					b.ReportMetric(float64(work.nodes), "nodes/op")
					b.ReportMetric(float64(work.keys), "keys/op")
					b.ReportMetric(float64(found), "found/op")
				})
			}
		}
		w, built = indexWorld{}, nil
		runtime.GC()
	}
}
