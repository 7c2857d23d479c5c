package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/demo/sim"
	"github.com/arksave/arksave/demo/terrain"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/mapserve"
)

var updateServe = flag.Bool("update-serve", false, "write the screenshot of the map page to assets/serve.png")

// chromium finds Debian's Chromium (or $CHROMIUM).
func chromium(t *testing.T) string {
	t.Helper()
	names := []string{"chromium", "chromium-browser"}
	if c := os.Getenv("CHROMIUM"); c != "" {
		names = []string{c}
	}
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Skip("Chromium is not installed (Debian package chromium; scripts/deps.sh installs it as root): skipping the browser test of arksave serve")
	return ""
}

// browser starts a headless Chromium of its own, with nothing that reaches
// for the network (this machine's network is closed) and a fresh profile
// (chromedp makes a new --user-data-dir and removes it after the browser
// has exited), and returns a tab's context.
func browser(t *testing.T, ctx context.Context) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("force-device-scale-factor", "1"),
		chromedp.WindowSize(1280, 800),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	tab, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)
	return tab
}

// page is what the test reads of the page's state (window.arksaveMap).
type page struct {
	Generation uint64  `json:"generation"`
	CX         float64 `json:"cx"`
	CY         float64 `json:"cy"`
	Scale      float64 `json:"scale"`
	W          int     `json:"w"`
	H          int     `json:"h"`
	Tiles      []string
	Pending    int
	TileLoads  int `json:"tileLoads"`
	Refetched  []struct {
		Key        string
		Generation uint64
		Rect       [4]int
	}
	Events []struct {
		Generation uint64
		Previous   uint64
		All        bool
		Changed    [][4]int
	}
	Drawn []string // tiles drawn in the last frame
}

const readPage = `(() => {
	const S = window.arksaveMap, c = document.getElementById('map');
	const drawn = [...S.tiles.values()].filter(t => t.used === S.frame).map(t => t.key);
	return {generation: S.generation, cx: S.cx, cy: S.cy, scale: S.scale, w: c.clientWidth, h: c.clientHeight,
		tiles: [...S.tiles.keys()], pending: S.pendingTiles(), tileLoads: S.stats.tileLoads,
		refetched: S.stats.refetched, events: S.stats.events, drawn: drawn};
})()`

func read(t *testing.T, ctx context.Context) page {
	t.Helper()
	var p page
	must(t, chromedp.Run(ctx, chromedp.Evaluate(readPage, &p)))
	return p
}

// settled waits until the page has drawn a frame with every tile in view
// loaded.
func settled(t *testing.T, ctx context.Context) page {
	t.Helper()
	must(t, chromedp.Run(ctx, chromedp.Poll(`window.arksaveMap && arksaveMap.ready && arksaveMap.pendingTiles() === 0 &&
		[...arksaveMap.tiles.values()].every(t => t.used !== arksaveMap.frame || t.ok)`, nil, chromedp.WithPollingInterval(50*time.Millisecond))))
	// One more frame, so that the screenshot shows the last tiles.
	must(t, chromedp.Run(ctx, chromedp.Evaluate(`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))`, nil,
		func(p *cdpruntime.EvaluateParams) *cdpruntime.EvaluateParams { return p.WithAwaitPromise(true) })))
	return read(t, ctx)
}

// canvasShot is a screenshot of the map's canvas: one image pixel per CSS
// pixel.
func canvasShot(t *testing.T, ctx context.Context) *image.RGBA {
	t.Helper()
	var buf []byte
	must(t, chromedp.Run(ctx, chromedp.Screenshot("#map", &buf, chromedp.ByID)))
	img, err := png.Decode(bytes.NewReader(buf))
	must(t, err)
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			out.Set(x, y, img.At(b.Min.X+x, b.Min.Y+y))
		}
	}
	return out
}

type worldInfo struct {
	Generation uint64
	ChunkSize  int `json:"chunk_size"`
	Extent     [4]int
	Bounds     [4]int
	Chunks     []struct {
		X, Y   int32
		Kind   string
		Bodies int
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	res, err := http.Get(url)
	must(t, err)
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, res.Status)
	}
	must(t, json.NewDecoder(res.Body).Decode(v))
}

