package chunkstore_test

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/vfs"
)

var faults = []error{syscall.ENOSPC, syscall.EIO, io.ErrShortWrite}

// switchable lets a test stop injecting faults, as when disk space is
// freed.
type switchable struct {
	on bool
	in vfs.Injector
}

func (s *switchable) Inject(op vfs.Op, name string) error {
	if !s.on {
		return nil
	}
	return s.in.Inject(op, name)
}

// faultEvery fails the Nth mutating call of op (N = 0, 1, ...) with each
// fault, once or from then on (sticky), and hands the store, the disk and
// the switch to after, which checks what is left and that work goes on.
func faultEvery(t *testing.T, base *vfs.Mem, cfg chunkstore.Options,
	op func(*chunkstore.Store) error, after func(t *testing.T, s *chunkstore.Store, disk *vfs.Mem, sw *switchable)) {
	t.Helper()
	for _, fault := range faults {
		for _, sticky := range []bool{false, true} {
			for n := 0; ; n++ {
				disk := base.Crash(1, nil)
				cd := &vfs.Countdown{N: n, Err: fault, Sticky: sticky}
				sw := &switchable{on: true, in: cd}
				c := cfg
				c.FS = vfs.Faulty(disk, sw)
				s := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &c))
				err := op(s)
				if !cd.Fired() {
					must(t, err)
					s.Close()
					break
				}
				name := fmt.Sprintf("%v sticky=%v at mutating call %d", fault, sticky, n)
				expect(t, err != nil, "%s: no error returned", name)
				expect(t, errors.Is(err, fault), "%s: error %v does not wrap the fault", name, err)
				if !t.Run(name, func(t *testing.T) { after(t, s, disk, sw) }) {
					t.FailNow()
				}
				s.Close()
			}
		}
	}
}

func TestFaultsDuringCommit(t *testing.T) {
	cfg := testConfig(nil)
	base, gens := history(t, cfg, 3)
	old := gens[len(gens)-1]
	failed := generation{old.gen + 1, old.m.clone()}
	b := (&chunkstore.Store{}).NewBatch()
	rng := rand.New(rand.NewPCG(5, 5))
	changeSome(b, failed.m, small, 7, rng)
	later := generation{old.gen + 1, old.m.clone()}
	b2 := (&chunkstore.Store{}).NewBatch()
	changeSome(b2, later.m, small, 12, rng)
	faultEvery(t, base, cfg, func(s *chunkstore.Store) error {
		_, err := s.Commit(b)
		return err
	}, func(t *testing.T, s *chunkstore.Store, disk *vfs.Mem, sw *switchable) {
		// Nothing was published: readers still see the old generation.
		expect(t, s.Generation() == old.gen, "generation %d after a failed commit", s.Generation())
		if d := old.m.diff(s, small, ^uint32(0)); d != "" {
			t.Fatal(d)
		}
		// The disk as it is, and as a crash now would leave it, opens
		// cleanly at the old generation or the failed one, complete.
		expectOneOf(t, disk.Crash(1, nil), cfg, old, failed).Close()
		expectOneOf(t, disk.Crash(0, nil), cfg, old, failed).Close()
		// With the disk healthy again, a later commit succeeds and lands.
		sw.on = false
		_, err := s.Commit(b2)
		must(t, err)
		if d := later.m.diff(s, small, ^uint32(0)); d != "" {
			t.Fatal(d)
		}
		mustCheck(t, s)
		expectOneOf(t, disk.Crash(0, nil), cfg, later).Close()
	})
}

