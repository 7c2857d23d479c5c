package mapserve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
	"github.com/arksave/arksave/internal/testkit/terrain"
	"github.com/arksave/arksave/mapserve"
)

// sseEvent is one server-sent event.
type sseEvent struct {
	name string
	data struct {
		Generation uint64
		Previous   uint64
		All        bool
		Entities   bool
		Changed    [][4]int
	}
}

// subscribe reads /api/events; the channel closes when the stream ends.
func subscribe(t *testing.T, url string) <-chan sseEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/api/events", nil)
	must(t, err)
	res, err := http.DefaultClient.Do(req)
	must(t, err)
	expect(t, res.StatusCode == http.StatusOK && res.Header.Get("Content-Type") == "text/event-stream", "events: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	ch := make(chan sseEvent, 64)
	go func() {
		defer close(ch)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		var ev sseEvent
		var data string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = strings.TrimPrefix(line, "data: ")
			case line == "" && ev.name != "":
				if json.Unmarshal([]byte(data), &ev.data) != nil {
					return
				}
				ch <- ev
				ev, data = sseEvent{}, ""
			}
		}
	}()
	return ch
}

// next returns the next event, failing the test after a minute.
func next(t *testing.T, ch <-chan sseEvent) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-ch:
		expect(t, ok, "the event stream ended")
		return ev
	case <-time.After(time.Minute):
		t.Fatal("no event in a minute")
	}
	return sseEvent{}
}

// paint changes pixels of chunk (x, y) in a game over dir and saves.
func paint(t *testing.T, g *savetest.Game, x, y int32, n int) {
	t.Helper()
	for i := range n {
		must(t, g.Paint(x, y, i%savetest.ChunkSize, 3+i/savetest.ChunkSize, components.MakePixel(terrain.Stone, uint8(i), 0, 0)))
	}
	must(t, g.Save())
}

func openGame(t *testing.T, dir string) *savetest.Game {
	t.Helper()
	g, err := savetest.Open(dir, true)
	must(t, err)
	t.Cleanup(func() { g.Close() })
	must(t, g.Settle())
	return g
}

// While a game holds the save and commits a generation, Refresh moves the
// map on and the pages hear which rectangles changed: the tiles over the
// changed chunk get new ETags, the others keep theirs.
func TestFollowsANewGeneration(t *testing.T) {
	dir := fresh(t)
	s, ts := newServer(t, dir, mapserve.Options{Poll: -1, Generator: savetest.Generator})
	events := subscribe(t, ts.URL)
	hello := next(t, events)
	expect(t, hello.name == "hello" && hello.data.Generation == 3, "first event %+v", hello)
	_, changedBefore := getTile(t, ts, "/api/tiles/0/0/0.png")
	_, keptBefore := getTile(t, ts, "/api/tiles/0/-1/-1.png")

	g := openGame(t, dir) // holds the save's lock from here on
	paint(t, g, 0, 0, 40)
	moved, err := s.Refresh()
	must(t, err)
	expect(t, moved && s.Generation() == 4, "Refresh: moved %v to generation %d", moved, s.Generation())
	ev := next(t, events)
	expect(t, ev.name == "generation" && ev.data.Generation == 4 && ev.data.Previous == 3 && !ev.data.All, "event %+v", ev)
	expect(t, slices.Contains(ev.data.Changed, [4]int{0, 0, savetest.ChunkSize, savetest.ChunkSize}), "changed %v lacks chunk (0, 0)", ev.data.Changed)
	for _, r := range ev.data.Changed {
		expect(t, r[2] > 0 && r[3] > 0, "changed %v: nothing below or left of the origin was saved anew", ev.data.Changed)
	}

	_, changedAfter := getTile(t, ts, "/api/tiles/0/0/0.png")
	expect(t, changedAfter.header.Get("ETag") != changedBefore.header.Get("ETag"), "the tile over the changed chunk kept its ETag")
	r := get(t, ts, "/api/tiles/0/-1/-1.png", "If-None-Match", keptBefore.header.Get("ETag"))
	expect(t, r.status == http.StatusNotModified, "a tile whose chunks did not change: %d", r.status)
	var c chunkInfo
	getJSON(t, ts, "/api/chunk?x=0&y=0", &c)
	expect(t, c.Generation == 4 && c.ChangedIn == 4, "chunk (0, 0): %+v", c)
	c = chunkInfo{}
	getJSON(t, ts, "/api/chunk?x=1&y=0", &c)
	expect(t, c.ChangedIn == 0, "chunk (1, 0) did not change: %+v", c)

	moved, err = s.Refresh()
	must(t, err)
	expect(t, !moved, "a second Refresh moved on")
}

// A manifest that goes away leaves the map where it was and says why; it
// moves on when the manifest is back.
func TestRefreshErrorKeepsTheMap(t *testing.T) {
	dir := fresh(t)
	s, ts := newServer(t, dir, mapserve.Options{Poll: -1})
	must(t, os.Rename(filepath.Join(dir, "manifest"), filepath.Join(dir, "manifest.away")))
	_, err := s.Refresh()
	expect(t, err != nil, "Refresh without a manifest succeeded")
	var w world
	getJSON(t, ts, "/api/world", &w)
	expect(t, w.Generation == 3 && w.Error != "", "world without its manifest: %+v", w)
	getTile(t, ts, "/api/tiles/0/0/0.png")
	must(t, os.Rename(filepath.Join(dir, "manifest.away"), filepath.Join(dir, "manifest")))
	_, err = s.Refresh()
	must(t, err)
	w = world{}
	getJSON(t, ts, "/api/world", &w)
	expect(t, w.Error == "", "error kept: %s", w.Error)
}

