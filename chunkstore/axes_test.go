package chunkstore_test

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/vfs"
)

// keyGen generates the chunks of a world of 3 or 4 axes: the terrain of
// another (x, y) for every z and w, so that keys that differ only there
// generate different chunks.
type keyGen struct{}

func (keyGen) Version() uint32 { return gen.Version() }

func (keyGen) Generate(x, y int32, seed uint64, dst []uint32) { gen.Generate(x, y, seed, dst) }

func (keyGen) GenerateKey(k chunkstore.Key, seed uint64, dst []uint32) {
	gen.Generate(k.Axis(0)+37*k.Axis(2), k.Axis(1)-53*k.Axis(3), seed, dst)
}

func keyGenerated(k chunkstore.Key) []uint32 {
	dst := make([]uint32, npix)
	keyGen{}.GenerateKey(k, 7, dst)
	return dst
}

func axesConfig(fsys vfs.FS, n int) chunkstore.Options {
	c := testConfig(fsys)
	c.Axes, c.Generator = n, keyGen{}
	c.CheckpointRatio = 0.2 // journal segments and checkpoints both
	return c
}

// keyModel is what a store of N axes should hold.
type keyModel struct {
	chunks map[chunkstore.Key][]uint32
	bodies map[chunkstore.Key][]chunkstore.Body
}

func newKeyModel() *keyModel {
	return &keyModel{chunks: map[chunkstore.Key][]uint32{}, bodies: map[chunkstore.Key][]chunkstore.Body{}}
}

// randomKey returns a key of n axes in a small cube, so that positions
// repeat, differ only in z or w, and cross zero.
func randomKey(n int, rng *rand.Rand) chunkstore.Key {
	a := func() int32 { return int32(rng.IntN(9) - 4) }
	switch n {
	case 3:
		return chunkstore.Key3(a(), a(), a())
	case 4:
		return chunkstore.Key4(a(), a(), a(), a())
	}
	return chunkstore.Key2(a(), a())
}

// change puts, deletes or replaces a few chunks and body sets.
func (m *keyModel) change(b *chunkstore.Batch, n, count int, rng *rand.Rand) {
	for range count {
		k := randomKey(n, rng)
		switch rng.IntN(6) {
		case 0:
			b.DeleteChunkKey(k)
			delete(m.chunks, k)
		case 1:
			m.put(b, k, uniformChunk(small, 0)) // Empty, or as generated (air)
		case 2:
			m.put(b, k, uniformChunk(small, 0x01020304)) // shared through the dictionary
		case 3:
			pix := keyGenerated(k)
			for range 5 {
				pix[rng.IntN(npix)] = rng.Uint32() // Delta
			}
			m.put(b, k, pix)
		case 4:
			m.put(b, k, randomChunk(small, rng)) // Full
		case 5:
			bodies := []chunkstore.Body{body(rng.Uint64(), 3, 2, rng)}
			b.PutEntitiesKey(k, chunkstore.EntityBlock{Bodies: bodies})
			m.bodies[k] = bodies
		}
	}
}

// put stores pix at k: a chunk as generated is not stored.
func (m *keyModel) put(b *chunkstore.Batch, k chunkstore.Key, pix []uint32) {
	b.PutChunkKey(k, pix)
	if slices.Equal(pix, keyGenerated(k)) {
		delete(m.chunks, k)
	} else {
		m.chunks[k] = pix
	}
}

// diff compares the store with the model over every key either knows.
func (m *keyModel) diff(s *chunkstore.Store) string {
	seen := map[chunkstore.Key]bool{}
	for k := range m.chunks {
		seen[k] = true
	}
	for k := range m.bodies {
		seen[k] = true
	}
	s.Entries(func(e chunkstore.Entry) bool {
		seen[e.Key] = true
		return true
	})
	dst := make([]uint32, npix)
	for k := range seen {
		if _, err := s.GetKey(k, dst); err != nil {
			return fmt.Sprintf("chunk %v: %v", k, err)
		}
		want, ok := m.chunks[k]
		if !ok {
			want = keyGenerated(k)
		}
		if !slices.Equal(dst, want) {
			return fmt.Sprintf("chunk %v differs", k)
		}
		blk, err := s.EntitiesKey(k)
		if err != nil {
			return fmt.Sprintf("bodies %v: %v", k, err)
		}
		if d := diffBodies(blk.Bodies, m.bodies[k], ^uint32(0)); d != "" {
			return fmt.Sprintf("bodies %v: %s", k, d)
		}
	}
	return ""
}

