package arksave_test

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"sort"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/vfs"
)

// readFaults fails reads of the chunk store's data files with EIO (an I/O
// error, not damage) while on, and counts the reads it failed.
type readFaults struct {
	on     atomic.Bool
	failed atomic.Int64
}

func (f *readFaults) Inject(op vfs.Op, name string) error {
	if op != vfs.OpRead || !f.on.Load() {
		return nil
	}
	if _, _, ok := chunkstore.ParseDataFileName(filepath.Base(name)); !ok {
		return nil
	}
	f.failed.Add(1)
	return &fs.PathError{Op: op.String(), Path: name, Err: syscall.EIO}
}

// around lists the chunks within radius 1 of chunk (0,0).
func around() []components.ChunkPos {
	var out []components.ChunkPos
	for y := int32(-1); y <= 1; y++ {
		for x := int32(-1); x <= 1; x++ {
			out = append(out, components.ChunkPos{X: x, Y: y})
		}
	}
	return out
}

// bodyViews returns every pixel body in the world, all its fields, by id.
func bodyViews(g *game) map[components.BodyID]string {
	out := map[components.BodyID]string{}
	q := ecs.NewFilter1[components.PixelBody](g.w).Query()
	for q.Next() {
		b := q.Get()
		out[b.ID] = fmt.Sprintf("%+v", *b)
	}
	return out
}

// loadedOf returns which of ps are loaded.
func loadedOf(g *game, ps []components.ChunkPos) []components.ChunkPos {
	ix := ecs.GetResource[components.ChunkIndex](g.w)
	var out []components.ChunkPos
	for _, p := range ps {
		if _, ok := ix.Get(p); ok {
			out = append(out, p)
		}
	}
	return out
}

// setFocus moves the test game's focus without waiting for chunks.
func (g *game) setFocus(x, y float64) {
	q := ecs.NewFilter1[components.Focus](g.w).Query()
	for q.Next() {
		f := q.Get()
		f.X, f.Y = x, y
	}
}

// storedWorld is what a test world holds around chunk (0,0): the pixels of
// every chunk, the crates and the pixel bodies.
type storedWorld struct {
	digests map[components.ChunkPos]uint64
	crates  string
	bodies  string
}

func (g *game) storedWorld(t testing.TB) storedWorld {
	t.Helper()
	s := storedWorld{digests: map[components.ChunkPos]uint64{}}
	for _, p := range around() {
		s.digests[p] = g.chunkDigest(t, p.X, p.Y)
	}
	crates, _ := g.crates(t)
	s.crates = fmt.Sprint(crates)
	s.bodies = fmt.Sprint(bodyViews(g))
	return s
}

func (s storedWorld) diff(o storedWorld) string {
	var out []string
	for p, d := range s.digests {
		if o.digests[p] != d {
			out = append(out, fmt.Sprintf("chunk %v differs", p))
		}
	}
	sort.Strings(out)
	if s.crates != o.crates {
		out = append(out, fmt.Sprintf("crates %s, want %s", o.crates, s.crates))
	}
	if s.bodies != o.bodies {
		out = append(out, fmt.Sprintf("bodies %s, want %s", o.bodies, s.bodies))
	}
	return fmt.Sprint(out)
}

// buildStoredWorld paints every chunk around (0,0), puts crates and pixel
// bodies into some of them and saves.
func buildStoredWorld(t testing.TB, g *game) storedWorld {
	t.Helper()
	g.settle(t)
	for i, p := range around() {
		g.paint(t, p.X, p.Y, i+1, 2*i+1, components.MakePixel(uint8(20+i), 1, 0, 0))
	}
	ids := ecs.GetResource[components.BodyIDs](g.w)
	for i, at := range [][2]float32{{40, 45}, {-20, 10}, {5, -25}} {
		b := components.PixelBody{ID: ids.New(), X: at[0], Y: at[1], Rotation: 0.25 * float32(i), VX: float32(i), Width: 2, Height: 1,
			Pixels: []components.Pixel{components.Pixel(i + 1), 7}, Shape: []bool{true, i != 1}}
		g.bodies.NewEntity(&b, &components.Persistable{})
	}
	g.spawnCrate(-5, 3, 0, 3)
	g.spawnCrate(50, 50, 0, 8)
	g.tick()
	must(t, g.pers.SaveNow().Err)
	return g.storedWorld(t)
}

