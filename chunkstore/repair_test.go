package chunkstore_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/testkit/terrain"
	"github.com/arksave/arksave/vfs"
)

// rootsOf builds a history of commits and returns the disk, each
// generation's contents and its root.
func rootsOf(t *testing.T, commits int) (*vfs.Mem, []generation, [][]byte) {
	t.Helper()
	cfg := testConfig(nil)
	mem, gens := history(t, cfg, commits)
	cfg.FS = mem
	roots := make([][]byte, len(gens))
	for i, g := range gens {
		if g.gen == 0 {
			continue // Options.Generation 0 opens the newest: generation 0 has no slot once anything committed
		}
		s, err := chunkstore.Open(storePath, atGeneration(cfg, g.gen))
		if err != nil {
			continue // its slot moved on
		}
		roots[i] = s.Root()
		must(t, s.Close())
	}
	return mem, gens, roots
}

// flipAt flips a bit of the byte at store offset off of the store at
// storePath, in whichever of its files holds it.
func flipAt(t *testing.T, mem *vfs.Mem, off int64) {
	t.Helper()
	path, off := locate(storePath, off)
	f := must2[vfs.File](t)(mem.OpenRW(path))
	b := []byte{0}
	_, err := f.ReadAt(b, off)
	must(t, err)
	b[0] ^= 0x20
	_, err = f.WriteAt(b, off)
	must(t, err)
	must(t, f.Close())
}

// Open with Options.Repair and a Root opens a generation through its root when both header
// slots are damaged, and rebuilds it by a bounded scan when its page table
// is damaged; the clean copy holds that generation's contents exactly.
func TestOpenRepairAtRoot(t *testing.T) {
	mem, gens, roots := rootsOf(t, 4)
	last := len(gens) - 1
	cfg := testConfig(mem)
	info := must2[storetool.RootInfo](t)(storetool.Tool.ParseRoot(roots[last]))
	expect(t, info.Generation == gens[last].gen && info.ChunkSize == small && info.Seed == 7 && info.GeneratorVersion == gen.Version(),
		"root info %+v", info)

	flipAt(t, mem, 10) // slot A
	flipAt(t, mem, 70) // slot B
	flipAt(t, mem, info.Table+30)
	_, err := chunkstore.Open(storePath, atRoot(cfg, roots[last]))
	expect(t, errors.Is(err, chunkstore.ErrCorrupt), "Open at the root of a damaged table: %v", err)

	bare := chunkstore.Options{FS: mem} // no generator, no constants: the root has them
	s, rep, err := openForRepair(storePath, bare, roots[last])
	must(t, err)
	defer s.Close()
	var sections []string
	for _, p := range rep.Problems {
		sections = append(sections, p.Section)
	}
	expect(t, slices.Contains(sections, chunkstore.SectionHeader) && slices.Contains(sections, chunkstore.SectionTable),
		"report lacks the slots or the table:\n%s", rep)
	b := s.NewBatch()
	_, err = s.Commit(b)
	expect(t, errors.Is(err, chunkstore.ErrReadOnly), "repair store commits: %v", err)

	fixed := must2[*chunkstore.Store](t)(s.CompactTo("/fixed.pxsw"))
	must(t, fixed.Close())
	fcfg := testConfig(mem)
	f := must2[*chunkstore.Store](t)(chunkstore.Open("/fixed.pxsw", &fcfg))
	defer f.Close()
	mustCheck(t, f)
	expect(t, f.GeneratorVersion() == gen.Version(), "generator version %d lost", f.GeneratorVersion())
	if d := gens[last].m.diff(f, small, ^uint32(0)); d != "" {
		t.Fatalf("repaired copy differs: %s", d)
	}

	// An older generation through its own root, with the newest table damaged.
	for i := last - 1; i >= 0; i-- {
		if roots[i] == nil {
			continue
		}
		o, rep, err := openForRepair(storePath, bare, roots[i])
		must(t, err)
		expect(t, !rep.OK(), "damaged slots not reported")
		c := must2[*chunkstore.Store](t)(o.CompactTo("/old.pxsw"))
		must(t, c.Close())
		must(t, o.Close())
		oc := must2[*chunkstore.Store](t)(chunkstore.Open("/old.pxsw", &fcfg))
		if d := gens[i].m.diff(oc, small, ^uint32(0)); d != "" {
			t.Fatalf("generation %d through its root: %s", gens[i].gen, d)
		}
		must(t, oc.Close())
		must(t, mem.Remove("/old.pxsw"))
		break
	}

	_, _, err = openForRepair(storePath, bare, make([]byte, 64))
	expect(t, errors.Is(err, chunkstore.ErrCorrupt), "zero root: %v", err)
}

// FindRoot gives every generation back its root, from the slot that holds
// it or rebuilt from the page-table record it wrote.
func TestFindRoot(t *testing.T) {
	mem, gens, roots := rootsOf(t, 5)
	cfg := testConfig(mem)
	for i, g := range gens {
		root, err := storetool.Tool.FindRoot(mem, storePath, g.gen)
		must(t, err)
		if roots[i] != nil {
			expect(t, slices.Equal(root, roots[i]), "generation %d: the slot's root differs", g.gen)
		}
		info := must2[storetool.RootInfo](t)(storetool.Tool.ParseRoot(root))
		expect(t, info.Generation == g.gen && int(info.Chunks) == len(g.m.chunks), "generation %d: %+v, %d chunks", g.gen, info, len(g.m.chunks))
		s := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, atRoot(cfg, root)))
		if d := g.m.diff(s, small, ^uint32(0)); d != "" {
			t.Fatalf("generation %d through a found root: %s", g.gen, d)
		}
		must(t, s.Close())
	}
	_, err := storetool.Tool.FindRoot(mem, storePath, 99)
	expect(t, errors.Is(err, chunkstore.ErrGenerationNotFound), "generation 99: %v", err)
}

