package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/savetest"
)

// While a game holds the save directory, repair, compact, restore and
// migrate refuse, naming the game's process and what works meanwhile;
// inspect, check, render and export work and change no file. Once the game
// has closed, the changing commands work.
func TestCommandsWhileTheGameHoldsTheSave(t *testing.T) {
	dir := fresh(t)
	g, err := savetest.Open(dir, true)
	must(t, err)
	defer g.Close()
	must(t, g.Save())
	before := files(t, dir)

	for _, cmd := range [][]string{{"repair"}, {"compact"}, {"restore", "--generation", "2"}, {"migrate"}} {
		code, stdout, stderr := arksave(append(cmd, dir)...)
		expectCode(t, 1, code, stderr+stdout)
		expectContains(t, stderr, "in use", fmt.Sprintf("pid %d", os.Getpid()), "since", "close the game first", "inspect, check, render and export")
	}
	png := filepath.Join(t.TempDir(), "map.png")
	for _, cmd := range [][]string{{"inspect"}, {"inspect", "--json"}, {"check"}, {"check", "--json"}, {"render", "-o", png}, {"export", "--json"}} {
		code, _, stderr := arksave(append(cmd, dir)...)
		expectCode(t, 0, code, stderr)
	}
	after := files(t, dir)
	for name, b := range before {
		if after[name] != b {
			t.Errorf("%s changed while the game held the save", name)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("%s appeared while the game held the save", name)
		}
	}

	must(t, g.Close())
	code, stdout, stderr := arksave("restore", "--generation", "3", dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "restored generation 3")
	code, _, stderr = arksave("compact", dir)
	expectCode(t, 0, code, stderr)
}

// files describes every file of a save directory (the lock file aside):
// size, modification time and content.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	must(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || fi.Name() == autosave.LockName {
			return err
		}
		data, err := os.ReadFile(p)
		out[p] = fmt.Sprint(fi.Size(), fi.ModTime().Format(time.RFC3339Nano), string(data))
		return err
	}))
	return out
}

// restore and compact on a manifest whose names lead outside the save
// directory refuse it as damage, naming the field, and leave the file
// outside as it was.
func TestCommandsRefuseNamesOutside(t *testing.T) {
	for _, field := range []string{"world.name", "chunks.name"} {
		t.Run(field, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "save")
			must(t, savetest.CopyDir(base, dir))
			canary := filepath.Join(root, "canary.pxsw")
			must(t, os.WriteFile(canary, []byte("canary"), 0o644))
			past := time.Now().Add(-time.Hour).Truncate(time.Second)
			must(t, os.Chtimes(canary, past, past))
			d, err := autosave.OpenDirReadOnly(nil, dir)
			must(t, err)
			m := d.Manifest()
			if field == "world.name" {
				m.World.Name = "../canary.pxsw"
			} else {
				m.Chunks.Name = "../canary.pxsw"
			}
			must(t, os.WriteFile(filepath.Join(dir, "manifest"), m.Encode(), 0o644))
			for _, cmd := range [][]string{{"restore", "--generation", "2"}, {"compact"}} {
				code, stdout, stderr := arksave(append(cmd, dir)...)
				expectCode(t, 1, code, stderr+stdout)
				expectContains(t, stderr, field, "arksave repair")
			}
			fi, err := os.Stat(canary)
			must(t, err)
			data, err := os.ReadFile(canary)
			must(t, err)
			if string(data) != "canary" || !fi.ModTime().Equal(past) || !strings.HasSuffix(canary, ".pxsw") {
				t.Fatalf("the file outside the save directory changed: %q, %v", data, fi.ModTime())
			}
		})
	}
}
