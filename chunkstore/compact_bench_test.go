package chunkstore

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/arksave/arksave/internal/testkit/terrain"
)

// terrainRow returns the generated terrain chunks (0, 0) to (n-1, 0).
func terrainRow(n int) [][]uint32 {
	base := make([][]uint32, n)
	for i := range base {
		base[i] = make([]uint32, seedSize*seedSize)
		seedGen.Generate(int32(i), 0, 7, base[i])
	}
	return base
}

// deadFile writes, from the start of a fresh data file, the same dead file
// every time: 16 terrain chunks dug out 5% (Delta records), then the same
// 16 chunks dug out again (the first 16 records dead), in 8 commits, and
// then starts the next data file with one small commit so that the dead
// file is not the newest. It returns the dead file's number.
func deadFile(b *testing.B, s *Store, base [][]uint32, iter int) uint32 {
	b.Helper()
	s.setAppend(storeOffset(fileOf(s.w)+1, dataHeaderSize))
	n := fileOf(s.w)
	rng := rand.New(rand.NewPCG(uint64(iter), 3))
	for round := range 2 {
		for c := range 4 {
			batch := s.NewBatch()
			for k := range 4 {
				i := 4*c + k
				batch.PutChunk(Pos{int32(i), 0}, modify(base[i], 0.05, round == 1, rng))
			}
			if _, err := s.Commit(batch); err != nil {
				b.Fatal(err)
			}
		}
	}
	s.setAppend(storeOffset(n+1, dataHeaderSize))
	batch := s.NewBatch()
	batch.PutChunk(Pos{99, 0}, modify(base[0], 0.001, false, rng))
	if _, err := s.Commit(batch); err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkCompactFile_WorldSizes compacts the same dead data file (16
// live and 16 dead terrain records, and the journal segments of their 8
// commits) in stores that hold 10,000, 100,000 and 1,000,000 chunks,
// interleaved so that all see the same machine load. File-by-file
// compaction costs what the file holds: the times must not grow with the
// world.
func BenchmarkCompactFile_WorldSizes(b *testing.B) {
	sizes := []int{10_000, 100_000, 1_000_000}
	stores := make([]*Store, len(sizes))
	for i, n := range sizes {
		s, _ := bigStore(b, n)
		defer s.Close()
		stores[i] = s
	}
	base := terrainRow(16)
	took := make([]time.Duration, len(sizes))
	var moved, fileBytes int64
	iter := 0
	for b.Loop() {
		iter++
		for k := range stores {
			i := (k + iter) % len(stores) // none always goes first
			s := stores[i]
			n := deadFile(b, s, base, iter)
			size, _ := s.fileSize(n)
			t0 := time.Now()
			st, err := s.compactFile(n)
			took[i] += time.Since(t0)
			if err != nil {
				b.Fatal(err)
			}
			if i == 0 {
				moved += st.Moved
				fileBytes += size
			}
		}
	}
	for i, n := range sizes {
		b.ReportMetric(float64(took[i].Nanoseconds())/float64(iter), fmt.Sprintf("ns/compaction@%d", n))
	}
	b.ReportMetric(float64(took[2])/float64(took[0]), "ratio-1M/10k")
	b.ReportMetric(float64(moved)/float64(iter), "moved-B/compaction")
	b.ReportMetric(float64(fileBytes)/float64(iter), "file-B/compaction")
}

// BenchmarkCommit_Rollover commits the same 5 dirty terrain chunks over and
// over into a store whose data files take about two and a half commits,
// and reports the commits that started a data file (rollover: a new file,
// its header, an fsync of each file written and of the directory) beside
// the others, and their ratio.
func BenchmarkCommit_Rollover(b *testing.B) {
	cfg := seedConfig()
	cfg.DataFileSize = 1 << 20
	s, err := Create(filepath.Join(b.TempDir(), "w.pxsw"), &cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	base := terrainRow(5)
	var took [2]time.Duration
	var count [2]int
	var written [2]int64
	iter := 0
	for b.Loop() {
		iter++
		batch := dirtyBatch(s, base, iter)
		t0 := time.Now()
		st, err := s.Commit(batch)
		d := time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		k := 0
		if st.DataFiles > 0 {
			k = 1
		}
		took[k] += d
		count[k]++
		written[k] += st.BytesWritten
	}
	if count[0] == 0 || count[1] == 0 {
		b.Skipf("%d normal and %d rollover commits: run longer", count[0], count[1])
	}
	normal := float64(took[0].Nanoseconds()) / float64(count[0])
	rollover := float64(took[1].Nanoseconds()) / float64(count[1])
	b.ReportMetric(normal, "ns/commit")
	b.ReportMetric(rollover, "ns/rollover-commit")
	b.ReportMetric(rollover/normal, "ratio-rollover/normal")
	b.ReportMetric(float64(count[1])/float64(count[0]+count[1]), "rollover-share")
	b.ReportMetric(float64(written[0])/float64(count[0]), "written-B/commit")
}

// paintedWorld is a world a player built in the sky: 64 chunks of 512x512
// (air where nobody painted), 20 filled with solid stone, 16 with brick
// courses, 16 with the same textured stone (a stamp whose colours vary
// pixel by pixel, the same in each chunk: a prefab placed many times), 4
// dug out again, and 8 with a few dabs of paint each.
func paintedWorld() map[Pos][]uint32 {
	rng := rand.New(rand.NewPCG(5, 5))
	n := seedSize * seedSize
	brush := func(fn func(x, y int) uint32) []uint32 {
		pix := make([]uint32, n)
		for y := range seedSize {
			for x := range seedSize {
				pix[y*seedSize+x] = fn(x, y)
			}
		}
		return pix
	}
	stone := brush(func(int, int) uint32 { return terrain.Stone })
	brick := brush(func(x, y int) uint32 {
		if y%16 == 0 || (x+8*(y/16%2))%32 == 0 {
			return terrain.Sand // mortar
		}
		return terrain.Stone | uint32(1+(x/32+y/16)%3)<<8
	})
	texture := rand.New(rand.NewPCG(42, 42))
	textured := brush(func(int, int) uint32 { return terrain.Stone | uint32(texture.IntN(8))<<8 | uint32(texture.IntN(4))<<16 })
	out := map[Pos][]uint32{}
	for i := range 64 {
		p := Pos{int32(i % 8), -1 - int32(i/8)} // the sky: the generator gives air
		switch {
		case i < 20:
			out[p] = stone
		case i < 36:
			out[p] = brick
		case i < 52:
			out[p] = textured
		case i < 56:
			out[p] = make([]uint32, n) // dug out: Empty
		default:
			pix := make([]uint32, n)
			for range 40 {
				at := rng.IntN(n - 4*seedSize)
				for d := range 4 {
					pix[at+d*seedSize] = terrain.Water
				}
			}
			out[p] = pix
		}
	}
	return out
}

// BenchmarkDictionary_PaintedWorld commits a painted world (paintedWorld)
// into stores with the chunk dictionary off, as format 1 had it (Full
// records of at most 16 KiB) and covering every record, and reports the
// record bytes each writes.
func BenchmarkDictionary_PaintedWorld(b *testing.B) {
	world := paintedWorld()
	modes := []struct {
		name string
		d    Dictionary
	}{{"off", DictionaryOff}, {"format1", DictionarySmallFull}, {"all", DictionaryAll}}
	bytes := make([]int64, len(modes))
	for b.Loop() {
		for i, m := range modes {
			cfg := seedConfig()
			cfg.Dictionary = m.d
			s, err := Create(filepath.Join(b.TempDir(), fmt.Sprintf("w-%d.pxsw", i)), &cfg)
			if err != nil {
				b.Fatal(err)
			}
			batch := s.NewBatch()
			for p, pix := range world {
				batch.PutChunk(p, pix)
			}
			st, err := s.Commit(batch)
			if err != nil {
				b.Fatal(err)
			}
			bytes[i] = st.RecordBytes
			s.Close()
		}
	}
	for i, m := range modes {
		b.ReportMetric(float64(bytes[i]), "B-"+m.name)
	}
	b.ReportMetric(float64(bytes[1])/float64(bytes[2]), "ratio-format1/all")
	b.ReportMetric(float64(bytes[0])/float64(bytes[2]), "ratio-off/all")
}

// BenchmarkCompactionFloor saves a small world (9 terrain chunks, 5 of
// them dug out anew each save, like the demo's) 40 times, compacting
// between saves whenever NeedsCompaction says so, with and without a floor
// of four raw chunks (4 MiB) of dead bytes before a compaction, and
// reports per save the time of the commit and the compaction steps, the
// bytes written by both, and the store's dead share after the save.
func BenchmarkCompactionFloor(b *testing.B) {
	for _, floor := range []bool{false, true} {
		b.Run(fmt.Sprintf("floor=%v", floor), func(b *testing.B) {
			base := make([][]uint32, 9)
			for i := range base {
				base[i] = make([]uint32, seedSize*seedSize)
				seedGen.Generate(int32(i%3), int32(i/3), 7, base[i])
			}
			var took time.Duration
			var written, saves int64
			var deadShare float64
			for b.Loop() {
				cfg := seedConfig()
				s, err := Create(filepath.Join(b.TempDir(), "w.pxsw"), &cfg)
				if err != nil {
					b.Fatal(err)
				}
				if floor {
					s.minDead = 4 * int64(seedSize*seedSize) * pixelSize
				}
				rng := rand.New(rand.NewPCG(9, 9))
				batch := s.NewBatch()
				for i, pix := range base {
					batch.PutChunk(Pos{int32(i % 3), int32(i / 3)}, modify(pix, 0.05, false, rng))
				}
				if _, err := s.Commit(batch); err != nil {
					b.Fatal(err)
				}
				for save := range 40 {
					batch := s.NewBatch()
					for k := range 5 {
						i := (save + 2*k) % len(base)
						batch.PutChunk(Pos{int32(i % 3), int32(i / 3)}, modify(base[i], 0.02+0.01*float64(save%4), false, rng))
					}
					t0 := time.Now()
					st, err := s.Commit(batch)
					if err != nil {
						b.Fatal(err)
					}
					written += st.BytesWritten
					for {
						cs, did, err := s.CompactNext()
						if err != nil {
							b.Fatal(err)
						}
						if !did {
							break
						}
						written += cs.Commit.BytesWritten
					}
					took += time.Since(t0)
					saves++
					stats := s.statistics()
					deadShare += float64(stats.DeadBytes) / float64(stats.FileSize)
				}
				s.Close()
			}
			b.ReportMetric(float64(took.Nanoseconds())/float64(saves), "ns/save")
			b.ReportMetric(float64(written)/float64(saves), "written-B/save")
			b.ReportMetric(deadShare/float64(saves), "dead-share")
		})
	}
}
