package mapserve_test

import (
	"fmt"
	"image"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
	"github.com/arksave/arksave/internal/testkit/terrain"
	"github.com/arksave/arksave/mapserve"
	"github.com/arksave/arksave/vfs"
)

// storedAt lists what generation gen of dir stores, by position, as the
// store's own index says: "full", "delta", "empty", or "none" for a body
// block alone.
func storedAt(t *testing.T, dir string, gen uint64) map[string]string {
	t.Helper()
	s, m, err := savetool.OpenStore(dir, gen, savetool.Options{})
	must(t, err)
	defer s.Close()
	expect(t, gen == 0 || m.Generation == gen, "OpenStore(%d) opened generation %d", gen, m.Generation)
	out := map[string]string{}
	storetool.Tool.Entries(s, func(e storetool.Entry) bool {
		k := fmt.Sprint(e.Pos.X, e.Pos.Y)
		if e.Type != chunkstore.BodyBlock {
			out[k] = e.Type.String()
		} else if out[k] == "" {
			out[k] = "none"
		}
		return true
	})
	return out
}

func listed(w world) map[string]string {
	out := map[string]string{}
	for _, c := range w.Chunks {
		out[fmt.Sprint(c.X, c.Y)] = c.Kind
	}
	return out
}

// Every endpoint that reads a generation takes gen, a kept generation:
// /api/world, the tiles, /api/chunk, /api/entities and /api/entity answer
// for that generation as its backup manifest names it, while the map
// without gen stays on the live one.
func TestGenerationParameter(t *testing.T) {
	_, ts := newServer(t, base, mapserve.Options{Poll: -1, Generator: savetest.Generator})
	for _, gen := range []uint64{1, 2, 3} {
		var w world
		getJSON(t, ts, fmt.Sprintf("/api/world?gen=%d", gen), &w)
		want := storedAt(t, base, gen)
		expect(t, w.Generation == gen && fmt.Sprint(listed(w)) == fmt.Sprint(want), "world?gen=%d: generation %d, chunks %v, want %v", gen, w.Generation, listed(w), want)
	}
	var live world
	getJSON(t, ts, "/api/world", &live)
	expect(t, live.Generation == 3, "without gen: generation %d", live.Generation)
	// Generation 3 filled chunk (-1, -1); generation 1 did not store it.
	expect(t, listed(live)["-1 -1"] != "" && storedAt(t, base, 1)["-1 -1"] == "", "the fixture changed: chunk (-1, -1) in generation 3 %q, 1 %q",
		listed(live)["-1 -1"], storedAt(t, base, 1)["-1 -1"])
	var c chunkInfo
	getJSON(t, ts, "/api/chunk?x=-1&y=-1&gen=1", &c)
	expect(t, c.Generation == 1 && c.Kind == "not stored", "chunk (-1, -1) of generation 1: %+v", c)
	c = chunkInfo{}
	getJSON(t, ts, "/api/chunk?x=-1&y=-1", &c)
	expect(t, c.Generation == 3 && c.Kind == listed(live)["-1 -1"], "chunk (-1, -1) live: %+v", c)

	// Tiles: each generation's pixels as arksave render draws that
	// generation; tile (-1, -1) holds chunk (-1, -1), so they differ.
	extent := image.Rect(live.Extent[0], live.Extent[1], live.Extent[2], live.Extent[3])
	r := image.Rect(-256, -256, 0, 0)
	var tiles [4]*image.RGBA
	for _, gen := range []uint64{1, 3} {
		var w world
		getJSON(t, ts, fmt.Sprintf("/api/world?gen=%d", gen), &w)
		clip := r.Intersect(image.Rect(w.Extent[0], w.Extent[1], w.Extent[2], w.Extent[3]))
		img, _ := getTile(t, ts, fmt.Sprintf("/api/tiles/0/-1/-1.png?gen=%d", gen))
		want, _, err := savetool.RenderDir(base, savetool.RenderOptions{Generation: gen, Generator: savetest.Generator, Region: clip})
		must(t, err)
		for y := clip.Min.Y; y < clip.Max.Y; y++ {
			for x := clip.Min.X; x < clip.Max.X; x++ {
				got, w := img.RGBAAt(x-r.Min.X, y-r.Min.Y), want.RGBAAt(x-clip.Min.X, y-clip.Min.Y)
				expect(t, got == w, "generation %d: world pixel %d,%d is %v, render draws %v", gen, x, y, got, w)
			}
		}
		tiles[gen] = img
	}
	expect(t, !slices.Equal(tiles[1].Pix, tiles[3].Pix), "tile -1,-1 of generation 1 is that of generation 3 (extent %v)", extent)

	// Entities: generation 1 saved one body, generation 2 the second.
	var e1, e3 entitiesAnswer
	getJSON(t, ts, "/api/entities?gen=1", &e1)
	getJSON(t, ts, "/api/entities", &e3)
	expect(t, e1.Generation == 1 && len(e1.Entities) == 1 && e3.Generation == 3 && len(e3.Entities) == 2, "entities of generation 1: %+v; live: %+v", e1, e3)
	second := e3.Entities[slices.IndexFunc(e3.Entities, func(e mapserve.Entity) bool { return e.ID != e1.Entities[0].ID })]
	res := get(t, ts, "/api/entity?kind=body&id="+second.ID+"&gen=1")
	expect(t, res.status == http.StatusNotFound && strings.Contains(string(res.body), "generation 1 stores no body"), "body %s in generation 1: %d %s", second.ID, res.status, res.body)
	res = get(t, ts, "/api/entity?kind=body&id="+second.ID+"&gen=2")
	expect(t, res.status == http.StatusOK && strings.Contains(string(res.body), `"generation":2`), "body %s in generation 2: %d %s", second.ID, res.status, res.body)
}

