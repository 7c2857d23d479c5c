package e2e_test

import (
	"context"
	"image"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/demo/terrain"
	"github.com/arksave/arksave/internal/testkit/savetest"
)

// The map page in a real browser draws regional entities that are not
// pixel bodies (the demo's crates and rocks are bodies, so the test makes
// a save of its own) as markers with their ids, shows one's components on a
// click, and moves a marker when a new generation moves its entity; a
// player with a position is on the map too.
func TestRegionalEntitiesInBrowser(t *testing.T) {
	chromium(t)
	dir := filepath.Join(t.TempDir(), "world")
	g, err := savetest.OpenRegional(nil, dir, 64, terrain.Generator{})
	must(t, err)
	t.Cleanup(func() { g.Close() })
	lamp := g.Crate(102, 90, 30, "lamp", ecs.Entity{})
	g.Crate(101, 20, 24, "rope", lamp)
	g.Beacon(103, -40, 10)
	ecs.NewMap2[components.Player, savetest.Position](g.W).NewEntity(&components.Player{ID: "ada"}, &savetest.Position{X: 50, Y: 60})
	must(t, g.Save())
	ts := serveMap(t, dir)
	ctx, cancel := context.WithTimeout(browser(t, context.Background()), 2*time.Minute)
	defer cancel()
	must(t, chromedp.Run(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(ts.URL+"/#x=20&y=24&scale=2")))
	overlays(t, ctx, true)
	settled(t, ctx)
	must(t, chromedp.Run(ctx, chromedp.Poll(`arksaveMap.entities.filter(e => e.kind === 'entity').length === 3 && arksaveMap.entities.some(e => e.kind === 'player')`, nil,
		chromedp.WithPollingInterval(20*time.Millisecond))))

	// The marker: the map's green around the crate, none before the page
	// knew of it (the same place with the entities hidden).
	var at [2]float64
	must(t, chromedp.Run(ctx, chromedp.Evaluate(`arksaveMap.toScreen(20, 24)`, &at)))
	box := image.Rect(int(at[0])-9, int(at[1])-9, int(at[0])+10, int(at[1])+10)
	shown := greens(canvasShot(t, ctx), box)
	overlays(t, ctx, false)
	settled(t, ctx)
	hidden := greens(canvasShot(t, ctx), box)
	overlays(t, ctx, true)
	settled(t, ctx)
	t.Logf("marker of crate 101: %d green pixels in %v, %d with the entities hidden", shown, box, hidden)
	expect(t, shown >= 8 && hidden == 0, "marker of crate 101: %d green pixels shown, %d hidden", shown, hidden)

	// A click on it shows its components as the export gives them, and its
	// link to crate 102 by stable id.
	text := clickAndRead(t, ctx, 20, 24, `[data-entity="entity:101"]`)
	for _, want := range []string{"regional entity 101", "position\n20.0, 24.0", "X and Y of", "Crate", `"Label": "rope"`, "stable 102"} {
		expect(t, strings.Contains(text, want), "entity info lacks %q:\n%s", want, text)
	}
	// The beacon, whose position the map cannot read, is at its chunk's
	// centre, and says so.
	text = clickAndRead(t, ctx, -32, 32, `[data-entity="entity:103"]`)
	expect(t, strings.Contains(text, "not found: the centre of its chunk"), "beacon info:\n%s", text)
	// A player with a position is on the map too.
	text = clickAndRead(t, ctx, 50, 60, `[data-entity="player:ada"]`)
	expect(t, strings.Contains(text, "player ada") && strings.Contains(text, "position\n50.0, 60.0") && strings.Contains(text, `"ID": "ada"`), "player info:\n%s", text)

	// The game moves the lamp and saves: the page follows and moves its
	// marker.
	ecs.NewMap1[savetest.Crate](g.W).Get(lamp).X = 100
	must(t, g.Save())
	must(t, chromedp.Run(ctx, chromedp.Poll(`arksaveMap.generation === 2 && arksaveMap.entities.some(e => e.kind === 'entity' && e.id === '102' && e.x === 100)`, nil,
		chromedp.WithPollingInterval(20*time.Millisecond))))
	text = clickAndRead(t, ctx, 100, 30, `[data-entity="entity:102"]`)
	expect(t, strings.Contains(text, "position\n100.0, 30.0") && strings.Contains(text, "generation\n2"), "moved lamp:\n%s", text)
}

// greens counts the pixels of r in img near the colour of regional
// entities' markers (#7ee787).
func greens(img *image.RGBA, r image.Rectangle) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := img.RGBAAt(x, y)
			if abs(int(c.R)-0x7e) < 40 && abs(int(c.G)-0xe7) < 40 && abs(int(c.B)-0x87) < 40 {
				n++
			}
		}
	}
	return n
}
