package savedir_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/conv"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/snapshot"
	"github.com/arksave/arksave/vfs"
)

// historyWorld is a world of historySide² stored chunks whose saves each
// rewrite historyChanged of them with random pixels (records that do not
// compress: each rewrite leaves a whole record dead).
const (
	historySide    = 6
	historyChanged = 5
)

// historyState is the world as a sequence of saves made it: every chunk's
// pixels, the world file, and the body in chunk (0,0).
type historyState struct {
	side   int32 // the world is side² chunks; 0 is historySide
	g      int
	chunks map[components.ChunkPos][]uint32
}

// next returns the snapshot of the next save (generation g+1: the first
// save writes every chunk, each later one historyChanged of them) and
// advances the state to it.
func (h *historyState) next() *snapshot.Snapshot {
	h.g++
	rng := rand.New(rand.NewPCG(uint64(h.g), 25))
	side := cmp.Or(h.side, historySide)
	var changed []components.ChunkPos
	if h.g == 1 {
		for x := range side {
			for y := range side {
				changed = append(changed, components.ChunkPos{X: x, Y: y})
			}
		}
	} else {
		for len(changed) < historyChanged {
			p := components.ChunkPos{X: rng.Int32N(side), Y: rng.Int32N(side)}
			if !slices.Contains(changed, p) {
				changed = append(changed, p)
			}
		}
	}
	next := make(map[components.ChunkPos][]uint32, len(h.chunks))
	for p, pix := range h.chunks {
		next[p] = pix
	}
	s := &snapshot.Snapshot{World: historyWorldFile(h.g)}
	for _, p := range changed {
		pix := make([]uint32, size*size)
		for i := range pix {
			pix[i] = rng.Uint32()
		}
		next[p] = pix
		c := components.NewChunk(size, conv.Pixels(slices.Clone(pix)))
		s.Chunks = append(s.Chunks, snapshot.Chunk{Pos: p, Buf: c.Share(), Version: uint64(h.g)})
	}
	h.chunks = next
	s.Entities = []snapshot.EntitySet{{Pos: components.ChunkPos{}, Version: uint64(h.g), Bodies: []components.PixelBody{{
		ID: components.BodyID(h.g), X: float32(h.g), Width: 1, Height: 1, Pixels: []components.Pixel{7}, Shape: []bool{true},
	}}}}
	return s
}

func historyWorldFile(g int) []byte { return []byte(fmt.Sprintf("world of generation %d", g)) }

// historyConfig makes compaction run between the saves: small data files
// (8 KiB, seven records each) and a low threshold.
func historyConfig() chunkstore.Options {
	c := storeConfig()
	c.DataFileSize = 8 << 10
	c.CompactionThreshold = 0.05
	return c
}

// expectHistoryGeneration opens generation g of the save directory at dir
// through the arksave command's read path (savetool.OpenStore, the
// directory opened read-only) and checks that it holds exactly what the
// save of generation g saved: the world file, every chunk, the body.
func expectHistoryGeneration(t *testing.T, fsys vfs.FS, g int, want historyState) {
	t.Helper()
	d, err := savedir.OpenDirReadOnly(fsys, "/save")
	must(t, err)
	m := d.Manifest()
	if int(m.Generation) != g {
		m, err = d.Backup(uint64(g))
		must(t, err)
	}
	world, err := d.ReadWorld(m)
	must(t, err)
	expect(t, string(world) == string(historyWorldFile(g)), "generation %d: world file %q", g, world)
	s, sm, err := savetool.OpenStore("/save", uint64(g), savetool.Options{FS: fsys})
	must(t, err)
	defer s.Close()
	expect(t, sm.Generation == uint64(g), "savetool opened generation %d for %d", sm.Generation, g)
	stored := 0
	s.Entries(func(e chunkstore.Entry) bool {
		if e.Type != chunkstore.BodyBlock {
			stored++
		}
		return true
	})
	expect(t, stored == len(want.chunks), "generation %d: %d chunks stored, want %d", g, stored, len(want.chunks))
	got := make([]uint32, size*size)
	for p, pix := range want.chunks {
		stored, err := s.Get(conv.StorePos(p), got)
		must(t, err)
		expect(t, stored && slices.Equal(got, pix), "generation %d: chunk %v is not what its save wrote", g, p)
	}
	bodies, err := s.Bodies(chunkstore.Pos{})
	must(t, err)
	expect(t, len(bodies) == 1 && bodies[0].ID == uint64(g), "generation %d: bodies %v", g, bodies)
}

// namedDataFiles returns the data files the manifests of the directory
// name (the committed one and every backup's).
func namedDataFiles(t *testing.T, fsys vfs.FS) map[string][]uint64 {
	t.Helper()
	d, err := savedir.OpenDirReadOnly(fsys, "/save")
	must(t, err)
	out := map[string][]uint64{}
	for _, m := range append([]*savedir.Manifest{d.Manifest()}, d.Backups()...) {
		for _, n := range m.Chunks.Data {
			out[n] = append(out[n], m.Generation)
		}
	}
	return out
}

