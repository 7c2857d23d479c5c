package savedir_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/conv"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/snapshot"
	"github.com/arksave/arksave/vfs"
)

const size = 16

type flatGen struct{}

func (flatGen) Version() uint32 { return 1 }
func (flatGen) Generate(x, y int32, seed uint64, dst []uint32) {
	for i := range dst {
		dst[i] = uint32(i%3) + uint32(seed)
	}
}

// storeConfig keeps data files small (2 KiB; a Full record of a random
// chunk is 1 KiB), so that saves start data files often.
func storeConfig() chunkstore.Options {
	return chunkstore.Options{ChunkSize: size, TileSize: 8, PixelSize: 4, Seed: 3, Generator: flatGen{}, DataFileSize: 2 << 10}
}

// storeBytes returns the bytes of the chunk store name in dir: its store
// file and every data file of it.
func storeBytes(t *testing.T, fsys vfs.FS, dir, name string) int64 {
	t.Helper()
	var n int64
	names, err := fsys.ReadDir(dir)
	must(t, err)
	for _, f := range names {
		if store, _, ok := storetool.Tool.ParseDataFileName(f); f == name || ok && store == name {
			n += fileSize(t, fsys, dir+"/"+f)
		}
	}
	return n
}

// version g of the world: chunk (0,0) has pixel g set to 100+g, chunk (1,0)
// is rewritten every other generation, and the world file names g.
func snapAt(g int) *snapshot.Snapshot {
	s := &snapshot.Snapshot{World: []byte(fmt.Sprintf("world generation %d", g))}
	for _, pos := range []components.ChunkPos{{X: 0, Y: 0}, {X: 1, Y: 0}} {
		if pos.X == 1 && g%2 == 1 {
			continue
		}
		pix := make([]uint32, size*size)
		flatGen{}.Generate(pos.X, pos.Y, 3, pix)
		for i := 1; i <= g; i++ {
			pix[i] = uint32(100 + i + int(pos.X))
		}
		c := components.NewChunk(size, conv.Pixels(pix))
		s.Chunks = append(s.Chunks, snapshot.Chunk{Pos: pos, Buf: c.Share(), Version: uint64(g)})
	}
	s.Entities = []snapshot.EntitySet{{Pos: components.ChunkPos{}, Version: uint64(g), Bodies: []components.PixelBody{{
		ID: components.BodyID(g), X: float32(g), Width: 1, Height: 1, Pixels: []components.Pixel{7}, Shape: []bool{true},
	}}}}
	return s
}

// chunkPixels reads the pixels of a snapshot's chunk.
func chunkPixels(t *testing.T, c snapshot.Chunk) []uint32 {
	t.Helper()
	pix := make([]uint32, c.Buf.Size()*c.Buf.Size())
	must(t, c.ReadPixels(pix))
	return pix
}

// expectGeneration checks that the directory opens at generation g with
// exactly generation g's contents.
func expectGeneration(t *testing.T, fsys vfs.FS, g int) {
	t.Helper()
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: fsys, Store: storeConfig()})
	must(t, err)
	defer w.Close()
	expect(t, int(w.Generation()) == g, "generation %d, want %d", w.Generation(), g)
	if g == 0 {
		return
	}
	world, err := w.ReadWorld()
	must(t, err)
	expect(t, string(world) == fmt.Sprintf("world generation %d", g), "world file %q in generation %d", world, g)
	got := make([]uint32, size*size)
	for _, pos := range []components.ChunkPos{{X: 0, Y: 0}, {X: 1, Y: 0}} {
		_, err := w.Get(conv.StorePos(pos), got)
		must(t, err)
		wantPix := make([]uint32, size*size)
		lastWritten := g
		if pos.X == 1 && g%2 == 1 {
			lastWritten = g - 1
		}
		if pos.X == 1 && lastWritten == 0 {
			flatGen{}.Generate(1, 0, 3, wantPix)
		} else {
			wantPix = chunkPixels(t, snapAt(lastWritten).Chunks[int(pos.X)%len(snapAt(lastWritten).Chunks)])
		}
		expect(t, slicesEqual(got, wantPix), "generation %d: chunk %v differs", g, pos)
	}
	bodies, err := w.Bodies(chunkstore.Pos{})
	must(t, err)
	expect(t, len(bodies) == 1 && bodies[0].ID == uint64(g), "generation %d: bodies %v", g, bodies)
}

func slicesEqual(a, b []uint32) bool { return bytes.Equal(snapshotBytes(a), snapshotBytes(b)) }