// Polling follows a game that saves again and again while pages ask for
// tiles, chunks and the world all along: every answer is good, the page's
// stream reaches the last generation, and once the server is closed every
// store it opened on the way is closed.
func TestPollingWhileTheGameSaves(t *testing.T) {
	dir := fresh(t)
	watch := newWatchedFS()
	s, ts := newServer(t, dir, mapserve.Options{Poll: 5 * time.Millisecond, Generator: savetest.Generator,
		FS: watch})
	events := subscribe(t, ts.URL)
	expect(t, next(t, events).name == "hello", "no hello")

	stop := make(chan struct{})
	bad := make(chan string, 1)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			paths := []string{"/api/tiles/0/0/0.png", "/api/tiles/1/-1/-1.png", "/api/chunk?x=0&y=0", "/api/world", "/api/entities"}
			for n := i; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				res, err := http.Get(ts.URL + paths[n%len(paths)])
				if err == nil {
					res.Body.Close()
				}
				if err != nil || res.StatusCode != http.StatusOK {
					select {
					case bad <- fmt.Sprint(paths[n%len(paths)], err, res):
					default:
					}
					return
				}
			}
		}()
	}
	g := openGame(t, dir)
	for gen := uint64(4); gen <= 7; gen++ {
		paint(t, g, int32(gen%2), 1, 8*int(gen))
		for ev := next(t, events); ev.data.Generation < gen; ev = next(t, events) {
		}
	}
	close(stop)
	wg.Wait()
	select {
	case b := <-bad:
		t.Fatalf("a request failed while the game saved: %s", b)
	default:
	}
	expect(t, s.Generation() == 7, "generation %d", s.Generation())
	shut(t, s, ts)
	watch.expectInside(t, dir)
	expect(t, watch.openFiles() == 0, "%d files left open after Close", watch.openFiles())
}

// A compaction copies every record into a new file: the same world, so the
// pages are told to redraw nothing and every tile keeps its ETag.
func TestCompactionRedrawsNothing(t *testing.T) {
	dir := fresh(t)
	s, ts := newServer(t, dir, mapserve.Options{Poll: -1, Generator: savetest.Generator})
	events := subscribe(t, ts.URL)
	next(t, events)
	var etags []string
	tiles := []string{"/api/tiles/0/0/0.png", "/api/tiles/0/-1/0.png", "/api/tiles/0/-1/-1.png", "/api/tiles/2/-1/-1.png"}
	for _, p := range tiles {
		_, r := getTile(t, ts, p)
		etags = append(etags, r.header.Get("ETag"))
	}
	_, err := savetool.Compact(dir, savetool.CompactOptions{MaxBackups: -1})
	must(t, err)
	moved, err := s.Refresh()
	must(t, err)
	var w world
	getJSON(t, ts, "/api/world", &w)
	expect(t, moved && w.Generation == 4, "after the compaction: moved %v, world %+v", moved, w)
	ev := next(t, events)
	expect(t, ev.data.Generation == 4 && !ev.data.All && !ev.data.Entities && len(ev.data.Changed) == 0, "compaction event %+v", ev)
	for i, p := range tiles {
		r := get(t, ts, p, "If-None-Match", etags[i])
		expect(t, r.status == http.StatusNotModified, "%s after the compaction: %d", p, r.status)
	}
}

// A chunk stored beyond the map's edge grows the map: the pages are told
// to redraw what the map gained, and the tiles there are drawn anew.
func TestExtentGrows(t *testing.T) {
	dir := fresh(t)
	s, ts := newServer(t, dir, mapserve.Options{Poll: -1, Generator: savetest.Generator})
	events := subscribe(t, ts.URL)
	next(t, events)
	img, before := getTile(t, ts, "/api/tiles/0/0/0.png")
	const n = savetest.ChunkSize
	expect(t, img.RGBAAt(3*n+5, 5).A == 0, "beyond the map's edge is not transparent")

	g := openGame(t, dir)
	paint(t, g, 2, 0, 10) // chunk (2, 0) was not stored: the map grows to x = 4n
	_, err := s.Refresh()
	must(t, err)
	ev := next(t, events)
	gained := [4]int{3 * n, -2 * n, 4 * n, 3 * n}
	expect(t, slices.Contains(ev.data.Changed, gained), "event %+v lacks what the map gained, %v", ev.data, gained)
	img, after := getTile(t, ts, "/api/tiles/0/0/0.png")
	expect(t, after.header.Get("ETag") != before.header.Get("ETag") && img.RGBAAt(3*n+5, 5).A == 255,
		"the tile over the map's new part: ETag %s then %s, pixel %v", before.header.Get("ETag"), after.header.Get("ETag"), img.RGBAAt(3*n+5, 5))
}