// TestHistoryKeptThroughCompaction (issue 25, row 3): saves through the
// writer with compaction between them; a retention that keeps every save
// of the last hour keeps them all (with MaxBackups 0, which alone keeps
// none), and every kept generation reads exactly as it was saved, although
// compaction moved the live records of the files they share. When the
// policy then keeps fewer, the data files only the dropped generations
// used go, and those the kept ones use stay.
func TestHistoryKeptThroughCompaction(t *testing.T) {
	mem := vfs.NewMem()
	w, err := savedir.OpenWriter("/save", savedir.Options{FS: mem, Store: historyConfig()})
	must(t, err)
	defer w.Close()
	hour := autosave.Retention{All: time.Hour}
	var h historyState
	states := map[int]historyState{}
	compacted := 0
	const saves = 24
	for range saves {
		snap := h.next()
		expect(t, w.Submit(savedir.Job{Snap: snap, Retention: hour}), "writer busy")
		r := w.Wait()
		must(t, r.Err)
		must(t, r.CompactErr)
		if r.Compacted {
			compacted++
		}
		states[h.g] = h
	}
	expect(t, compacted >= 3, "compaction ran before %d of %d saves: the test needs it between them", compacted, saves)
	d, err := savedir.OpenDirReadOnly(mem, "/save")
	must(t, err)
	expect(t, len(d.Backups()) == saves-1, "%d backups kept, want every older generation (%d)", len(d.Backups()), saves-1)
	for g := 1; g <= saves; g++ {
		expectHistoryGeneration(t, mem, g, states[g])
	}

	// Keep the newest 3 only: the next save drops the rest.
	before := namedDataFiles(t, mem)
	snap := h.next()
	states[h.g] = h
	expect(t, w.Submit(savedir.Job{Snap: snap, MaxBackups: 3}), "writer busy")
	must(t, w.Wait().Err)
	d, err = savedir.OpenDirReadOnly(mem, "/save")
	must(t, err)
	var kept []int
	for _, b := range d.Backups() {
		kept = append(kept, int(b.Generation))
	}
	expect(t, slices.Equal(kept, []int{saves, saves - 1, saves - 2}), "backups %v after keeping 3", kept)
	for _, g := range append(kept, saves+1) {
		expectHistoryGeneration(t, mem, g, states[g])
	}
	after := namedDataFiles(t, mem)
	onDisk := dataFilesOnDisk(t, mem, "/save")
	gone := 0
	for n, gens := range before {
		if _, named := after[n]; named {
			expect(t, slices.Contains(onDisk, n), "%s, which a kept generation names, is gone", n)
			continue
		}
		expect(t, !slices.Contains(onDisk, n), "%s, used only by dropped generations %v, is still there", n, gens)
		gone++
	}
	expect(t, gone > 0, "no data file was used only by the dropped generations: compaction emptied none")
	// Unnamed data files are those a compaction after the last save
	// started (the next save names them): numbered above every named one.
	newest := 0
	for n := range after {
		_, i, _ := savedir.DataFileOf(n)
		newest = max(newest, int(i))
	}
	for _, n := range onDisk {
		_, named := after[n]
		_, i, _ := savedir.DataFileOf(n)
		expect(t, named || int(i) > newest, "%s is on disk, named by no manifest", n)
	}
}

// TestRetentionThinsByAge: commits every 5 minutes for
// 6 hours, with ages counted from the committed generation's save time
// (Commit.Now): the backups kept are every one of the last 30 minutes
// and the oldest of each hour younger than 4 hours, plus the newest
// MaxBackups.
func TestRetentionThinsByAge(t *testing.T) {
	mem := vfs.NewMem()
	d, err := savedir.OpenDir(mem, "/save")
	must(t, err)
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	policy := autosave.Retention{All: 30 * time.Minute, Thin: []autosave.Keep{{Every: time.Hour, For: 4 * time.Hour}}}
	const n = 6 * 12
	at := func(g int) time.Time { return base.Add(time.Duration(g-1) * 5 * time.Minute) }
	for g := 1; g <= n; g++ {
		_, _, err := d.Commit(savedir.Commit{World: world(g), Chunks: savedir.StoreRef{Name: savedir.ChunksName, Generation: uint64(g), Root: fakeRoot},
			MaxBackups: 1, Retention: policy, Now: at(g)})
		must(t, err)
	}
	now := at(n)
	var want []uint64
	for g := n - 1; g >= 1; g-- {
		age := now.Sub(at(g))
		firstOfHour := at(g).Minute() == 0
		if g == n-1 || age <= 30*time.Minute || firstOfHour && age < 4*time.Hour {
			want = append(want, uint64(g))
		}
	}
	var got []uint64
	for _, b := range d.Backups() {
		got = append(got, b.Generation)
		w, err := d.ReadWorld(b)
		must(t, err)
		expect(t, string(w) == string(world(int(b.Generation))), "backup %d's world", b.Generation)
	}
	expect(t, slices.Equal(got, want), "backups %v, want %v", got, want)
	names, err := mem.ReadDir("/save/backups")
	must(t, err)
	expect(t, len(names) == 2*len(want), "backups/ holds %v: the dropped generations' files stay", names)
}
