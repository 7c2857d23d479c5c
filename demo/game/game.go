// Package game is the demo's window: an Ebiten game around a sim.Sim.
//
// Game.Update advances one fixed tick (60 a second) and never reads the
// wall clock for game logic; Game.Draw only reads the world, fills a pixel
// buffer, hands it to WritePixels and draws the overlay and, while arksave
// writes a save, a progress bar. Input lives in input.go: F5 asks arksave
// for a save, F6 for a save into a new directory beside the current one,
// F9 reloads the last save (sim.Sim.Load). Closing the window, Ctrl-C or
// SIGTERM makes the final save, then ends the game with ebiten.Termination.
package game

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/demo/cli"
	"github.com/arksave/arksave/demo/hud"
	"github.com/arksave/arksave/demo/render"
	"github.com/arksave/arksave/demo/sand"
	"github.com/arksave/arksave/demo/sim"
	"github.com/hajimehoshi/ebiten/v2"
	"github.com/hajimehoshi/ebiten/v2/ebitenutil"
	"github.com/hajimehoshi/ebiten/v2/vector"
)

// Screen size in world pixels; the window shows it at Options.Zoom.
const (
	ScreenW = 640
	ScreenH = 360
)

// Game is the demo in a window.
type Game struct {
	opts    cli.Options
	sim     *sim.Sim
	input   *Input
	script  *sim.Script // -autoplay
	menu    *menu       // the load menu, while open (L)
	render  *render.Renderer
	pixels  []byte
	overlay bool
	log     io.Writer

	toast      string // a short message at the top of the screen
	toastTicks int
	requests   []request // F5 and F6 saves not yet finished

	shot     []byte // the captured screen, written by the next Update
	shotDone bool
	quit     bool
	closed   bool
	stop     <-chan struct{} // closed by Ctrl-C or SIGTERM: quit as if the window closed
}

// request is a save the player asked for, shown when it finishes.
type request struct {
	h    *arksave.SaveHandle
	what string
}

// New returns the game around s, a world built from o (o.Config).
func New(o cli.Options, s *sim.Sim, log io.Writer) *Game {
	g := &Game{
		opts: o, sim: s, input: NewInput(), log: log,
		render: render.New(s.World, s.Config.ChunkSize, s.Config.Seed),
		pixels: make([]byte, ScreenW*ScreenH*4),
	}
	g.overlay = o.Overlay
	if o.Menu {
		g.openMenu()
	}
	if o.Autoplay {
		g.script = sim.NewScript(s)
	}
	return g
}

// Run builds the world (a new one in -save, or its last save with -load),
// opens the window and plays until it is closed; closing saves once more.
func Run(o cli.Options) error {
	cli.Waiting(os.Stderr, o)
	conf := o.Config(ScreenW, ScreenH)
	var g *Game
	// Saving stopped or resumed: on screen and on stderr.
	conf.Save.OnSaving = func(line string) {
		if g != nil {
			g.say(line)
			return
		}
		fmt.Fprintf(os.Stderr, "demo: %s\n", line)
	}
	s, err := sim.New(conf)
	if err != nil {
		return err
	}
	g = New(o, s, os.Stderr)
	if o.Load {
		g.logf("continuing %s at generation %d (world tick %d)", s.Persistence.Dir(), s.Persistence.Generation(), s.Tick())
	}
	stop, release := cli.OnSignal(os.Stderr)
	defer release()
	g.stop = stop
	cli.Ready(os.Stderr, s)
	ebiten.SetWindowSize(ScreenW*o.Zoom, ScreenH*o.Zoom)
	ebiten.SetWindowTitle("arksave falling-sand demo")
	ebiten.SetWindowClosingHandled(true)
	ebiten.SetTPS(60)
	err = ebiten.RunGame(g)
	if cerr := g.close(); cerr != nil && err == nil {
		err = cerr
	}
	return err
}

// origin returns the world pixel at the screen's top-left corner.
func (g *Game) origin() (int, int) {
	f := g.sim.Focus()
	return int(f.X) - ScreenW/2, int(f.Y) - ScreenH/2
}

// Update advances the world by one tick.
func (g *Game) Update() error {
	if g.shot != nil {
		g.writeScreenshot()
	}
	select {
	case <-g.stop:
		g.quit = true
	default:
	}
	if ebiten.IsWindowBeingClosed() || g.quit {
		if err := g.close(); err != nil {
			return err
		}
		return ebiten.Termination
	}
	x0, y0 := g.origin()
	var a Actions
	if g.menu != nil {
		g.updateMenu() // the world plays on; the keys are the menu's
	} else {
		a = g.input.Update(g.sim.Commands(), x0, y0)
	}
	if a.Menu {
		g.openMenu()
	}
	if g.script != nil {
		a = a.Or(AutoKeys(g.sim.Ticks))
	}
	g.actions(a)
	if g.script != nil {
		g.script.Plan(g.sim.Tick(), g.sim.Commands())
	}
	g.sim.Step()
	g.finished()
	if g.toastTicks > 0 {
		g.toastTicks--
	}
	if g.opts.Ticks > 0 && g.opts.Screenshot == "" && g.sim.Ticks >= uint64(g.opts.Ticks) {
		g.quit = true
	}
	return nil
}

