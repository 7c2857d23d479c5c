package chunkstore_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/vfs"
)

const storePath = "/w.pxsw"

// keeps are the crash modes: drop everything not synced, keep everything,
// and keep a random part (some writes torn) under several seeds.
var keeps = []struct {
	keep float64
	seed uint64
}{{0, 0}, {1, 0}, {0.5, 1}, {0.5, 2}, {0.5, 3}}

// generation is a committed state a crash may leave: its number and
// contents.
type generation struct {
	gen uint64
	m   *model
}

// crashEvery runs op on a store opened over a copy of base, crashing just
// before its 0th, 1st, 2nd, ... mutating call, until op completes without
// reaching the crash point. After each crash, verify gets the disk a
// restarted machine would find; after the full run it gets the final disk.
func crashEvery(t *testing.T, base *vfs.Mem, cfg chunkstore.Options, openGen int64,
	op func(*chunkstore.Store) error, verify func(t *testing.T, disk *vfs.Mem, finished bool)) {
	t.Helper()
	for _, k := range keeps {
		for n := 0; ; n++ {
			disk := base.Crash(1, nil)
			var rng *rand.Rand
			if k.keep > 0 && k.keep < 1 {
				rng = rand.New(rand.NewPCG(k.seed, uint64(n)))
			}
			faulty, crasher := vfs.NewCrashFS(disk, n, k.keep, rng)
			c := cfg
			c.FS = faulty
			var s *chunkstore.Store
			var err error
			if openGen >= 0 {
				s, err = chunkstore.Open(storePath, atGeneration(c, uint64(openGen)))
			} else {
				s, err = chunkstore.Open(storePath, &c)
			}
			must(t, err)
			err = op(s)
			s.Close()
			after := crasher.Crashed()
			name := fmt.Sprintf("keep %v seed %d, crash before mutating call %d", k.keep, k.seed, n)
			if after == nil {
				if err != nil {
					t.Fatalf("%s: never reached, yet: %v", name, err)
				}
				t.Run("finished", func(t *testing.T) { verify(t, disk, true) })
				break
			}
			if err == nil {
				t.Fatalf("%s: op returned no error", name)
			}
			if !t.Run(name, func(t *testing.T) { verify(t, after, false) }) {
				t.FailNow()
			}
		}
	}
}

// expectOneOf opens the disk at its newest generation and requires exactly
// one of the states: same generation number, same contents.
func expectOneOf(t *testing.T, disk *vfs.Mem, cfg chunkstore.Options, states ...generation) *chunkstore.Store {
	t.Helper()
	cfg.FS = disk
	s, err := chunkstore.Open(storePath, &cfg)
	must(t, err)
	var diffs []string
	for _, st := range states {
		if s.Generation() != st.gen {
			continue
		}
		d := st.m.diff(s, int(cfg.ChunkSize), keptMask(cfg.Layers))
		if d == "" {
			checkAfterCrash(t, s)
			return s
		}
		diffs = append(diffs, d)
	}
	var gens []uint64
	for _, st := range states {
		gens = append(gens, st.gen)
	}
	t.Fatalf("opened at generation %d, not one of %v: %v", s.Generation(), gens, diffs)
	return nil
}

// keptMask returns the bits a store with these layers keeps: all without
// layers.
func keptMask(layers []chunkstore.Layer) uint32 {
	if layers == nil {
		return ^uint32(0)
	}
	return chunkstore.LayerMask(layers)
}

// checkAfterCrash runs the checker and accepts one problem only: the header
// slot a crashed commit was writing (it is not the one in use, and the
// next commit overwrites it).
func checkAfterCrash(t *testing.T, s *chunkstore.Store) {
	t.Helper()
	r := s.Check()
	inUse := int64(s.Generation()%2) * 64
	for _, p := range r.Problems {
		if p.Section != chunkstore.SectionHeader || p.Offset == inUse {
			t.Fatalf("check after crash: %s", r)
		}
	}
}

