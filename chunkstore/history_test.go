package chunkstore_test

import (
	"math/rand/v2"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/vfs"
)

// Compaction under a long history: a save directory keeps every data file
// an older generation uses, so the files compaction empties stay on disk.
// Saves of a few changed chunks each, in a world of many, with compaction
// steps between them as the writer runs them (up to 8 while one is due):
// no emptied file is chosen again (a file whose live records were moved
// out is no candidate, and its dead bytes do not keep NeedsCompaction
// true), the steps always end before the bound, what they move stays
// within a small multiple of what the saves wrote, and every generation
// of the history still opens through its root with its contents.
func TestCompactionUnderLongHistory(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	cfg.DataFileSize = 16 << 10
	s := create(t, cfg)
	m := newModel()
	rng := rand.New(rand.NewPCG(25, 3))
	const side, changed, saves = 20, 5, 200
	b := s.NewBatch()
	for x := range int32(side) {
		for y := range int32(side) {
			m.putChunk(b, chunkstore.Pos{X: x, Y: y}, randomChunk(small, rng))
		}
	}
	written := recordBytes(commit(t, s, b))
	type kept struct {
		root []byte
		m    *model
	}
	var history []kept
	emptied := map[uint32]int{} // data file: the save after which compaction emptied it
	var moved int64
	steps := 0
	for i := range saves {
		b := s.NewBatch()
		for range changed {
			m.putChunk(b, chunkstore.Pos{X: rng.Int32N(side), Y: rng.Int32N(side)}, randomChunk(small, rng))
		}
		written += recordBytes(commit(t, s, b))
		if i%10 == 0 {
			history = append(history, kept{s.Root(), m.clone()})
		}
		step := 0
		for ; step < 8; step++ {
			st, did, err := s.CompactNext()
			must(t, err)
			if !did {
				break
			}
			for _, f := range st.Files {
				if at, again := emptied[f]; again {
					t.Fatalf("save %d: data file %d compacted again (emptied after save %d)", i, f, at)
				}
				emptied[f] = i
			}
			moved += st.Moved
		}
		expect(t, step < 8, "save %d: compaction still due after 8 steps: %+v", i, storetool.Tool.Stats(s))
		expect(t, !s.NeedsCompaction(), "save %d: compaction due after the steps ended", i)
		for _, f := range storetool.Tool.Files(s) {
			_, gone := emptied[f.Number]
			expect(t, !gone, "save %d: emptied data file %d is in the generation again", i, f.Number)
		}
		steps += step
	}
	expect(t, len(emptied) > 5, "compaction emptied %d files: the test needs it to run", len(emptied))
	// Log-structured cleaning at a 25%% threshold moves at most about
	// 3 bytes of live records per byte a save frees; allow twice that.
	expect(t, moved <= 6*(written-int64(side*side*npix*4)), "compaction moved %d bytes for %d written", moved, written)
	t.Logf("%d saves wrote %d bytes; %d compaction steps emptied %d files, moving %d bytes", saves, written, steps, len(emptied), moved)
	expectSame(t, m, s, ^uint32(0))
	mustCheck(t, s)
	for _, h := range history {
		old := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, atRoot(cfg, h.root)))
		expectSame(t, h.m, old, ^uint32(0))
		must(t, old.Close())
	}
}

func recordBytes(st chunkstore.CommitStats) int64 { return st.RecordBytes + st.TableBytes }

// BenchmarkCompactionMoves reports what compaction between saves moves,
// against what the saves write and the live world: 400 saves into a world
// of 400 chunks (records of 1 KiB that do not compress), 16 KiB data
// files, up to 8 steps after each save as the writer runs them. Uniform:
// 5 chunks anywhere each save; skewed: 4 of 9 hot chunks and 1 anywhere.
// A record compaction moves lands in the file the saves append to, so a
// cold record beside hot ones is moved again each time that file is
// compacted; under a long retention every copy stays on disk while older
// generations use the file it came from. Run with -benchtime=1x.
func BenchmarkCompactionMoves(b *testing.B) {
	for _, skewed := range []bool{false, true} {
		name := map[bool]string{false: "uniform", true: "skewed"}[skewed]
		b.Run(name, func(b *testing.B) {
			var live, written, moved int64
			for b.Loop() {
				live, written, moved = compactionMoves(b, skewed)
			}
			b.ReportMetric(float64(moved)/float64(written), "moved/written")
			b.ReportMetric(float64(moved)/float64(live), "moved/live")
		})
	}
}

func compactionMoves(b *testing.B, skewed bool) (live, written, moved int64) {
	cfg := testConfig(vfs.NewMem())
	cfg.DataFileSize = 16 << 10
	s := create(b, cfg)
	defer s.Close()
	rng := rand.New(rand.NewPCG(25, 3))
	const side = 20
	batch := s.NewBatch()
	for x := range int32(side) {
		for y := range int32(side) {
			batch.PutChunk(chunkstore.Pos{X: x, Y: y}, randomChunk(small, rng))
		}
	}
	live = recordBytes(commit(b, s, batch))
	for range 400 {
		batch := s.NewBatch()
		for k := range 5 {
			p := chunkstore.Pos{X: rng.Int32N(side), Y: rng.Int32N(side)}
			if skewed && k < 4 {
				p = chunkstore.Pos{X: rng.Int32N(3), Y: rng.Int32N(3)}
			}
			batch.PutChunk(p, randomChunk(small, rng))
		}
		written += recordBytes(commit(b, s, batch))
		for range 8 {
			st, did, err := s.CompactNext()
			must(b, err)
			if !did {
				break
			}
			moved += st.Moved
		}
	}
	return live, written, moved
}

// A generation made current again by an empty commit at its root (as a
// save directory restores a kept generation) must not make a later commit
// write over the records of the generations after it, however many such
// commits follow one another.
func TestCommitAtOldRootKeepsNewerGenerations(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	cfg.DataFileSize = 64 << 10
	s := must2[*chunkstore.Store](t)(chunkstore.Create(storePath, &cfg))
	rng := rand.New(rand.NewPCG(5, 5))
	m := newModel()
	var models []*model
	var roots [][]byte
	for g := range 3 {
		b := s.NewBatch()
		for i := range 8 {
			m.putChunk(b, chunkstore.Pos{X: int32(i), Y: int32(g)}, randomChunk(small, rng))
		}
		must2[chunkstore.CommitStats](t)(s.Commit(b))
		models, roots = append(models, m.clone()), append(roots, s.Root())
	}
	must(t, s.Close())
	// Generations 1 and 2 made current again, one after the other, then a
	// commit with records at generation 1.
	for _, i := range []int{0, 1, 0} {
		s = must2[*chunkstore.Store](t)(chunkstore.Open(storePath, atRoot(testConfig(mem), roots[i])))
		b := s.NewBatch()
		if i == 0 && len(roots) > 3 {
			b.PutChunk(chunkstore.Pos{X: 50, Y: 50}, randomChunk(small, rng))
		}
		must2[chunkstore.CommitStats](t)(s.Commit(b))
		roots = append(roots, s.Root())
		must(t, s.Close())
	}
	for i := range 3 {
		old := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, atRoot(testConfig(mem), roots[i])))
		expect(t, models[i].diff(old, small, ^uint32(0)) == "", "generation %d: %s", i+1, models[i].diff(old, small, ^uint32(0)))
		mustCheck(t, old)
		must(t, old.Close())
	}
}
