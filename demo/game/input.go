package game

import (
	"github.com/arksave/arksave/demo/bodies"
	"github.com/arksave/arksave/demo/sand"
	"github.com/arksave/arksave/demo/sim"
	"github.com/hajimehoshi/ebiten/v2"
	"github.com/hajimehoshi/ebiten/v2/inpututil"
)

// Actions are the requests of one frame that are not world commands.
type Actions struct {
	ToggleOverlay bool // F3
	Save          bool // F5
	SaveAs        bool // F6
	Load          bool // F9
	Menu          bool // L: the load menu
	Quit          bool // Esc
}

// Or returns the actions of a and b together.
func (a Actions) Or(b Actions) Actions {
	return Actions{
		ToggleOverlay: a.ToggleOverlay || b.ToggleOverlay, Save: a.Save || b.Save,
		SaveAs: a.SaveAs || b.SaveAs, Load: a.Load || b.Load, Menu: a.Menu || b.Menu, Quit: a.Quit || b.Quit,
	}
}

// Ticks at which -autoplay presses the save keys, counted from the start of
// the session: F5 saves, F9 reloads that save (the world goes back to it
// and play continues from there), F6 saves as a new directory beside the
// current one, which the game then saves to.
const (
	AutoSaveTick   = 30
	AutoLoadTick   = 90
	AutoSaveAsTick = 120
)

// AutoKeys returns the keys -autoplay presses at session tick t.
func AutoKeys(t uint64) Actions {
	return Actions{Save: t == AutoSaveTick, Load: t == AutoLoadTick, SaveAs: t == AutoSaveAsTick}
}

// Input turns the keyboard and mouse into the tick's commands.
type Input struct {
	Material int // index into sand.Paintable
	Radius   int
	next     bodies.Kind
}

// NewInput returns the input with sand selected and a middling brush.
func NewInput() *Input { return &Input{Radius: 6, next: bodies.Crate} }

const (
	panSpeed  = 6 // world pixels per tick
	maxRadius = 40
)

var materialKeys = []ebiten.Key{ebiten.Key1, ebiten.Key2, ebiten.Key3, ebiten.Key4, ebiten.Key5, ebiten.Key6, ebiten.Key7, ebiten.Key8, ebiten.Key9}

// Selected returns the material the brush paints.
func (in *Input) Selected() sand.Material { return sand.Paintable[in.Material] }

// Update reads this frame's input into c. (x0, y0) is the world pixel at
// the top-left of the screen, which maps one screen pixel to one world pixel.
func (in *Input) Update(c *sim.Commands, x0, y0 int) Actions {
	var a Actions
	a.ToggleOverlay = inpututil.IsKeyJustPressed(ebiten.KeyF3)
	a.Save = inpututil.IsKeyJustPressed(ebiten.KeyF5)
	a.SaveAs = inpututil.IsKeyJustPressed(ebiten.KeyF6)
	a.Load = inpututil.IsKeyJustPressed(ebiten.KeyF9)
	a.Menu = inpututil.IsKeyJustPressed(ebiten.KeyL)
	a.Quit = inpututil.IsKeyJustPressed(ebiten.KeyEscape)

	speed := float64(panSpeed)
	if ebiten.IsKeyPressed(ebiten.KeyShift) {
		speed *= 4
	}
	if ebiten.IsKeyPressed(ebiten.KeyA) || ebiten.IsKeyPressed(ebiten.KeyArrowLeft) {
		c.PanX -= speed
	}
	if ebiten.IsKeyPressed(ebiten.KeyD) || ebiten.IsKeyPressed(ebiten.KeyArrowRight) {
		c.PanX += speed
	}
	if ebiten.IsKeyPressed(ebiten.KeyW) || ebiten.IsKeyPressed(ebiten.KeyArrowUp) {
		c.PanY -= speed
	}
	if ebiten.IsKeyPressed(ebiten.KeyS) || ebiten.IsKeyPressed(ebiten.KeyArrowDown) {
		c.PanY += speed
	}

	for i, k := range materialKeys[:len(sand.Paintable)] {
		if inpututil.IsKeyJustPressed(k) {
			in.Material = i
		}
	}
	_, wheel := ebiten.Wheel()
	switch {
	case wheel > 0 || inpututil.IsKeyJustPressed(ebiten.KeyBracketRight):
		in.Radius = min(in.Radius+1, maxRadius)
	case wheel < 0 || inpututil.IsKeyJustPressed(ebiten.KeyBracketLeft):
		in.Radius = max(in.Radius-1, 0)
	}

	mx, my := ebiten.CursorPosition()
	wx, wy := x0+mx, y0+my
	switch {
	case ebiten.IsMouseButtonPressed(ebiten.MouseButtonLeft):
		c.Brush = sim.Brush{Active: true, X: wx, Y: wy, Radius: in.Radius, Material: in.Selected()}
	case ebiten.IsMouseButtonPressed(ebiten.MouseButtonRight):
		c.Brush = sim.Brush{Active: true, X: wx, Y: wy, Radius: in.Radius, Erase: true}
	}
	if inpututil.IsKeyJustPressed(ebiten.KeyB) {
		c.Drop = sim.Drop{Active: true, X: wx, Y: wy, Kind: in.next}
		if in.next == bodies.Crate {
			in.next = bodies.Rock
		} else {
			in.next = bodies.Crate
		}
	}
	return a
}