// history builds a store over small chunks with a few commits of every
// kind of change and returns the disk and each generation's contents.
func history(t *testing.T, cfg chunkstore.Options, commits int) (*vfs.Mem, []generation) {
	t.Helper()
	mem := vfs.NewMem()
	cfg.FS = mem
	s := must2[*chunkstore.Store](t)(chunkstore.Create(storePath, &cfg))
	defer s.Close()
	rng := rand.New(rand.NewPCG(uint64(commits), 11))
	m := newModel()
	gens := []generation{{0, m.clone()}}
	for i := range commits {
		b := s.NewBatch()
		changeSome(b, m, int(cfg.ChunkSize), i, rng)
		commit(t, s, b)
		gens = append(gens, generation{s.Generation(), m.clone()})
	}
	return mem, gens
}

// changeSome puts a mix of chunk kinds, deletions and bodies in a batch.
func changeSome(b *chunkstore.Batch, m *model, size, i int, rng *rand.Rand) {
	p := func(x int) chunkstore.Pos { return chunkstore.Pos{X: int32(x), Y: int32(i % 3)} }
	m.putChunk(b, p(i), deltaChunk(p(i), size, 1+rng.IntN(size), rng))
	m.putChunk(b, p(i+1), randomChunk(size, rng))
	m.putChunk(b, p(i+2), make([]uint32, size*size))
	m.putChunk(b, p(i+3), uniformChunk(size, 0x0302))
	if i > 0 {
		m.deleteChunk(b, p(i-1))
	}
	m.putBodies(b, p(i), []chunkstore.Body{body(uint64(i), uint32(1+rng.IntN(9)), 3, rng)})
	if i > 1 {
		m.putBodies(b, p(i-2), nil)
	}
}

func TestCrashDuringCommit(t *testing.T) {
	cfg := testConfig(nil)
	for _, tc := range []struct {
		name    string
		commits int // before the crashing one
		batch   func(b *chunkstore.Batch, m *model, rng *rand.Rand)
	}{
		{"journal-segment", 2, func(b *chunkstore.Batch, m *model, rng *rand.Rand) { changeSome(b, m, small, 5, rng) }},
		{"merging-segment", 7, func(b *chunkstore.Batch, m *model, rng *rand.Rand) { changeSome(b, m, small, 9, rng) }},
		{"checkpoint", 2, func(b *chunkstore.Batch, m *model, rng *rand.Rand) {
			for i := range 5000 {
				m.putChunk(b, chunkstore.Pos{X: int32(i % 100), Y: 10 + int32(i/100)}, make([]uint32, npix))
			}
		}},
		{"empty", 2, func(*chunkstore.Batch, *model, *rand.Rand) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, gens := history(t, cfg, tc.commits)
			old := gens[len(gens)-1]
			next := generation{old.gen + 1, old.m.clone()}
			b := (&chunkstore.Store{}).NewBatch()
			tc.batch(b, next.m, rand.New(rand.NewPCG(3, 3)))
			var wantCheckpoint bool
			crashEvery(t, base, cfg, -1, func(s *chunkstore.Store) error {
				st, err := s.Commit(b)
				wantCheckpoint = st.Checkpoint
				return err
			}, func(t *testing.T, disk *vfs.Mem, finished bool) {
				if finished {
					s := expectOneOf(t, disk, cfg, next)
					s.Close()
					return
				}
				expectOneOf(t, disk, cfg, old, next).Close()
			})
			if tc.name == "checkpoint" && !wantCheckpoint {
				t.Fatal("the commit did not write a checkpoint")
			}
		})
	}
}

