package archetype_test

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/arksave/arksave/archetype"
	"github.com/mlange-42/ark/ecs"
)

// Component types that hold values go vet's copylocks forbids copying. Saved, they would load
// as they were: a mutex held while saving held after loading, a WaitGroup waiting for ever.
type (
	LockedPOD struct { // plain-old-data: stored as raw memory if allowed
		mu sync.Mutex
		N  int64
	}
	EmbeddedLock struct {
		sync.RWMutex
		N int64
	}
	PendingWork struct {
		Name string
		//lint:ignore U1000 the field Check must refuse
		wg sync.WaitGroup
	}
	OnceInit struct {
		//lint:ignore U1000 the field Check must refuse
		once sync.Once
	}
	CondWait struct {
		//lint:ignore U1000 the field Check must refuse
		c sync.Cond
	}
	SyncMap struct {
		//lint:ignore U1000 the field Check must refuse
		m sync.Map
	}
	PooledBuf struct {
		Name string
		//lint:ignore U1000 the field Check must refuse
		pool sync.Pool
	}
	LockPointer struct {
		//lint:ignore U1000 the field Check must refuse
		mu *sync.Mutex
	}
	NestedLock struct {
		Inner struct {
			X float64
			//lint:ignore U1000 the field Check must refuse
			mu sync.Mutex
		}
	}
	LockSlice struct {
		//lint:ignore U1000 the field Check must refuse
		locks []sync.Mutex
	}
	SpinLock  struct{ state int32 } // a lock of the game's own: Lock and Unlock on the pointer
	SpinGuard struct {
		Spin SpinLock
		N    int32
	}
	noCopy       struct{}
	MarkedNoCopy struct { // the noCopy marker go vet knows
		_ noCopy
		N int64
	}
	// Atomic values are plain data, read and written whole: they are saved.
	AtomicStats struct {
		Hits  atomic.Int64
		Ready atomic.Bool
		Ratio atomic.Uint32
		N     int32
	}
)

func (s *SpinLock) Lock()   { s.state = 1 }
func (s *SpinLock) Unlock() { s.state = 0 }
func (*noCopy) Lock()       {}
func (*noCopy) Unlock()     {}

