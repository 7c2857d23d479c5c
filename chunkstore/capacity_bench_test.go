package chunkstore

import (
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/arksave/arksave/vfs"
)

// Capacity: a store of 10,000,000 chunks against one of 1,000,000, in the
// same run, built by bulkStore.

// capSize is the chunk size of the capacity stores: small, so that what is
// measured is the index, the page table and the I/O, not pixels.
const capSize = 16

// flatGen generates stone everywhere.
type flatGen struct{}

func (flatGen) Version() uint32 { return 1 }

func (flatGen) Generate(x, y int32, seed uint64, dst []uint32) {
	for i := range dst {
		dst[i] = 2
	}
}

func capConfig() Options {
	return Options{ChunkSize: capSize, TileSize: 4, PixelSize: 4, Seed: 7, Generator: flatGen{}, FS: vfs.OS}
}

// bulkStore writes a store of n chunks at path the fast way, for
// benchmarks and their short test only: one small record per chunk (the
// record Commit writes for a chunk with dug pixels dug out and given
// random values, a Delta of 4 + 7 x dug bytes, sealed again with each
// chunk's key: no dictionary, every chunk its own record),
// appended through the commit writer to data files of the default size,
// entered in the index, then one checkpoint written by an empty Commit.
// Chunks lie on a square grid with n cells.
func bulkStore(tb testing.TB, path string, n, dug int) {
	tb.Helper()
	cfg := capConfig()
	s, err := Create(path, &cfg)
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	pix := make([]uint32, capSize*capSize)
	flatGen{}.Generate(0, 0, 7, pix)
	pix[capSize*capSize/2] = 0 // dug out
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 1; i < dug; i++ {
		pix[rng.IntN(len(pix))] = rng.Uint32() | 1
	}
	res, err := s.cc.encode(&encoder{}, Key2(0, 0), pix, nil)
	if err != nil || res.rec == nil {
		tb.Fatalf("template record: %v", err)
	}
	tmpl, err := checkRecord(res.rec, 0)
	if err != nil {
		tb.Fatal(err)
	}
	payload := append([]byte(nil), sealedPayload(res.rec)...) // its layer mask and payload
	side := gridSide(n)
	cw := s.newWriter()
	s.chunks = newIndex(n)
	rec := make([]byte, recordHeaderSize+len(payload), recordHeaderSize+len(payload)+8)
	copy(rec[recordHeaderSize:], payload)
	for i := range n {
		k := Key2(int32(i%side), int32(i/side))
		sealRecord(rec, tmpl.kind, tmpl.codec, tmpl.flags, k.recordKey(), tmpl.raw)
		h := cw.append(rec)
		s.chunks.set(k.ik(), ival{h: h, typ: res.typ})
	}
	if _, err := cw.sync(cfg.FS); err != nil {
		tb.Fatal(err)
	}
	s.setAppend(cw.end())
	s.recount()
	s.needCheckpoint = true
	if _, err := s.Commit(s.NewBatch()); err != nil {
		tb.Fatal(err)
	}
}

func gridSide(n int) int {
	side := 1
	for side*side < n {
		side++
	}
	return side
}

// A bulk-built store is a store like any other: it reopens with every
// chunk readable and checks clean (the short form of the capacity
// benchmark).
func TestBulkStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bulk.pxsw")
	const n = 20_000
	bulkStore(t, path, n, 1)
	cfg := capConfig()
	s, err := Open(path, &cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if st := s.statistics(); st.Chunks != n || st.Delta != n {
		t.Fatalf("%d chunks (%d delta), want %d", st.Chunks, st.Delta, n)
	}
	if r := s.Check(); !r.OK() {
		t.Fatal(r)
	}
	dst := make([]uint32, capSize*capSize)
	side := gridSide(n)
	for _, i := range []int{0, 1, n / 2, n - 1} {
		stored, err := s.Get(Pos{int32(i % side), int32(i / side)}, dst)
		if err != nil || !stored || dst[capSize*capSize/2] != 0 || dst[0] != 2 {
			t.Fatalf("chunk %d: stored %v, %v", i, stored, err)
		}
	}
}

