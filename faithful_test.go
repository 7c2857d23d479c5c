package arksave_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/vfs"
)

// Fragile is a game component whose own encoding panics while fragile is set.
type Fragile struct{ N int }

var fragile atomic.Bool

func (f Fragile) MarshalBinary() ([]byte, error) {
	if fragile.Load() {
		panic("Fragile.MarshalBinary exploded")
	}
	return []byte{byte(f.N)}, nil
}

func (f *Fragile) UnmarshalBinary(b []byte) error {
	if len(b) != 1 {
		return fmt.Errorf("fragile: %d bytes", len(b))
	}
	f.N = int(b[0])
	return nil
}

// Holder keeps a Fragile behind a pointer, so that the component is encoded by the codec's plan
// (plain-old-data components are copied as memory and never call MarshalBinary).
type Holder struct{ F *Fragile }

// A panic while the world is encoded on the game loop fails that save, with the panic's message
// in autosave.State.LastResult; the game goes on and the next save commits.
func TestPanicWhileEncodingFailsTheSave(t *testing.T) {
	mem := vfs.NewMem()
	g := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 0})
	ecs.NewMap1[Holder](g.W).NewEntity(&Holder{F: &Fragile{N: 7}})
	fragile.Store(true)
	res := g.WaitSave(t, g.Pers.Save())
	fragile.Store(false)
	expect(t, errors.Is(res.Err, autosave.ErrPanic) && strings.Contains(res.Err.Error(), "Fragile.MarshalBinary exploded"),
		"want ErrPanic with the panic's message, got %v", res.Err)
	state := ecs.GetResource[autosave.State](g.W)
	expect(t, state.LastResult == res && !state.InProgress, "the failed save is not the last result")
	expect(t, g.Pers.Generation() == 0, "a failed save committed generation %d", g.Pers.Generation())

	must(t, g.WaitSave(t, g.Pers.Save()).Err)
	must(t, g.Pers.Close()) // the directory has one owner at a time
	h := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 0, Prepare: func(w *ecs.World) { ecs.ComponentID[Holder](w) }})
	q := ecs.NewFilter1[Holder](h.W).Query()
	defer q.Close()
	expect(t, q.Next() && q.Get().F.N == 7, "the retried save did not keep the component")
}

// panicky panics at the mutating file-system call its countdown picks.
type panicky struct{ cd *vfs.Countdown }

func (p panicky) Inject(op vfs.Op, name string) error {
	if err := p.cd.Inject(op, name); err != nil {
		panic(fmt.Sprintf("injected panic at %v", err))
	}
	return nil
}

// A panic anywhere on the writer's side (compressing, writing the store, the world file or the
// manifest, on the writer goroutine or its helpers) fails the save; the directory still loads a
// committed generation exactly, and the next save commits.
func TestPanicWhileWritingFailsTheSave(t *testing.T) {
	for n := 0; ; n++ {
		mem := vfs.NewMem()
		cd := &vfs.Countdown{N: 1 << 30}
		// The save's own calls are counted first, then those of the
		// mirrors grown after it.
		g := gametest.New(t, gametest.Opts{FS: vfs.Faulty(mem, panicky{cd}), Dir: "/save", Radius: 1,
			Autosave: &autosave.Config{Interval: time.Hour, MaxBackups: 1, BackupCopyEvery: -1}})
		g.Settle(t)
		g.Paint(t, 0, 0, 3, 3, components.MakePixel(9, 0, 0, 0))
		must(t, g.WaitSave(t, g.Pers.Save()).Err)
		digests := map[uint64]uint64{1: g.ChunkDigest(t, 0, 0)}
		g.Paint(t, 0, 0, 4, 4, components.MakePixel(9, 0, 0, 0))
		digests[2] = g.ChunkDigest(t, 0, 0)
		g.Pers.WaitIdle() // the writer's work after the first save is done
		cd.N = cd.Calls() + n
		res := g.WaitSave(t, g.Pers.Save())
		g.Pers.WaitIdle() // the mirrors grown after the save
		if cd.Fired() && res.Err == nil {
			// Past the save's own calls: the panic hit the mirrors the
			// writer grows after it, which the next result reports.
			next := g.WaitSave(t, g.Pers.Save())
			must(t, next.Err)
			expect(t, errors.Is(next.BackupCopyErr, autosave.ErrPanic), "panic at call %d, in the mirrors: %v", n, next.BackupCopyErr)
			g.Pers.Close()
			if n < 5 {
				t.Fatalf("a save makes only %d mutating calls", n)
			}
			break
		}
		if !cd.Fired() {
			must(t, res.Err)
			g.Pers.Close()
			if n < 5 {
				t.Fatalf("a save makes only %d mutating calls", n)
			}
			break
		}
		expect(t, errors.Is(res.Err, autosave.ErrPanic) && strings.Contains(res.Err.Error(), "injected panic"),
			"panic at call %d: want ErrPanic, got %v", n, res.Err)
		// The fault is gone: the next save commits the change.
		must(t, g.WaitSave(t, g.Pers.Save()).Err)
		g.Pers.Close()
		k := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
		k.Settle(t)
		expect(t, k.ChunkDigest(t, 0, 0) == digests[2], "panic at call %d: the retry did not save the change", n)
		k.Pers.Close()
	}
}