// expectShowsTheWorld compares a screenshot of the canvas at full zoom
// with the world as savetool renders it with the demo's generator and
// colours, every 7th pixel of the saved map (away from the toolbar, the
// cursor line and the map's border): at least 97% must be exact, and they
// must show the terrain: sky, ground, and the chunks the demo stored.
func expectShowsTheWorld(t *testing.T, dir string, p page, shot *image.RGBA, ext [4]int) {
	t.Helper()
	if p.Scale != 1 {
		t.Fatalf("expectShowsTheWorld wants full zoom, not %v", p.Scale)
	}
	// The page puts world pixel (wx, wy) at screen pixel (wx-x0, wy-y0),
	// rounding half a pixel up as JavaScript's Math.round does.
	x0 := int(p.CX - math.Floor(float64(p.W)/2+0.5))
	y0 := int(p.CY - math.Floor(float64(p.H)/2+0.5))
	view := image.Rect(x0, y0, x0+p.W, y0+p.H)
	extent := image.Rect(ext[0], ext[1], ext[2], ext[3])
	region := view.Intersect(extent)
	if region.Dx() < 200 || region.Dy() < 200 {
		t.Fatalf("the map covers %v of the view %v", region, view)
	}
	want, _, err := savetool.RenderDir(dir, savetool.RenderOptions{Generator: terrain.Generator{}, Palette: demoPalette(), Region: region})
	must(t, err)
	inner := extent.Inset(2)
	sky := demoPalette().Color(0)
	var n, same, skies, ground int
	colours := map[color.RGBA]bool{}
	for wy := region.Min.Y; wy < region.Max.Y; wy += 7 {
		for wx := region.Min.X; wx < region.Max.X; wx += 7 {
			sx, sy := wx-x0, wy-y0
			if !(image.Point{wx, wy}).In(inner) || sx < 320 && sy < 48 || sy > p.H-30 {
				continue
			}
			n++
			w := want.RGBAAt(wx-region.Min.X, wy-region.Min.Y)
			if shot.RGBAAt(sx, sy) == w {
				same++
				colours[w] = true
				if w == sky {
					skies++
				} else {
					ground++
				}
			}
		}
	}
	t.Logf("view %v: %d of %d sampled pixels exactly as rendered (%d sky, %d not), %d colours", view, same, n, skies, ground, len(colours))
	if n < 1000 || same*100 < n*97 || skies < n/20 || ground < n/20 || len(colours) < 20 {
		keep, _ := os.MkdirTemp("", "arksave-browser-test-") // kept for a look
		for name, img := range map[string]image.Image{"shot.png": shot, "render.png": want} {
			if f, err := os.Create(filepath.Join(keep, name)); err == nil {
				png.Encode(f, img)
				f.Close()
			}
		}
		t.Fatalf("the page does not show the world: %d of %d pixels as rendered, %d sky, %d ground, %d colours (the screenshot and the render of %v are in %s)",
			same, n, skies, ground, len(colours), region, keep)
	}
}