// actions carries out the frame's requests that are not world commands.
// F5 and F6 ask arksave for a save (the game keeps running while it is
// written; finished reports it); F9 reloads the last save at once.
func (g *Game) actions(a Actions) {
	p := g.sim.Persistence
	if a.ToggleOverlay {
		g.overlay = !g.overlay
	}
	if a.Save { // F5
		g.requests = append(g.requests, request{p.Save(), "F5: save"})
		g.say("F5: saving to " + p.Dir())
	}
	if a.SaveAs { // F6
		dir := saveAsDir(p.Dir())
		g.requests = append(g.requests, request{p.SaveAs(dir), "F6: save as"})
		g.say("F6: saving as " + dir)
	}
	if a.Load { // F9
		if err := g.sim.Load(); err != nil {
			g.say("F9: " + err.Error())
		} else {
			g.say(fmt.Sprintf("F9: loaded generation %d of %s (world tick %d)", p.Generation(), p.Dir(), g.sim.Tick()))
		}
	}
	if a.Quit {
		g.quit = true
	}
}

// finished reports the requested saves that finished this tick.
func (g *Game) finished() {
	kept := g.requests[:0]
	for _, r := range g.requests {
		if !r.h.IsComplete() {
			kept = append(kept, r)
			continue
		}
		if res := r.h.Result(); res.Err != nil {
			g.say(r.what + " failed: " + res.Err.Error())
		} else {
			g.say(fmt.Sprintf("%s: generation %d of %s, %s in %.1f ms", r.what, res.Generation, res.Dir, hud.Bytes(uint64(res.BytesWritten)), float64(res.Duration.Microseconds())/1000))
		}
	}
	g.requests = kept
}

// saveAsDir picks a fresh directory beside dir for Save As.
func saveAsDir(dir string) string {
	for i := 2; ; i++ {
		d := fmt.Sprintf("%s-%d", dir, i)
		if _, err := os.Stat(d); os.IsNotExist(err) {
			return d
		}
	}
}

// say shows msg on screen for three seconds and logs it.
func (g *Game) say(msg string) {
	g.toast, g.toastTicks = msg, 180
	g.logf("%s", msg)
}

func (g *Game) logf(format string, args ...any) {
	if g.log != nil {
		fmt.Fprintf(g.log, "demo: "+format+"\n", args...)
	}
}

// close makes the final save, once, and releases the save directory.
func (g *Game) close() error {
	if g.closed {
		return nil
	}
	g.closed = true
	res, err := g.sim.Close()
	g.finished() // saves asked for just before closing finished in Close
	switch {
	case err != nil:
		g.logf("final save: %v", err)
		return err
	case res != nil:
		g.logf("final save: generation %d of %s, %s in %.1f ms", res.Generation, res.Dir, hud.Bytes(uint64(res.BytesWritten)), float64(res.Duration.Microseconds())/1000)
	}
	return nil
}

// Draw renders the world around the camera and the overlay.
func (g *Game) Draw(screen *ebiten.Image) {
	x0, y0 := g.origin()
	g.render.Render(g.pixels, x0, y0, ScreenW, ScreenH)
	g.drawCursor()
	screen.WritePixels(g.pixels)

	g.drawHint(screen)
	if g.overlay {
		g.drawOverlay(screen)
	}
	g.drawSaving(screen)
	if g.menu != nil {
		g.drawMenu(screen)
	}
	if g.toastTicks > 0 {
		panel(screen, 4, 4, len(g.toast)*6+8, 20)
		ebitenutil.DebugPrintAt(screen, g.toast, 8, 6)
	}

	if g.opts.Screenshot != "" && !g.shotDone && g.shot == nil && g.sim.Ticks >= uint64(g.opts.Ticks) {
		g.shot = make([]byte, ScreenW*ScreenH*4)
		screen.ReadPixels(g.shot)
	}
}

// Layout keeps one screen pixel per world pixel; Ebiten scales to the window.
func (g *Game) Layout(outsideWidth, outsideHeight int) (int, int) { return ScreenW, ScreenH }

// drawCursor outlines the brush in the pixel buffer.
func (g *Game) drawCursor() {
	mx, my := ebiten.CursorPosition()
	r := g.input.Radius
	for k := 0; k < 64; k++ {
		dx, dy := circle(k, r)
		x, y := mx+dx, my+dy
		if x < 0 || y < 0 || x >= ScreenW || y >= ScreenH {
			continue
		}
		i := (y*ScreenW + x) * 4
		copy(g.pixels[i:i+4], []byte{0xff, 0xff, 0xff, 0xff})
	}
}

