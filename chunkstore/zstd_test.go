package chunkstore_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/vfs"
)

// layeredChunk is a chunk as games have them: a few materials in bands,
// with some noise; LZ4 compresses it, zstd better.
func layeredChunk(p chunkstore.Pos, rng *rand.Rand) []uint32 {
	pix := make([]uint32, npix)
	for i := range pix {
		y := i / small
		pix[i] = uint32(1+(y+int(p.X))%5)<<8 | uint32(p.Y&0xff)
		if rng.IntN(8) == 0 {
			pix[i] |= uint32(rng.IntN(4)) << 16
		}
	}
	return pix
}

// zstdWorld commits three generations of layered chunks and bodies to a
// store of small data files, overwriting most chunks each time so that
// compaction has work, and returns the model of each generation with its
// root.
func zstdWorld(t *testing.T, s *chunkstore.Store) ([]*model, [][]byte) {
	t.Helper()
	rng := rand.New(rand.NewPCG(26, 8))
	m := newModel()
	var models []*model
	var roots [][]byte
	for g := range 3 {
		b := s.NewBatch()
		for i := range 96 {
			if g > 0 && i%4 == 0 {
				continue // a quarter stays from the first generation
			}
			p := chunkstore.Pos{X: int32(i % 12), Y: int32(i / 12)}
			m.putChunk(b, p, layeredChunk(chunkstore.Pos{X: p.X + int32(g), Y: p.Y}, rng))
		}
		for i := range 3 {
			p := chunkstore.Pos{X: int32(i), Y: 20}
			m.putBodies(b, p, []chunkstore.Body{body(uint64(10*g+i+1), 8, 6, rng)})
		}
		must2[chunkstore.CommitStats](t)(s.Commit(b))
		models = append(models, m.clone())
		roots = append(roots, s.Root())
	}
	return models, roots
}

// countZstd counts the records stored as zstd in the store's files.
func countZstd(t *testing.T, mem vfs.FS, path string) int {
	t.Helper()
	n := 0
	must(t, storetool.Tool.Scan(mem, path, func(r storetool.ScanRecord) bool {
		if r.Zstd {
			n++
		}
		return true
	}))
	return n
}

// With ZstdArchive, the records compaction moves are stored as zstd, the
// records a commit writes stay LZ4, and every generation kept reads exactly
// as committed, with or without the option.
func TestZstdArchiveCompaction(t *testing.T) {
	for _, archive := range []bool{false, true} {
		mem := vfs.NewMem()
		cfg := testConfig(mem)
		cfg.ZstdArchive = archive
		s := must2[*chunkstore.Store](t)(chunkstore.Create(storePath, &cfg))
		models, roots := zstdWorld(t, s)
		if r := s.Check(); !r.OK() || r.Zstd != 0 {
			t.Fatalf("archive %v: before compaction: %d zstd records (commits write LZ4): %s", archive, r.Zstd, r)
		}
		moved := 0
		for range 100 {
			st, did, err := s.CompactNext()
			must(t, err)
			if !did {
				break
			}
			moved += st.Zstd
		}
		r := s.Check()
		if !r.OK() {
			t.Fatalf("archive %v: %s", archive, r)
		}
		if archive != (moved > 0) || r.Zstd > moved || archive != (r.Zstd > 0) || countZstd(t, mem, storePath) < r.Zstd {
			t.Fatalf("archive %v: compaction stored %d records as zstd, %d live, %d in the files", archive, moved, r.Zstd, countZstd(t, mem, storePath))
		}
		expect(t, models[2].diff(s, small, ^uint32(0)) == "", "archive %v: after compaction: %s", archive, models[2].diff(s, small, ^uint32(0)))
		gen := s.Generation()
		must(t, s.Close())
		// Every generation kept, through its root, by a store opened
		// without the option.
		plain := testConfig(mem)
		for i, root := range roots {
			old := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, atRoot(plain, root)))
			expect(t, models[i].diff(old, small, ^uint32(0)) == "", "archive %v: generation %d: %s", archive, i+1, models[i].diff(old, small, ^uint32(0)))
			must(t, old.Close())
		}
		s = must2[*chunkstore.Store](t)(chunkstore.Open(storePath, atGeneration(plain, gen)))
		expect(t, models[2].diff(s, small, ^uint32(0)) == "", "archive %v: reopened: %s", archive, models[2].diff(s, small, ^uint32(0)))
		mustCheck(t, s)
		must(t, s.Close())
	}
}