// The map page in a real browser, on a save the headless demo made: it
// draws the terrain's colours where the world has them, pans and zooms
// with mouse and touch, shows a chunk's record and a body's components on
// a click, and follows the demo while it plays on, autosaving, redrawing
// only the tiles over what changed.
func TestMapInBrowser(t *testing.T) {
	chromium(t)
	dir := copySave(t)
	ts := serveMap(t, dir)
	var w worldInfo
	getJSON(t, ts.URL+"/api/world", &w)
	ctx, cancel := context.WithTimeout(browser(t, context.Background()), 2*time.Minute)
	defer cancel()

	// The map draws: at full zoom, centred on the stored chunks, without
	// the overlays, every sampled pixel as savetool renders it.
	cx, cy := (w.Bounds[0]+w.Bounds[2])/2, (w.Bounds[1]+w.Bounds[3])/2
	must(t, chromedp.Run(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(fmt.Sprintf("%s/#x=%d&y=%d&scale=1", ts.URL, cx, cy))))
	p := settled(t, ctx)
	expect(t, p.Generation == w.Generation && p.Scale == 1 && p.CX == float64(cx) && p.CY == float64(cy), "page %+v, world generation %d", p, w.Generation)
	overlays(t, ctx, false)
	p = settled(t, ctx)
	expectShowsTheWorld(t, dir, p, canvasShot(t, ctx), w.Extent)

	// Pan: a drag with the mouse moves the view by the drag.
	drag(t, ctx, 700, 450, 580, 390)
	p = settled(t, ctx)
	expect(t, p.CX == float64(cx+120) && p.CY == float64(cy+60), "after a drag of (-120, -60): centre %v,%v, want %d,%d", p.CX, p.CY, cx+120, cy+60)
	expectShowsTheWorld(t, dir, p, canvasShot(t, ctx), w.Extent)

	// Zoom: the wheel doubles the scale around the pointer (the world point
	// under it stays), the button halves it; zoomed out, the page asks for
	// the tiles of the level above.
	var before, after [2]float64
	must(t, chromedp.Run(ctx, chromedp.Evaluate(`arksaveMap.toWorld(300, 200)`, &before),
		chromedp.ActionFunc(func(ctx context.Context) error {
			return input.DispatchMouseEvent(input.MouseWheel, 300, 200).WithDeltaX(0).WithDeltaY(-240).Do(ctx)
		}),
		chromedp.Evaluate(`arksaveMap.toWorld(300, 200)`, &after)))
	p = settled(t, ctx)
	expect(t, p.Scale == 2 && math.Abs(before[0]-after[0]) < 1e-9 && math.Abs(before[1]-after[1]) < 1e-9,
		"wheel: scale %v, world under the pointer %v then %v", p.Scale, before, after)
	must(t, chromedp.Run(ctx, chromedp.Click("#zoom-out", chromedp.ByID), chromedp.Click("#zoom-out", chromedp.ByID)))
	p = settled(t, ctx)
	expect(t, p.Scale == 0.5 && hasPrefix(p.Drawn, "1/") && !hasPrefix(p.Drawn, "0/"), "zoomed out: scale %v, tiles drawn %v", p.Scale, p.Drawn)

	// Touch: a pinch spreading two fingers apart zooms in, one finger pans.
	must(t, chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		pts := func(d float64) []*input.TouchPoint {
			return []*input.TouchPoint{{X: 500 - d, Y: 400, ID: 1}, {X: 500 + d, Y: 400, ID: 2}}
		}
		if err := input.DispatchTouchEvent(input.TouchStart, pts(50)).Do(ctx); err != nil {
			return err
		}
		for d := 60.0; d <= 100; d += 10 {
			if err := input.DispatchTouchEvent(input.TouchMove, pts(d)).Do(ctx); err != nil {
				return err
			}
		}
		return input.DispatchTouchEvent(input.TouchEnd, []*input.TouchPoint{}).Do(ctx)
	})))
	p = settled(t, ctx)
	expect(t, math.Abs(p.Scale-1) < 1e-9, "after a pinch from 100 to 200 pixels apart at scale 0.5: scale %v", p.Scale)
	startX := p.CX
	must(t, chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		if err := input.DispatchTouchEvent(input.TouchStart, []*input.TouchPoint{{X: 600, Y: 400, ID: 3}}).Do(ctx); err != nil {
			return err
		}
		for x := 590.0; x >= 500; x -= 10 {
			if err := input.DispatchTouchEvent(input.TouchMove, []*input.TouchPoint{{X: x, Y: 400, ID: 3}}).Do(ctx); err != nil {
				return err
			}
		}
		return input.DispatchTouchEvent(input.TouchEnd, []*input.TouchPoint{}).Do(ctx)
	})))
	p = settled(t, ctx)
	expect(t, math.Abs(p.CX-startX-100) < 1e-6, "a finger dragged 100 pixels left at full zoom moved the centre from %v to %v", startX, p.CX)

	// Back to the stored chunks at full zoom, overlays on.
	must(t, chromedp.Run(ctx, chromedp.Navigate(fmt.Sprintf("%s/#x=%d&y=%d&scale=1", ts.URL, cx, cy)), chromedp.Reload()))
	overlays(t, ctx, true)
	settled(t, ctx)

	// A click on a chunk shows its record, as the store holds it.
	s, m, err := savetool.OpenStore(dir, 0, savetool.Options{})
	must(t, err)
	var target storetool.Entry
	storetool.Tool.Entries(s, func(e storetool.Entry) bool {
		if e.Type == chunkstore.Delta && !hasBodies(w, e.Pos) {
			target = e
			return false
		}
		return true
	})
	s.Close()
	expect(t, target.Type == chunkstore.Delta, "the demo's save (generation %d) has no delta chunk without bodies", m.Generation)
	cs := float64(w.ChunkSize)
	text := clickChunk(t, ctx, target.Pos, cs)
	for _, want := range []string{fmt.Sprintf("chunk (%d, %d)", target.Pos.X, target.Pos.Y), "kind\ndelta",
		fmt.Sprintf("version\n%d", target.Handle.Offset), fmt.Sprintf("offset %d, %d bytes", target.Handle.Offset, target.Handle.Length), "changed pixels"} {
		expect(t, strings.Contains(text, want), "chunk info lacks %q:\n%s", want, text)
	}

	// A click on a pixel body shows its components, the export's view.
	// An entity as /api/entities lists it.
	type entity struct {
		Kind, ID, Placed string
		PlacedBy         string `json:"placed_by"`
		X, Y             float64
	}
	var ents struct{ Entities []entity }
	getJSON(t, ts.URL+"/api/entities", &ents)
	expect(t, len(ents.Entities) > 0, "the demo's save has no pixel body")
	e := ents.Entities[0]
	// At the closest zoom, where no cluster's label covers a body (a click
	// on one zooms in).
	must(t, chromedp.Run(ctx, chromedp.Navigate(fmt.Sprintf("%s/#x=%v&y=%v&scale=32", ts.URL, e.X, e.Y)), chromedp.Reload()))
	settled(t, ctx)
	text = clickAndRead(t, ctx, e.X, e.Y, `[data-entity^="body:"]`)
	expect(t, strings.Contains(text, "pixel body") && strings.Contains(text, `"angular_velocity"`) && strings.Contains(text, `"id": `),
		"body info:\n%s", text)
	// Its other components: its entity in the chunk's section, with its stable id.
	_, regional, _ := strings.Cut(text, "its entity in the chunk's section")
	_, regional, _ = strings.Cut(regional, "components.Regional")
	expect(t, strings.Contains(regional, `"ID": `) && strings.Contains(regional, e.ID), "body info lacks the body's entity:\n%s", text)

	// The demo's player, its camera, is saved apart from the chunks; its
	// Focus has X and Y, so the map places it: a click shows its record.
	pi := slices.IndexFunc(ents.Entities, func(e entity) bool { return e.Kind == "player" })
	expect(t, pi >= 0, "the demo's player (its camera) is not on the map: %+v", ents.Entities)
	pl := ents.Entities[pi]
	expect(t, pl.ID == sim.PlayerID && pl.Placed == "fields" && strings.HasSuffix(pl.PlacedBy, "components.Focus"), "the demo's player: %+v", pl)
	must(t, chromedp.Run(ctx, chromedp.Navigate(fmt.Sprintf("%s/#x=%d&y=%d&scale=32", ts.URL, int(pl.X)+4, int(pl.Y)+4)), chromedp.Reload()))
	settled(t, ctx)
	text = clickAndRead(t, ctx, pl.X, pl.Y, fmt.Sprintf(`[data-entity="player:%s"]`, pl.ID))
	expect(t, strings.Contains(text, "player "+pl.ID) && strings.Contains(text, "components.Focus") && strings.Contains(text, `"ID": "`+pl.ID+`"`),
		"player info:\n%s", text)
	must(t, chromedp.Run(ctx, chromedp.Navigate(fmt.Sprintf("%s/#x=%d&y=%d&scale=1", ts.URL, cx, cy)), chromedp.Reload()))
	settled(t, ctx)

	// Live: the demo plays on in the directory, autosaving every second of
	// game time (every 60 ticks: several times a second here), while the
	// page is open and clicked; the page follows to its last generation.
	before0 := read(t, ctx)
	demo := exec.CommandContext(ctx, demoHeadless(t), "-load", "-ticks", "1800", "-autosave", "1s", "-chunk", "128", "-save", dir)
	demo.Env = withoutDisplay()
	var out, errOut bytes.Buffer
	demo.Stdout, demo.Stderr = &out, &errOut
	must(t, demo.Start())
	exited := make(chan error, 1)
	go func() { exited <- demo.Wait() }()
	var clicks []time.Duration
	for running := true; running; {
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("the demo: %v\n%s", err, errOut.String())
			}
			running = false
		default:
			start := time.Now()
			clickChunk(t, ctx, target.Pos, cs)
			clicks = append(clicks, time.Since(start))
		}
	}
	var st stats
	must(t, json.Unmarshal(out.Bytes(), &st))
	expect(t, st.Loaded && st.FailedSaves == 0 && st.Saves > 3, "the demo beside the map: %s", out.String())
	final := manifest(t, dir).Generation
	must(t, chromedp.Run(ctx, chromedp.Poll(fmt.Sprintf(`arksaveMap.generation === %d`, final), nil, chromedp.WithPollingInterval(50*time.Millisecond))))
	p = settled(t, ctx)
	t.Logf("the demo: %d saves, generation %d to %d, tick p99 %.2f ms; %d clicks answered while it ran, slowest %v; the page heard %d events",
		st.Saves, before0.Generation, final, st.P99, len(clicks), slowest(clicks), len(p.Events))

	// Only tiles over what changed were fetched again, and not all of them.
	changed := 0
	for _, ev := range p.Events {
		if ev.Generation <= before0.Generation {
			continue
		}
		expect(t, !ev.All && ev.Previous >= before0.Generation, "event %+v redraws everything", ev)
		n := 0
		for _, r := range p.Refetched {
			if r.Generation != ev.Generation {
				continue
			}
			n++
			expect(t, overlapsAny(r.Rect, ev.Changed), "tile %s fetched again for generation %d, which changed only %v", r.Key, ev.Generation, ev.Changed)
		}
		changed += n
		expect(t, n < len(p.Drawn), "generation %d: all %d tiles in view fetched again", ev.Generation, n)
	}
	expect(t, changed > 0, "no tile fetched again while the demo saved: events %+v", p.Events)

	// And the page now shows the last generation, pixel for pixel (Escape
	// clears the selection's frame).
	must(t, chromedp.Run(ctx, chromedp.KeyEvent(kb.Escape)))
	overlays(t, ctx, false)
	p = settled(t, ctx)
	expectShowsTheWorld(t, dir, p, canvasShot(t, ctx), readWorld(t, ts.URL).Extent)

	if *updateServe {
		overlays(t, ctx, true)
		clickChunk(t, ctx, target.Pos, cs)
		must(t, chromedp.Run(ctx, chromedp.Click("#check-again", chromedp.ByID), chromedp.Poll(fmt.Sprintf(
			`document.querySelector('#generations tr.current td')?.textContent === '%d' && document.getElementById('check-stale')?.textContent === ''`, final),
			nil, chromedp.WithPollingInterval(50*time.Millisecond))))
		settled(t, ctx)
		var buf []byte
		must(t, chromedp.Run(ctx, chromedp.CaptureScreenshot(&buf)))
		must(t, os.WriteFile(filepath.Join("..", "..", "..", "assets", "serve.png"), buf, 0o644))
	}
}

