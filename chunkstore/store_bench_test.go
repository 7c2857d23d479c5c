package chunkstore

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/arksave/arksave/vfs"
)

func seedConfig() Options {
	return Options{ChunkSize: seedSize, TileSize: 32, PixelSize: 4, Seed: 7, Generator: seedGen, FS: vfs.OS}
}

// BenchmarkGet_Terrain512 loads one 512x512 terrain chunk at random from a
// store on disk: read the record, decompress, and for Delta generate the
// chunk and apply the delta.
func BenchmarkGet_Terrain512(b *testing.B) {
	for _, kind := range []string{"delta5pct", "full", "palette"} {
		b.Run(kind, func(b *testing.B) {
			cfg := seedConfig()
			if kind != "palette" {
				cfg.Encoding = EncodeDeltaFull // the records format 2 chose
			}
			s, err := Create(filepath.Join(b.TempDir(), "w.pxsw"), &cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			rng := rand.New(rand.NewPCG(1, 1))
			batch := s.NewBatch()
			var ps []Pos
			for i := range 16 {
				p := Pos{int32(i), 0}
				pix := make([]uint32, seedSize*seedSize)
				seedGen.Generate(p.X, p.Y, 7, pix)
				if kind != "delta5pct" {
					pix = modify(pix, 0.8, true, rng)
				} else {
					pix = modify(pix, 0.05, false, rng)
				}
				batch.PutChunk(p, pix)
				ps = append(ps, p)
			}
			st, err := s.Commit(batch)
			if err != nil || (kind == "full") != (st.Full == 16) || (kind == "palette") != (st.Palette == 16) {
				b.Fatalf("%+v %v", st, err)
			}
			dst := make([]uint32, seedSize*seedSize)
			b.SetBytes(int64(4 * len(dst)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Get(ps[rng.IntN(len(ps))], dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLookup_1000 does 1,000 index lookups among n stored chunks (a
// 1000x1000 grid for 1M): random positions, and a 32x32 streaming window.
func BenchmarkLookup_1000(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000, 1_000_000} {
		side := 1
		for side*side < n {
			side++
		}
		ix := newIndex(0)
		for i := range n {
			ix.set(Key2(int32(i%side), int32(i/side)).ik(), ival{h: handle{Offset: int64(i) + dataStart, Length: 100}, typ: Delta})
		}
		rng := rand.New(rand.NewPCG(2, 2))
		random := make([]ikey, 1000)
		for i := range random {
			random[i] = Key2(int32(rng.IntN(side)), int32(rng.IntN(side))).ik()
		}
		window := make([]ikey, 0, 1024)
		for y := range 32 {
			for x := range 32 {
				window = append(window, Key2(int32(side/2+x), int32(side/2+y)).ik())
			}
		}
		window = window[:1000]
		// Cold: every round looks up 1,000 other positions, so the slots are
		// rarely in cache (the first two variants repeat their keys).
		cold := make([]ikey, max(n, 100_000))
		for i := range cold {
			cold[i] = Key2(int32(rng.IntN(side)), int32(rng.IntN(side))).ik()
		}
		for _, tc := range []struct {
			name string
			keys []ikey
		}{{"random", random}, {"window", window}, {"random-cold", cold}} {
			b.Run(fmt.Sprintf("%s/%d", tc.name, n), func(b *testing.B) {
				found, at := 0, 0
				for b.Loop() {
					if at+1000 > len(tc.keys) {
						at = 0
					}
					for _, k := range tc.keys[at : at+1000] {
						if _, ok := ix.get(k); ok {
							found++
						}
					}
					if len(tc.keys) > 1000 {
						at += 1000
					}
				}
				if found == 0 {
					b.Fatal("nothing found")
				}
			})
		}
	}
}

// bigStore makes a store on disk holding n chunks (Empty entries, written
// as one checkpoint) and reopens it.
func bigStore(b *testing.B, n int) (*Store, string) {
	b.Helper()
	cfg := seedConfig()
	path := filepath.Join(b.TempDir(), "w.pxsw")
	s, err := Create(path, &cfg)
	if err != nil {
		b.Fatal(err)
	}
	side := 1
	for side*side < n {
		side++
	}
	s.chunks = newIndex(n)
	for i := range n {
		s.chunks.set(Key2(int32(i%side), int32(10+i/side)).ik(), ival{typ: Empty})
	}
	s.recount()
	s.needCheckpoint = true
	if _, err := s.Commit(s.NewBatch()); err != nil {
		b.Fatal(err)
	}
	s.Close()
	s, err = Open(path, &cfg)
	if err != nil {
		b.Fatal(err)
	}
	if s.statistics().Chunks != n {
		b.Fatalf("%d chunks", s.statistics().Chunks)
	}
	return s, path
}

// dirtyBatch puts the base chunks with 5,000 pixels dug out of each, at a
// place that moves with iter.
func dirtyBatch(s *Store, base [][]uint32, iter int) *Batch {
	batch := s.NewBatch()
	for i, pix := range base {
		p := append([]uint32(nil), pix...)
		start := (iter*7919 + i*104729) % (len(p) - 6000)
		clear(p[start : start+5000])
		batch.PutChunk(Pos{int32(i), 0}, p)
	}
	return batch
}

// BenchmarkCommit_5Dirty commits 5 changed 512x512 terrain chunks (about
// 2% of each dug out, differently each time) into a store on disk that
// already holds 10,000 or 1,000,000 chunks. The cost must not depend on
// the store's size.
func BenchmarkCommit_5Dirty(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprintf("stored=%d", n), func(b *testing.B) {
			s, _ := bigStore(b, n)
			defer s.Close()
			base := terrainRow(5)
			var bytes, records, commits int64
			iter := 0
			b.ReportAllocs()
			for b.Loop() {
				iter++
				batch := dirtyBatch(s, base, iter)
				st, err := s.Commit(batch)
				if err != nil {
					b.Fatal(err)
				}
				bytes += st.BytesWritten
				records += st.RecordBytes
				commits++
			}
			b.ReportMetric(float64(bytes)/float64(commits), "written-B/commit")
			b.ReportMetric(float64(records)/float64(commits), "record-B/commit")
			b.ReportMetric(float64(bytes-records)/float64(commits), "overhead-B/commit")
		})
	}
}

// BenchmarkCommit_5Dirty_Interleaved alternates the same 5-chunk commits
// between a 10,000-chunk and a 1,000,000-chunk store, so that both see the
// same machine load, and reports each one's time and their ratio.
func BenchmarkCommit_5Dirty_Interleaved(b *testing.B) {
	small, _ := bigStore(b, 10_000)
	defer small.Close()
	big, _ := bigStore(b, 1_000_000)
	defer big.Close()
	base := terrainRow(5)
	var took [2]time.Duration
	var written [2]int64
	iter := 0
	for b.Loop() {
		iter++
		order := []int{0, 1}
		if iter%2 == 0 {
			order = []int{1, 0} // neither store always goes first
		}
		for _, k := range order {
			s := []*Store{small, big}[k]
			batch := dirtyBatch(s, base, iter)
			t0 := time.Now()
			st, err := s.Commit(batch)
			took[k] += time.Since(t0)
			if err != nil {
				b.Fatal(err)
			}
			written[k] += st.BytesWritten
		}
	}
	b.ReportMetric(float64(took[0].Nanoseconds())/float64(iter), "ns/commit@10k")
	b.ReportMetric(float64(took[1].Nanoseconds())/float64(iter), "ns/commit@1M")
	b.ReportMetric(float64(took[1])/float64(took[0]), "ratio-1M/10k")
	b.ReportMetric(float64(written[1])/float64(written[0]), "bytes-ratio-1M/10k")
}

// BenchmarkIndexMemory opens a store of 1,000,000 chunks and reports the
// heap the open store holds per chunk (runtime.MemStats before and after).
func BenchmarkIndexMemory(b *testing.B) {
	s, path := bigStore(b, 1_000_000)
	s.Close()
	var perChunk float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		cfg := seedConfig()
		s, err := Open(path, &cfg)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perChunk = float64(after.HeapAlloc-before.HeapAlloc) / 1e6
		runtime.KeepAlive(s)
		s.Close()
	}
	b.ReportMetric(perChunk, "heap-B/chunk")
}

// BenchmarkEncode_8Full encodes (generates, compares, compresses) 8
// 512x512 chunks with 80% of their pixels changed the way Commit does, with
// one compression worker and with one per core; no I/O. "deltafull" stores
// them Full as format 2 did, "smallest" tries palette and full records and
// keeps the smaller (what it costs the writer).
func BenchmarkEncode_8Full(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	items := make([]workItem, 8)
	for i := range items {
		pix := make([]uint32, seedSize*seedSize)
		seedGen.Generate(int32(i), 0, 7, pix)
		items[i] = workItem{pos: Key2(int32(i), 0), chunk: batchChunk{pix: modify(pix, 0.8, true, rng)}}
	}
	for _, enc := range []Encoding{EncodeDeltaFull, EncodeSmallest} {
		for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
			b.Run(fmt.Sprintf("%s/workers=%d", map[Encoding]string{EncodeDeltaFull: "deltafull", EncodeSmallest: "smallest"}[enc], workers), func(b *testing.B) {
				benchEncode(b, enc, workers, items)
			})
		}
	}
}

func benchEncode(b *testing.B, enc Encoding, workers int, items []workItem) {
	cfg, _ := seedConfig().withDefaults(true)
	cfg.Workers, cfg.Encoding = workers, enc
	s := newStore("", cfg, &fileSet{}, header{})
	b.SetBytes(int64(len(items) * seedSize * seedSize * 4))
	b.ReportAllocs()
	for b.Loop() {
		s.encodeParallel(items)
		for i := range items {
			if items[i].err != nil || (enc == EncodeDeltaFull && items[i].res.typ != Full) {
				b.Fatal(items[i].err)
			}
		}
	}
}

// BenchmarkEncode_5Dirty1Percent encodes the chunks of a save of
// BenchmarkCommitLatency's shape: 5 terrain chunks, 1% of their pixels
// changed, their bases cached (the chunks a player works in), as the
// smallest record (estimated, one compression each) and as format 2's
// Delta-or-Full (the commit that measured 10 ms), in the same run; then
// with the bases not cached ("newBases"), as a game's first save of the
// chunks meets them. "compressions/chunk" counts the payloads compressed,
// "cpu-ms/op" the CPU time the encoding thread used (one worker: the
// benchmark's own), which other work on the machine inflates less than
// the wall time.
func BenchmarkEncode_5Dirty1Percent(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	items := make([]workItem, 5)
	for i := range items {
		pix := make([]uint32, seedSize*seedSize)
		seedGen.Generate(int32(i), 1, 7, pix)
		items[i] = workItem{pos: Key2(int32(i), 1), chunk: batchChunk{pix: modify(pix, 0.01, true, rng)}}
	}
	for _, newBases := range []bool{false, true} {
		for _, enc := range []Encoding{EncodeSmallest, EncodeDeltaFull} {
			name := map[Encoding]string{EncodeDeltaFull: "deltafull", EncodeSmallest: "smallest"}[enc]
			if newBases {
				name += "/newBases"
			}
			b.Run(name, func(b *testing.B) { benchEncodeDirty(b, enc, newBases, items) })
		}
	}
}

// benchEncodeDirty encodes items on one worker, as enc chooses, their bases
// cached beforehand or, with newBases, generated (and measured) each time.
func benchEncodeDirty(b *testing.B, enc Encoding, newBases bool, items []workItem) {
	cfg, _ := seedConfig().withDefaults(true)
	cfg.Workers, cfg.Encoding = 1, enc
	s := newStore("", cfg, &fileSet{}, header{})
	s.encodeParallel(items) // the bases cached, and measured
	s.encoders[0].compressions = 0
	runtime.LockOSThread() // one worker encodes on this goroutine: threadCPU is its time
	defer runtime.UnlockOSThread()
	var cpu time.Duration
	for b.Loop() {
		if newBases {
			s.cc.bases = newBaseCache(cfg.BaseCache)
		}
		c0 := threadCPU()
		s.encodeParallel(items)
		cpu += threadCPU() - c0
		for i := range items {
			if items[i].err != nil || items[i].res.typ != Delta {
				b.Fatalf("chunk %d: %s, %v", i, items[i].res.typ, items[i].err)
			}
		}
	}
	b.ReportMetric(float64(s.encoders[0].compressions)/float64(b.N*len(items)), "compressions/chunk")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}
