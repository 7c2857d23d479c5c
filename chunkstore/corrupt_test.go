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

// tiny chunks keep the every-bit and every-offset loops small.
const tiny = 8

func tinyConfig() chunkstore.Options {
	c := testConfig(nil)
	c.ChunkSize = tiny
	return c
}

// storeFiles returns every file in the disk's root directory (the store
// file and its data files) by path.
func storeFiles(t testing.TB, mem *vfs.Mem) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, n := range must2[[]string](t)(mem.ReadDir("/")) {
		out["/"+n] = must2[[]byte](t)(vfs.ReadFile(mem, "/"+n))
	}
	return out
}

// memWithFiles returns a disk holding files.
func memWithFiles(t testing.TB, files map[string][]byte) *vfs.Mem {
	t.Helper()
	mem := vfs.NewMem()
	for name, data := range files {
		f := must2[vfs.File](t)(mem.Create(name))
		_, err := f.WriteAt(data, 0)
		must(t, err)
		must(t, f.Close())
	}
	return mem
}

func memWith(t testing.TB, data []byte) *vfs.Mem {
	t.Helper()
	return memWithFiles(t, map[string][]byte{storePath: data})
}

// storeOrder lists the files of the store at storePath in store order: the
// store file, then its data files by number.
func storeOrder(files map[string][]byte) []string {
	out := []string{storePath}
	for n := uint32(1); n <= chunkstore.MaxDataFiles; n++ {
		name := storetool.Tool.DataFileName(storePath, n)
		if _, ok := files[name]; !ok {
			break
		}
		out = append(out, name)
	}
	return out
}

// regions lists the records of a file by kind, via Scan.
func regions(t testing.TB, mem *vfs.Mem) []storetool.ScanRecord {
	t.Helper()
	var rs []storetool.ScanRecord
	must(t, storetool.Tool.Scan(mem, storePath, func(r storetool.ScanRecord) bool {
		expect(t, r.Err == nil, "damaged record in a good file: %v", r.Err)
		rs = append(rs, r)
		return true
	}))
	return rs
}

// flipStore builds a store whose file holds both header slots, a
// checkpoint, journal segments, full, delta and body records, all live.
func flipStore(t *testing.T) (*vfs.Mem, []generation) {
	cfg := tinyConfig()
	mem, gens := history(t, cfg, 3)
	cfg.FS = mem
	s := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &cfg))
	must(t, s.Compact())
	gens = append(gens, generation{s.Generation(), gens[len(gens)-1].m.clone()})
	rng := rand.New(rand.NewPCG(12, 12))
	for i := range 2 {
		b := s.NewBatch()
		m := gens[len(gens)-1].m.clone()
		changeSome(b, m, tiny, 10+i, rng)
		commit(t, s, b)
		gens = append(gens, generation{s.Generation(), m})
	}
	mustCheck(t, s)
	must(t, s.Close())
	return mem, gens
}

