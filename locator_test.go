package arksave_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/vfs"
)

func TestLocatorResolves(t *testing.T) {
	root := t.TempDir()
	l := &arksave.Locator{
		Engine: filepath.Join(root, "engine"),
		Game:   filepath.Join(root, "game"),
		User:   filepath.Join(root, "user"),
		Worlds: filepath.Join(root, "worlds"),
	}
	if err := l.AddWorld("Valley", filepath.Join(root, "elsewhere", "valley")); err != nil {
		t.Fatal(err)
	}
	if err := l.AddDimension("Valley", "caves", ""); err != nil {
		t.Fatal(err)
	}
	if err := l.AddDimension("Valley", "sky", "levels/up"); err != nil {
		t.Fatal(err)
	}
	valley := filepath.Join(root, "elsewhere", "valley")
	for logical, want := range map[string]string{
		"engine/defaults.json":        filepath.Join(root, "engine", "defaults.json"),
		"game/textures/sand.png":      filepath.Join(root, "game", "textures", "sand.png"),
		"user/config.json":            filepath.Join(root, "user", "config.json"),
		"world/Valley":                valley,
		"world/Valley/world.json":     filepath.Join(valley, "world.json"),
		"world/Valley/dim/caves":      filepath.Join(valley, "dim", "caves"),
		"world/Valley/dim/sky/x.json": filepath.Join(valley, "levels", "up", "x.json"),
		"world/Valley/dim/deep":       filepath.Join(valley, "dim", "deep"), // not registered: the default place
		"world/Meadow/world.json":     filepath.Join(root, "worlds", "Meadow", "world.json"),
		"world/Meadow/dim/nether":     filepath.Join(root, "worlds", "Meadow", "dim", "nether"),
	} {
		got, err := l.Resolve(logical)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", logical, got, err, want)
		}
	}
	if got := l.Dimensions("Valley"); !slices.Equal(got, []string{"caves", "sky"}) {
		t.Errorf("Dimensions(Valley) = %q", got)
	}
	if got, err := l.Dimension("Valley", "sky"); err != nil || got != filepath.Join(valley, "levels", "up") {
		t.Errorf("Dimension(Valley, sky) = %q, %v", got, err)
	}
	if err := l.AddWorld("Valley", filepath.Join(root, "moved")); err != nil {
		t.Fatal(err)
	}
	if got, _ := l.Resolve("world/Valley/dim/sky"); got != filepath.Join(root, "moved", "levels", "up") {
		t.Errorf("after moving the world, its dimension resolves to %q", got)
	}
	l.RemoveWorld("Valley")
	if got, _ := l.World("Valley"); got != filepath.Join(root, "worlds", "Valley") {
		t.Errorf("a removed world resolves to %q, want the Worlds root's place", got)
	}
}

func TestLocatorRefuses(t *testing.T) {
	l := &arksave.Locator{User: t.TempDir()}
	for _, logical := range []string{
		"", "/etc/passwd", "user/../../etc/passwd", "user/./x", "user//x", "user/a\\..\\b",
		"saves/x", "engine/x", "world", "world/", "world/Valley", "world/../x", "user/x\x00y",
	} {
		if got, err := l.Resolve(logical); !errors.Is(err, arksave.ErrUnknownPath) {
			t.Errorf("Resolve(%q) = %q, %v; want ErrUnknownPath", logical, got, err)
		}
	}
	if err := l.AddWorld("..", "/tmp/x"); !errors.Is(err, arksave.ErrUnknownPath) {
		t.Errorf("AddWorld(..) = %v", err)
	}
	if err := l.AddWorld("a/b", "/tmp/x"); !errors.Is(err, arksave.ErrUnknownPath) {
		t.Errorf("AddWorld(a/b) = %v", err)
	}
	if err := l.AddWorld("W", ""); !errors.Is(err, arksave.ErrUnknownPath) {
		t.Errorf("AddWorld with no directory = %v", err)
	}
	if err := l.AddWorld("W", t.TempDir()); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"../out", "/abs", "a/../../b", "dim//x"} {
		if err := l.AddDimension("W", "d", sub); !errors.Is(err, arksave.ErrUnknownPath) {
			t.Errorf("AddDimension subpath %q = %v", sub, err)
		}
	}
	if err := l.AddDimension("Nobody", "d", ""); !errors.Is(err, arksave.ErrUnknownPath) {
		t.Errorf("AddDimension of an unknown world with no Worlds root = %v", err)
	}
	if _, err := l.Dimension("W", "../x"); !errors.Is(err, arksave.ErrUnknownPath) {
		t.Errorf("Dimension(W, ../x) = %v", err)
	}
	if _, err := arksave.NewLocator("a/b"); !errors.Is(err, arksave.ErrUnknownPath) {
		t.Errorf("NewLocator(a/b) = %v", err)
	}
}