func TestCrashDuringCompact(t *testing.T) {
	cfg := testConfig(nil)
	base, gens := history(t, cfg, 4)
	old := gens[len(gens)-1]
	next := generation{old.gen + 1, old.m}
	crashEvery(t, base, cfg, -1, func(s *chunkstore.Store) error { return s.Compact() },
		func(t *testing.T, disk *vfs.Mem, finished bool) {
			s := expectOneOf(t, disk, cfg, old, next)
			defer s.Close()
			if finished {
				expect(t, s.Generation() == next.gen, "compaction did not land: %d", s.Generation())
				expect(t, storetool.Tool.Stats(s).DeadBytes == 0, "dead bytes after compaction: %+v", storetool.Tool.Stats(s))
			}
			// The compacted file keeps the old generation in its other slot.
			c := cfg
			c.FS = disk
			at := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, atGeneration(c, old.gen)))
			if d := old.m.diff(at, small, ^uint32(0)); d != "" {
				t.Fatal(d)
			}
			at.Close()
		})
}

func TestCrashDuringCompactTo(t *testing.T) {
	cfg := testConfig(nil)
	base, gens := history(t, cfg, 4)
	old := gens[len(gens)-1]
	const copyPath = "/copy.pxsw"
	crashEvery(t, base, cfg, -1, func(s *chunkstore.Store) error {
		c, err := s.CompactTo(copyPath)
		if err == nil {
			c.Close()
		}
		return err
	}, func(t *testing.T, disk *vfs.Mem, finished bool) {
		expectOneOf(t, disk, cfg, old).Close() // the original is untouched
		c := cfg
		c.FS = disk
		cp, err := chunkstore.Open(copyPath, &c)
		if finished {
			must(t, err)
		}
		if err != nil {
			return // the rename did not survive: no copy, which is fine
		}
		defer cp.Close()
		expect(t, cp.Generation() == old.gen+1, "copy at generation %d", cp.Generation())
		if d := old.m.diff(cp, small, ^uint32(0)); d != "" {
			t.Fatal(d)
		}
		mustCheck(t, cp)
	})
}

// The save directory's case: the manifest names G, the file already holds
// G+1 (its manifest step never happened). The store is opened at G and a new
// G+1 committed; a crash anywhere in that commit leaves G loadable through
// Open at a generation, and Open sees the old G+1, G or the new G+1, never a mix.
func TestOpenAtOlderGenerationThenCommit(t *testing.T) {
	cfg := testConfig(nil)
	base, gens := history(t, cfg, 3)
	g, abandoned := gens[2], gens[3] // G = 2 in the manifest; G+1 = 3 in the file
	next := generation{abandoned.gen, g.m.clone()}
	b := (&chunkstore.Store{}).NewBatch()
	rng := rand.New(rand.NewPCG(4, 4))
	changeSome(b, next.m, small, 20, rng)
	verifyG := func(t *testing.T, disk *vfs.Mem) {
		c := cfg
		c.FS = disk
		s := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, atGeneration(c, g.gen)))
		defer s.Close()
		if d := g.m.diff(s, small, ^uint32(0)); d != "" {
			t.Fatalf("generation %d opened at its generation: %s", g.gen, d)
		}
		checkAfterCrash(t, s)
	}
	crashEvery(t, base, cfg, int64(g.gen), func(s *chunkstore.Store) error {
		expect(t, s.Generation() == g.gen, "Open at a generation gave %d", s.Generation())
		_, err := s.Commit(b)
		return err
	}, func(t *testing.T, disk *vfs.Mem, finished bool) {
		verifyG(t, disk)
		if finished {
			expectOneOf(t, disk, cfg, next).Close()
			return
		}
		expectOneOf(t, disk, cfg, abandoned, g, next).Close()
	})

	// And once more from there: reopen at G again, commit twice.
	disk := base.Crash(1, nil)
	c := cfg
	c.FS = disk
	s := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, atGeneration(c, g.gen)))
	commit(t, s, b)
	b2 := s.NewBatch()
	next2 := generation{next.gen + 1, next.m.clone()}
	changeSome(b2, next2.m, small, 30, rng)
	commit(t, s, b2)
	s.Close()
	expectOneOf(t, disk, cfg, next2).Close()
	// G was overwritten by G+2 (same slot parity): opening at G now fails cleanly.
	_, err := chunkstore.Open(storePath, atGeneration(c, g.gen))
	expect(t, err != nil, "generation %d still found after two commits", g.gen)
}