// Every single-bit flip in the header slots, in every page-table record
// and in one record of each kind is detected: Open falls back to the other
// slot or rebuilds, the checker reports it, and no read returns wrong data
// without an error.
func TestEveryBitFlipIsDetected(t *testing.T) {
	mem, gens := flipStore(t)
	files := storeFiles(t, mem)
	cur, prev := gens[len(gens)-1], gens[len(gens)-2]
	type span struct {
		what       string
		path       string
		start, end int64
	}
	spans := []span{{"header slots", storePath, 0, 128}}
	seen := map[storetool.RecordKind]bool{}
	last := int64(0)
	for _, r := range regions(t, mem) {
		path, off := locate(storePath, r.Handle.Offset)
		sp := span{r.Kind.String(), path, off, off + int64(r.Handle.Length)}
		switch {
		case r.Kind == storetool.RecordJournal || r.Kind == storetool.RecordCheckpoint:
			spans = append(spans, sp)
			last = r.Handle.Offset
		case !seen[r.Kind] && r.Handle.Offset > last:
			// One record of each kind, from the newest commits (live).
			seen[r.Kind] = true
			spans = append(spans, sp)
		}
	}
	kinds := map[string]bool{}
	for _, sp := range spans {
		kinds[sp.what] = true
	}
	for _, k := range []string{"header slots", "checkpoint", "journal segment", "full chunk", "delta chunk", "body block"} {
		expect(t, kinds[k], "the test file has no %s to flip", k)
	}
	cfg := tinyConfig()
	flips := 0
	for _, sp := range spans {
		for off := sp.start; off < sp.end; off++ {
			for bit := range 8 {
				flips++
				bad := maps.Clone(files)
				bad[sp.path] = slices.Clone(files[sp.path])
				bad[sp.path][off] ^= 1 << bit
				where := fmt.Sprintf("%s: bit %d of byte %d of %s", sp.what, bit, off, sp.path)
				c := cfg
				c.FS = memWithFiles(t, bad)
				s, err := chunkstore.Open(storePath, &c)
				if err != nil {
					t.Fatalf("%s: open: %v", where, err)
				}
				r := s.Check()
				if r.OK() {
					t.Fatalf("%s: not detected", where)
				}
				if err := checkFlipped(s, sp.what, cur, prev); err != nil {
					t.Fatalf("%s: %v\n%s", where, err, r)
				}
				s.Close()
			}
		}
	}
	t.Logf("%d flips, all detected", flips)
}

// checkFlipped verifies what a store with one flipped bit returns. A flip
// in a slot leaves a whole, valid generation. Elsewhere every chunk reads
// back as one of its committed values or as generated, or fails with
// ErrCorrupt, never as anything else.
func checkFlipped(s *chunkstore.Store, what string, cur, prev generation) error {
	if what == "header slots" {
		for _, g := range []generation{cur, prev} {
			if s.Generation() == g.gen {
				if d := g.m.diff(s, tiny, ^uint32(0)); d != "" {
					return fmt.Errorf("generation %d: %s", g.gen, d)
				}
				return nil
			}
		}
		return fmt.Errorf("opened at generation %d", s.Generation())
	}
	positions := map[chunkstore.Pos]bool{}
	for _, g := range []generation{cur, prev} {
		for p := range g.m.chunks {
			positions[p] = true
		}
		for p := range g.m.bodies {
			positions[p] = true
		}
	}
	dst := make([]uint32, tiny*tiny)
	for p := range positions {
		_, err := s.Get(p, dst)
		if err != nil && !errors.Is(err, chunkstore.ErrCorrupt) {
			return fmt.Errorf("chunk %v: %v", p, err)
		}
		if err == nil {
			ok := slices.Equal(dst, generated(p, tiny))
			for _, g := range []generation{cur, prev} {
				if want, in := g.m.chunks[p]; in && slices.Equal(dst, want) {
					ok = true
				}
			}
			if !ok {
				return fmt.Errorf("chunk %v reads as something never committed", p)
			}
		}
		bodies, err := s.Bodies(p)
		if err != nil && !errors.Is(err, chunkstore.ErrCorrupt) {
			return fmt.Errorf("bodies %v: %v", p, err)
		}
		if err == nil && bodies != nil {
			if diffBodies(bodies, cur.m.bodies[p], ^uint32(0)) != "" && diffBodies(bodies, prev.m.bodies[p], ^uint32(0)) != "" {
				return fmt.Errorf("bodies %v read as something never committed", p)
			}
		}
	}
	return nil
}