// storedIn lists the model's keys in b, in page-table order (last axis
// first), chunks (other than deleted) and body sets alike.
func (m *keyModel) storedIn(b chunkstore.Box) []chunkstore.Key {
	var ks []chunkstore.Key
	for k := range m.chunks {
		if b.Contains(k) {
			ks = append(ks, k)
		}
	}
	for k := range m.bodies {
		if _, dup := m.chunks[k]; !dup && b.Contains(k) {
			ks = append(ks, k)
		}
	}
	slices.SortFunc(ks, compareKeys)
	return ks
}

func compareKeys(a, b chunkstore.Key) int {
	for i := chunkstore.MaxAxes - 1; i >= 0; i-- {
		if c := a.Axis(i) - b.Axis(i); c != 0 {
			if c < 0 {
				return -1
			}
			return 1
		}
	}
	return 0
}

// expectRange compares EntriesIn over random boxes with the model.
func expectRange(t *testing.T, s *chunkstore.Store, m *keyModel, n int, rng *rand.Rand) {
	t.Helper()
	for range 50 {
		lo, hi := randomKey(n, rng), randomKey(n, rng)
		var cmin, cmax [chunkstore.MaxAxes]int32
		for i := range n {
			cmin[i], cmax[i] = min(lo.Axis(i), hi.Axis(i)), max(lo.Axis(i), hi.Axis(i))
		}
		box := chunkstore.Box{Min: keyOfAxes(n, cmin), Max: keyOfAxes(n, cmax)}
		es := must2[[]chunkstore.Entry](t)(s.EntriesIn(box))
		var got []chunkstore.Key
		for _, e := range es {
			if len(got) == 0 || got[len(got)-1] != e.Key {
				got = append(got, e.Key)
			}
			expect(t, box.Contains(e.Key), "box %v: entry %v outside", box, e.Key)
		}
		want := m.storedIn(box)
		if !slices.Equal(got, want) {
			var all []chunkstore.Key
			s.Entries(func(e chunkstore.Entry) bool {
				if box.Contains(e.Key) {
					all = append(all, e.Key)
				}
				return true
			})
			t.Logf("entries in box by a full scan: %v", all)
		}
		expect(t, slices.Equal(got, want), "box %v: %v, want %v", box, got, want)
	}
}

func keyOfAxes(n int, c [chunkstore.MaxAxes]int32) chunkstore.Key {
	switch n {
	case 3:
		return chunkstore.Key3(c[0], c[1], c[2])
	case 4:
		return chunkstore.Key4(c[0], c[1], c[2], c[3])
	}
	return chunkstore.Key2(c[0], c[1])
}

