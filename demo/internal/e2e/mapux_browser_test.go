package e2e_test

import (
	"context"
	"fmt"
	"image"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/demo/terrain"
	"github.com/arksave/arksave/internal/testkit/savetest"
	"github.com/arksave/arksave/mapserve"
)

// crowd is the label test's save: 100 pixel bodies 6 world pixels apart
// in a 10x10 grid inside one chunk, as many as the demo's save holds and
// closer.
const (
	crowdSide = 10
	crowdStep = 6
	crowdAt   = 4 // the first body's corner, world pixels
)

// crowdSave saves the crowd of bodies, a crate and a player with a
// position into a new save named name, and returns its directory and the
// bodies' ids.
func crowdSave(t *testing.T, name string) (string, []uint64) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	g, err := savetest.OpenRegional(nil, dir, 64, terrain.Generator{})
	must(t, err)
	t.Cleanup(func() { g.Close() })
	var ids []uint64
	for y := range crowdSide {
		for x := range crowdSide {
			ids = append(ids, g.Body(float32(crowdAt+crowdStep*x), float32(crowdAt+crowdStep*y)))
		}
	}
	g.Crate(101, 150, -70, "far", ecs.Entity{})
	ecs.NewMap2[components.Player, savetest.Position](g.W).NewEntity(&components.Player{ID: "ada"}, &savetest.Position{X: -90, Y: 40})
	must(t, g.Save())
	return dir, ids
}

// openCrowd serves the crowd's save with the demo's generator and opens
// its page at the view hash gives, once it has every entity.
func openCrowd(t *testing.T, hash string) (context.Context, *httptest.Server, []uint64) {
	t.Helper()
	chromium(t)
	dir, ids := crowdSave(t, "crowd")
	ts := serveMap(t, dir)
	ctx, cancel := context.WithTimeout(browser(t, context.Background()), 2*time.Minute)
	t.Cleanup(cancel)
	must(t, chromedp.Run(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(ts.URL+"/"+hash)))
	settled(t, ctx)
	waitFor(t, ctx, fmt.Sprintf(`arksaveMap.entities.length === %d`, len(ids)+2))
	return ctx, ts, ids
}

// labelModel is what the page's label model says at the scale shown:
// every label (each group of entities one label stands for), with its box
// in screen pixels from the world's origin, and the labels on screen.
type labelModel struct {
	All []struct {
		Box   [4]float64
		Count int
	}
	Shown    []shownLabel
	Entities int
	Scale    float64
}

// shownLabel is a label on screen: its box in CSS pixels of the canvas,
// how many entities it stands for, its text, and their kinds and ids.
type shownLabel struct {
	Box   [4]float64
	Count int
	Text  string
	IDs   []string
}

const readLabels = `(() => {
	const S = arksaveMap;
	return {all: S.labelGroups().map(g => ({box: g.box, count: g.members.length})),
		shown: S.labels.map(l => ({box: l.box, count: l.count, text: l.text, ids: l.members.map(e => e.kind + ':' + e.id)})),
		entities: S.entities.length, scale: S.scale};
})()`

// expectNoOverlap checks that no two of the boxes overlap and returns
// how many entities they stand for.
func expectNoOverlap(t *testing.T, what string, boxes [][4]float64, counts []int) int {
	t.Helper()
	n := 0
	for i, a := range boxes {
		n += counts[i]
		for _, b := range boxes[:i] {
			expect(t, !(a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3]), "%s: labels %v and %v overlap", what, a, b)
		}
	}
	return n
}

func viewLabels(t *testing.T, ctx context.Context, scale float64) labelModel {
	t.Helper()
	must(t, chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`arksaveMap.scale = %v; arksaveMap.cx = %d; arksaveMap.cy = %d; window.dispatchEvent(new Event('resize'))`,
		scale, crowdAt+crowdStep*crowdSide/2, crowdAt+crowdStep*crowdSide/2), nil)))
	settled(t, ctx)
	var m labelModel
	must(t, chromedp.Run(ctx, chromedp.Evaluate(readLabels, &m)))
	return m
}