// A generation the save does not keep is 404, naming those it keeps; a
// gen that is not a generation's number is 400; neither reads a file
// named after what the request says.
func TestGenerationParameterRefused(t *testing.T) {
	watch := newWatchedFS()
	_, ts := newServer(t, base, mapserve.Options{Poll: -1, FS: watch, Generator: savetest.Generator})
	watch.reset()
	for _, target := range []string{"/api/world?gen=4", "/api/tiles/0/0/0.png?gen=99", "/api/chunk?x=0&y=0&gen=7", "/api/entities?gen=1000000",
		"/api/entity?kind=body&id=1&gen=5", "/api/diff?a=4", "/api/diff?a=1&b=9"} {
		r := get(t, ts, target)
		expect(t, r.status == http.StatusNotFound, "%s: %d %s", target, r.status, r.body)
		expect(t, strings.Contains(string(r.body), "3 (committed), 2, 1"), "%s: the answer does not name the kept generations: %s", target, r.body)
	}
	for _, target := range []string{"/api/world?gen=0", "/api/world?gen=-1", "/api/world?gen=x", "/api/world?gen=", "/api/world?gen=1&gen=2",
		"/api/world?gen=99999999999999999999", "/api/world?gen=1.5", "/api/world?gen=../manifest", "/api/tiles/0/0/0.png?gen=%2e%2e",
		"/api/chunk?x=0&y=0&gen=0x1", "/api/diff", "/api/diff?b=1", "/api/diff?a=0", "/api/diff?a=1&b=x", "/api/diff?a=1&gen=2",
		"/api/generations?gen=1", "/api/check?gen=1"} {
		r := get(t, ts, target)
		expect(t, r.status == http.StatusBadRequest, "%s: %d %s", target, r.status, r.body)
	}
	watch.expectInsideOrNone(t, base)
	watch.mu.Lock()
	defer watch.mu.Unlock()
	for _, c := range watch.calls {
		for _, bad := range []string{"99", "1000000", "manifest-4", "manifest-7", "manifest-9"} {
			expect(t, !strings.HasSuffix(c.name, bad), "%s of %s: a file named after a request", c.op, c.name)
		}
	}
}

// diffAnswer is what the tests read of /api/diff.
type diffAnswer struct {
	A, B                    uint64
	ChunkSize               int `json:"chunk_size"`
	Added, Removed, Changed [][2]int32
}