// A store of 3 or 4 axes: create, commit (journal segments and
// checkpoints), reopen, range queries, compaction file by file and whole,
// the checker, and a page table lost and rebuilt by the forward scan; keys
// that differ only in z or w stay apart throughout.
func TestAxesStore(t *testing.T) {
	for _, n := range []int{3, 4} {
		t.Run(fmt.Sprint(n, " axes"), func(t *testing.T) {
			mem := vfs.NewMem()
			cfg := axesConfig(mem, n)
			s := must2[*chunkstore.Store](t)(chunkstore.Create(storePath, &cfg))
			expect(t, s.Options().Axes == n, "created with %d axes, reports %d", n, s.Options().Axes)
			m := newKeyModel()
			rng := rand.New(rand.NewPCG(uint64(n), 14))
			dst := make([]uint32, npix)
			for range 12 {
				b := s.NewBatch()
				m.change(b, n, 20, rng)
				commit(t, s, b)
				expect(t, m.diff(s) == "", "after commit %d: %s", s.Generation(), m.diff(s))
				expectRange(t, s, m, n, rng)
			}
			mustCheck(t, s)
			must(t, s.Close())

			// Reopen without saying the axes: the header has them.
			open := axesConfig(mem, 0)
			s = must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &open))
			expect(t, s.Options().Axes == n, "reopened with %d axes", s.Options().Axes)
			expect(t, m.diff(s) == "", "after reopen: %s", m.diff(s))
			expectRange(t, s, m, n, rng)

			// Compaction, file by file, then whole; commits in between
			// keep the range index current.
			for {
				_, ok, err := s.CompactNext()
				must(t, err)
				if !ok {
					break
				}
			}
			b := s.NewBatch()
			m.change(b, n, 10, rng)
			commit(t, s, b)
			must(t, s.Compact())
			expect(t, m.diff(s) == "", "after compaction: %s", m.diff(s))
			expectRange(t, s, m, n, rng)
			mustCheck(t, s)
			must(t, s.Close())

			// The page table lost: the header of every table record
			// damaged, so Open rebuilds the index by the forward scan, from
			// the chunk and body records' own keys (after Compact every
			// record is live). What only the table held is lost: Empty
			// chunks, and the keys other than its own of a record the
			// dictionary shares; they regenerate.
			files, lost := loseTables(t, mem, n)
			cfg = axesConfig(memWithFiles(t, files), 0)
			s = must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &cfg))
			r := s.OpenReport()
			expect(t, !r.OK(), "a lost page table not reported")
			expect(t, s.Options().Axes == n, "rebuilt with %d axes", s.Options().Axes)
			shared, kept := 0, 0
			for k, pix := range m.chunks {
				if slices.Equal(pix, uniformChunk(small, 0)) {
					delete(m.chunks, k) // Empty: no record, only a page-table entry
					continue
				}
				if !slices.Equal(pix, uniformChunk(small, 0x01020304)) {
					continue
				}
				shared++
				if _, err := s.GetKey(k, dst); err == nil && slices.Equal(dst, keyGenerated(k)) {
					delete(m.chunks, k)
				} else {
					kept++
				}
			}
			expect(t, shared == 0 || kept == 1, "%d of %d keys of one shared record kept", kept, shared)
			expect(t, m.diff(s) == "", "after the rebuild: %s", m.diff(s))
			expectRange(t, s, m, n, rng)
			// The rebuilt store commits a fresh checkpoint; the checker
			// names the damaged bytes until a compaction drops them.
			b = s.NewBatch()
			m.change(b, n, 5, rng)
			commit(t, s, b)
			r = s.Check()
			expect(t, len(r.Problems) == lost, "check after the rebuild: %s", r)
			for _, p := range r.Problems {
				expect(t, errors.Is(p.Err, chunkstore.ErrChecksum), "check after the rebuild: %v", p)
			}
			must(t, s.Compact())
			mustCheck(t, s)
			expect(t, m.diff(s) == "", "after a commit on the rebuilt store: %s", m.diff(s))
			must(t, s.Close())
		})
	}
}

