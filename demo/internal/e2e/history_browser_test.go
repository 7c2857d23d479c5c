package e2e_test

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"math"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
	"github.com/arksave/arksave/internal/testkit/terrain"
	"github.com/arksave/arksave/mapserve"
)

// The history test's save: chunks of savetest.ChunkSize pixels, the
// 5x5 chunks around the origin stored from generation 1 on.
const (
	histScale = 3   // CSS pixels per world pixel
	histMin   = -2  // chunks -2..2 a side
	histMax   = 2   //
	histCX    = 16  // the view's centre, world pixels
	histCY    = 16  //
	tintAlpha = .35 // the diff overlay's fill (app.js drawDiff)
)

var (
	paintedG2 = image.Pt(1, 0)   // the chunk generation 2 paints
	paintedG3 = image.Pt(-1, -1) // the chunk generation 3 paints
	tint      = color.RGBA{255, 61, 245, 255}
)

// The map page shows any kept generation: the time slider moves it to
// generation 1, whose pixels it then shows where generation 2 painted a
// chunk over, and back to the live one; the diff overlay tints the chunks
// two generations store differently and no other; the address keeps the
// generation and the comparison, so that a link shows the same; a new
// generation leaves a kept one on screen, and the live end follows it.
func TestMapHistoryInBrowser(t *testing.T) {
	chromium(t)
	dir := filepath.Join(t.TempDir(), "world")
	g, err := savetest.Open(dir, false)
	must(t, err)
	t.Cleanup(func() { g.Close() })
	must(t, g.Settle())
	// Generation 1: a few pixels in each chunk around the origin, so
	// that every one of them is stored.
	for cy := int32(histMin); cy <= histMax; cy++ {
		for cx := int32(histMin); cx <= histMax; cx++ {
			for i := range 6 {
				must(t, g.Paint(cx, cy, 4*i+3, 4*i+2, components.MakePixel(terrain.Stone, uint8(i), 0, 0)))
			}
		}
	}
	must(t, g.Save())
	fill := func(c image.Point, mat uint8) {
		must(t, g.Fill(int32(c.X), int32(c.Y), func(px, py int) components.Pixel { return components.MakePixel(mat, uint8(px^py), 0, 0) }))
		must(t, g.Save())
	}
	fill(paintedG2, terrain.Water) // generation 2
	fill(paintedG3, terrain.Sand)  // generation 3

	srv, err := mapserve.New(dir, mapserve.Options{Generator: savetest.Generator, Poll: 100 * time.Millisecond})
	must(t, err)
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	ctx, cancel := context.WithTimeout(browser(t, context.Background()), 2*time.Minute)
	defer cancel()
	must(t, chromedp.Run(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(fmt.Sprintf("%s/#x=%d&y=%d&scale=%d", ts.URL, histCX, histCY, histScale))))
	overlays(t, ctx, false)
	settled(t, ctx)
	waitFor(t, ctx, `arksaveMap.kept.length === 3`)
	expectShown(t, ctx, 3, 3)
	live := canvasShot(t, ctx)
	expectGeneration(t, ctx, dir, live, 3)

	// The slider's left end: generation 1, the chunk generation 2
	// painted as it was before.
	slide(t, ctx, kb.Home)
	waitFor(t, ctx, `arksaveMap.generation === 1 && arksaveMap.world.generation === 1`)
	settled(t, ctx)
	expectShown(t, ctx, 1, 3)
	old := canvasShot(t, ctx)
	expectGeneration(t, ctx, dir, old, 1)
	differ := 0
	eachSample(t, ctx, func(c image.Point, _, _, sx, sy int) {
		if c == paintedG2 && old.RGBAAt(sx, sy) != live.RGBAAt(sx, sy) {
			differ++
		}
	})
	expect(t, differ > 800, "chunk %v: %d sampled pixels of generation 1 differ from the live generation's", paintedG2, differ)

	// Compared with the live generation: the two chunks painted since are
	// tinted, every other pixel is as it was.
	compare(t, ctx, "3")
	waitFor(t, ctx, `arksaveMap.diff && arksaveMap.diff.a === 3 && arksaveMap.diff.b === 1 && arksaveMap.diff.cells.size === 2`)
	settled(t, ctx)
	tinted := canvasShot(t, ctx)
	expectTinted(t, ctx, old, tinted, paintedG2, paintedG3)

	// The address keeps both: a link shows the same.
	waitFor(t, ctx, `location.hash.includes('gen=1') && location.hash.includes('cmp=3')`)
	var link string
	must(t, chromedp.Run(ctx, chromedp.Evaluate(`location.href`, &link)))
	must(t, chromedp.Run(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(link)))
	overlays(t, ctx, false)
	waitFor(t, ctx, `arksaveMap.ready && arksaveMap.diff && arksaveMap.diff.cells.size === 2`)
	settled(t, ctx)
	expectShown(t, ctx, 1, 3)
	expectTinted(t, ctx, old, canvasShot(t, ctx), paintedG2, paintedG3)

	// Nothing compared, the slider's right end: the live generation.
	compare(t, ctx, "")
	slide(t, ctx, kb.End)
	waitFor(t, ctx, `arksaveMap.pinned === null && arksaveMap.generation === 3 && arksaveMap.world.generation === 3 && !arksaveMap.diff`)
	settled(t, ctx)
	expectShown(t, ctx, 3, 3)
	expectGeneration(t, ctx, dir, canvasShot(t, ctx), 3)

	// Shown generation 2 while the game saves generation 4: it stays on
	// screen; the live end then shows generation 4.
	slide(t, ctx, kb.Home)
	slide(t, ctx, kb.ArrowRight)
	waitFor(t, ctx, `arksaveMap.generation === 2 && arksaveMap.world.generation === 2`)
	fill(image.Pt(0, 1), terrain.Stone)
	waitFor(t, ctx, `arksaveMap.latest === 4 && arksaveMap.kept.length === 3`)
	settled(t, ctx)
	expectShown(t, ctx, 2, 4)
	expectGeneration(t, ctx, dir, canvasShot(t, ctx), 2)
	slide(t, ctx, kb.End)
	waitFor(t, ctx, `arksaveMap.pinned === null && arksaveMap.generation === 4 && arksaveMap.world.generation === 4`)
	settled(t, ctx)
	expectGeneration(t, ctx, dir, canvasShot(t, ctx), 4)
}