// /api/diff lists the chunks whose stored content differs between two
// generations: those the fixture's saves painted or gave bodies, and no
// other; a generation compared with itself differs nowhere.
func TestDiffBetweenGenerations(t *testing.T) {
	_, ts := newServer(t, base, mapserve.Options{Poll: -1, Generator: savetest.Generator})
	var d diffAnswer
	getJSON(t, ts, "/api/diff?a=2&b=3", &d)
	// Generation 3 filled chunk (-1, -1) and painted chunk (1, 1).
	expect(t, d.A == 2 && d.B == 3 && d.ChunkSize == savetest.ChunkSize, "diff: %+v", d)
	all := slices.Concat(d.Added, d.Changed)
	expect(t, len(d.Removed) == 0 && len(all) == 2 && slices.Contains(all, [2]int32{-1, -1}) && slices.Contains(all, [2]int32{1, 1}),
		"diff of generations 2 and 3: %+v", d)

	// Generation 2 painted chunks (0, 1) and (0, 0) and added a body at
	// (-20, 50): chunk (-1, 1).
	d = diffAnswer{}
	getJSON(t, ts, "/api/diff?a=1&b=2", &d)
	all = slices.Concat(d.Added, d.Changed)
	slices.SortFunc(all, func(a, b [2]int32) int { return int(a[1]-b[1])*1000 + int(a[0]-b[0]) })
	expect(t, len(d.Removed) == 0 && fmt.Sprint(all) == "[[0 0] [-1 1] [0 1]]", "diff of generations 1 and 2: %+v", d)

	// b absent: the live generation; the other way round, added is removed.
	var back diffAnswer
	getJSON(t, ts, "/api/diff?a=3&b=2", &back)
	d = diffAnswer{}
	getJSON(t, ts, "/api/diff?a=2", &d)
	expect(t, d.B == 3 && fmt.Sprint(back.Removed) == fmt.Sprint(d.Added) && fmt.Sprint(back.Changed) == fmt.Sprint(d.Changed),
		"diff 2..live %+v, 3..2 %+v", d, back)
	for _, g := range []int{1, 2, 3} {
		d = diffAnswer{}
		getJSON(t, ts, fmt.Sprintf("/api/diff?a=%d&b=%d", g, g), &d)
		expect(t, len(d.Added)+len(d.Removed)+len(d.Changed) == 0, "generation %d compared with itself: %+v", g, d)
	}
}

// The views of kept generations are closed when the save drops the
// generation (a 404 from then on), when more are asked for than are
// held, and when the server closes: no file stays open.
func TestKeptGenerationViewsClose(t *testing.T) {
	dir := fresh(t)
	watch := newWatchedFS()
	s, ts := newServer(t, dir, mapserve.Options{Poll: -1, FS: watch, Generator: savetest.Generator})
	baseline := watch.openFiles()
	getJSON(t, ts, "/api/world?gen=1", new(world))
	getJSON(t, ts, "/api/world?gen=2", new(world))
	expect(t, watch.openFiles() > baseline, "the kept generations hold no file open: %d, %d before", watch.openFiles(), baseline)

	// Two more saves: generations 1 and 2 are dropped (two backups kept).
	g := openGame(t, dir)
	paint(t, g, 0, 0, 40)
	paint(t, g, 1, 0, 40)
	moved, err := s.Refresh()
	must(t, err)
	expect(t, moved && s.Generation() == 5, "Refresh: moved %v to %d", moved, s.Generation())
	for _, gen := range []int{1, 2} {
		r := get(t, ts, fmt.Sprintf("/api/world?gen=%d", gen))
		expect(t, r.status == http.StatusNotFound && strings.Contains(string(r.body), "5 (committed), 4, 3"), "dropped generation %d: %d %s", gen, r.status, r.body)
	}
	var w world
	getJSON(t, ts, "/api/world?gen=3", &w)
	expect(t, w.Generation == 3, "generation 3: %+v", w)
	shut(t, s, ts)
	expect(t, watch.openFiles() == 0, "%d files open after Close", watch.openFiles())
}

// manyGenerations makes a save in a new directory with gens generations,
// every one of them kept, each a chunk painted anew.
func manyGenerations(t *testing.T, gens int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "save")
	w := ecs.NewWorld()
	systems, err := arksave.Plugin{Dir: dir, ChunkSize: savetest.ChunkSize, TileSize: savetest.TileSize, Seed: savetest.Seed,
		Generator: savetest.Generator, Autosave: &autosave.Config{Interval: time.Hour, MaxBackups: gens}}.Install(w)
	must(t, err)
	pers := ecs.GetResource[arksave.Persistence](w)
	defer pers.Close()
	ecs.NewMap1[components.Focus](w).NewEntity(&components.Focus{Radius: 1})
	ix := ecs.GetResource[components.ChunkIndex](w)
	for i := 0; i < 5000 && ix.Len() < 9; i++ {
		for _, s := range systems {
			s.Update(w)
		}
		time.Sleep(time.Millisecond)
	}
	expect(t, ix.Len() == 9, "%d of 9 chunks loaded", ix.Len())
	chunks := ecs.NewMap2[components.Chunk, components.ChunkState](w)
	for g := range gens {
		e, ok := ix.Get(components.ChunkPos{X: int32(g%3 - 1), Y: 0})
		expect(t, ok, "chunk %d,0 not loaded", g%3-1)
		c, st := chunks.Get(e)
		c.Set(g, 1, components.MakePixel(terrain.Stone, uint8(g), 0, 0))
		st.MarkDirty()
		if r := pers.SaveNow(); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	return dir
}