// serveMap serves the map of the save in dir with the demo's generator
// and colours, polling every 100 ms, until the test ends.
func serveMap(t *testing.T, dir string) *httptest.Server {
	t.Helper()
	srv, err := mapserve.New(dir, mapserve.Options{Generator: terrain.Generator{}, Palette: demoPalette(), Poll: 100 * time.Millisecond})
	must(t, err)
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	return ts
}

// overlays shows or hides the chunk frames and the entities, with the
// page's checkboxes.
func overlays(t *testing.T, ctx context.Context, on bool) {
	t.Helper()
	must(t, chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`for (const id of ['show-grid', 'show-entities']) {
		const c = document.getElementById(id);
		if (c.checked !== %v) c.click();
	}`, on), nil)))
}

func readWorld(t *testing.T, url string) worldInfo {
	var w worldInfo
	getJSON(t, url+"/api/world", &w)
	return w
}

// drag drags the mouse from one point of the page to another.
func drag(t *testing.T, ctx context.Context, x0, y0, x1, y1 float64) {
	t.Helper()
	must(t, chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		if err := input.DispatchMouseEvent(input.MousePressed, x0, y0).WithButton(input.Left).WithButtons(1).WithClickCount(1).Do(ctx); err != nil {
			return err
		}
		for i := 1; i <= 10; i++ {
			x, y := x0+(x1-x0)*float64(i)/10, y0+(y1-y0)*float64(i)/10
			if err := input.DispatchMouseEvent(input.MouseMoved, x, y).WithButton(input.Left).WithButtons(1).Do(ctx); err != nil {
				return err
			}
		}
		return input.DispatchMouseEvent(input.MouseReleased, x1, y1).WithButton(input.Left).WithClickCount(1).Do(ctx)
	})))
}