// TestStreamingReadErrorKeepsStoredChunks: while the chunk store's data
// file cannot be read (an I/O error, not damage), chunks that stream in
// stay unloaded and are retried with a backoff, never loaded as generated
// and never saved over the stored ones; their bodies and entities are not
// dropped; the failure is reported, and once the disk heals they come
// back exactly, as a save and a load of it then show.
func TestStreamingReadErrorKeepsStoredChunks(t *testing.T) {
	mem := vfs.NewMem()
	faults := &readFaults{}
	logs := &records{}
	g := regionalGame(t, gameOpts{fs: &vfs.Faulty{FS: mem, Injector: faults}, dir: "/save", radius: 1, autosave: noBackupCopy(),
		plugin: func(p *arksave.Plugin) { p.Logger = slog.New(logs) }})
	want := buildStoredWorld(t, g)
	g.pers.Problems()

	g.moveFocus(t, 20*testChunk, 0)
	expect(t, len(loadedOf(g, around())) == 0, "chunks around 0,0 still loaded")
	faults.on.Store(true)
	g.setFocus(0, 0)
	const ticks = 120
	for range ticks {
		g.tick()
		time.Sleep(time.Millisecond)
	}
	expect(t, faults.failed.Load() > 0, "no read of the data file was tried")
	expect(t, len(loadedOf(g, around())) == 0, "chunks loaded while their records cannot be read: %v", loadedOf(g, around()))
	crates, _ := g.crates(t)
	expect(t, len(crates) == 0 && countBodies(g) == 0, "entities spawned without their chunk: %v, %d bodies", crates, countBodies(g))
	expect(t, faults.failed.Load() <= int64(len(around())*ticks/4), "%d failed reads in %d ticks: retried without a backoff", faults.failed.Load(), ticks)
	probs := g.pers.Problems()
	expect(t, len(probs) == len(around()), "%d problems for %d chunks that could not be read, once each: %v", len(probs), len(around()), probs)
	attrs, ok := logs.find(slog.LevelWarn, "chunk read failed: not loaded, read again later")
	expect(t, ok && errors.Is(attrs["err"].Any().(error), syscall.EIO), "the failed read is not logged: %v", logs.messages())
	for _, p := range probs {
		expect(t, errors.Is(p.Err, syscall.EIO) && !errors.Is(p.Err, arksave.ErrCorrupt) && p.Pos != nil,
			"a problem that is not the read error, or reads as damage: %v", p)
	}
	// A save while the reads fail writes nothing over the stored chunks.
	must(t, g.pers.SaveNow().Err)
	st, _ := openCommittedStore(t, mem, "/save")
	for _, p := range around() {
		raw, ok, err := st.ReadRaw(chunkstore.Pos{X: p.X, Y: p.Y})
		must(t, err)
		expect(t, ok && raw.Type != chunkstore.Empty, "chunk %v lost its record: %+v", p, raw)
	}
	must(t, st.Close())

	faults.on.Store(false)
	g.settle(t)
	_, ok = logs.find(slog.LevelInfo, "chunk read after failed reads")
	expect(t, ok, "the chunks read after failures are not logged: %v", logs.messages())
	got := g.storedWorld(t)
	expect(t, got.diff(want) == "[]", "after the disk healed: %s", got.diff(want))
	for _, p := range g.pers.Problems() {
		expect(t, !errors.Is(p.Err, arksave.ErrCorrupt), "damage reported for a read error: %v", p)
	}

	must(t, g.pers.SaveNow().Err)
	must(t, g.pers.Close())
	h := regionalGame(t, gameOpts{fs: mem, dir: "/save", load: true, radius: 1})
	h.moveFocus(t, 0, 0)
	got = h.storedWorld(t)
	expect(t, got.diff(want) == "[]", "after a save and a load: %s", got.diff(want))
}

