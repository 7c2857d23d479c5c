// Package contract is the save directory's contract as one table of tests
// that runs against any file system behind the vfs seam: the directory
// itself (vfs.Mem, vfs.OS) in package internal/savedir's tests, and NATS
// JetStream in the jetstream module's. Every backend must pass all of it.
package contract

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/conv"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/testkit"
	"github.com/arksave/arksave/snapshot"
	"github.com/arksave/arksave/vfs"
)

// Backend is a place for saves.
type Backend struct {
	// New returns a file system and the path of a save that does not
	// exist yet in it. It cleans up with the test.
	New func(t *testing.T) (fsys vfs.FS, dir string)
	// Other returns another program's view of the same storage as fsys
	// (its own connection, its own locks); nil: fsys serves as both, as
	// one file system does for two programs.
	Other func(t *testing.T, fsys vfs.FS) vfs.FS
}

func (b Backend) other(t *testing.T, fsys vfs.FS) vfs.FS {
	if b.Other == nil {
		return fsys
	}
	return b.Other(t, fsys)
}

// Tests is the table: each row a behaviour the save directory promises.
var Tests = []struct {
	Name string
	Run  func(t *testing.T, b Backend)
}{
	{"GenerationsAndBackups", generationsAndBackups},
	{"WriterChunksDeltasBodies", writerChunks},
	{"RestoreBackup", restoreBackup},
	{"OneWriter", oneWriter},
	{"FailedCallsLeaveAGeneration", failedCalls},
	{"UncommittedFilesIgnored", uncommittedFiles},
	{"LostManifestNamesRepair", lostManifest},
	{"Compaction", compaction},
	{"EveryKeptGenerationLoads", everyKeptGeneration},
	{"HistoryByGeneration", historyByGeneration},
	{"PerSaveBytesFollowChanges", perSaveBytes},
}

// Run runs every test of the table against b.
func Run(t *testing.T, b Backend) {
	for _, c := range Tests {
		t.Run(c.Name, func(t *testing.T) { c.Run(t, b) })
	}
}

var expect, must = testkit.Expect, testkit.Must

func worldOf(g int) []byte { return bytes.Repeat([]byte(fmt.Sprintf("world %d;", g)), 10+g) }

// PlayerRecord is player "ada"'s record in generation g (the players file
// keeps records as given).
func PlayerRecord(g int) []byte { return bytes.Repeat([]byte(fmt.Sprintf("ada %d;", g)), 5+g) }

func commit(d *savedir.Dir, g, backups int) error {
	_, _, err := d.Commit(savedir.Commit{
		World:      worldOf(g),
		Chunks:     savedir.StoreRef{Name: savedir.ChunksName, Generation: uint64(g), Root: []byte("root")},
		MaxBackups: backups,
		Now:        time.UnixMilli(int64(1000 * g)),
	})
	return err
}

// loaded returns the generation another program sees, checking that its
// world is exactly that generation's.
func loaded(t *testing.T, fsys vfs.FS, dir string) int {
	t.Helper()
	d, err := savedir.OpenDirReadOnly(fsys, dir)
	must(t, err)
	m := d.Manifest()
	if m == nil {
		return 0
	}
	w, err := d.ReadWorld(nil)
	must(t, err)
	expect(t, bytes.Equal(w, worldOf(int(m.Generation))), "generation %d has another generation's world", m.Generation)
	return int(m.Generation)
}

func generationsAndBackups(t *testing.T, b Backend) {
	fsys, dir := b.New(t)
	d, err := savedir.OpenDir(fsys, dir)
	must(t, err)
	defer d.Close()
	expect(t, d.Manifest() == nil, "a new save has a manifest")
	for g := 1; g <= 4; g++ {
		must(t, commit(d, g, 2))
	}
	other := b.other(t, fsys)
	expect(t, loaded(t, other, dir) == 4, "another program does not see generation 4")
	names, err := other.ReadDir(dir)
	must(t, err)
	names = slices.DeleteFunc(names, func(n string) bool { return n == savedir.LockName })
	expect(t, slices.Equal(names, []string{"backups", "manifest", "world-4.pecs"}), "top level: %v", names)
	ro, err := savedir.OpenDirReadOnly(other, dir)
	must(t, err)
	var gens []uint64
	for _, m := range ro.Backups() {
		gens = append(gens, m.Generation)
		w, err := ro.ReadWorld(m)
		must(t, err)
		expect(t, bytes.Equal(w, worldOf(int(m.Generation))), "backup %d's world", m.Generation)
	}
	expect(t, slices.Equal(gens, []uint64{3, 2}), "backups: %v", gens)
	_, err = ro.Backup(1)
	expect(t, err != nil, "a pruned backup is still there")
}