// The page's labels never overlap: at three zoom levels no two labels of
// the map (nor two of those on screen) overlap and together they stand
// for every entity stored; far out the crowd of bodies shares a label
// ("100 bodies") that zooms in on a click, and at the closest zoom every
// body has its own label.
func TestMapLabelsDeclutterInBrowser(t *testing.T) {
	ctx, ts, ids := openCrowd(t, "#x=34&y=34&scale=1")
	w := readWorld(t, ts.URL)
	stored := len(ids) + 2 // the bodies, the crate, the player
	var world struct{ Bodies, Entities, Players int }
	getJSON(t, ts.URL+"/api/world", &world)
	expect(t, world.Bodies == len(ids) && world.Entities == 1 && world.Players == 1, "stored: %+v (%d chunks)", world, len(w.Chunks))

	singles := map[float64]int{}
	for _, scale := range []float64{0.5, 4, 32} {
		m := viewLabels(t, ctx, scale)
		var boxes [][4]float64
		var counts []int
		for _, g := range m.All {
			boxes, counts = append(boxes, g.Box), append(counts, g.Count)
		}
		n := expectNoOverlap(t, fmt.Sprintf("scale %v, the map", scale), boxes, counts)
		expect(t, n == stored && m.Entities == stored, "scale %v: the labels stand for %d entities, %d stored", scale, n, stored)
		boxes, counts = nil, nil
		shownBodies := 0
		for _, l := range m.Shown {
			boxes, counts = append(boxes, l.Box), append(counts, l.Count)
			for _, id := range l.IDs {
				if strings.HasPrefix(id, "body:") {
					shownBodies++
				}
			}
			if l.Count == 1 {
				singles[scale]++
			}
		}
		expectNoOverlap(t, fmt.Sprintf("scale %v, on screen", scale), boxes, counts)
		t.Logf("scale %v: %d labels for %d entities, %d on screen standing for %d bodies", scale, len(m.All), n, len(m.Shown), shownBodies)
		if scale < 32 {
			// The whole crowd is on screen: every body is in a label.
			expect(t, shownBodies == len(ids), "scale %v: the labels on screen stand for %d bodies, want %d", scale, shownBodies, len(ids))
		}
	}
	expect(t, singles[0.5] < 10, "far out, %d bodies have labels of their own", singles[0.5])
	m := viewLabels(t, ctx, 32)
	expect(t, len(m.All) == stored, "at the closest zoom %d labels for %d entities", len(m.All), stored)

	// Far out, a click on the crowd's label zooms in on it.
	m = viewLabels(t, ctx, 0.5)
	var cluster *shownLabel
	for i, l := range m.Shown {
		if l.Count > 1 && (cluster == nil || l.Count > cluster.Count) {
			cluster = &m.Shown[i]
		}
	}
	expect(t, cluster != nil && cluster.Count >= len(ids) && strings.HasPrefix(cluster.IDs[0], "body:"), "no cluster of the bodies on screen: %+v", m.Shown)
	// It is drawn: an orange frame around its text.
	shot := canvasShot(t, ctx)
	b := image.Rect(int(cluster.Box[0]), int(cluster.Box[1]), int(cluster.Box[2]), int(cluster.Box[3]))
	framed, edge := 0, 0
	for x := b.Min.X + 1; x < b.Max.X-1; x++ {
		for _, y := range []int{b.Min.Y, b.Max.Y - 1} {
			edge++
			if c := shot.RGBAAt(x, y); abs(int(c.R)-0xff) < 40 && abs(int(c.G)-0xb3) < 40 && abs(int(c.B)-0x47) < 40 {
				framed++
			}
		}
	}
	expect(t, framed > edge*3/4, "the cluster's label %v: %d of %d pixels of its frame orange", b, framed, edge)
	before := len(m.All)
	must(t, chromedp.Run(ctx, chromedp.MouseClickXY((cluster.Box[0]+cluster.Box[2])/2, (cluster.Box[1]+cluster.Box[3])/2)))
	waitFor(t, ctx, `arksaveMap.scale >= 1`)
	settled(t, ctx)
	must(t, chromedp.Run(ctx, chromedp.Evaluate(readLabels, &m)))
	expect(t, len(m.All) > before, "after the click on %q: %d labels, %d before", cluster.Text, len(m.All), before)
}

