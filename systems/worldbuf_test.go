package systems_test

import (
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/plugin"
	"github.com/arksave/arksave/vfs"
)

type bufPos struct{ X, Y float64 }

type flatGen struct{}

func (flatGen) Version() uint32                             { return 1 }
func (flatGen) Generate(_, _ int32, _ uint64, dst []uint32) { clear(dst) }

// TestSnapshotReusesWorldBuffer: a snapshot encodes the ECS world into the
// memory of the last world file the writer handed back, and a save through
// the writer hands it back: the save path allocates no new buffer the size
// of the world once it runs.
func TestSnapshotReusesWorldBuffer(t *testing.T) {
	w := ecs.NewWorld()
	m := ecs.NewMap1[bufPos](w)
	for i := range 5000 {
		m.NewEntity(&bufPos{X: float64(i)})
	}
	_, err := arksave.Plugin{Dir: "/save", FS: vfs.NewMem(), ChunkSize: 16, TileSize: 8, Generator: flatGen{},
		Autosave: &autosave.Config{Interval: time.Hour}}.Install(w)
	if err != nil {
		t.Fatal(err)
	}
	pers := ecs.GetResource[arksave.Persistence](w)
	defer pers.Close()
	rt := ecs.GetResource[plugin.Slot](w).Runtime

	first, err := rt.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	mem := &first.World[0]
	first.Release()
	first.ReleaseWorld()
	second, err := rt.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if &second.World[0] != mem {
		t.Fatal("the second snapshot encoded the world into new memory, not the buffer handed back")
	}
	second.Release()
	second.ReleaseWorld()

	// Through the writer: a save hands its buffer back when it has written it.
	if res := pers.SaveNow(); res.Err != nil {
		t.Fatal(res.Err)
	}
	third, err := rt.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer third.Release()
	if &third.World[0] != mem {
		t.Fatal("after a save, the snapshot encoded the world into new memory")
	}
}
