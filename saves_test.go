package arksave_test

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/vfs"
)

// slot plays ticks in the save at dir (loading it when it exists), saves
// and closes: the save's description says its name, play time and
// thumbnail.
func slot(t *testing.T, dir, name string, ticks int, thumb image.Image) {
	t.Helper()
	_, err := os.Stat(filepath.Join(dir, "manifest"))
	g := gametest.New(t, gametest.Opts{FS: vfs.OS, Dir: dir, Load: err == nil, Radius: 1, Plugin: func(p *arksave.Plugin) {
		p.Name = name
		if thumb != nil {
			p.Thumbnail = func(*ecs.World) image.Image { return thumb }
		}
	}})
	for range ticks {
		g.Tick()
	}
	must(t, g.WaitSave(t, g.Pers.Save()).Err)
	g.Pers.WaitIdle() // the description is written after the commit, between saves
	must(t, g.Pers.Close())
}

// A save's description (meta.json, thumbnail.png) follows every save:
// name, seed, times, play time across sessions, generation; ListSaves
// returns the slots of a folder newest first, and skips what is not a save.
func TestListSaves(t *testing.T) {
	root := t.TempDir()
	pic := image.NewRGBA(image.Rect(0, 0, 40, 20))
	for x := range 40 {
		pic.Set(x, 5, color.RGBA{200, 10, 10, 255})
	}
	slot(t, filepath.Join(root, "valley"), "The Valley", 60, pic)
	time.Sleep(5 * time.Millisecond) // distinct save times
	slot(t, filepath.Join(root, "caves"), "", 30, nil)
	time.Sleep(5 * time.Millisecond)
	slot(t, filepath.Join(root, "valley"), "The Valley", 60, pic) // a second session: play time adds up

	// Not saves: a plain folder, a file, a symbolic link to a save.
	must(t, os.MkdirAll(filepath.Join(root, "screenshots"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "notes.txt"), []byte("hi"), 0o644))
	must(t, os.Symlink(filepath.Join(root, "valley"), filepath.Join(root, "link")))
	// A save whose manifest is lost is listed, with the error that names the repair.
	slot(t, filepath.Join(root, "lost"), "Lost", 1, nil)
	slot(t, filepath.Join(root, "lost"), "Lost", 1, nil)
	must(t, os.Remove(filepath.Join(root, "lost", "manifest")))

	saves, err := arksave.ListSaves(root)
	must(t, err)
	var got []string
	for _, s := range saves {
		got = append(got, filepath.Base(s.Dir))
	}
	expect(t, fmt.Sprint(got) == "[valley caves lost]", "slots %v, want valley, caves, lost", got)
	v, c, l := saves[0], saves[1], saves[2]
	tick := arksave.DefaultTickDuration
	expect(t, v.Err == nil && v.Name == "The Valley" && v.Generation == 2 && v.Seed == 7, "valley: %+v", v)
	// Each session's ticks, and the ticks the save itself took.
	expect(t, v.PlayTime >= 120*tick && v.PlayTime < 240*tick, "valley played %v, want about 120 ticks of %v", v.PlayTime, tick)
	expect(t, v.Created.Before(v.LastSaved) && v.LastSaved.After(c.LastSaved), "valley's times: %+v, caves': %+v", v, c)
	expect(t, c.Err == nil && c.Name == "caves" && c.Thumbnail == "" && c.PlayTime >= 30*tick && c.PlayTime < 120*tick, "caves: %+v", c)
	expect(t, errors.Is(l.Err, arksave.ErrManifestLost), "lost: %+v", l)

	// The thumbnail is the game's picture.
	f, err := os.Open(v.Thumbnail)
	must(t, err)
	img, err := png.Decode(f)
	f.Close()
	must(t, err)
	r, g, b, _ := img.At(7, 5).RGBA()
	r2, _, _, _ := img.At(7, 6).RGBA()
	expect(t, img.Bounds().Dx() == 40 && r>>8 == 200 && g>>8 == 10 && b>>8 == 10 && r2 == 0, "thumbnail %v, pixel (7,5) %d %d %d", img.Bounds(), r>>8, g>>8, b>>8)

	// A damaged description costs the description, never the slot.
	must(t, os.WriteFile(filepath.Join(root, "caves", "meta.json"), []byte("{not json"), 0o644))
	saves, err = arksave.ListSaves(root)
	must(t, err)
	expect(t, len(saves) == 3 && saves[1].Generation == 1 && errors.Is(saves[1].Err, arksave.ErrCorrupt), "a damaged meta.json: %+v", saves[1])
	// Nor does one too large to be a description: it is not read whole.
	must(t, os.WriteFile(filepath.Join(root, "caves", "meta.json"), make([]byte, 70<<10), 0o644))
	saves, err = arksave.ListSaves(root)
	must(t, err)
	expect(t, len(saves) == 3 && errors.Is(saves[1].Err, arksave.ErrCorrupt) && strings.Contains(saves[1].Err.Error(), "at most"), "a 70 KiB meta.json: %+v", saves[1])
	// A description that is a symbolic link is not followed.
	must(t, os.Remove(filepath.Join(root, "caves", "meta.json")))
	must(t, os.Symlink(filepath.Join(root, "valley", "meta.json"), filepath.Join(root, "caves", "meta.json")))
	saves, err = arksave.ListSaves(root)
	must(t, err)
	expect(t, saves[1].Name == "caves" && errors.Is(saves[1].Err, arksave.ErrCorrupt), "a linked meta.json was read: %+v", saves[1])

	_, err = arksave.ListSaves(filepath.Join(root, "nowhere"))
	expect(t, errors.Is(err, arksave.ErrNoSave), "a root that does not exist: %v", err)
}