// The page's go-to box centres the map on world pixels or a chunk (and
// opens the chunk), its find box on a pixel body, a regional entity or a
// player by id with its panel open; what it cannot read or find it says.
func TestMapGoToAndFindInBrowser(t *testing.T) {
	ctx, _, ids := openCrowd(t, "")

	enter := func(box, text string) string {
		t.Helper()
		var said string
		must(t, chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`document.querySelector('%s').value = ''; document.getElementById('search-result').textContent = ''`, box), nil),
			chromedp.SendKeys(box, text+kb.Enter, chromedp.ByID)))
		waitFor(t, ctx, `document.getElementById('search-result').textContent !== ''`)
		must(t, chromedp.Run(ctx, chromedp.Evaluate(`document.getElementById('search-result').className + ': ' + document.getElementById('search-result').textContent`, &said)))
		return said
	}
	centred := func(x, y float64) {
		t.Helper()
		waitFor(t, ctx, fmt.Sprintf(`Math.abs(arksaveMap.cx - %v) < 1e-6 && Math.abs(arksaveMap.cy - %v) < 1e-6`, x, y))
	}
	panel := func(sel string) string {
		t.Helper()
		var text string
		waitFor(t, ctx, fmt.Sprintf(`document.querySelector('#selection %s') !== null`, sel))
		must(t, chromedp.Run(ctx, chromedp.Evaluate(`document.getElementById('selection').innerText`, &text)))
		return text
	}

	said := enter("#goto", "120,-40")
	centred(120, -40)
	expect(t, strings.HasPrefix(said, ": 120, -40: in chunk (1, -1)"), "go to 120,-40 says %q", said)
	enter("#goto", "chunk 2,-1") // the panel below says what it did
	centred(160, -32)
	expect(t, strings.Contains(panel(`[data-chunk="2,-1"]`), "chunk (2, -1)"), "go to chunk 2,-1 opens no chunk")
	said = enter("#goto", "north")
	expect(t, strings.HasPrefix(said, "error: ") && strings.Contains(said, "want x,y"), "go to north says %q", said)

	body := ids[37]
	said = enter("#find", fmt.Sprint(body))
	var at [2]float64
	must(t, chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`(e => [e.x, e.y])(arksaveMap.entities.find(e => e.kind === 'body' && e.id === '%d'))`, body), &at)))
	expect(t, at[0] >= crowdAt+crowdStep*7 && at[0] <= crowdAt+crowdStep*7+2 && at[1] >= crowdAt+crowdStep*3 && at[1] <= crowdAt+crowdStep*3+2, "body %d is at %v", body, at)
	centred(at[0], at[1])
	text := panel(fmt.Sprintf(`[data-entity="body:%d"]`, body))
	expect(t, strings.Contains(text, fmt.Sprintf("pixel body %d", body)) && strings.Contains(said, "pixel body"), "find %d: %q, panel %q", body, said, text)
	enter("#find", "101")
	centred(150, -70)
	expect(t, strings.Contains(panel(`[data-entity="entity:101"]`), `"Label": "far"`), "find 101 opens no crate")
	enter("#find", "player:ada")
	centred(-90, 40)
	expect(t, strings.Contains(panel(`[data-entity="player:ada"]`), "player ada"), "find ada opens no player")
	said = enter("#find", "4242")
	expect(t, strings.HasPrefix(said, "error: ") && strings.Contains(said, `no pixel body, regional entity or player with id "4242"`), "find 4242 says %q", said)
	said = enter("#find", "player:bob")
	expect(t, strings.HasPrefix(said, "error: ") && strings.Contains(said, `no player with id "bob"`), "find bob says %q", said)
}