var (
	panelColor = color.RGBA{0x10, 0x12, 0x18, 0xc0}
	barBack    = color.RGBA{0x30, 0x34, 0x40, 0xff}
	barFill    = color.RGBA{0x5c, 0xc8, 0x6a, 0xff}
)

func panel(screen *ebiten.Image, x, y, w, h int) {
	vector.DrawFilledRect(screen, float32(x), float32(y), float32(w), float32(h), panelColor, false)
}

func (g *Game) drawHint(screen *ebiten.Image) {
	m := g.input.Selected()
	hint := hud.Hint(sand.Materials[m].Name, g.input.Radius)
	y := ScreenH - 20
	panel(screen, 0, y, ScreenW, 20)
	c := sand.Shade(m, 180)
	vector.DrawFilledRect(screen, 6, float32(y+5), 10, 10, c, false)
	ebitenutil.DebugPrintAt(screen, hint, 22, y+2)
}

func (g *Game) drawOverlay(screen *ebiten.Image) {
	loaded, _ := g.sim.Chunks()
	f := g.sim.Focus()
	bs := g.sim.Bodies.Stats()
	lines := hud.Lines(hud.Info{
		FPS: ebiten.ActualFPS(), TPS: ebiten.ActualTPS(), Tick: g.sim.Ticks, WorldTick: g.sim.Tick(),
		Loaded: loaded, Tiles: g.sim.Sand.Stats().Tiles,
		Bodies: bs.Bodies, Awake: bs.Awake, CameraX: f.X, CameraY: f.Y, ChunkSize: g.sim.Config.ChunkSize,
		Save: g.sim.Persistence.Status(),
	})
	textPanel(screen, lines, 4, 28)
	keys := strings.Split(hud.Keys, "\n")
	textPanel(screen, keys, 4, ScreenH-24-len(keys)*16-8)
}

// textPanel draws lines of text on a dark panel with its top-left at (x, y).
func textPanel(screen *ebiten.Image, lines []string, x, y int) {
	w := 0
	for _, l := range lines {
		w = max(w, len(l))
	}
	panel(screen, x, y, w*6+12, len(lines)*16+8)
	for i, l := range lines {
		ebitenutil.DebugPrintAt(screen, l, x+6, y+4+i*16)
	}
}

// drawSaving shows a progress bar at the top right while a save runs.
func (g *Game) drawSaving(screen *ebiten.Image) {
	st := g.sim.Persistence.State() // arksave's autosave.State
	if !st.InProgress {
		return
	}
	const w, h = 120, 8
	x, y := ScreenW-w-8, 8
	panel(screen, x-54, y-4, w+62, h+8+4)
	ebitenutil.DebugPrintAt(screen, "saving", x-50, y-6)
	vector.DrawFilledRect(screen, float32(x), float32(y), w, h, barBack, false)
	vector.DrawFilledRect(screen, float32(x), float32(y), float32(w*min(max(st.Progress, 0), 1)), h, barFill, false)
}

// writeScreenshot writes the captured screen, scaled by the zoom as the
// window shows it, to the -screenshot file and asks the game to end.
func (g *Game) writeScreenshot() {
	z := g.opts.Zoom
	img := image.NewRGBA(image.Rect(0, 0, ScreenW*z, ScreenH*z))
	for y := 0; y < ScreenH*z; y++ {
		row := img.Pix[y*img.Stride : (y+1)*img.Stride]
		src := g.shot[(y/z)*ScreenW*4 : (y/z+1)*ScreenW*4]
		for x := 0; x < ScreenW*z; x++ {
			copy(row[x*4:x*4+4], src[(x/z)*4:])
		}
	}
	g.shot, g.shotDone, g.quit = nil, true, true
	if err := os.MkdirAll(filepath.Dir(g.opts.Screenshot), 0o755); err != nil {
		fmt.Fprintln(g.log, "demo: screenshot:", err)
		return
	}
	f, err := os.Create(g.opts.Screenshot)
	if err == nil {
		err = png.Encode(f, img)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(g.log, "demo: screenshot:", err)
	}
}

// circle returns the k-th of 64 points on a circle of radius r.
func circle(k, r int) (int, int) {
	// an octagon-ish outline from a small table keeps Draw free of trigonometry
	dx := cosTable[k] * float64(r)
	dy := sinTable[k] * float64(r)
	return int(dx + 0.5*sign(dx)), int(dy + 0.5*sign(dy))
}

func sign(v float64) float64 {
	if v < 0 {
		return -1
	}
	return 1
}
