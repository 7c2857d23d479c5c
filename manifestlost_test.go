package arksave_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/vfs"
)

// A directory whose manifest is lost while a committed save's files remain
// is not "no save": every way in (Load, LoadOrCreate, Overwrite,
// Persistence.Load) fails with ErrManifestLost naming arksave repair, and
// nothing in the directory changes.
func TestManifestLostNamesRepair(t *testing.T) {
	mem := vfs.NewMem()
	g := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 1})
	g.Settle(t)
	for i := range 3 {
		g.Paint(t, 0, 0, i, i, 0x0203)
		must(t, g.WaitSave(t, g.Pers.Save()).Err)
	}
	must(t, g.Pers.Close())
	must(t, mem.Remove("/save/manifest"))
	before := gametest.Files(t, mem, "/save")

	check := func(what string, err error) {
		t.Helper()
		expect(t, errors.Is(err, arksave.ErrManifestLost), "%s: %v, want ErrManifestLost", what, err)
		expect(t, errors.Is(err, arksave.ErrCorrupt), "%s: %v, want it to match ErrCorrupt too", what, err)
		expect(t, !errors.Is(err, arksave.ErrNoSave), "%s: %v matches ErrNoSave", what, err)
		expect(t, err != nil && strings.Contains(err.Error(), "arksave repair /save"), "%s: %v does not name arksave repair", what, err)
		expect(t, err != nil && !strings.Contains(err.Error(), "first save"), "%s: %v calls a committed save's files a first save's", what, err)
	}
	for name, set := range map[string]func(*arksave.Plugin){
		"Load":         func(p *arksave.Plugin) { p.Load = true },
		"LoadOrCreate": func(p *arksave.Plugin) { p.LoadOrCreate = true },
		"Overwrite":    func(p *arksave.Plugin) { p.Overwrite = true },
	} {
		_, err := gametest.Install(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 1, Plugin: set})
		check(name, err)
	}
	other := gametest.New(t, gametest.Opts{FS: mem, Dir: "/other", Radius: 1})
	check("Persistence.Load", other.Pers.Load("/save"))
	must(t, other.Pers.Close())
	gametest.ExpectSameFiles(t, before, gametest.Files(t, mem, "/save"))

	// What a first save that never committed leaves is still "no save".
	fresh := vfs.NewMem()
	must(t, fresh.MkdirAll("/new"))
	f, err := fresh.Create(filepath.Join("/new", "world-1.pecs"))
	must(t, err)
	must(t, f.Close())
	_, err = gametest.Install(t, gametest.Opts{FS: fresh, Dir: "/new", Load: true, Radius: 1})
	expect(t, errors.Is(err, arksave.ErrNoSave) && !errors.Is(err, arksave.ErrManifestLost), "a first save's leftovers: %v", err)
}
