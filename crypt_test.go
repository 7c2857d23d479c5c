package arksave_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/testkit/gametest"
)

// Diary is a component whose text must not be readable in an encrypted save.
type Diary struct{ Text string }

const (
	worldSecret  = "the-dragon-hoard-is-under-the-old-oak"
	playerSecret = "ada-hid-the-crown-in-the-well"
)

// dirFiles returns every file of dir by its relative path, but the lock
// file, which every opening writes its holder into (savedir.LockName).
func dirFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "lock" {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = b
		return err
	})
	must(t, err)
	return files
}

// A game saves with Plugin.Key: no file holds its components' text, the
// save loads back exactly with the key (the world and a player), and is
// refused without it (ErrEncrypted) or with another (ErrWrongKey), leaving
// the directory as it was.
func TestPluginKeyEncryptsTheSave(t *testing.T) {
	dir := t.TempDir()
	key := bytes.Repeat([]byte{7}, 32)
	open := func(load bool, key []byte) (*ecs.World, *arksave.Persistence, error) {
		w := ecs.NewWorld()
		ecs.ComponentID[gametest.Position](w)
		ecs.ComponentID[Diary](w)
		ecs.ComponentID[components.Player](w)
		_, err := arksave.Plugin{Dir: dir, Load: load, Overwrite: !load, ChunkSize: gametest.ChunkSize, Key: key}.Install(w)
		if err != nil {
			return nil, nil, err
		}
		p := ecs.GetResource[arksave.Persistence](w)
		t.Cleanup(func() { p.Close() })
		return w, p, nil
	}
	w, p, err := open(false, key)
	must(t, err)
	ecs.NewMap2[gametest.Position, Diary](w).NewEntity(&gametest.Position{X: 3, Y: 4}, &Diary{Text: worldSecret})
	ecs.NewMap2[components.Player, Diary](w).NewEntity(&components.Player{ID: "ada"}, &Diary{Text: playerSecret})
	must(t, p.SaveNow().Err)
	must(t, p.Close())

	before := dirFiles(t, dir)
	for name, b := range before {
		for _, secret := range []string{worldSecret, playerSecret} {
			expect(t, !bytes.Contains(b, []byte(secret)), "%s holds %q in plaintext", name, secret)
		}
	}

	for _, c := range []struct {
		name string
		key  []byte
		want error
	}{
		{"no key", nil, archetype.ErrEncrypted},
		{"another key", bytes.Repeat([]byte{8}, 32), archetype.ErrWrongKey},
		{"a 16-byte key", key[:16], archetype.ErrWrongKey},
	} {
		_, _, err := open(true, c.key)
		expect(t, errors.Is(err, c.want) && !errors.Is(err, arksave.ErrCorrupt), "%s: %v, want %v", c.name, err, c.want)
		if c.key == nil {
			expect(t, err != nil && strings.Contains(err.Error(), "Plugin.Key"), "no key: the error does not name Plugin.Key: %v", err)
		}
		after := dirFiles(t, dir)
		expect(t, len(after) == len(before), "%s: %d files, %d before", c.name, len(after), len(before))
		for name, b := range before {
			expect(t, bytes.Equal(after[name], b), "%s: %s changed", c.name, name)
		}
	}

	// Persistence.Load of the encrypted save by a game without the key (or
	// with another) is refused the same way, and its own world stays.
	other := t.TempDir()
	for _, k := range [][]byte{nil, bytes.Repeat([]byte{9}, 32)} {
		w3 := ecs.NewWorld()
		ecs.ComponentID[gametest.Position](w3)
		ecs.ComponentID[Diary](w3)
		_, err := arksave.Plugin{Dir: other, Overwrite: true, ChunkSize: gametest.ChunkSize, Key: k}.Install(w3)
		must(t, err)
		p3 := ecs.GetResource[arksave.Persistence](w3)
		mine := ecs.NewMap1[Diary](w3).NewEntity(&Diary{Text: "mine"})
		err = p3.Load(dir)
		want := archetype.ErrEncrypted
		if k != nil {
			want = archetype.ErrWrongKey
		}
		expect(t, errors.Is(err, want), "Persistence.Load with key %v: %v, want %v", k != nil, err, want)
		expect(t, w3.Alive(mine) && ecs.NewMap[Diary](w3).Get(mine).Text == "mine", "the refused Load changed the world")
		must(t, p3.Close())
	}
	after := dirFiles(t, dir)
	for name, b := range before {
		expect(t, bytes.Equal(after[name], b), "after Persistence.Load: %s changed", name)
	}

	w2, p2, err := open(true, key)
	must(t, err)
	q := ecs.NewFilter2[gametest.Position, Diary](w2).Query()
	n := 0
	for q.Next() {
		pos, d := q.Get()
		expect(t, *pos == gametest.Position{X: 3, Y: 4} && d.Text == worldSecret, "loaded %+v %+v", *pos, *d)
		n++
	}
	expect(t, n == 1, "%d entities loaded", n)
	created, err := p2.LoadPlayer("ada")
	must(t, err)
	expect(t, len(created) == 1 && ecs.NewMap[Diary](w2).Get(created[0]).Text == playerSecret, "player ada: %v", created)
}

// A game that encrypts its saves keeps the key apart from them (here in an
// environment variable) and gives the same key at every start.
func ExamplePlugin_encrypted() {
	dir, _ := os.MkdirTemp("", "encrypted")
	defer os.RemoveAll(dir)
	os.Setenv("GAME_SAVE_KEY", strings.Repeat("c0ffee", 10)+"c0ff")
	defer os.Unsetenv("GAME_SAVE_KEY")

	key, err := hex.DecodeString(os.Getenv("GAME_SAVE_KEY")) // 64 hexadecimal characters
	if err != nil {
		panic(err)
	}
	world := ecs.NewWorld()
	ecs.ComponentID[Diary](world)
	if _, err := (arksave.Plugin{Dir: dir, Key: key}).Install(world); err != nil {
		panic(err)
	}
	ecs.NewMap1[Diary](world).NewEntity(&Diary{Text: "dear diary"})
	p := ecs.GetResource[arksave.Persistence](world)
	fmt.Println("saved:", p.SaveNow().Err)
	p.Close()

	world = ecs.NewWorld()
	ecs.ComponentID[Diary](world)
	_, err = arksave.Plugin{Dir: dir, Load: true, Key: key}.Install(world)
	fmt.Println("loaded:", err)
	ecs.GetResource[arksave.Persistence](world).Close()

	_, err = arksave.Plugin{Dir: dir, Load: true}.Install(ecs.NewWorld())
	fmt.Println("without the key:", errors.Is(err, archetype.ErrEncrypted))
	// Output:
	// saved: <nil>
	// loaded: <nil>
	// without the key: true
}
