package arksave_test

import (
	"errors"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/vfs"
)

// A save directory at the last generation it can number refuses every
// further save with ErrExhausted, saying so and naming Save As into a new
// directory, instead of failing on the name of a world file; the save stays
// loadable, and a Save As starts the new directory at generation 1.
func TestGenerationCounterExhausted(t *testing.T) {
	mem := vfs.NewMem()
	g := newGame(t, gameOpts{fs: mem, dir: "/save", radius: 1, autosave: &autosave.Config{Interval: time.Hour, MaxBackups: 1}})
	g.settle(t)
	g.paint(t, 0, 0, 1, 1, components.MakePixel(9, 0, 0, 0))
	must(t, g.waitSave(t, g.pers.Save()).Err)
	must(t, g.pers.Close())

	// The committed generation becomes the last one: its world file renamed
	// to match, the manifest rewritten with its checksum.
	d, err := savedir.OpenDirReadOnly(mem, "/save")
	must(t, err)
	m := d.Manifest()
	last := uint64(savedir.MaxGeneration)
	must(t, mem.Rename(path.Join("/save", m.World.Name), path.Join("/save", savedir.WorldName(last))))
	m.Generation, m.World.Name = last, savedir.WorldName(last)
	if m.Players != nil {
		must(t, mem.Rename(path.Join("/save", m.Players.Index.Name), path.Join("/save", savedir.PlayersName(last))))
		m.Players.Index.Name = savedir.PlayersName(last)
	}
	must(t, vfs.WriteFileAtomic(mem, "/save/manifest", m.Encode()))

	g = newGame(t, gameOpts{fs: mem, dir: "/save", load: true, radius: 1, autosave: &autosave.Config{Interval: time.Hour, MaxBackups: 1}})
	g.settle(t)
	g.paint(t, 0, 0, 2, 2, components.MakePixel(9, 0, 0, 0))
	res := g.waitSave(t, g.pers.Save())
	expect(t, errors.Is(res.Err, arksave.ErrExhausted), "a save after the last generation: %v", res.Err)
	for _, part := range []string{"generation counter is exhausted", "/save", "9223372036854775807", "SaveAs", "new directory"} {
		expect(t, strings.Contains(res.Err.Error(), part), "the error lacks %q: %v", part, res.Err)
	}
	expect(t, !strings.Contains(res.Err.Error(), "not a file name"), "the error blames a file name: %v", res.Err)
	expect(t, g.pers.Generation() == last, "generation after the refused save: %d", g.pers.Generation())

	res = g.waitSave(t, g.pers.SaveAs("/fresh"))
	must(t, res.Err)
	expect(t, res.Generation == 1 && g.pers.Dir() == "/fresh", "Save As from an exhausted directory: generation %d in %s", res.Generation, g.pers.Dir())
	res = g.waitSave(t, g.pers.Save())
	must(t, res.Err)
	expect(t, res.Generation == 2, "the next save in the new directory: generation %d", res.Generation)
}