// TestDamagedChunkRecordRegenerates: a chunk record that fails its checksum
// is damage: the chunk streams in as generated and the damage is reported.
func TestDamagedChunkRecordRegenerates(t *testing.T) {
	mem := vfs.NewMem()
	g := newGame(t, gameOpts{fs: mem, dir: "/save", radius: 1, autosave: noBackupCopy()})
	g.settle(t)
	generated := g.chunkDigest(t, 1, 1)
	g.paint(t, 1, 1, 5, 6, components.MakePixel(12, 3, 0, 0))
	expect(t, g.chunkDigest(t, 1, 1) != generated, "the paint changed nothing")
	must(t, g.pers.SaveNow().Err)
	g.moveFocus(t, 20*testChunk, 0)

	st, m := openCommittedStore(t, mem, "/save")
	raw, ok, err := st.ReadRaw(chunkstore.Pos{X: 1, Y: 1})
	must(t, err)
	expect(t, ok && !raw.Handle.IsZero(), "chunk 1,1 not stored")
	must(t, st.Close())
	name := m.Chunks.Name
	if n := raw.Handle.File(); n > 0 {
		name = chunkstore.DataFileName(name, n)
	}
	flipAt(t, mem, "/save/"+name, raw.Handle.FileOffset()+int64(raw.Handle.Length)-2)

	g.pers.Problems()
	g.moveFocus(t, 0, 0)
	expect(t, g.chunkDigest(t, 1, 1) == generated, "a damaged record does not read as the generated chunk")
	found := false
	for _, p := range g.pers.Problems() {
		if p.Pos != nil && p.Pos.X == 1 && p.Pos.Y == 1 && errors.Is(p.Err, arksave.ErrCorrupt) {
			found = true
		}
	}
	expect(t, found, "the damaged record is not reported")
}

// TestMergeDuringReadErrorKeepsStoredEntities: an entity placed into a
// chunk that is not loaded is added to what the store holds for it; when
// that cannot be read (an I/O error, not damage) the save fails instead of
// replacing the stored entities with the new one, and the next save after
// the disk healed keeps both.
func TestMergeDuringReadErrorKeepsStoredEntities(t *testing.T) {
	mem := vfs.NewMem()
	faults := &readFaults{}
	g := regionalGame(t, gameOpts{fs: &vfs.Faulty{FS: mem, Injector: faults}, dir: "/save", radius: 1, autosave: noBackupCopy()})
	want := buildStoredWorld(t, g)
	g.moveFocus(t, 20*testChunk, 0)

	g.spawnCrate(52, 60, 900, 9) // chunk (1,1), not loaded: unloaded into it
	g.tick()
	faults.on.Store(true)
	res := g.pers.SaveNow()
	expect(t, errors.Is(res.Err, syscall.EIO), "a save that could not read the stored entities it adds to: %v", res.Err)
	expect(t, len(storedBlock(t, mem, "/save", chunkstore.Pos{X: 1, Y: 1}).Bodies) == 1, "the stored body of chunk 1,1 is gone")

	faults.on.Store(false)
	must(t, g.pers.SaveNow().Err)
	g.moveFocus(t, 0, 0)
	crates, _ := g.crates(t)
	expect(t, crates[900].HP == 9, "the new crate is lost: %v", crates)
	delete(crates, 900)
	got := g.storedWorld(t)
	got.crates = fmt.Sprint(crates)
	expect(t, got.diff(want) == "[]", "after the merge: %s", got.diff(want))
}