func TestFaultsDuringCompact(t *testing.T) {
	cfg := testConfig(nil)
	base, gens := history(t, cfg, 4)
	old := gens[len(gens)-1]
	next := generation{old.gen + 1, old.m}
	faultEvery(t, base, cfg, func(s *chunkstore.Store) error { return s.Compact() },
		func(t *testing.T, s *chunkstore.Store, disk *vfs.Mem, sw *switchable) {
			if d := old.m.diff(s, small, ^uint32(0)); d != "" {
				t.Fatal(d)
			}
			expectOneOf(t, disk.Crash(1, nil), cfg, old, next).Close()
			expectOneOf(t, disk.Crash(0, nil), cfg, old, next).Close()
			sw.on = false
			b := s.NewBatch()
			m := old.m.clone()
			changeSome(b, m, small, 40, rand.New(rand.NewPCG(6, 6)))
			_, err := s.Commit(b)
			must(t, err)
			must(t, s.Compact())
			if d := m.diff(s, small, ^uint32(0)); d != "" {
				t.Fatal(d)
			}
			mustCheck(t, s)
			expectOneOf(t, disk.Crash(0, nil), cfg, generation{s.Generation(), m}).Close()
		})
}

func TestFaultsDuringCompactTo(t *testing.T) {
	cfg := testConfig(nil)
	base, gens := history(t, cfg, 4)
	old := gens[len(gens)-1]
	faultEvery(t, base, cfg, func(s *chunkstore.Store) error {
		c, err := s.CompactTo("/copy.pxsw")
		if err == nil {
			c.Close()
		}
		return err
	}, func(t *testing.T, s *chunkstore.Store, disk *vfs.Mem, sw *switchable) {
		expectOneOf(t, disk.Crash(1, nil), cfg, old).Close()
		sw.on = false
		c := must2[*chunkstore.Store](t)(s.CompactTo("/copy.pxsw"))
		defer c.Close()
		if d := old.m.diff(c, small, ^uint32(0)); d != "" {
			t.Fatal(d)
		}
		mustCheck(t, c)
	})
}

// TestReadFaultsAreNotDamage: a data file that cannot be opened or read (an
// I/O error) is not damage. Open fails with the I/O error (it neither
// reports the page table damaged nor rebuilds the index without the
// file's records); reads return it; none matches ErrCorrupt, nothing of
// it is remembered, and once the disk heals the store reads every chunk
// and body as committed.
func TestReadFaultsAreNotDamage(t *testing.T) {
	cfg := testConfig(nil)
	base, gens := history(t, cfg, 4)
	want := gens[len(gens)-1].m
	notDamage := func(t *testing.T, err error, what string) {
		t.Helper()
		expect(t, errors.Is(err, syscall.EIO) && !errors.Is(err, chunkstore.ErrCorrupt), "%s: %v", what, err)
	}
	for _, op := range []vfs.Op{vfs.OpOpen, vfs.OpRead} {
		sw := &switchable{}
		fault := func(o vfs.Op, name string) error {
			if _, _, ok := storetool.Tool.ParseDataFileName(filepath.Base(name)); !ok || o != op {
				return nil
			}
			return &fs.PathError{Op: o.String(), Path: name, Err: syscall.EIO}
		}
		sw.in = vfs.InjectorFunc(fault)
		o := cfg
		o.FS = vfs.Faulty(base.Crash(1, nil), sw)
		o.ReadOnly = true
		t.Run(op.String()+" at open", func(t *testing.T) {
			sw.on = true
			_, err := chunkstore.Open(storePath, &o)
			notDamage(t, err, "open")
			sw.on = false
			s := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &o))
			defer s.Close()
			expect(t, s.OpenReport().OK(), "damage after the disk healed: %v", s.OpenReport())
			if d := want.diff(s, small, ^uint32(0)); d != "" {
				t.Fatal(d)
			}
		})
		if op != vfs.OpRead {
			continue // the store's data files are open
		}
		t.Run(op.String()+" after open", func(t *testing.T) {
			s := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &o))
			defer s.Close()
			sw.on = true
			dst := make([]uint32, small*small)
			failed := 0
			for p := range want.chunks {
				if _, err := s.Get(p, dst); err != nil { // an empty chunk has no record to read
					notDamage(t, err, fmt.Sprint("chunk ", p))
					failed++
				}
			}
			expect(t, failed > 0, "no read failed")
			sw.on = false
			if d := want.diff(s, small, ^uint32(0)); d != "" {
				t.Fatalf("after the disk healed: %s", d)
			}
		})
	}
}