// The chunk store side: chunks stored as deltas against the generator and
// whole, bodies, read back by another program after the writer closed.
const chunkSize = 16

type flatGen struct{}

func (flatGen) Version() uint32 { return 1 }
func (flatGen) Generate(x, y int32, seed uint64, dst []uint32) {
	for i := range dst {
		dst[i] = uint32(i%3) + uint32(seed)
	}
}

// StoreOptions are the chunk store options of the table's saves.
func StoreOptions() chunkstore.Options {
	return chunkstore.Options{ChunkSize: chunkSize, TileSize: 8, PixelSize: 4, Seed: 3, Generator: flatGen{}}
}

// pixelsAt is chunk pos in generation g: a few pixels off the generator
// (a delta) for chunk (0,0), every pixel for chunk (1,0) (stored whole).
func pixelsAt(pos components.ChunkPos, g int) []uint32 {
	pix := make([]uint32, chunkSize*chunkSize)
	flatGen{}.Generate(pos.X, pos.Y, 3, pix)
	for i := range pix {
		switch {
		case pos.X == 0 && i <= g:
			pix[i] = uint32(100 + i)
		case pos.X == 1:
			pix[i] = uint32(1000*g + i)
		}
	}
	return pix
}

// Snapshot is what generation g of the table's saves holds: a world file,
// a chunk stored as a delta against the generator, one stored whole, a
// body, and a player's record.
func Snapshot(g int) *snapshot.Snapshot {
	s := &snapshot.Snapshot{World: worldOf(g)}
	for _, pos := range []components.ChunkPos{{X: 0, Y: 0}, {X: 1, Y: 0}} {
		c := components.NewChunk(chunkSize, conv.Pixels(pixelsAt(pos, g)))
		s.Chunks = append(s.Chunks, snapshot.Chunk{Pos: pos, Buf: c.Share(), Version: uint64(g)})
	}
	s.Players = []snapshot.PlayerRecord{{ID: "ada", Section: PlayerRecord(g), Hash: uint64(g)}}
	s.Entities = []snapshot.EntitySet{{Pos: components.ChunkPos{}, Hash: uint64(g), Bodies: []components.PixelBody{{
		ID: components.BodyID(g), X: float32(g), Width: 1, Height: 1, Pixels: []components.Pixel{7}, Shape: []bool{true},
	}}}}
	return s
}

func save(t *testing.T, w *savedir.Writer, g, backups int) *autosave.Result {
	t.Helper()
	expect(t, w.Submit(savedir.Job{Snap: Snapshot(g), MaxBackups: backups}), "writer busy")
	return w.Wait()
}

// ExpectGeneration checks that the save at dir opens at exactly
// generation g of Snapshot (it takes the lock: no writer may hold it).
func ExpectGeneration(t *testing.T, fsys vfs.FS, dir string, g int) {
	t.Helper()
	w, err := savedir.OpenWriter(dir, savedir.Options{FS: fsys, Store: StoreOptions()})
	must(t, err)
	defer w.Close()
	expect(t, int(w.Generation()) == g, "generation %d, want %d", w.Generation(), g)
	expectContents(t, w, g)
}

// expectContents checks that the committed generation of w holds exactly
// what Snapshot(g) made: world file, chunks, bodies, the player's record.
func expectContents(t *testing.T, w *savedir.Writer, g int) {
	t.Helper()
	world, err := w.ReadWorld()
	must(t, err)
	expect(t, bytes.Equal(world, worldOf(g)), "the world file of generation %d differs", g)
	got := make([]uint32, chunkSize*chunkSize)
	for _, pos := range []components.ChunkPos{{X: 0, Y: 0}, {X: 1, Y: 0}} {
		_, err := w.Get(conv.StorePos(pos), got)
		must(t, err)
		expect(t, slices.Equal(got, pixelsAt(pos, g)), "generation %d: chunk %v differs", g, pos)
	}
	bodies, err := w.Bodies(chunkstore.Pos{})
	must(t, err)
	expect(t, len(bodies) == 1 && bodies[0].ID == uint64(g), "generation %d: bodies %v", g, bodies)
	expect(t, slices.Equal(w.Players(), []string{"ada"}), "generation %d: players %v", g, w.Players())
	rec, err := w.ReadPlayer("ada")
	must(t, err)
	expect(t, bytes.Equal(rec, PlayerRecord(g)), "generation %d: the player's record differs", g)
}