// A store takes keys of its own axes only; every other key is refused
// with ErrAxes, naming both counts, and a refused commit writes nothing.
func TestAxesRefuseOtherKeys(t *testing.T) {
	mem := vfs.NewMem()
	cfg := axesConfig(mem, 3)
	s := must2[*chunkstore.Store](t)(chunkstore.Create(storePath, &cfg))
	dst := make([]uint32, npix)
	_, err := s.Get(chunkstore.Pos{X: 1, Y: 2}, dst)
	expect(t, errors.Is(err, chunkstore.ErrAxes), "Get(Pos) on 3 axes: %v", err)
	_, err = s.GetKey(chunkstore.Key4(1, 2, 3, 4), dst)
	expect(t, errors.Is(err, chunkstore.ErrAxes), "4-axis key on 3 axes: %v", err)
	_, err = s.Bodies(chunkstore.Pos{})
	expect(t, errors.Is(err, chunkstore.ErrAxes), "Bodies(Pos) on 3 axes: %v", err)
	_, err = s.EntriesIn(chunkstore.Box{Min: chunkstore.Key2(0, 0), Max: chunkstore.Key2(1, 1)})
	expect(t, errors.Is(err, chunkstore.ErrAxes), "2-axis box on 3 axes: %v", err)
	var zero chunkstore.Key
	_, err = s.GetKey(zero, dst)
	expect(t, errors.Is(err, chunkstore.ErrAxes), "zero key: %v", err)

	b := s.NewBatch()
	b.PutChunkKey(chunkstore.Key3(1, 1, 1), randomChunk(small, rand.New(rand.NewPCG(1, 1))))
	b.PutChunk(chunkstore.Pos{X: 1, Y: 1}, uniformChunk(small, 5))
	_, err = s.Commit(b)
	expect(t, errors.Is(err, chunkstore.ErrAxes), "commit of a 2-axis key on 3 axes: %v", err)
	expect(t, s.Generation() == 0 && storetool.Tool.Stats(s).Chunks == 0, "a refused commit wrote generation %d", s.Generation())
	mustCheck(t, s)
	must(t, s.Close())

	// Opening with other axes, or a generator that cannot take keys.
	o := axesConfig(mem, 4)
	_, err = chunkstore.Open(storePath, &o)
	expect(t, errors.Is(err, chunkstore.ErrConfigMismatch), "open 3 axes as 4: %v", err)
	o = testConfig(mem)
	_, err = chunkstore.Open(storePath, &o)
	expect(t, errors.Is(err, chunkstore.ErrInvalidConfig), "open 3 axes with a 2-axis generator: %v", err)
	for _, bad := range []int{1, 5, -1} {
		o := axesConfig(vfs.NewMem(), bad)
		_, err = chunkstore.Create(storePath, &o)
		expect(t, errors.Is(err, chunkstore.ErrInvalidConfig), "create with %d axes: %v", bad, err)
	}

	// A 2-axis store takes Pos and 2-axis keys alike, and no others.
	mem2 := vfs.NewMem()
	cfg2 := testConfig(mem2)
	s2 := must2[*chunkstore.Store](t)(chunkstore.Create(storePath, &cfg2))
	expect(t, s2.Options().Axes == 2, "default axes %d", s2.Options().Axes)
	b = s2.NewBatch()
	pix := uniformChunk(small, 9)
	b.PutChunkKey(chunkstore.Key2(3, -4), pix)
	commit(t, s2, b)
	_, err = s2.Get(chunkstore.Pos{X: 3, Y: -4}, dst)
	expect(t, err == nil && slices.Equal(dst, pix), "Pos after Key2: %v", err)
	_, err = s2.GetKey(chunkstore.Key3(3, -4, 0), dst)
	expect(t, errors.Is(err, chunkstore.ErrAxes), "3-axis key on 2 axes: %v", err)
	mustCheck(t, s2)
	must(t, s2.Close())
}

func TestKeyString(t *testing.T) {
	for _, tc := range []struct {
		k    chunkstore.Key
		want string
		axes int
	}{
		{chunkstore.Key2(1, -2), "(1, -2)", 2},
		{chunkstore.Key3(1, -2, 3), "(1, -2, 3)", 3},
		{chunkstore.Key4(1, -2, 3, -4), "(1, -2, 3, -4)", 4},
		{chunkstore.Pos{X: 5, Y: 6}.Key(), "(5, 6)", 2},
	} {
		expect(t, tc.k.String() == tc.want && tc.k.Axes() == tc.axes, "%v: %q, %d axes", tc.k, tc.k.String(), tc.k.Axes())
	}
	expect(t, chunkstore.Key4(1, 2, 3, 4).Pos() == chunkstore.Pos{X: 1, Y: 2}, "Pos of a 4-axis key")
	expect(t, chunkstore.Key2(1, 2).Axis(2) == 0 && chunkstore.Key3(1, 2, 3).Axis(2) == 3, "Axis")
}