func snapshotBytes(p []uint32) []byte {
	b := make([]byte, 0, 4*len(p))
	for _, v := range p {
		b = append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	}
	return b
}

func save(t *testing.T, w *savedir.Writer, g int) *autosave.Result {
	t.Helper()
	expect(t, w.Submit(savedir.Job{Snap: snapAt(g), MaxBackups: 1}), "writer busy")
	return w.Wait()
}

func TestWriterCommitsAndReopens(t *testing.T) {
	mem := vfs.NewMem()
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: mem, Store: storeConfig()})
	must(t, err)
	for g := 1; g <= 3; g++ {
		r := save(t, w, g)
		must(t, r.Err)
		expect(t, int(r.Generation) == g && r.ChunksWritten == len(snapAt(g).Chunks), "result %v", r)
	}
	must(t, w.Close())
	expectGeneration(t, mem, 3)
}

// A crash before any call of a save, keeping none, some or all of the
// unsynced data, leaves exactly the previous or the new generation.
func TestWriterCrashAtEveryCall(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, keep := range []float64{0, 0.5, 1} {
		for n := 0; ; n++ {
			mem := savedMem(t, 2)
			fsys, crash := vfs.NewCrashFS(mem, n, keep, rng)
			w, err := savedir.OpenWriter("/save", savedir.Options{FS: fsys, Store: storeConfig()})
			if err == nil {
				save(t, w, 3)
				w.Close()
			}
			after := crash.Crashed()
			if after == nil {
				expectGeneration(t, mem, 3)
				expect(t, n > 10, "a save made only %d mutating calls", n)
				t.Logf("keep %v: crashed before each of %d calls", keep, n)
				break
			}
			w2, err := savedir.OpenWriter("/save", savedir.Options{FS: after, Store: storeConfig()})
			must(t, err)
			g := int(w2.Generation())
			w2.Close()
			expect(t, g == 2 || g == 3, "keep %v, crash before call %d: generation %d", keep, n, g)
			expectGeneration(t, after, g)

			// Saving goes on from there.
			w3, err := savedir.OpenWriter("/save", savedir.Options{FS: after, Store: storeConfig()})
			must(t, err)
			r := save(t, w3, g+1)
			must(t, r.Err)
			must(t, w3.Close())
			expectGeneration(t, after, g+1)
		}
	}
}

func TestRestoreBackup(t *testing.T) {
	mem := vfs.NewMem()
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: mem, Store: storeConfig()})
	must(t, err)
	for g := 1; g <= 4; g++ {
		expect(t, w.Submit(savedir.Job{Snap: snapAt(g), MaxBackups: 3}), "busy")
		must(t, w.Wait().Err)
	}
	must(t, w.Close())

	d, err := savedir.OpenDir(mem, "/save")
	must(t, err)
	gens := []uint64{}
	for _, b := range d.Backups() {
		gens = append(gens, b.Generation)
	}
	expect(t, fmt.Sprint(gens) == "[3 2 1]", "backups %v", gens)
	m, err := d.Restore(2, 3)
	must(t, err)
	expect(t, m.Generation == 5, "restore made generation %d", m.Generation)
	must(t, d.Close())

	// Generation 5 has generation 2's contents; saving continues from there.
	w, err = savedir.OpenWriter("/save", savedir.Options{FS: mem, Store: storeConfig()})
	must(t, err)
	world, err := w.ReadWorld()
	must(t, err)
	expect(t, string(world) == "world generation 2", "restored world %q", world)
	got := make([]uint32, size*size)
	_, err = w.Get(chunkstore.Pos{}, got)
	must(t, err)
	expect(t, slicesEqual(got, chunkPixels(t, snapAt(2).Chunks[0])), "restored chunk differs from generation 2's")
	expect(t, w.Submit(savedir.Job{Snap: snapAt(6), MaxBackups: 3}), "busy")
	must(t, w.Wait().Err)
	must(t, w.Close())
	expectGeneration(t, mem, 6)

	// The generation that was current before the restore is a backup now.
	d, err = savedir.OpenDir(mem, "/save")
	must(t, err)
	b, err := d.Backup(4)
	must(t, err)
	world, err = d.ReadWorld(b)
	must(t, err)
	expect(t, string(world) == "world generation 4", "backup 4 world %q", world)
}

