package game

import (
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"time"

	"github.com/hajimehoshi/ebiten/v2"
	"github.com/hajimehoshi/ebiten/v2/inpututil"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/demo/hud"
)

// menu is the load menu (L): the save slots beside the current save, as
// arksave.ListSaves finds them, with the chosen slot's thumbnail.
type menu struct {
	saves  []arksave.SaveInfo
	sel    int
	thumbs map[string]*ebiten.Image // by thumbnail path; nil: none or unreadable
}

// openMenu lists the saves in the folder of the current save.
func (g *Game) openMenu() {
	cur := g.sim.Persistence.Dir()
	saves, err := arksave.ListSaves(filepath.Dir(cur))
	if err != nil {
		g.say("L: " + err.Error())
		return
	}
	g.menu = &menu{saves: saves, thumbs: map[string]*ebiten.Image{}}
	for i, s := range saves {
		if s.Dir == cur {
			g.menu.sel = i
		}
	}
}

// updateMenu handles the menu's keys: up and down choose, Enter loads the
// chosen save (the game saves there from then on), L or Esc close.
func (g *Game) updateMenu() {
	m := g.menu
	switch {
	case inpututil.IsKeyJustPressed(ebiten.KeyArrowUp) || inpututil.IsKeyJustPressed(ebiten.KeyW):
		m.sel = max(m.sel-1, 0)
	case inpututil.IsKeyJustPressed(ebiten.KeyArrowDown) || inpututil.IsKeyJustPressed(ebiten.KeyS):
		m.sel = min(m.sel+1, max(len(m.saves)-1, 0))
	case inpututil.IsKeyJustPressed(ebiten.KeyEnter) && len(m.saves) > 0:
		s := m.saves[m.sel]
		g.menu = nil
		if err := g.sim.LoadFrom(s.Dir); err != nil {
			g.say("load: " + err.Error())
			return
		}
		p := g.sim.Persistence
		g.say(fmt.Sprintf("loaded %s: generation %d of %s", s.Name, p.Generation(), p.Dir()))
	case inpututil.IsKeyJustPressed(ebiten.KeyL) || inpututil.IsKeyJustPressed(ebiten.KeyEscape):
		g.menu = nil
	}
}

// drawMenu draws the slots and the chosen one's thumbnail.
func (g *Game) drawMenu(screen *ebiten.Image) {
	m := g.menu
	lines := hud.Slots(m.saves, m.sel, time.Now())
	textPanel(screen, lines, 8, 28)
	if m.sel >= len(m.saves) {
		return
	}
	if img := m.thumbnail(m.saves[m.sel].Thumbnail); img != nil {
		var op ebiten.DrawImageOptions
		y := 28 + len(lines)*16 + 16
		op.GeoM.Translate(8, float64(y))
		panel(screen, 4, y-4, img.Bounds().Dx()+8, img.Bounds().Dy()+8)
		screen.DrawImage(img, &op)
	}
}

// thumbnail returns the picture at path, read once.
func (m *menu) thumbnail(path string) *ebiten.Image {
	if path == "" {
		return nil
	}
	if img, ok := m.thumbs[path]; ok {
		return img
	}
	m.thumbs[path] = nil
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	pic, err := png.Decode(f)
	if err != nil {
		return nil
	}
	m.thumbs[path] = ebiten.NewImageFromImage(pic)
	return m.thumbs[path]
}