// The stores of 3 and 4 axes in testdata/v3 (format 3, written by
// TestWriteFixtures) open, with their KeyGenerator or for inspection,
// and hold what was written: keys that differ only in z and w apart, the
// deleted chunk gone.
func TestAxesFixtures(t *testing.T) {
	for _, n := range []int{3, 4} {
		t.Run(fmt.Sprint(n, " axes"), func(t *testing.T) {
			mem := loadFixture(t, fmt.Sprintf("v3/axes-%d", n))
			key := func(x, y, z int32) chunkstore.Key {
				if n == 3 {
					return chunkstore.Key3(x, y, z)
				}
				return chunkstore.Key4(x, y, z, -z)
			}
			cfg := fixtureConfig(mem)
			cfg.Generator = fixtureKeyGen{}
			s := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &cfg))
			defer s.Close()
			expect(t, s.Options().Axes == n, "%d axes, want %d", s.Options().Axes, n)
			var got []string
			s.Entries(func(e chunkstore.Entry) bool {
				got = append(got, fmt.Sprintf("%v %v", e.Key, e.Type))
				return true
			})
			// Page-table order: the last axis first; in 4 axes w = -z.
			want := []string{
				fmt.Sprintf("%v full", key(0, 20, -1)), fmt.Sprintf("%v full", key(0, 20, 1)), fmt.Sprintf("%v bodies", key(0, 20, 1)),
				fmt.Sprintf("%v delta", key(1, 20, 1)), fmt.Sprintf("%v palette", key(2, 20, 1)), fmt.Sprintf("%v delta", key(0, 20, 2)),
			}
			if n == 4 {
				want = []string{want[5], want[1], want[2], want[3], want[4], want[0]}
			}
			expect(t, slices.Equal(got, want), "entries %v, want %v", got, want)
			dst := make([]uint32, 64)
			stored, err := s.GetKey(key(0, 20, 2), dst)
			expect(t, err == nil && stored, "delta chunk: %v %v", stored, err)
			stored, extra, err := s.GetExtraKey(key(2, 20, 1), dst)
			expect(t, err == nil && stored && string(extra) == "sign", "palette chunk: %v %q %v", stored, extra, err)
			blk := must2[chunkstore.EntityBlock](t)(s.EntitiesKey(key(0, 20, 1)))
			expect(t, len(blk.Bodies) == 1 && string(blk.Bodies[0].Extension) == "ext", "bodies %+v", blk)
			mustCheck(t, s)

			insp := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &chunkstore.Options{FS: mem, ReadOnly: true}))
			defer insp.Close()
			expect(t, insp.Options().Axes == n && insp.Check().OK(), "inspection: %d axes, %s", insp.Options().Axes, insp.Check())
		})
	}
}

// fixtureKeyGen is the generator the fixtures of 3 and 4 axes were written
// with (fixtures_internal_test.go).
type fixtureKeyGen struct{}

func (fixtureKeyGen) Version() uint32 { return fixtureConfig(nil).Generator.Version() }

func (fixtureKeyGen) Generate(x, y int32, seed uint64, dst []uint32) {
	fixtureConfig(nil).Generator.Generate(x, y, seed, dst)
}

func (g fixtureKeyGen) GenerateKey(k chunkstore.Key, seed uint64, dst []uint32) {
	g.Generate(k.Axis(0)+37*k.Axis(2), k.Axis(1)-53*k.Axis(3), seed, dst)
}

// Every single-bit flip in what a store of 3 or 4 axes adds to the format
// (the header slots' version and flags, the page-table records of 28- and
// 32-byte entries, the key bytes after each chunk and body record's
// payload) is detected: the store opens (rebuilding or falling back to the
// other slot) or fails with a version or corruption error, the checker
// reports it, and every read returns a committed chunk, a generated one,
// or an error matching ErrCorrupt.
func TestAxesEveryBitFlipIsDetected(t *testing.T) {
	for _, n := range []int{3, 4} {
		t.Run(fmt.Sprint(n, " axes"), func(t *testing.T) {
			mem := loadFixture(t, fmt.Sprintf("v3/axes-%d", n))
			files := storeFiles(t, mem)
			cfg := fixtureConfig(mem)
			cfg.Generator = fixtureKeyGen{}
			good := map[chunkstore.Key][]uint32{}
			s := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &cfg))
			s.Entries(func(e chunkstore.Entry) bool {
				if e.Type != chunkstore.BodyBlock {
					dst := make([]uint32, 64)
					must2[bool](t)(s.GetKey(e.Key, dst))
					good[e.Key] = dst
				}
				return true
			})
			must(t, s.Close())
			type span struct {
				path       string
				start, end int64
			}
			spans := []span{{storePath, 4, 8}, {storePath, 64 + 4, 64 + 8}}
			ext := int64(4 * (n - 2))
			for _, r := range regions(t, mem) {
				path, off := locate(storePath, r.Handle.Offset)
				end := off + int64(r.Handle.Length)
				if r.Kind == storetool.RecordJournal || r.Kind == storetool.RecordCheckpoint {
					spans = append(spans, span{path, off, end})
				} else {
					spans = append(spans, span{path, end - ext, end})
				}
			}
			flips := 0
			for _, sp := range spans {
				for off := sp.start; off < sp.end; off++ {
					for bit := range 8 {
						flips++
						bad := maps.Clone(files)
						bad[sp.path] = slices.Clone(files[sp.path])
						bad[sp.path][off] ^= 1 << bit
						where := fmt.Sprintf("bit %d of byte %d of %s", bit, off, sp.path)
						c := cfg
						c.FS = memWithFiles(t, bad)
						s, err := chunkstore.Open(storePath, &c)
						if err != nil {
							expect(t, errors.Is(err, chunkstore.ErrCorrupt) || errors.Is(err, chunkstore.ErrVersion) ||
								errors.Is(err, chunkstore.ErrConfigMismatch) || errors.Is(err, chunkstore.ErrInvalidConfig), "%s: open: %v", where, err)
							continue
						}
						expect(t, !s.Check().OK() || s.Generation() != 3, "%s: not detected", where)
						dst := make([]uint32, 64)
						for k, want := range good {
							_, err := s.GetKey(k, dst)
							ok := errors.Is(err, chunkstore.ErrCorrupt) || err == nil && (slices.Equal(dst, want) || slices.Equal(dst, fixtureGenerated(k)))
							expect(t, ok, "%s: chunk %v: %v", where, k, err)
						}
						must(t, s.Close())
					}
				}
			}
			t.Logf("%d flips, all detected", flips)
		})
	}
}