// The game loop reads the committed generation and manifest (the overlay
// does, every frame) while the writer commits: it sees the generation
// before or after the commit, never a torn one (run with -race).
func TestGenerationWhileCommitting(t *testing.T) {
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: vfs.NewMem(), Store: storeConfig()})
	must(t, err)
	defer w.Close()
	for g := 1; g <= 20; g++ {
		expect(t, w.Submit(savedir.Job{Snap: snapAt(g), MaxBackups: 1}), "writer busy before save %d", g)
		var res *autosave.Result
		var ok bool
		for !ok {
			got := w.Generation()
			expect(t, got == uint64(g-1) || got == uint64(g), "generation %d while committing %d", got, g)
			if m := w.Manifest(); m != nil {
				expect(t, m.Generation == got || m.Generation == got+1, "manifest of generation %d after reading %d", m.Generation, got)
			}
			res, ok = w.Poll()
		}
		must(t, res.Err)
	}
	expect(t, w.Generation() == 20, "generation %d after 20 saves", w.Generation())
}

// randomSnap is generation g with both chunks full of random pixels, so that
// every save leaves the previous records dead and compaction comes due.
func randomSnap(g int) *snapshot.Snapshot {
	s := &snapshot.Snapshot{World: []byte(fmt.Sprintf("world generation %d", g))}
	rng := rand.New(rand.NewPCG(uint64(g), 9))
	for x := int32(0); x < 4; x++ {
		pix := make([]uint32, size*size)
		for i := range pix {
			pix[i] = rng.Uint32()
		}
		c := components.NewChunk(size, conv.Pixels(pix))
		s.Chunks = append(s.Chunks, snapshot.Chunk{Pos: components.ChunkPos{X: x}, Buf: c.Share(), Version: uint64(g)})
	}
	return s
}

// compactConfig keeps data files large enough (64 KiB) to hold many
// records: rewritten chunks leave them partly dead. (A data file with no
// live record leaves the generation whole and needs no compaction.)
func compactConfig() chunkstore.Options {
	c := storeConfig()
	c.DataFileSize = 64 << 10
	return c
}

// dataFilesOnDisk lists the data files in dir.
func dataFilesOnDisk(t *testing.T, fsys vfs.FS, dir string) []string {
	t.Helper()
	names, err := fsys.ReadDir(dir)
	must(t, err)
	var out []string
	for _, n := range names {
		if _, _, ok := savedir.DataFileOf(n); ok {
			out = append(out, n)
		}
	}
	return out
}

// The writer compacts between saves, never inside one: once a save leaves
// the store due for compaction, the writer compacts the data file with
// the most dead bytes before the next save starts, and the next save's
// manifest names the compacted generation (Result.Compacted). The files
// the compaction emptied stay while a backup names them and go with it;
// the backup restores from them meanwhile. A crash at any step of the save
// that leaves compaction due, the compaction and the save that commits it
// leaves one of those generations, exactly.
func TestWriterCompacts(t *testing.T) {
	compactingSaves := func(fsys vfs.FS, from, upTo int) (compactedAt int) {
		w, err := savedir.OpenWriter("/save", savedir.Options{FS: fsys, Store: compactConfig()})
		if err != nil {
			return -1 // a crash before the directory opened
		}
		defer w.Close()
		for g := from; g <= upTo; g++ {
			if !w.Submit(savedir.Job{Snap: randomSnap(g), MaxBackups: 1}) {
				t.Fatal("busy")
			}
			r := w.Wait()
			if r.Err != nil {
				return -1
			}
			if r.Compacted {
				return g
			}
		}
		return 0
	}
	mem := vfs.NewMem()
	at := compactingSaves(mem, 1, 40)
	expect(t, at > 2, "no save compacted the store in 40 generations")
	d, err := savedir.OpenDir(mem, "/save")
	must(t, err)
	m := d.Manifest()
	b, err := d.Backup(uint64(at - 1))
	must(t, err)
	expect(t, m.Chunks.Name == b.Chunks.Name && m.Chunks.Name == savedir.ChunksName, "the store was replaced: %s, %s", m.Chunks.Name, b.Chunks.Name)
	// Every data file on disk is one the manifest or the backup names.
	named := map[string]bool{}
	for _, n := range append(slices.Clone(m.Chunks.Data), b.Chunks.Data...) {
		named[n] = true
	}
	onDisk := dataFilesOnDisk(t, mem, "/save")
	for _, n := range onDisk {
		expect(t, named[n], "data file %s is named by no manifest", n)
	}
	dropped := 0
	for _, n := range b.Chunks.Data {
		if !slices.Contains(m.Chunks.Data, n) {
			dropped++
		}
	}
	expect(t, dropped > 0, "the compacted generation names every data file of the one before: %v, %v", m.Chunks.Data, b.Chunks.Data)
	must(t, d.Close())
	expectRandomGeneration(t, mem, at)

	// The backup still opens from the files the compaction emptied.
	d, err = savedir.OpenDir(mem, "/save")
	must(t, err)
	_, err = d.Restore(uint64(at-1), 1)
	must(t, err)
	must(t, d.Close())
	expectRandomGeneration(t, mem, at-1)

	// Crash at every call from the save before the compaction to the save
	// that commits it.
	rng := rand.New(rand.NewPCG(5, 5))
	for n := 0; ; n++ {
		base := vfs.NewMem()
		compactingSaves(base, 1, at-2)
		fsys, crash := vfs.NewCrashFS(base, n, 0.5, rng)
		compactingSaves(fsys, at-1, at)
		after := crash.Crashed()
		if after == nil {
			expect(t, n > 10, "the compacting saves made only %d mutating calls", n)
			break
		}
		w, err := savedir.OpenWriter("/save", savedir.Options{FS: after, Store: compactConfig()})
		must(t, err)
		g := int(w.Generation())
		w.Close()
		expect(t, g >= at-2 && g <= at, "crash before call %d of the compacting saves: generation %d", n, g)
		expectRandomGeneration(t, after, g)
	}
}