// clickChunk clicks a chunk where no cluster's label covers it (a click on
// one zooms in) and returns the selection's text once it shows the chunk.
func clickChunk(t *testing.T, ctx context.Context, p chunkstore.Pos, cs float64) string {
	t.Helper()
	var at [2]float64
	must(t, chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`(() => {
		for (let j = 0; j < 81; j++) {
			const i = (j + 40) %% 81; // the centre first
			const wx = (%d + 0.5 + ((i %% 9) - 4) / 10) * %v, wy = (%d + 0.5 + (Math.floor(i / 9) - 4) / 10) * %v;
			const [sx, sy] = arksaveMap.toScreen(wx, wy);
			if (!(arksaveMap.labels || []).some(l => l.count > 1 && sx >= l.box[0] - 2 && sx < l.box[2] + 2 && sy >= l.box[1] - 2 && sy < l.box[3] + 2)) return [wx, wy];
		}
		return [(%d + 0.5) * %v, (%d + 0.5) * %v];
	})()`, p.X, cs, p.Y, cs, p.X, cs, p.Y, cs), &at)))
	return clickAndRead(t, ctx, at[0], at[1], fmt.Sprintf(`[data-chunk="%d,%d"]`, p.X, p.Y))
}

// clickAndRead clicks the page where world point (wx, wy) is shown and
// returns the selection's text once it shows sel.
func clickAndRead(t *testing.T, ctx context.Context, wx, wy float64, sel string) string {
	t.Helper()
	var at [2]float64
	var seq int
	must(t, chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`arksaveMap.toScreen(%v, %v)`, wx, wy), &at),
		chromedp.Evaluate(`arksaveMap.stats.selections`, &seq)))
	var text string
	must(t, chromedp.Run(ctx,
		chromedp.MouseClickXY(at[0], at[1]),
		chromedp.Poll(fmt.Sprintf(`arksaveMap.stats.selections > %d && document.querySelector('#selection %s') !== null`, seq, sel), nil,
			chromedp.WithPollingInterval(20*time.Millisecond)),
		chromedp.Evaluate(`document.getElementById('selection').innerText`, &text)))
	return text
}

func hasBodies(w worldInfo, p chunkstore.Pos) bool {
	for _, c := range w.Chunks {
		if c.X == p.X && c.Y == p.Y {
			return c.Bodies > 0
		}
	}
	return false
}

func hasPrefix(keys []string, prefix string) bool {
	for _, k := range keys {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

func overlapsAny(r [4]int, rects [][4]int) bool {
	for _, c := range rects {
		if r[0] < c[2] && c[0] < r[2] && r[1] < c[3] && c[1] < r[3] {
			return true
		}
	}
	return false
}

func slowest(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}