// A large thumbnail is scaled down to 512 pixels a side; a Thumbnail that
// panics costs the thumbnail, not the save.
func TestThumbnailBoundsAndPanics(t *testing.T) {
	root := t.TempDir()
	slot(t, filepath.Join(root, "big"), "big", 1, image.NewGray(image.Rect(0, 0, 2000, 1000)))
	saves, err := arksave.ListSaves(root)
	must(t, err)
	f, err := os.Open(saves[0].Thumbnail)
	must(t, err)
	cfg, err := png.DecodeConfig(f)
	f.Close()
	must(t, err)
	expect(t, cfg.Width <= 512 && cfg.Height <= 512 && cfg.Width >= 400, "thumbnail of %dx%d", cfg.Width, cfg.Height)

	g := gametest.New(t, gametest.Opts{FS: vfs.OS, Dir: filepath.Join(root, "panics"), Radius: 1, Plugin: func(p *arksave.Plugin) {
		p.Thumbnail = func(*ecs.World) image.Image { panic("no picture") }
	}})
	must(t, g.WaitSave(t, g.Pers.Save()).Err)
	g.Pers.WaitIdle()
	_, err = os.Stat(filepath.Join(root, "panics", "meta.json"))
	must(t, err)
	_, err = os.Stat(filepath.Join(root, "panics", "thumbnail.png"))
	expect(t, errors.Is(err, os.ErrNotExist), "a thumbnail after a panic: %v", err)
}

// A game's load menu: the slots of a folder, newest first.
func ExampleListSaves() {
	root, _ := os.MkdirTemp("", "arksave-slots-")
	defer os.RemoveAll(root)
	for _, name := range []string{"Meadow", "Valley"} {
		world := ecs.NewWorld()
		if _, err := (arksave.Plugin{Dir: filepath.Join(root, name), Name: "The " + name, Generator: hills{}}).Install(world); err != nil {
			fmt.Println(err)
			return
		}
		persistence := ecs.GetResource[arksave.Persistence](world)
		persistence.SaveNow()
		persistence.WaitIdle()
		persistence.Close()
		time.Sleep(2 * time.Millisecond)
	}
	saves, err := arksave.ListSaves(root)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range saves {
		fmt.Printf("%s (generation %d)\n", s.Name, s.Generation)
	}
	// Output:
	// The Valley (generation 1)
	// The Meadow (generation 1)
}