// BenchmarkCapacity measures a store of 10,000,000 chunks beside one of
// 1,000,000, both built once per run by bulkStore in the benchmark's temp
// dir (a record of 39 bytes a chunk: about 0.7 GB for both with their
// checkpoints; a minute or two to build), and reports each figure at both
// sizes and their ratio, from the same run: opening (per chunk), the heap
// the open store holds (per chunk), random chunk reads (10,000 a round),
// and 5-chunk commits (20 a round). Each round runs both stores, in
// alternating order, so that both see the same machine load. Reads are
// also measured on a third store, of 1,000,000 chunks whose records are
// ten times larger (350 bytes: as many bytes of records as the 10,000,000
// chunks): a read's cost follows the bytes of records the page cache
// holds, not the number of chunks. Run it with
//
//	go test -run '^$' -bench Capacity -benchtime 3x -timeout 60m ./chunkstore
func BenchmarkCapacity(b *testing.B) {
	type store struct {
		label string
		n     int
		dug   int // pixels per record: 1 makes 39-byte records, 48 about 350
		path  string
	}
	all := []*store{{label: "1M", n: 1_000_000, dug: 1}, {label: "10M", n: 10_000_000, dug: 1}, {label: "1M-wide", n: 1_000_000, dug: 48}}
	dir := b.TempDir()
	for _, st := range all {
		st.path = filepath.Join(dir, "cap-"+st.label+".pxsw")
		t0 := time.Now()
		bulkStore(b, st.path, st.n, st.dug)
		b.Logf("built %s (%d chunks) in %v", st.label, st.n, time.Since(t0).Round(time.Millisecond))
	}
	open := func(b *testing.B, st *store) *Store {
		cfg := capConfig()
		s, err := Open(st.path, &cfg)
		if err != nil {
			b.Fatal(err)
		}
		if s.statistics().Chunks != st.n {
			b.Fatalf("%s: %d chunks, want %d", st.label, s.statistics().Chunks, st.n)
		}
		return s
	}
	// each runs fn on every store of sts in each round, in an order that
	// rotates from round to round, and returns the wall time and the CPU
	// time of its thread each took in all (the machine is shared: other
	// work inflates wall time, hardly CPU time).
	each := func(b *testing.B, sts []*store, fn func(i int) time.Duration) (wall, cpu []time.Duration) {
		wall, cpu = make([]time.Duration, len(sts)), make([]time.Duration, len(sts))
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		round := 0
		for b.Loop() {
			for j := range sts {
				i := (j + round) % len(sts)
				c0 := threadCPU()
				wall[i] += fn(i)
				cpu[i] += threadCPU() - c0
			}
			round++
		}
		return wall, cpu
	}
	// report gives each store's time per unit (per[i] units a round), wall
	// and CPU, and the ratio of the second store's to the first's and to
	// the third's.
	report := func(b *testing.B, sts []*store, wall, cpu []time.Duration, per []float64, unit string) {
		for _, m := range []struct {
			prefix string
			took   []time.Duration
		}{{"", wall}, {"cpu-", cpu}} {
			v := make([]float64, len(sts))
			for i, st := range sts {
				v[i] = float64(m.took[i].Nanoseconds()) / float64(b.N) / per[i]
				b.ReportMetric(v[i], m.prefix+unit+"@"+st.label)
			}
			b.ReportMetric(v[1]/v[0], m.prefix+"ratio-10M/1M")
			if len(sts) > 2 {
				b.ReportMetric(v[1]/v[2], m.prefix+"ratio-10M/1M-wide")
			}
		}
	}
	two := all[:2]

	b.Run("open", func(b *testing.B) {
		wall, cpu := each(b, two, func(i int) time.Duration {
			runtime.GC()
			t0 := time.Now()
			s := open(b, two[i])
			d := time.Since(t0)
			s.Close()
			return d
		})
		report(b, two, wall, cpu, []float64{float64(two[0].n), float64(two[1].n)}, "ns/chunk")
	})

	b.Run("index-bytes", func(b *testing.B) {
		heap, index := make([]float64, 2), make([]float64, 2)
		each(b, two, func(i int) time.Duration {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			s := open(b, two[i])
			runtime.GC()
			runtime.ReadMemStats(&after)
			heap[i] = float64(after.HeapAlloc-before.HeapAlloc) / float64(two[i].n)
			index[i] = float64(s.statistics().IndexBytes) / float64(two[i].n)
			runtime.KeepAlive(s)
			s.Close()
			return 0
		})
		for i, st := range two {
			b.ReportMetric(heap[i], "heap-B/chunk@"+st.label)
			b.ReportMetric(index[i], "index-B/chunk@"+st.label)
		}
		b.ReportMetric(heap[1]/heap[0], "heap-ratio-10M/1M")
	})

	stores := make([]*Store, len(all))
	for i, st := range all {
		stores[i] = open(b, st)
		defer stores[i].Close()
	}

	b.Run("get-10000", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(4, 4))
		dst := make([]uint32, capSize*capSize)
		wall, cpu := each(b, all, func(i int) time.Duration {
			side := gridSide(all[i].n)
			keys := make([]Pos, 10_000)
			for j := range keys {
				n := rng.IntN(all[i].n)
				keys[j] = Pos{int32(n % side), int32(n / side)}
			}
			t0 := time.Now()
			for _, p := range keys {
				if stored, err := stores[i].Get(p, dst); err != nil || !stored {
					b.Fatal(p, err)
				}
			}
			return time.Since(t0)
		})
		report(b, all, wall, cpu, []float64{10_000, 10_000, 10_000}, "ns/get")
	})

	b.Run("commit-5", func(b *testing.B) {
		round := 0
		written := make([]int64, 2)
		wall, cpu := each(b, two, func(i int) time.Duration {
			var d time.Duration
			for range 20 {
				round++
				batch := stores[i].NewBatch()
				for j := range 5 {
					pix := make([]uint32, capSize*capSize)
					flatGen{}.Generate(0, 0, 7, pix)
					pix[(round*7+j)%len(pix)] = 0
					batch.PutChunk(Pos{int32(j), int32(round % 100)}, pix)
				}
				t0 := time.Now()
				st, err := stores[i].Commit(batch)
				d += time.Since(t0)
				if err != nil {
					b.Fatal(err)
				}
				written[i] += st.BytesWritten
			}
			return d
		})
		report(b, two, wall, cpu, []float64{20, 20}, "ns/commit")
		b.ReportMetric(float64(written[1])/float64(written[0]), "bytes-ratio-10M/1M")
	})
}