// Compact and CompactTo archive too: every record they move that zstd
// makes smaller.
func TestZstdArchiveWholeStore(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	s := must2[*chunkstore.Store](t)(chunkstore.Create(storePath, &cfg))
	models, _ := zstdWorld(t, s)
	must(t, s.Close())
	cfg.ZstdArchive, cfg.ZstdLevel = true, 4
	s = must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &cfg))
	c := must2[*chunkstore.Store](t)(s.CompactTo("/copy.pxsw"))
	r := c.Check()
	expect(t, r.OK() && r.Zstd > 0, "CompactTo: %d zstd records: %s", r.Zstd, r)
	expect(t, models[2].diff(c, small, ^uint32(0)) == "", "CompactTo: %s", models[2].diff(c, small, ^uint32(0)))
	must(t, c.Close())
	must(t, s.Compact())
	r = s.Check()
	expect(t, r.OK() && r.Zstd > 0, "Compact: %d zstd records: %s", r.Zstd, r)
	expect(t, models[2].diff(s, small, ^uint32(0)) == "", "Compact: %s", models[2].diff(s, small, ^uint32(0)))
	// A commit after it writes LZ4 again, and shares nothing wrongly.
	b := s.NewBatch()
	m := models[2]
	m.putChunk(b, chunkstore.Pos{X: 0, Y: 0}, m.chunks[chunkstore.Pos{X: 1, Y: 0}])
	must2[chunkstore.CommitStats](t)(s.Commit(b))
	expect(t, m.diff(s, small, ^uint32(0)) == "", "after a commit: %s", m.diff(s, small, ^uint32(0)))
	mustCheck(t, s)
	must(t, s.Close())
}

func TestZstdLevelChecked(t *testing.T) {
	for _, level := range []int{-1, 5} {
		cfg := testConfig(vfs.NewMem())
		cfg.ZstdArchive, cfg.ZstdLevel = true, level
		_, err := chunkstore.Create(storePath, &cfg)
		expect(t, errors.Is(err, chunkstore.ErrInvalidConfig), "ZstdLevel %d: %v", level, err)
	}
}

// A damaged zstd record is reported by Check under its chunk, and reading
// the chunk fails with ErrCorrupt (the save directory regenerates it), as
// for an LZ4 record.
func TestZstdDamagedRecord(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	cfg.ZstdArchive = true
	s := must2[*chunkstore.Store](t)(chunkstore.Create(storePath, &cfg))
	zstdWorld(t, s)
	for range 100 {
		if _, did, err := s.CompactNext(); err != nil || !did {
			must(t, err)
			break
		}
	}
	live := map[int64]storetool.Entry{}
	storetool.Tool.Entries(s, func(e storetool.Entry) bool {
		live[e.Handle.Offset] = e
		return true
	})
	gen := s.Generation()
	must(t, s.Close())
	var target storetool.ScanRecord
	must(t, storetool.Tool.Scan(mem, storePath, func(r storetool.ScanRecord) bool {
		if e, ok := live[r.Handle.Offset]; ok && r.Zstd && e.Type != chunkstore.BodyBlock && target.Kind == 0 {
			target = r
		}
		return true
	}))
	expect(t, target.Kind != 0, "no live zstd chunk record")
	name, off := locate(storePath, target.Handle.Offset)
	f := must2[vfs.File](t)(mem.OpenRW(name))
	b := make([]byte, 1)
	at := off + int64(target.Handle.Length) - 2
	must2[int](t)(f.ReadAt(b, at))
	b[0] ^= 0x55
	must2[int](t)(f.WriteAt(b, at))
	must(t, f.Close())

	s = must2[*chunkstore.Store](t)(chunkstore.Open(storePath, atGeneration(testConfig(mem), gen)))
	defer s.Close()
	r := s.Check()
	found := false
	for _, p := range r.Problems {
		found = found || p.Pos != nil && *p.Pos == target.Pos && errors.Is(p.Err, chunkstore.ErrCorrupt)
	}
	expect(t, found, "check does not report the damaged zstd record of chunk %v: %s", target.Pos, r)
	_, err := s.Get(target.Pos, make([]uint32, npix))
	expect(t, errors.Is(err, chunkstore.ErrCorrupt), "Get of the damaged chunk: %v", err)
}