// waitFor polls the page until cond holds.
func waitFor(t *testing.T, ctx context.Context, cond string) {
	t.Helper()
	must(t, chromedp.Run(ctx, chromedp.Poll(cond, nil, chromedp.WithPollingInterval(20*time.Millisecond))))
}

// slide presses key on the time slider, as a user does with the keyboard.
func slide(t *testing.T, ctx context.Context, key string) {
	t.Helper()
	must(t, chromedp.Run(ctx, chromedp.Focus("#time", chromedp.ByID), chromedp.KeyEvent(key)))
}

// compare picks the generation the diff overlay compares with ("" for
// nothing) in the page's list, as a user does.
func compare(t *testing.T, ctx context.Context, value string) {
	t.Helper()
	must(t, chromedp.Run(ctx, chromedp.SetValue("#compare", value, chromedp.ByID),
		chromedp.Evaluate(`document.getElementById('compare').dispatchEvent(new Event('change'))`, nil)))
}

// expectShown checks the generation the page shows, the live one it
// knows, and what the slider says.
func expectShown(t *testing.T, ctx context.Context, gen, live uint64) {
	t.Helper()
	var st struct {
		Generation, Latest uint64
		Label              string
		Value, Max         string
	}
	must(t, chromedp.Run(ctx, chromedp.Evaluate(`({generation: arksaveMap.generation, latest: arksaveMap.latest,
		label: document.getElementById('time-label').textContent, value: document.getElementById('time').value, max: document.getElementById('time').max})`, &st)))
	want := fmt.Sprintf("generation %d, saved ", gen)
	if gen == live {
		want = fmt.Sprintf("live: generation %d", live)
	}
	expect(t, st.Generation == gen && st.Latest == live && strings.Contains(st.Label, want) && (gen == live) == (st.Value == st.Max),
		"the page shows %+v, want generation %d of live %d (%q)", st, gen, live, want)
}