// expectRandomGeneration checks that the directory holds randomSnap(want)'s
// chunks and world.
func expectRandomGeneration(t *testing.T, fsys vfs.FS, want int) {
	t.Helper()
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: fsys, Store: compactConfig()})
	must(t, err)
	defer w.Close()
	world, err := w.ReadWorld()
	must(t, err)
	expect(t, string(world) == fmt.Sprintf("world generation %d", want), "world %q, want generation %d", world, want)
	got := make([]uint32, size*size)
	for _, c := range randomSnap(want).Chunks {
		_, err := w.Get(conv.StorePos(c.Pos), got)
		must(t, err)
		expect(t, slicesEqual(got, chunkPixels(t, c)), "chunk %v is not generation %d's", c.Pos, want)
	}
}

// A closed writer takes no job (Submit returns false instead of sending on
// its closed queue) and refuses to switch directories with ErrClosed.
func TestWriterAfterClose(t *testing.T) {
	mem := vfs.NewMem()
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: mem, Store: storeConfig()})
	must(t, err)
	must(t, w.Close())
	expect(t, !w.Submit(savedir.Job{Snap: snapAt(1)}), "a closed writer took a job")
	expect(t, w.Wait() == nil, "a closed writer has a save pending")
	err = w.Switch("/other", true)
	expect(t, errors.Is(err, autosave.ErrClosed), "Switch after Close: %v", err)
	_, err = w.Continue("/save", nil)
	expect(t, errors.Is(err, autosave.ErrClosed), "Continue after Close: %v", err)
	d, err := savedir.OpenDir(mem, "/save")
	must(t, err)
	must(t, d.Close())
}

// TestWriterHandsWorldBack: the writer hands a snapshot's world file back
// through ReuseWorld once it has written it, and once when the save fails,
// never while the world file may still be written.
func TestWriterHandsWorldBack(t *testing.T) {
	mem := vfs.NewMem()
	var failWorld atomic.Bool
	fsys := vfs.Faulty(mem, vfs.InjectorFunc(func(op vfs.Op, name string) error {
		if failWorld.Load() && op == vfs.OpWrite && strings.Contains(name, "world-") {
			return errors.New("disk full")
		}
		return nil
	}))

	w, err := savedir.OpenWriter("/save", savedir.Options{FS: fsys, Store: storeConfig()})
	must(t, err)
	defer w.Close()
	var got [][]byte
	snap := snapAt(1)
	world := snap.World
	snap.ReuseWorld = func(b []byte) { got = append(got, b) }
	expect(t, w.Submit(savedir.Job{Snap: snap, MaxBackups: 1}), "writer busy")
	must(t, w.Wait().Err)
	expect(t, len(got) == 1 && &got[0][0] == &world[0], "handed back %d buffers, want the world file's once", len(got))
	data, err := vfs.ReadFile(mem, "/save/"+savedir.WorldName(1))
	must(t, err)
	expect(t, bytes.Equal(data, world), "world file %q, want %q", data, world)

	// A save whose world file cannot be written hands the memory back too,
	// once the write has ended.
	failWorld.Store(true)
	got = nil
	snap = snapAt(2)
	snap.ReuseWorld = func(b []byte) { got = append(got, b) }
	expect(t, w.Submit(savedir.Job{Snap: snap, MaxBackups: 1}), "writer busy")
	expect(t, w.Wait().Err != nil, "a save whose world file failed succeeded")
	expect(t, len(got) == 1, "a failed save handed back %d buffers, want 1", len(got))
}