// Install refuses, at start-up, a game type that a save could not bring back exactly.
func TestInstallRefusesTypesThatCannotBeSaved(t *testing.T) {
	type Brain struct {
		//lint:ignore U1000 the unexported function field the refusal names
		think func()
	}
	type Enemy struct{ AI Brain }
	w := ecs.NewWorld()
	ecs.ComponentID[Enemy](w)
	_, err := arksave.Plugin{Dir: t.TempDir(), ChunkSize: gametest.ChunkSize}.Install(w)
	expect(t, errors.Is(err, archetype.ErrUnsupportedType) && strings.Contains(err.Error(), "Enemy.AI.think"),
		"want ErrUnsupportedType naming Enemy.AI.think, got %v", err)

	// The ways out: leave the type out.
	sys, err := arksave.Plugin{Dir: t.TempDir(), ChunkSize: gametest.ChunkSize,
		WorldOptions: []archetype.Option{archetype.Transient(ecs.C[Enemy]())}}.Install(w)
	must(t, err)
	expect(t, len(sys) == 2, "systems")
	must(t, ecs.GetResource[arksave.Persistence](w).Close())
}

// Install refuses a game type holding a lock, naming the field and the ways out: a mutex held
// while saving would load held, and the loaded game would deadlock.
func TestInstallRefusesLocks(t *testing.T) {
	type Inventory struct {
		//lint:ignore U1000 plain-old-data with it: copied as raw memory if allowed
		mu    sync.Mutex
		Count int64
	}
	type Jobs struct {
		Name string
		//lint:ignore U1000 the lock the refusal names
		pending sync.WaitGroup
	}
	w := ecs.NewWorld()
	ecs.ComponentID[Inventory](w)
	ecs.AddResource(w, &Jobs{Name: "jobs"})
	_, err := arksave.Plugin{Dir: t.TempDir(), ChunkSize: gametest.ChunkSize}.Install(w)
	for _, want := range []string{"Inventory.mu (sync.Mutex)", "Jobs.pending (sync.WaitGroup)", "must not be copied", "archetype.Transient"} {
		expect(t, errors.Is(err, archetype.ErrUnsupportedType) && strings.Contains(err.Error(), want),
			"want ErrUnsupportedType naming %q, got %v", want, err)
	}

	// The ways out: leave the types out.
	sys, err := arksave.Plugin{Dir: t.TempDir(), ChunkSize: gametest.ChunkSize,
		WorldOptions: []archetype.Option{archetype.Transient(ecs.C[Inventory]()), archetype.SkipResources(ecs.C[Jobs]())}}.Install(w)
	must(t, err)
	expect(t, len(sys) == 2, "systems")
	must(t, ecs.GetResource[arksave.Persistence](w).Close())
}

// A pointer cycle in a resource fails the autosave with an error; the game keeps running.
func TestPointerCycleFailsTheSaveNotTheGame(t *testing.T) {
	type Node struct{ Next *Node }
	type Graph struct{ Root *Node }
	mem := vfs.NewMem()
	g := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 0})
	n := &Node{}
	n.Next = n
	ecs.AddResource(g.W, &Graph{Root: n})
	res := g.WaitSave(t, g.Pers.Save())
	expect(t, errors.Is(res.Err, archetype.ErrCycle), "want ErrCycle, got %v", res.Err)
	n.Next = nil
	must(t, g.WaitSave(t, g.Pers.Save()).Err)
}