func writerChunks(t *testing.T, b Backend) {
	fsys, dir := b.New(t)
	w, err := savedir.OpenWriter(dir, savedir.Options{FS: fsys, Store: StoreOptions()})
	must(t, err)
	var deltas int
	for g := 1; g <= 3; g++ {
		r := save(t, w, g, 2)
		must(t, r.Err)
		expect(t, int(r.Generation) == g && r.ChunksWritten == 2, "result %+v", r)
	}
	must(t, w.Close())
	other := b.other(t, fsys)
	ExpectGeneration(t, other, dir, 3)
	// The store holds the delta: chunk (0,0) differs from the generator in 4 pixels.
	d, err := savedir.OpenDirReadOnly(other, dir)
	must(t, err)
	p, err := d.File(d.Manifest().Chunks.Name)
	must(t, err)
	st, err := chunkstore.Open(p, &chunkstore.Options{FS: other, ReadOnly: true, Root: d.Manifest().Chunks.Root})
	must(t, err)
	defer st.Close()
	st.Entries(func(e chunkstore.Entry) bool {
		if e.Pos == (chunkstore.Pos{}) && e.Type == chunkstore.Delta {
			deltas++
		}
		return true
	})
	expect(t, deltas == 1, "chunk (0,0) is not stored as a delta against the generator")
}

func restoreBackup(t *testing.T, b Backend) {
	fsys, dir := b.New(t)
	w, err := savedir.OpenWriter(dir, savedir.Options{FS: fsys, Store: StoreOptions()})
	must(t, err)
	for g := 1; g <= 3; g++ {
		must(t, save(t, w, g, 2).Err)
	}
	must(t, w.Close())
	d, err := savedir.OpenDir(fsys, dir)
	must(t, err)
	m, err := d.Restore(2, 2)
	must(t, err)
	expect(t, m.Generation == 4, "restore made generation %d", m.Generation)
	must(t, d.Close())
	// Generation 4 is generation 2 again: its world, chunks and bodies.
	w, err = savedir.OpenWriter(dir, savedir.Options{FS: b.other(t, fsys), Store: StoreOptions()})
	must(t, err)
	defer w.Close()
	expectContents(t, w, 2)
}

func oneWriter(t *testing.T, b Backend) {
	fsys, dir := b.New(t)
	d, err := savedir.OpenDir(fsys, dir)
	must(t, err)
	must(t, commit(d, 1, 1))
	other := b.other(t, fsys)
	_, err = savedir.OpenDir(other, dir)
	var le *autosave.LockedError
	expect(t, errors.As(err, &le) && errors.Is(err, autosave.ErrLocked), "a second writer: %v", err)
	expect(t, le.Holder != nil && le.Holder.PID == os.Getpid(), "the error does not name the holder: %v", err)
	ro, err := savedir.OpenDirReadOnly(other, dir)
	must(t, err)
	expect(t, ro.Generation() == 1, "a reader sees generation %d", ro.Generation())
	_, _, err = ro.Commit(savedir.Commit{World: worldOf(2), Chunks: savedir.StoreRef{Name: savedir.ChunksName, Root: []byte("r")}})
	expect(t, errors.Is(err, autosave.ErrReadOnly), "a reader commits: %v", err)
	must(t, commit(d, 2, 1))
	expect(t, ro.Stale(), "the reader does not see that generation 2 was committed")
	must(t, d.Close())
	d2, err := savedir.OpenDir(other, dir)
	must(t, err)
	expect(t, d2.Generation() == 2, "the next writer opens generation %d", d2.Generation())
	must(t, d2.Close())
}

// A save that fails at any call (a full disk, an I/O error, a refused
// request) leaves generation 1 or 2 exactly, and the next save commits.
func failedCalls(t *testing.T, b Backend) {
	for n := 0; ; n++ {
		fsys, dir := b.New(t)
		d0, err := savedir.OpenDir(fsys, dir)
		must(t, err)
		must(t, commit(d0, 1, 1))
		must(t, d0.Close())
		cd := &vfs.Countdown{N: n, Err: syscall.EIO}
		faulty := vfs.Faulty(fsys, cd)
		d, err := savedir.OpenDir(faulty, dir)
		if err == nil {
			err = commit(d, 2, 1)
		}
		if !cd.Fired() {
			must(t, err)
			must(t, d.Close())
			break
		}
		g := loaded(t, b.other(t, fsys), dir)
		expect(t, g == 1 || g == 2, "EIO at call %d: generation %d", n, g)
		if d != nil {
			expect(t, int(d.Generation()) == g, "EIO at call %d: the Dir says %d, the save is at %d", n, d.Generation(), g)
			must(t, commit(d, g+1, 1))
			expect(t, loaded(t, b.other(t, fsys), dir) == g+1, "the retry after EIO at call %d", n)
			must(t, d.Close())
		}
	}
}