func fixtureGenerated(k chunkstore.Key) []uint32 {
	dst := make([]uint32, 64)
	fixtureKeyGen{}.GenerateKey(k, 7, dst)
	return dst
}

func (m *keyModel) clone() *keyModel {
	c := newKeyModel()
	for k, v := range m.chunks {
		c.chunks[k] = slices.Clone(v)
	}
	for k, v := range m.bodies {
		c.bodies[k] = slices.Clone(v)
	}
	return c
}

// A crash at any point of a commit to a store of 4 axes (every mutating
// call, with unsynced writes kept, lost or kept at random) leaves the old
// generation or the new one, whole.
func TestAxesCrashDuringCommit(t *testing.T) {
	mem := vfs.NewMem()
	cfg := axesConfig(mem, 4)
	s := must2[*chunkstore.Store](t)(chunkstore.Create(storePath, &cfg))
	rng := rand.New(rand.NewPCG(4, 15))
	old := newKeyModel()
	for range 3 {
		b := s.NewBatch()
		old.change(b, 4, 10, rng)
		commit(t, s, b)
	}
	oldGen := s.Generation()
	must(t, s.Close())
	next := old.clone()
	b := (&chunkstore.Store{}).NewBatch()
	next.change(b, 4, 10, rng)
	type state struct {
		gen uint64
		m   *keyModel
	}
	expectState := func(t *testing.T, disk *vfs.Mem, states ...state) {
		t.Helper()
		c := cfg
		c.FS = disk
		s := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &c))
		defer s.Close()
		for _, st := range states {
			if s.Generation() == st.gen {
				expect(t, st.m.diff(s) == "", "generation %d: %s", st.gen, st.m.diff(s))
				checkAfterCrash(t, s)
				return
			}
		}
		t.Fatalf("opened at generation %d", s.Generation())
	}
	crashEvery(t, mem, cfg, -1, func(s *chunkstore.Store) error {
		_, err := s.Commit(b)
		return err
	}, func(t *testing.T, disk *vfs.Mem, finished bool) {
		if finished {
			expectState(t, disk, state{oldGen + 1, next})
			return
		}
		expectState(t, disk, state{oldGen, old}, state{oldGen + 1, next})
	})
}