// A file cut at any offset still opens (once both header slots are
// there) and recovers every chunk and body set whose record, or for Empty
// chunks whose page-table entry, lies before the cut; nothing after it.
func TestTruncationAtEveryOffset(t *testing.T) {
	cfg := tinyConfig()
	cfg.DataFileSize = 1 << 10
	mem := vfs.NewMem()
	cfg.FS = mem
	s := must2[*chunkstore.Store](t)(chunkstore.Create(storePath, &cfg))
	rng := rand.New(rand.NewPCG(13, 13))
	m := newModel()
	commitOf := map[chunkstore.Pos]int{}
	for i := range 4 {
		b := s.NewBatch()
		for k := range 4 {
			p := chunkstore.Pos{X: int32(10*i + k), Y: 20}
			commitOf[p] = i
			switch k {
			case 0:
				m.putChunk(b, p, randomChunk(tiny, rng))
			case 1:
				m.putChunk(b, p, deltaChunk(p, tiny, 5, rng))
			case 2:
				m.putChunk(b, p, make([]uint32, tiny*tiny))
			case 3:
				m.putBodies(b, p, []chunkstore.Body{body(uint64(i), 3, 3, rng)})
			}
		}
		commit(t, s, b)
	}
	// Where each position's data ends: its record, or its commit's journal.
	carrier := map[chunkstore.Pos]int64{}
	bodyCarrier := map[chunkstore.Pos]int64{}
	storetool.Tool.Entries(s, func(e storetool.Entry) bool {
		if e.Type == chunkstore.BodyBlock {
			bodyCarrier[e.Pos] = e.Handle.Offset + int64(e.Handle.Length)
		} else if !e.Handle.IsZero() {
			carrier[e.Pos] = e.Handle.Offset + int64(e.Handle.Length)
		}
		return true
	})
	mustCheck(t, s)
	must(t, s.Close())
	var journals []int64
	for _, r := range regions(t, mem) {
		if r.Kind == storetool.RecordJournal {
			journals = append(journals, r.Handle.Offset+int64(r.Handle.Length))
		}
	}
	expect(t, len(journals) == 4, "%d journal segments", len(journals))
	for p, i := range commitOf {
		if _, ok := carrier[p]; !ok {
			if _, isBody := bodyCarrier[p]; !isBody {
				carrier[p] = journals[i]
			}
		}
	}
	files := storeFiles(t, mem)
	order := storeOrder(files)
	expect(t, len(order) > 2, "the store has %d data files", len(order)-1)
	dst := make([]uint32, tiny*tiny)
	for fi, name := range order {
		data := files[name]
		for c := 0; c <= len(data); c++ {
			if c == len(data) && fi < len(order)-1 {
				continue // the same as the next file cut at 0
			}
			// Everything from the cut on is gone: the rest of this file
			// and every later one.
			kept := map[string][]byte{}
			for _, earlier := range order[:fi] {
				kept[earlier] = files[earlier]
			}
			kept[name] = data[:c]
			cut := storetool.Handle{Offset: int64(fi)<<40 | int64(c)}.Offset
			if fi == 0 {
				cut = int64(c)
			}
			where := fmt.Sprintf("cut at %d of %s", c, name)
			cc := cfg
			cc.FS = memWithFiles(t, kept)
			s, err := chunkstore.Open(storePath, &cc)
			if err != nil {
				expect(t, fi == 0 && c < 128, "%s: %v", where, err)
				continue
			}
			for p := range commitOf {
				stored, err := s.Get(p, dst)
				if err != nil {
					t.Fatalf("%s: chunk %v: %v", where, p, err)
				}
				if end, ok := carrier[p]; ok {
					want := end <= cut
					expect(t, stored == want, "%s: chunk %v (data ends at %d) stored=%v", where, p, end, stored)
					if want {
						expect(t, slices.Equal(dst, m.chunks[p]), "%s: chunk %v differs", where, p)
					}
				}
				bodies, err := s.Bodies(p)
				must(t, err)
				if end, ok := bodyCarrier[p]; ok {
					want := end <= cut
					expect(t, (bodies != nil) == want, "%s: bodies of %v (end %d) present=%v", where, p, end, bodies != nil)
					if want {
						expect(t, diffBodies(bodies, m.bodies[p], ^uint32(0)) == "", "%s: bodies of %v differ", where, p)
					}
				}
			}
			if (fi > 0 || c >= 128) && (fi < len(order)-1 || c < len(data)) {
				expect(t, !s.OpenReport().OK(), "%s: nothing reported", where)
			}
			s.Close()
		}
	}
}