// A type holding a lock is refused by Check and Encode, naming the field path and the ways out;
// it is never saved to come back locked.
func TestLocksAreRefusedNotRestoredLocked(t *testing.T) {
	cases := []struct {
		comp ecs.Comp
		path string
	}{
		{ecs.C[LockedPOD](), "LockedPOD.mu (sync.Mutex)"},
		{ecs.C[EmbeddedLock](), "EmbeddedLock.RWMutex (sync.RWMutex)"},
		{ecs.C[PendingWork](), "PendingWork.wg (sync.WaitGroup)"},
		{ecs.C[OnceInit](), "OnceInit.once (sync.Once)"},
		{ecs.C[CondWait](), "CondWait.c (sync.Cond)"},
		{ecs.C[SyncMap](), "SyncMap.m (sync.Map)"},
		{ecs.C[PooledBuf](), "PooledBuf.pool (sync.Pool)"},
		{ecs.C[LockPointer](), "LockPointer.mu (sync.Mutex)"},
		{ecs.C[NestedLock](), "NestedLock.Inner.mu (sync.Mutex)"},
		{ecs.C[LockSlice](), "LockSlice.locks[] (sync.Mutex)"},
		{ecs.C[SpinGuard](), "SpinGuard.Spin (archetype_test.SpinLock)"},
		{ecs.C[MarkedNoCopy](), "MarkedNoCopy (archetype_test.MarkedNoCopy)"},
	}
	for _, tc := range cases {
		w := ecs.NewWorld()
		ecs.TypeID(w, tc.comp.Type())
		err := archetype.Check(w)
		if !errors.Is(err, archetype.ErrUnsupportedType) {
			t.Errorf("%s: Check: want ErrUnsupportedType, got %v", tc.path, err)
			continue
		}
		for _, want := range []string{tc.path, "must not be copied", "outside", "archetype.Transient"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error lacks %q: %v", tc.path, want, err)
			}
		}
		// The way out: leave the type out.
		if err := archetype.Check(w, archetype.Transient(tc.comp)); err != nil {
			t.Errorf("%s: Check with the type transient: %v", tc.path, err)
		}
	}

	// Encode refuses a held lock, writing nothing, raw types included.
	w := ecs.NewWorld()
	e := ecs.NewMap1[LockedPOD](w).NewEntity(&LockedPOD{N: 1})
	ecs.NewMap1[LockedPOD](w).Get(e).mu.Lock()
	var buf bytes.Buffer
	if err := archetype.Encode(&buf, w); !errors.Is(err, archetype.ErrUnsupportedType) || !strings.Contains(err.Error(), "LockedPOD.mu") || buf.Len() != 0 {
		t.Errorf("Encode: want ErrUnsupportedType naming LockedPOD.mu and nothing written, got %v and %d bytes", err, buf.Len())
	}
	// A resource too.
	r := ecs.NewWorld()
	ecs.AddResource(r, &PendingWork{Name: "jobs"})
	if err := archetype.Check(r); !errors.Is(err, archetype.ErrUnsupportedType) || !strings.Contains(err.Error(), "PendingWork.wg") {
		t.Errorf("resource: want ErrUnsupportedType naming PendingWork.wg, got %v", err)
	}
	// And a value behind an interface.
	archetype.Register[LockedPOD]()
	type Boxed struct{ V any }
	b := ecs.NewWorld()
	ecs.NewMap1[Boxed](b).NewEntity(&Boxed{V: LockedPOD{N: 2}})
	if err := archetype.Encode(&buf, b); !errors.Is(err, archetype.ErrUnsupportedType) || !strings.Contains(err.Error(), "mu") {
		t.Errorf("behind an interface: want ErrUnsupportedType naming mu, got %v", err)
	}
}

// Atomic values are plain data: saved and loaded with their values.
func TestAtomicValuesRoundTrip(t *testing.T) {
	w := ecs.NewWorld()
	m := ecs.NewMap1[AtomicStats](w)
	e := m.NewEntity(&AtomicStats{N: 3})
	s := m.Get(e)
	s.Hits.Store(-42)
	s.Ready.Store(true)
	s.Ratio.Store(7)
	expectNoError(t, archetype.Check(w), "Check")
	got := ecs.NewWorld()
	ecs.ComponentID[AtomicStats](got)
	expectNoError(t, archetype.Decode(bytes.NewReader(encode(t, w)), got), "Decode")
	q := ecs.NewFilter1[AtomicStats](got).Query()
	n := 0
	for q.Next() {
		v := q.Get()
		n++
		if v.Hits.Load() != -42 || !v.Ready.Load() || v.Ratio.Load() != 7 || v.N != 3 {
			t.Errorf("loaded hits %d, ready %v, ratio %d, n %d", v.Hits.Load(), v.Ready.Load(), v.Ratio.Load(), v.N)
		}
	}
	expectEqual(t, 1, n, "entities")
}

// A raw type stored in a file that the program now declares with a lock inside (as a file
// written before locks were refused holds it) is refused naming the field to blame, not only
// "not plain-old-data".
func TestStoredTypeNowRefusedNamesTheField(t *testing.T) {
	type Plain struct{ A, B int32 }
	type Guarded struct {
		A int32
		//lint:ignore U1000 the field Check must refuse
		mu sync.Mutex
	}
	_, err := changeType(t, Plain{1, 2}, ecs.C[Guarded]())
	if err == nil || !strings.Contains(err.Error(), "Guarded.mu (sync.Mutex)") || !strings.Contains(err.Error(), "must not be copied") {
		t.Errorf("want an error naming Guarded.mu, got %v", err)
	}
}