// eachSample calls fn with each world pixel of the chunks around the
// origin, their border pixels left out (the diff overlay's outline), its
// chunk, and the screen pixel at its middle.
func eachSample(t *testing.T, ctx context.Context, fn func(c image.Point, wx, wy, sx, sy int)) {
	t.Helper()
	var o [2]float64
	must(t, chromedp.Run(ctx, chromedp.Evaluate(`arksaveMap.toScreen(0, 0)`, &o)))
	// Tiles are drawn from rounded corners, as JavaScript's Math.round
	// rounds: half a pixel up.
	ox, oy := int(math.Floor(o[0]+0.5)), int(math.Floor(o[1]+0.5))
	const n = savetest.ChunkSize
	for cy := histMin; cy <= histMax; cy++ {
		for cx := histMin; cx <= histMax; cx++ {
			for py := 1; py < n-1; py++ {
				for px := 1; px < n-1; px++ {
					wx, wy := cx*n+px, cy*n+py
					fn(image.Pt(cx, cy), wx, wy, ox+wx*histScale+histScale/2, oy+wy*histScale+histScale/2)
				}
			}
		}
	}
}

// expectGeneration checks that a screenshot shows generation gen as
// arksave render draws it, at every sampled pixel.
func expectGeneration(t *testing.T, ctx context.Context, dir string, shot *image.RGBA, gen uint64) {
	t.Helper()
	const n = savetest.ChunkSize
	region := image.Rect(histMin*n, histMin*n, (histMax+1)*n, (histMax+1)*n)
	d, err := savetool.InspectDir(dir, savetool.Options{})
	must(t, err)
	o := savetool.RenderOptions{Generator: savetest.Generator, Region: region}
	if d.Generations[0].Generation != gen {
		o.Generation = gen
	}
	want, _, err := savetool.RenderDir(dir, o)
	must(t, err)
	var same, all int
	var first string
	eachSample(t, ctx, func(_ image.Point, wx, wy, sx, sy int) {
		all++
		got, w := shot.RGBAAt(sx, sy), want.RGBAAt(wx-region.Min.X, wy-region.Min.Y)
		if got == w {
			same++
		} else if first == "" {
			first = fmt.Sprintf("world pixel %d,%d (screen %d,%d) is %v, generation %d's render %v", wx, wy, sx, sy, got, gen, w)
		}
	})
	t.Logf("generation %d: %d of %d sampled pixels as rendered", gen, same, all)
	expect(t, all > 20000 && same == all, "the page does not show generation %d: %d of %d sampled pixels as rendered; first: %s", gen, same, all, first)
}

// expectTinted checks that the overlay tints the sampled pixels of the
// chunks named, each the page's pixel under the overlay's translucent
// fill, and leaves every other pixel as it was.
func expectTinted(t *testing.T, ctx context.Context, before, after *image.RGBA, chunks ...image.Point) {
	t.Helper()
	var tinted, kept, bad int
	var first string
	eachSample(t, ctx, func(c image.Point, _, _, sx, sy int) {
		b, a := before.RGBAAt(sx, sy), after.RGBAAt(sx, sy)
		isChanged := c == chunks[0] || c == chunks[1]
		ok := a == b
		if isChanged {
			ok = blended(a.R, b.R, tint.R) && blended(a.G, b.G, tint.G) && blended(a.B, b.B, tint.B)
		}
		switch {
		case !ok:
			bad++
			if first == "" {
				first = fmt.Sprintf("chunk %v (changed %v), screen %d,%d: %v under the overlay, %v without", c, isChanged, sx, sy, a, b)
			}
		case isChanged:
			tinted++
		default:
			kept++
		}
	})
	t.Logf("overlay: %d pixels tinted, %d as they were, %d neither", tinted, kept, bad)
	expect(t, bad == 0 && tinted > 1500 && kept > 20000, "the overlay: %d pixels tinted, %d kept, %d wrong; first: %s", tinted, kept, bad, first)
}

// blended reports whether a channel under the overlay is the one without
// it under the tint's fill, within rounding.
func blended(got, under, fill uint8) bool {
	want := float64(under)*(1-tintAlpha) + float64(fill)*tintAlpha
	return math.Abs(float64(got)-want) <= 2
}