// Palette records, extra data and the game's layers work in stores of 3
// and 4 axes as in stores of 2: chunks at keys that differ only in z (and
// w) keep their own palette record and extra data through a reopen, and
// through a page table lost and rebuilt by the forward scan from each
// record's own bytes (flags saying where the layer mask, the extra data
// and the key bytes are).
func TestAxesPaletteExtraLayers(t *testing.T) {
	for _, n := range []int{3, 4} {
		t.Run(fmt.Sprint(n, " axes"), func(t *testing.T) {
			mem := vfs.NewMem()
			cfg := axesConfig(mem, n)
			cfg.Layers = gameLayers(true, 0)
			mask := chunkstore.LayerMask(cfg.Layers)
			key := func(z int32) chunkstore.Key {
				if n == 3 {
					return chunkstore.Key3(2, 3, z)
				}
				return chunkstore.Key4(2, 3, z, -z)
			}
			// Two painted chunks (four colours at random, simulation
			// flags the store drops) and one as generated: each with
			// extra data.
			rng := rand.New(rand.NewPCG(uint64(n), 6))
			painted := func(a, b uint32) []uint32 {
				pix := make([]uint32, npix)
				for i := range pix {
					pix[i] = a + uint32(rng.IntN(2))<<8 + uint32(rng.IntN(2))<<16
					if rng.IntN(2) == 0 {
						pix[i] = b
					}
					pix[i] |= uint32(i%2) << 25 // simulation flags: not persisted
				}
				return pix
			}
			want := map[chunkstore.Key]struct {
				pix   []uint32
				typ   chunkstore.StorageType
				extra string
			}{
				key(1): {painted(0x0307, 0x0407), chunkstore.Palette, "sign: beware"},
				key(2): {painted(0x0508, 0x0608), chunkstore.Palette, "chest: 3 coins"},
				key(3): {keyGenerated(key(3)), chunkstore.Delta, "biome: desert"},
			}
			s := must2[*chunkstore.Store](t)(chunkstore.Create(storePath, &cfg))
			b := s.NewBatch()
			for k, c := range want {
				b.PutChunkExtraKey(k, c.pix, []byte(c.extra))
			}
			st := commit(t, s, b)
			expect(t, st.Palette == 2 && st.Delta == 1, "commit %+v", st)
			must(t, s.Close())

			expectAll := func(s *chunkstore.Store, when string) {
				t.Helper()
				dst := make([]uint32, npix)
				for k, c := range want {
					stored, extra, err := s.GetExtraKey(k, dst)
					expect(t, err == nil && stored && string(extra) == c.extra, "%s: %v: stored %v, extra %q, %v", when, k, stored, extra, err)
					for i, p := range c.pix {
						if wantPix := p&mask | 5<<25; dst[i] != wantPix {
							t.Fatalf("%s: %v: pixel %d is %08x, want %08x", when, k, i, dst[i], wantPix)
						}
					}
					raw, ok, err := storetool.Tool.ReadRawKey(s, k)
					expect(t, err == nil && ok && raw.Type == c.typ && raw.Key == k && raw.Layers == mask && string(raw.Extra) == c.extra,
						"%s: raw %v: %v %v %v layers %08x extra %q", when, k, ok, err, raw.Type, raw.Layers, raw.Extra)
				}
				box := chunkstore.Box{Min: key(1), Max: key(3)}
				if n == 4 {
					box = chunkstore.Box{Min: chunkstore.Key4(2, 3, 1, -3), Max: chunkstore.Key4(2, 3, 3, -1)}
				}
				es, err := s.EntriesIn(box)
				expect(t, err == nil && len(es) == 3, "%s: entries in the box: %v %v", when, es, err)
			}
			s = must2[*chunkstore.Store](t)(chunkstore.Open(storePath, ptr(axesConfig(mem, 0))))
			expect(t, s.Options().Axes == n, "reopened with %d axes", s.Options().Axes)
			s.Close()
			open := axesConfig(mem, 0)
			open.Layers = cfg.Layers
			s = must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &open))
			expectAll(s, "reopened")
			mustCheck(t, s)
			must(t, s.Close())

			// The page table lost: every table record's header damaged.
			files, _ := loseTables(t, mem, n)
			rebuilt := memWithFiles(t, files)
			open.FS = rebuilt
			s = must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &open))
			expect(t, !s.OpenReport().OK(), "a lost page table not reported")
			expectAll(s, "rebuilt by the forward scan")
			must(t, s.Close())
		})
	}
}

// loseTables returns the files of the store in mem with the header of
// every page-table record damaged (its CRC-8), and how many there were, so
// that Open rebuilds the index by the forward scan. Every other record's
// key, as the scan reads it from the record alone, must have n axes.
func loseTables(t *testing.T, mem *vfs.Mem, n int) (map[string][]byte, int) {
	t.Helper()
	files := storeFiles(t, mem)
	lost := 0
	must(t, storetool.Tool.Scan(mem, storePath, func(r storetool.ScanRecord) bool {
		if r.Kind == storetool.RecordJournal || r.Kind == storetool.RecordCheckpoint {
			path, off := locate(storePath, r.Handle.Offset)
			files[path][off+19] ^= 0xFF // the header's CRC-8
			lost++
		} else {
			expect(t, r.Key.Axes() == n, "the scan reads a key of %d axes from a %s: %v", n, r.Kind, r.Key)
		}
		return true
	}))
	expect(t, lost > 0, "no table record to damage")
	return files, lost
}
