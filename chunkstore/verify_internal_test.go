package chunkstore

import (
	"cmp"
	"errors"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/arksave/arksave/internal/testkit"
	"github.com/arksave/arksave/vfs"
)

var expect = testkit.Expect

// verifyStore writes files (by base name) to a fresh disk and opens the
// store read-only, as a load verifies it.
func verifyStore(t *testing.T, files map[string][]byte) *Store {
	t.Helper()
	cfg := fixtureConfig(memWith(t, files))
	cfg.ReadOnly = true
	s, err := Open("/w.pxsw", &cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// memWith is a fresh disk holding files (by base name) in its root.
func memWith(t *testing.T, files map[string][]byte) *vfs.Mem {
	t.Helper()
	mem := vfs.NewMem()
	for name, data := range files {
		f, err := mem.Create("/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(data, 0); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	return mem
}

// liveHandles returns the distinct records the entries of s use.
func liveHandles(s *Store) map[handle]toolEntry {
	out := map[handle]toolEntry{}
	s.entries(func(e toolEntry) bool {
		if !e.Handle.IsZero() {
			out[e.Handle] = e
		}
		return true
	})
	return out
}

// verify finds every damaged byte of a record a load uses, under its chunk
// and at its offset in its data file, and each missing or cut data file;
// it reads each live record once and never decodes: a record whose
// checksums were made to match damage inside it passes verify and fails
// Check, which decodes, and a damaged record no entry uses (an older
// version of a chunk) is left to Check too.
func TestVerifyReadsWhatALoadTrusts(t *testing.T) {
	good := goodFixture(t)
	s := verifyStore(t, good)
	r, full := s.verify(), s.Check()
	live := liveHandles(s)
	expect(t, r.OK() && r.Records == len(live) && len(live) >= 6, "intact store: verify %v, %d records of %d live", r, r.Records, len(live))
	expect(t, typeCounts(r.Types) == typeCounts(full.Types), "verify counts %q, Check %q", typeCounts(r.Types), typeCounts(full.Types))

	resealed := false
	for h, e := range live {
		name := s.files.name(h.File())
		base := name[1:]
		for _, at := range []int64{recordHeaderSize / 2, int64(h.Length) - 1} {
			data := clone(good[base])
			data[h.FileOffset()+at] ^= 0x10
			got := verifyStore(t, with(good, base, data)).verify()
			expect(t, len(got.Problems) == 1, "%s flipped at +%d: verify %v", e.Type, at, got)
			p := got.Problems[0]
			expect(t, p.File == base && p.Offset == h.FileOffset() && p.Key != nil && *p.Key == e.Key && errors.Is(p.Err, ErrCorrupt),
				"%s flipped at +%d: problem %+v, want %s at %d of %s", e.Type, at, p, e.Key, h.FileOffset(), base)
		}
		if e.Type == Delta {
			// Damage behind matching checksums (a count of changed pixels
			// past the chunk's): only a decode finds it.
			data := clone(good[base])
			at := payloadAt(data, h)
			copy(data[at:at+4], []byte{0xff, 0xff, 0xff, 0x7f})
			reseal(data, h)
			s := verifyStore(t, with(good, base, data))
			expect(t, s.verify().OK() && !s.Check().OK(), "a resealed Delta record: verify %v, Check %v", s.verify(), s.Check())
			resealed = true
		}
	}

	expect(t, resealed, "the fixture has no Delta record")

	cut := clone(good["w-data-2.pxsd"])
	got := verifyStore(t, with(good, "w-data-2.pxsd", cut[:len(cut)/2])).verify()
	expect(t, !got.OK() && got.Problems[0].File == "w-data-2.pxsd", "data file 2 cut in half: verify %v", got)
	missing := with(good, "w-data-1.pxsd", nil)
	delete(missing, "w-data-1.pxsd")
	got = verifyStore(t, missing).verify()
	expect(t, !got.OK() && got.Problems[0].File == "w-data-1.pxsd" && errors.Is(got.Problems[0].Err, ErrCorrupt), "data file 1 missing: verify %v", got)
}

// A damaged record that no entry of the generation uses is not what a load
// trusts: verify passes it, Check reports it.
func TestVerifyLeavesDeadRecordsToCheck(t *testing.T) {
	good := goodFixture(t)
	mem := memWith(t, good)
	cfg := fixtureConfig(mem)
	s, err := Open("/w.pxsw", &cfg)
	if err != nil {
		t.Fatal(err)
	}
	old, ok := s.chunks.get(Key2(0, 20).ik())
	expect(t, ok && !old.h.IsZero(), "no record of (0, 20)")
	b := s.NewBatch()
	b.PutChunk(Pos{0, 20}, make([]uint32, 64)) // the old record is dead now
	if _, err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	files := fixtureFiles(t, s, mem)
	base := "w-data-1.pxsd"
	data := clone(files[base])
	data[old.h.FileOffset()+recordHeaderSize] ^= 0x10
	s2 := verifyStore(t, with(files, base, data))
	expect(t, s2.verify().OK(), "a damaged dead record: verify %v", s2.verify())
	expect(t, !s2.Check().OK(), "a damaged dead record: Check finds nothing")
}

// verify splits a large store's records between goroutines: damage at
// either end of the order, and in the middle, is found under its chunk,
// and every record is counted once.
func TestVerifySplitsRecords(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	mem := vfs.NewMem()
	cfg := fixtureConfig(mem)
	s, err := Create("/w.pxsw", &cfg)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(2, 3))
	const n = 4*verifyRun + 100
	b := s.NewBatch()
	for i := range n {
		pix := make([]uint32, 64)
		for j := range pix {
			pix[j] = rng.Uint32()
		}
		b.PutChunk(Pos{int32(i % 64), int32(i / 64)}, pix)
	}
	if _, err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, name := range []string{"w.pxsw", "w-data-1.pxsd"} {
		if files[name], err = vfs.ReadFile(mem, "/"+name); err != nil {
			t.Fatal(err)
		}
	}
	var live []toolEntry
	for _, e := range liveHandles(s) {
		live = append(live, e)
	}
	s.Close()
	slices.SortFunc(live, func(a, b toolEntry) int { return cmp.Compare(a.Handle.Offset, b.Handle.Offset) })
	expect(t, len(live) == n, "%d live records, want %d", len(live), n)
	data := clone(files["w-data-1.pxsd"])
	hit := []toolEntry{live[0], live[n/2], live[n-1]}
	for _, e := range hit {
		data[e.Handle.FileOffset()+recordHeaderSize+1] ^= 1
	}
	r := verifyStore(t, with(files, "w-data-1.pxsd", data)).verify()
	expect(t, r.Records == n && len(r.Problems) == len(hit), "verify: %v, want %d records and %d problems", r, n, len(hit))
	for i, p := range r.Problems {
		expect(t, p.Key != nil && *p.Key == hit[i].Key && p.Offset == hit[i].Handle.FileOffset(), "problem %d: %+v, want %s at %d", i, p, hit[i].Key, hit[i].Handle.FileOffset())
	}
}