func TestNewLocatorRoots(t *testing.T) {
	data := t.TempDir()
	t.Setenv("XDG_DATA_HOME", data)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(data, "config"))
	l, err := arksave.NewLocator("sandbox")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := l.World("one"); got != filepath.Join(data, "sandbox", "worlds", "one") {
		t.Errorf("World(one) = %q", got)
	}
	if cfg, err := os.UserConfigDir(); err == nil {
		if got, _ := l.Resolve("user/config.json"); got != filepath.Join(cfg, "sandbox", "config.json") {
			t.Errorf("user/config.json = %q", got)
		}
	}
	if _, err := l.Resolve("game/x"); !errors.Is(err, arksave.ErrUnknownPath) {
		t.Errorf("game/ without a Game root: %v", err)
	}
}

// A world and its dimension are save directories of their own: each
// saves, loads and cleans up without touching the other's files.
func TestLocatorWorldAndDimensionSaveApart(t *testing.T) {
	l := &arksave.Locator{Worlds: t.TempDir()}
	worldDir, _ := l.World("Valley")
	caveDir, _ := l.Resolve("world/Valley/dim/caves")
	pos := components.ChunkPos{X: 0, Y: 0}
	// session opens dir (loading its save after the first), checks the
	// chunk data it holds, sets it to mark and saves.
	session := func(dir string, load bool, mark string) {
		t.Helper()
		g := gametest.New(t, gametest.Opts{FS: vfs.OS, Dir: dir, Load: load, Radius: 1})
		defer g.Pers.Close()
		g.Settle(t)
		if load {
			got, err := g.Pers.ChunkData(pos)
			if err != nil || string(got) != mark {
				t.Fatalf("%s: chunk data %q, %v; want %q", dir, got, err, mark)
			}
		}
		if err := g.Pers.SetChunkData(pos, []byte(mark+"!")); err != nil {
			t.Fatal(err)
		}
		if err := g.Pers.SetChunkData(pos, []byte(mark)); err != nil {
			t.Fatal(err)
		}
		if res := g.WaitSave(t, g.Pers.Save()); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	session(worldDir, false, "world")
	session(caveDir, false, "caves")
	for range 3 { // several saves each, so that each cleans up after itself
		session(worldDir, true, "world")
		session(caveDir, true, "caves")
	}
	if _, err := os.Stat(filepath.Join(caveDir, "manifest")); err != nil {
		t.Errorf("the dimension's save inside the world's directory: %v", err)
	}
}

// A Locator places a game's worlds and their dimensions; each world and
// each dimension is a save directory of its own, given to its own Plugin.
func ExampleLocator() {
	root, _ := os.MkdirTemp("", "arksave-locator-")
	defer os.RemoveAll(root)
	l := &arksave.Locator{Worlds: filepath.Join(root, "worlds"), User: filepath.Join(root, "config")}
	_ = l.AddDimension("Valley", "sky", "levels/up")

	caves, _ := l.Resolve("world/Valley/dim/caves")
	world := ecs.NewWorld()
	if _, err := (arksave.Plugin{Dir: caves, Generator: hills{}}).Install(world); err != nil {
		fmt.Println(err)
		return
	}
	persistence := ecs.GetResource[arksave.Persistence](world)
	fmt.Println("saved the caves:", persistence.SaveNow().Err == nil)
	persistence.Close()

	for _, p := range []string{"user/keys.json", "world/Valley", "world/Valley/dim/caves", "world/Valley/dim/sky"} {
		dir, err := l.Resolve(p)
		rel, _ := filepath.Rel(root, dir)
		fmt.Println(filepath.ToSlash(rel), err)
	}
	// Output:
	// saved the caves: true
	// config/keys.json <nil>
	// worlds/Valley <nil>
	// worlds/Valley/dim/caves <nil>
	// worlds/Valley/levels/up <nil>
}