// The server holds at most four kept generations open besides the live
// one: asking for more closes the least recently used (their files
// closed), and one asked for again opens again.
func TestKeptGenerationViewsAreBounded(t *testing.T) {
	dir := manyGenerations(t, 7)
	watch := newWatchedFS()
	_, ts := newServer(t, dir, mapserve.Options{Poll: -1, FS: watch, Generator: savetest.Generator})
	var w world
	getJSON(t, ts, "/api/world", &w)
	expect(t, w.Generation == 7, "live generation %d", w.Generation)
	open := []int{watch.openFiles()}
	for gen := 1; gen <= 6; gen++ {
		w = world{}
		getJSON(t, ts, fmt.Sprintf("/api/world?gen=%d", gen), &w)
		expect(t, w.Generation == uint64(gen), "gen=%d: generation %d", gen, w.Generation)
		open = append(open, watch.openFiles())
	}
	// Each kept generation's view opens the store it shares with the
	// others through its own root: the files of four are open at most.
	expect(t, open[1] > open[0] && open[4] > open[3] && open[5] == open[4] && open[6] == open[4],
		"files open with the live generation, then with generations 1 to 6 asked for: %v", open)
	watch.reset()
	getJSON(t, ts, "/api/world?gen=1", &w)
	reopened := false
	watch.mu.Lock()
	for _, c := range watch.calls {
		reopened = reopened || c.op == vfs.OpOpen && strings.HasSuffix(c.name, "chunks.pxsw")
	}
	watch.mu.Unlock()
	expect(t, w.Generation == 1 && reopened && watch.openFiles() == open[4], "generation 1 again: %d, reopened %v, %d files open", w.Generation, reopened, watch.openFiles())
}

// Requests for kept generations while the game saves on and the server
// follows it, dropping the generations the save no longer keeps: every
// answer is of the generation asked for, or a 404 once it is dropped, and
// no file stays open after Close.
func TestKeptGenerationsWhileTheGameSaves(t *testing.T) {
	dir := fresh(t)
	watch := newWatchedFS()
	s, ts := newServer(t, dir, mapserve.Options{Poll: 5 * time.Millisecond, FS: watch, Generator: savetest.Generator})
	g := openGame(t, dir)
	done := make(chan struct{})
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				gen := 1 + (n+i)%4
				for _, target := range []string{fmt.Sprintf("/api/world?gen=%d", gen), fmt.Sprintf("/api/tiles/0/0/0.png?gen=%d", gen),
					fmt.Sprintf("/api/diff?a=%d", gen), fmt.Sprintf("/api/entities?gen=%d", gen)} {
					res, err := ts.Client().Get(ts.URL + target)
					if err != nil {
						errs <- err
						return
					}
					body, _ := io.ReadAll(res.Body)
					res.Body.Close()
					ok := res.StatusCode == http.StatusNotFound && strings.Contains(string(body), "holds no generation") ||
						res.StatusCode == http.StatusOK && (strings.Contains(target, ".png") || strings.Contains(target, "diff") ||
							strings.Contains(string(body), fmt.Sprintf(`"generation":%d,`, gen)))
					if !ok {
						errs <- fmt.Errorf("%s: %d %s", target, res.StatusCode, body)
						return
					}
				}
			}
		}()
	}
	for i := range 4 {
		paint(t, g, int32(i%2), 0, 10+i)
	}
	for s.Generation() != 7 {
		time.Sleep(5 * time.Millisecond)
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, err)
	}
	// The writer drops the backups beyond the newest two after its
	// commit; the next Refresh (every Poll) closes their views.
	for _, err := os.Lstat(filepath.Join(dir, "backups", "manifest-4")); err == nil; _, err = os.Lstat(filepath.Join(dir, "backups", "manifest-4")) {
		time.Sleep(5 * time.Millisecond)
	}
	_, err := s.Refresh()
	must(t, err)
	r := get(t, ts, "/api/world?gen=4")
	expect(t, r.status == http.StatusNotFound && strings.Contains(string(r.body), "7 (committed), 6, 5"), "dropped generation 4: %d %s", r.status, r.body)
	shut(t, s, ts)
	expect(t, watch.openFiles() == 0, "%d files open after Close", watch.openFiles())
}