func uncommittedFiles(t *testing.T, b Backend) {
	fsys, dir := b.New(t)
	d, err := savedir.OpenDir(fsys, dir)
	must(t, err)
	must(t, commit(d, 1, 0))
	for _, n := range []string{"world-2.pecs", "manifest.tmp", "chunks-2.pxsw"} {
		f, err := fsys.Create(path.Join(dir, n))
		must(t, err)
		_, err = f.WriteAt([]byte("not committed"), 0)
		must(t, err)
		must(t, f.Sync())
		must(t, f.Close())
	}
	must(t, d.Close())
	expect(t, loaded(t, b.other(t, fsys), dir) == 1, "files of a save that did not commit changed the generation")
	d, err = savedir.OpenDir(fsys, dir)
	must(t, err)
	defer d.Close()
	names, err := fsys.ReadDir(dir)
	must(t, err)
	names = slices.DeleteFunc(names, func(n string) bool { return n == savedir.LockName })
	expect(t, slices.Equal(names, []string{"manifest", "world-1.pecs"}), "after opening: %v", names)
}

func lostManifest(t *testing.T, b Backend) {
	fsys, dir := b.New(t)
	d, err := savedir.OpenDir(fsys, dir)
	must(t, err)
	for g := 1; g <= 3; g++ {
		must(t, commit(d, g, 2))
	}
	must(t, fsys.Remove(path.Join(dir, savedir.ManifestName)))
	must(t, fsys.SyncDir(dir))
	must(t, d.Close())
	_, err = savedir.OpenDir(b.other(t, fsys), dir)
	expect(t, errors.Is(err, autosave.ErrCorrupt) && strings.Contains(err.Error(), "arksave repair"), "a lost manifest: %v", err)
	names, err := fsys.ReadDir(dir)
	must(t, err)
	expect(t, slices.Contains(names, "world-3.pecs") && slices.Contains(names, "backups"), "files were removed: %v", names)
}

// Compaction between saves, data file by data file: the save after it
// commits the compacted generation, which loads exactly, and the data
// file it emptied is named only by the backup before it.
func compaction(t *testing.T, b Backend) {
	fsys, dir := b.New(t)
	w, err := savedir.OpenWriter(dir, savedir.Options{FS: fsys, Store: StoreOptions()})
	must(t, err)
	at := 0
	for g := 1; g <= 40 && at == 0; g++ {
		r := save(t, w, g, 1)
		must(t, r.Err)
		if r.Compacted {
			at = g
		}
	}
	must(t, w.Close())
	expect(t, at > 1, "no save committed a compaction in 40 generations")
	ExpectGeneration(t, b.other(t, fsys), dir, at)
	d, err := savedir.OpenDirReadOnly(fsys, dir)
	must(t, err)
	m := d.Manifest()
	expect(t, m.Chunks.Name == savedir.ChunksName, "the store was replaced: %s", m.Chunks.Name)
	prev, err := d.Backup(uint64(at - 1))
	must(t, err)
	dropped := slices.DeleteFunc(slices.Clone(prev.Chunks.Data), func(n string) bool { return slices.Contains(m.Chunks.Data, n) })
	expect(t, len(dropped) > 0, "the compacted generation names every data file of the one before: %v, %v", m.Chunks.Data, prev.Chunks.Data)
}

// ExpectReadable opens the save at dir read-only, as a reader beside a
// running writer does, and checks that its committed generation holds
// exactly what Snapshot made for it: world file, chunks, bodies. It
// returns that generation.
func ExpectReadable(t *testing.T, fsys vfs.FS, dir string) int {
	t.Helper()
	var g int
	err := savedir.ReadConsistent(fsys, dir, func(d *savedir.Dir) error {
		m := d.Manifest()
		if m == nil {
			return d.ManifestErr()
		}
		g = int(m.Generation)
		return checkGeneration(fsys, d, m, g)
	})
	must(t, err)
	return g
}