// A read-only store without a generator is opened for inspection: the
// generator version is not checked and no delta is dropped.
func TestOpenForInspection(t *testing.T) {
	mem, gens, _ := rootsOf(t, 3)
	last := gens[len(gens)-1]
	for _, open := range []func(chunkstore.Options) (*chunkstore.Store, error){
		func(c chunkstore.Options) (*chunkstore.Store, error) { return chunkstore.Open(storePath, &c) },
		func(c chunkstore.Options) (*chunkstore.Store, error) {
			return chunkstore.Open(storePath, atGeneration(c, last.gen))
		},
	} {
		other := testConfig(mem)
		other.Generator = terrain.Generator{Surface: 8, Rev: 3}
		_, err := open(other)
		expect(t, errors.Is(err, chunkstore.ErrGeneratorVersion), "other generator: %v", err)
		s := must2[*chunkstore.Store](t)(open(chunkstore.Options{FS: mem, ReadOnly: true}))
		expect(t, s.OpenReport().OK() && storetool.Tool.Stats(s).Chunks == len(last.m.chunks), "inspection dropped chunks: %s", s.OpenReport())
		mustCheck(t, s)
		must(t, s.Close())
	}
}

// CheckFile reports a store's damage on its own, and scans a file whose
// header slots are both damaged.
func TestCheckFile(t *testing.T) {
	mem, _, roots := rootsOf(t, 3)
	cfg := chunkstore.Options{FS: mem}
	expect(t, storetool.Tool.CheckFile(cfg.FS, storePath, nil).OK(), "clean file: %s", storetool.Tool.CheckFile(cfg.FS, storePath, nil))
	info := must2[storetool.RootInfo](t)(storetool.Tool.ParseRoot(roots[len(roots)-1]))
	flipAt(t, mem, 10)
	r := storetool.Tool.CheckFile(cfg.FS, storePath, nil)
	expect(t, len(r.Problems) == 1 && r.Problems[0].Section == chunkstore.SectionHeader, "one slot: %s", r)
	flipAt(t, mem, 70)
	flipAt(t, mem, info.Table-10) // the last record before the table
	r = storetool.Tool.CheckFile(cfg.FS, storePath, nil)
	expect(t, len(r.Problems) == 2 && r.Problems[1].Section == chunkstore.SectionRecord && r.Problems[1].Pos != nil,
		"no header: %s", r)
}

// A record cut by a truncation still tells what it was: Scan reports its
// kind and position with the damage.
func TestScanTruncatedRecord(t *testing.T) {
	mem, _, _ := rootsOf(t, 2)
	var last storetool.ScanRecord
	must(t, storetool.Tool.Scan(mem, storePath, func(r storetool.ScanRecord) bool {
		if r.Kind == storetool.RecordFull {
			last = r
		}
		return true
	}))
	path, off := locate(storePath, last.Handle.Offset)
	f := must2[vfs.File](t)(mem.OpenRW(path))
	must(t, f.Truncate(off+int64(last.Handle.Length)/2))
	must(t, f.Close())
	var cut []storetool.ScanRecord
	must(t, storetool.Tool.Scan(mem, storePath, func(r storetool.ScanRecord) bool {
		if r.Err != nil {
			cut = append(cut, r)
		}
		return true
	}))
	expect(t, len(cut) == 1 && cut[0].Kind == storetool.RecordFull && cut[0].Pos == last.Pos && cut[0].Handle.Offset == last.Handle.Offset,
		"truncated record scanned as %+v, was %+v", cut, last)
	expect(t, errors.Is(cut[0].Err, chunkstore.ErrCorrupt), "%v", cut[0].Err)
}

// A damaged record no entry uses (an older version of a chunk) is reported
// with the chunk its header names.
func TestCheckNamesUnreferencedRecords(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	s := must2[*chunkstore.Store](t)(chunkstore.Create(storePath, &cfg))
	p := chunkstore.Pos{X: 3, Y: -2}
	var first storetool.Handle
	for i := range 2 {
		b := s.NewBatch()
		b.PutChunk(p, uniformChunk(small, uint32(0x0302+i)))
		must2[chunkstore.CommitStats](t)(s.Commit(b))
		storetool.Tool.Entries(s, func(e storetool.Entry) bool {
			if i == 0 {
				first = e.Handle
			}
			return true
		})
	}
	must(t, s.Close())
	flipAt(t, mem, first.Offset+30)
	s = must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &cfg))
	defer s.Close()
	r := s.Check()
	path, off := locate(storePath, first.Offset)
	expect(t, len(r.Problems) == 1 && r.Problems[0].Section == chunkstore.SectionRecord && r.Problems[0].Pos != nil &&
		*r.Problems[0].Pos == p && "/"+r.Problems[0].File == path && r.Problems[0].Offset == off, "check: %s", r)
}
