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
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/vfs"
)

// A save directory at the last generation it can number refuses every
// further save with ErrExhausted, saying so and naming Save As into a new
// directory, instead of failing on the name of a world file; the save stays
// loadable, and a Save As starts the new directory at generation 1.
func TestGenerationCounterExhausted(t *testing.T) {
	mem := vfs.NewMem()
	g := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 1, Autosave: &autosave.Config{Interval: time.Hour, MaxBackups: 1}})
	g.Settle(t)
	g.Paint(t, 0, 0, 1, 1, components.MakePixel(9, 0, 0, 0))
	must(t, g.WaitSave(t, g.Pers.Save()).Err)
	must(t, g.Pers.Close())

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

	g = gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1, Autosave: &autosave.Config{Interval: time.Hour, MaxBackups: 1}})
	g.Settle(t)
	g.Paint(t, 0, 0, 2, 2, components.MakePixel(9, 0, 0, 0))
	res := g.WaitSave(t, g.Pers.Save())
	expect(t, errors.Is(res.Err, arksave.ErrExhausted), "a save after the last generation: %v", res.Err)
	for _, part := range []string{"generation counter is exhausted", "/save", "9223372036854775807", "SaveAs", "new directory"} {
		expect(t, strings.Contains(res.Err.Error(), part), "the error lacks %q: %v", part, res.Err)
	}
	expect(t, !strings.Contains(res.Err.Error(), "not a file name"), "the error blames a file name: %v", res.Err)
	expect(t, g.Pers.Generation() == last, "generation after the refused save: %d", g.Pers.Generation())

	res = g.WaitSave(t, g.Pers.SaveAs("/fresh"))
	must(t, res.Err)
	expect(t, res.Generation == 1 && g.Pers.Dir() == "/fresh", "Save As from an exhausted directory: generation %d in %s", res.Generation, g.Pers.Dir())
	res = g.WaitSave(t, g.Pers.Save())
	must(t, res.Err)
	expect(t, res.Generation == 2, "the next save in the new directory: generation %d", res.Generation)
}