// One page serves two saves, each at /w/NAME/, with a switcher between
// them; the save served without the game's generator says on the page that
// its terrain is not generated, the one with it does not.
func TestMapSeveralSavesInBrowser(t *testing.T) {
	chromium(t)
	plain, _ := crowdSave(t, "plain")
	dir := filepath.Join(t.TempDir(), "terrain")
	g, err := savetest.OpenRegional(nil, dir, 64, terrain.Generator{})
	must(t, err)
	t.Cleanup(func() { g.Close() })
	g.Crate(7, 10, 10, "only", ecs.Entity{})
	must(t, g.Save())

	without, err := mapserve.New(plain, mapserve.Options{Palette: demoPalette(), Poll: 100 * time.Millisecond})
	must(t, err)
	with, err := mapserve.New(dir, mapserve.Options{Generator: terrain.Generator{}, Palette: demoPalette(), Poll: 100 * time.Millisecond})
	must(t, err)
	h, err := mapserve.NewMulti(without, with)
	must(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		without.Close()
		with.Close()
		ts.Close()
	})
	ctx, cancel := context.WithTimeout(browser(t, context.Background()), 2*time.Minute)
	defer cancel()
	must(t, chromedp.Run(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(ts.URL+"/")))
	settled(t, ctx)
	type shown struct {
		Path, Save, Notice string
		NoticeShown        bool
		Options            []string
		Switcher           bool
		Entities           int
	}
	read := func() shown {
		t.Helper()
		var s shown
		must(t, chromedp.Run(ctx, chromedp.Evaluate(`(() => { const n = document.getElementById('generator-notice');
			return {path: location.pathname, save: arksaveMap.world.save, notice: n.textContent, noticeShown: n.offsetParent !== null,
				options: [...document.getElementById('saves').options].map(o => o.value), switcher: document.getElementById('save-switch').offsetParent !== null,
				entities: arksaveMap.entities.length}; })()`, &s)))
		return s
	}
	waitFor(t, ctx, `arksaveMap.entities.length === 102`)
	s := read()
	expect(t, s.Path == "/w/plain/" && s.Save == "plain" && s.Switcher && strings.Join(s.Options, ",") == "plain,terrain", "first page: %+v", s)
	expect(t, s.NoticeShown && strings.Contains(s.Notice, "terrain not generated: only stored chunks are drawn") && strings.Contains(s.Notice, "mapserve.Options.Generator"),
		"without a generator: %+v", s)

	// The switcher opens the other save's page.
	_, err = chromedp.RunResponse(ctx, chromedp.Evaluate(`setTimeout(() => (s => { s.value = 'terrain'; s.dispatchEvent(new Event('change')); })(document.getElementById('saves')))`, nil))
	must(t, err)
	// Its page follows its save's events too.
	waitFor(t, ctx, `location.pathname === '/w/terrain/' && window.arksaveMap && arksaveMap.ready && arksaveMap.entities.length === 1 && arksaveMap.live`)
	settled(t, ctx)
	s = read()
	expect(t, s.Save == "terrain" && s.Switcher && !s.NoticeShown && s.Entities == 1, "second page: %+v", s)
	// Its tiles are the generated terrain's: not the same as the other's.
	var tiles int
	must(t, chromedp.Run(ctx, chromedp.Evaluate(`[...arksaveMap.tiles.values()].filter(t => t.ok && t.img.src.includes('/w/terrain/api/tiles/')).length`, &tiles)))
	expect(t, tiles > 0, "no tiles of the second save loaded")
	// A new generation of it reaches its page.
	g.Crate(8, 20, 12, "more", ecs.Entity{})
	must(t, g.Save())
	waitFor(t, ctx, `arksaveMap.generation === 2 && arksaveMap.entities.length === 2`)
}

// The demo's own save (the bodies of a longer run piled their ids into an
// unreadable column; the crowd test above holds as many): at three zoom levels over its stored chunks no two labels
// overlap, and they stand for every body and entity it stores.
func TestMapLabelsOnDemoSaveInBrowser(t *testing.T) {
	chromium(t)
	dir := copySave(t)
	ts := serveMap(t, dir)
	var w struct {
		Bounds                    [4]int
		Bodies, Entities, Players int
	}
	getJSON(t, ts.URL+"/api/world", &w)
	stored := w.Bodies + w.Entities + w.Players
	expect(t, w.Bodies > 0, "the demo's save stores no bodies")
	ctx, cancel := context.WithTimeout(browser(t, context.Background()), 2*time.Minute)
	defer cancel()
	cx, cy := (w.Bounds[0]+w.Bounds[2])/2, (w.Bounds[1]+w.Bounds[3])/2
	must(t, chromedp.Run(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(fmt.Sprintf("%s/#x=%d&y=%d&scale=1", ts.URL, cx, cy))))
	settled(t, ctx)
	waitFor(t, ctx, fmt.Sprintf(`arksaveMap.entities.length === %d`, stored))
	for _, scale := range []float64{0.25, 1, 4} {
		must(t, chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`arksaveMap.scale = %v; window.dispatchEvent(new Event('resize'))`, scale), nil)))
		settled(t, ctx)
		var m labelModel
		must(t, chromedp.Run(ctx, chromedp.Evaluate(readLabels, &m)))
		var boxes [][4]float64
		var counts []int
		for _, g := range m.All {
			boxes, counts = append(boxes, g.Box), append(counts, g.Count)
		}
		n := expectNoOverlap(t, fmt.Sprintf("demo, scale %v", scale), boxes, counts)
		expect(t, n == stored, "demo, scale %v: the labels stand for %d entities, %d stored", scale, n, stored)
		boxes, counts = nil, nil
		for _, l := range m.Shown {
			boxes, counts = append(boxes, l.Box), append(counts, l.Count)
		}
		expectNoOverlap(t, fmt.Sprintf("demo, scale %v, on screen", scale), boxes, counts)
		t.Logf("demo, scale %v: %d labels for %d entities (%d bodies), %d on screen", scale, len(m.All), n, w.Bodies, len(m.Shown))
	}
}
