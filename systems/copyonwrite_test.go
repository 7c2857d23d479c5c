package systems_test

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/vfs"
)

// stripes is a generator for chunks of any size.
type stripes struct{}

func (stripes) Version() uint32 { return 1 }
func (stripes) Generate(x, y int32, seed uint64, dst []uint32) {
	for i := range dst {
		dst[i] = uint32(components.MakePixel(3, uint8(i%7), 0, 0))
	}
}

// oneChunk installs the plugin on a new world of one loaded chunk (0,0) of
// size pixels, saving to dir on fsys, and waits for the chunk.
func oneChunk(t *testing.T, fsys vfs.FS, dir string, size int, load bool) (*ecs.World, []arksave.System, *components.Chunk, *components.ChunkState) {
	t.Helper()
	w := ecs.NewWorld()
	systems, err := arksave.Plugin{Dir: dir, Load: load, Overwrite: !load, ChunkSize: size, Seed: 1, Generator: stripes{}, FS: fsys,
		Autosave: &autosave.Config{Enabled: false, MaxBackups: 1}}.Install(w)
	must(t, err)
	pers := ecs.GetResource[arksave.Persistence](w)
	t.Cleanup(func() { pers.Close() })
	if !load {
		ecs.NewMap1[components.Focus](w).NewEntity(&components.Focus{X: float64(size / 2), Y: float64(size / 2)})
	}
	ix := ecs.GetResource[components.ChunkIndex](w)
	for i := 0; ix.Len() == 0; i++ {
		expect(t, i < 5000, "chunk did not load")
		for _, s := range systems {
			s.Update(w)
		}
		time.Sleep(time.Millisecond)
	}
	e, _ := ix.Get(components.ChunkPos{})
	_, c, st := ecs.NewMap3[components.ChunkPos, components.Chunk, components.ChunkState](w).Get(e)
	return w, systems, c, st
}

// While a save holds a chunk it has not read yet, the game's writes copy
// one tile each (not the chunk), the time they take counts towards
// autosave.State.LongestStall (added up over the tick), CopiedTiles counts
// them, and the save commits the pixels of its snapshot.
func TestCopyOnWriteWhileSaving(t *testing.T) {
	const size = 512 // 16x16 tiles
	// The writer of a Save As copies the store into the new directory before
	// it reads the snapshot's chunks: holding its first call there keeps the
	// chunk held for as long as the test needs.
	gate, blocked := make(chan struct{}), make(chan struct{})
	var once sync.Once
	fsys := vfs.Faulty(vfs.NewMem(), vfs.InjectorFunc(func(op vfs.Op, name string) error {
		if strings.HasPrefix(name, "/other") {
			once.Do(func() { close(blocked) })
			<-gate
		}
		return nil
	}))

	w, systems, c, st := oneChunk(t, fsys, "/save", size, false)
	var release sync.Once
	open := func() { release.Do(func() { close(gate) }) }
	t.Cleanup(open) // before Close (cleanups run last first), so that a failure does not hang
	tick := func() {
		for _, s := range systems {
			s.Update(w)
		}
	}
	state := ecs.GetResource[autosave.State](w)
	for i := range 100 {
		if c.Set(i, i, components.MakePixel(1, 0, 0, 0)) {
			st.MarkDirty()
		}
	}
	want := slices.Clone(c.Pixels())

	h := ecs.GetResource[arksave.Persistence](w).SaveAs("/other")
	tick()                              // the snapshot
	snapshotStall := state.LongestStall // the only save so far
	<-blocked
	expect(t, state.CopiedTiles == 0, "copied %d tiles before any write", state.CopiedTiles)

	c.Set(5, 5, components.MakePixel(2, 0, 0, 0))
	c.Set(6, 5, components.MakePixel(2, 0, 0, 0)) // the same tile
	c.Set(size-1, 0, components.MakePixel(2, 0, 0, 0))
	tick()
	expect(t, state.CopiedTiles == 2, "writes into two tiles copied %d tiles", state.CopiedTiles)

	// Every other tile, a quarter of the chunk at a time, in one tick.
	var spent time.Duration
	for q := range 4 {
		start := time.Now()
		c.MutRect(0, q*size/4, size, (q+1)*size/4)
		spent += time.Since(start)
	}
	tick()
	expect(t, state.CopiedTiles == 256, "the whole chunk is 256 tiles, copied %d", state.CopiedTiles)
	// The copies must show in LongestStall. Only when they took clearly
	// longer than the snapshot can that be told from outside (a busy
	// machine can make the snapshot slow).
	if spent > 4*snapshotStall {
		expect(t, state.LongestStall >= spent/4, "LongestStall %v does not count the tick's copies (%v; snapshot %v)", state.LongestStall, spent, snapshotStall)
	} else {
		t.Logf("copies %v not clearly longer than the snapshot %v: LongestStall not checked", spent, snapshotStall)
	}
	for i := range 100 {
		c.Set(i, i, components.MakePixel(4, 0, 0, 0))
	}
	st.MarkDirty()

	open()
	res := waitHandle(t, tick, h)
	must(t, res.Err)
	expect(t, res.Stall == snapshotStall, "the snapshot's stall %v, LongestStall after it %v", res.Stall, snapshotStall)
	expect(t, state.CopiedTiles == 256, "copied %d tiles after the save", state.CopiedTiles)
	expect(t, c.At(3, 3).Material() == 4, "the chunk lost the game's writes")
	must(t, ecs.GetResource[arksave.Persistence](w).Close())

	_, _, saved, _ := oneChunk(t, fsys, "/other", size, true)
	expect(t, slices.Equal(saved.Pixels(), want), "the save did not commit the pixels of its snapshot")
}

func waitHandle(t *testing.T, tick func(), h *arksave.SaveHandle) *autosave.Result {
	t.Helper()
	for i := 0; !h.IsComplete(); i++ {
		expect(t, i < 20000, "save did not complete")
		tick()
		time.Sleep(100 * time.Microsecond)
	}
	return h.Result()
}
