package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/testkit/savetest"
	"github.com/arksave/arksave/internal/testkit/terrain"
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
		if err != nil || fi.IsDir() || fi.Name() == savedir.LockName {
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
			d, err := savedir.OpenDirReadOnly(nil, dir)
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

// acked is a save the game was told committed, and the pixel it painted
// into it.
type acked struct {
	gen uint64
	px  components.Pixel
}

// playAndSave paints one pixel and saves, again and again, until stop is
// closed, as a game does; it counts the acknowledged saves in n and
// returns them.
func playAndSave(g *savetest.Game, stop <-chan struct{}, n *atomic.Int64) ([]acked, error) {
	var acks []acked
	for i := 0; ; i++ {
		select {
		case <-stop:
			return acks, nil
		default:
		}
		px := components.MakePixel(terrain.Water, uint8(i), 0, 0)
		if err := g.Paint(0, 0, 3, 3, px); err != nil {
			return acks, err
		}
		g.Tick()
		r := g.Pers.SaveNow()
		if r.Err != nil {
			return acks, fmt.Errorf("save %d: %w", i, r.Err)
		}
		acks = append(acks, acked{r.Generation, px})
		n.Add(1)
	}
}

// tamperLock removes the lock file of dir (even rounds) or renames another
// file over it (odd ones).
func tamperLock(dir string, round int) error {
	lock := filepath.Join(dir, savedir.LockName)
	if round%2 == 0 {
		return os.Remove(lock)
	}
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, []byte("not a lock\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(other, lock)
}

// Whatever happens to the lock file while a game saves (removed, or another
// file renamed over it), a second game, compact, restore, repair and
// migrate are refused; every save the game was told committed stays
// committed: the last one is the save's generation with the pixel it
// painted, the ones before it are its backups, and check finds nothing
// wrong.
func TestLockTamperingLosesNoCommit(t *testing.T) {
	dir := fresh(t)
	g, err := savetest.Open(dir, true)
	must(t, err)
	defer g.Close()
	must(t, g.Settle())

	stop := make(chan struct{})
	var saves atomic.Int64
	type played struct {
		acks []acked
		err  error
	}
	done := make(chan played, 1)
	go func() {
		acks, err := playAndSave(g, stop, &saves)
		done <- played{acks, err}
	}()
	const rounds = 6
	for round := range rounds {
		for seen := saves.Load(); saves.Load() == seen; {
			select {
			case p := <-done:
				t.Fatalf("round %d: the game stopped saving after %d saves: %v", round, len(p.acks), p.err)
			default:
				time.Sleep(time.Millisecond) // let the game save once more
			}
		}
		if err := tamperLock(dir, round); err != nil {
			close(stop)
			t.Fatal(err)
		}
		if second, err := savetest.Open(dir, true); !errors.Is(err, autosave.ErrLocked) {
			if err == nil {
				second.Close()
			}
			t.Errorf("round %d: a second game opened the save: %v", round, err)
		}
		restore := fmt.Sprint(backupGeneration(t, dir))
		for _, cmd := range [][]string{{"compact"}, {"restore", "--generation", restore}, {"repair"}, {"migrate"}} {
			code, stdout, stderr := arksave(append(cmd, dir)...)
			if code != 1 || !strings.Contains(stderr, "in use") {
				t.Errorf("round %d: arksave %s while the game saves: exit %d\n%s%s", round, cmd[0], code, stdout, stderr)
			}
		}
	}
	close(stop)
	p := <-done
	must(t, p.err)
	acks := p.acks
	last := acks[len(acks)-1]

	d, err := savedir.OpenDirReadOnly(nil, dir)
	must(t, err)
	if d.Generation() != last.gen {
		t.Fatalf("the save is at generation %d, the game's last acknowledged save was %d", d.Generation(), last.gen)
	}
	for _, a := range acks {
		if a.gen+savetest.MaxBackups >= last.gen && a.gen != last.gen {
			if _, err := d.Backup(a.gen); err != nil {
				t.Errorf("acknowledged generation %d is lost: %v", a.gen, err)
			}
		}
	}
	c, err := savetest.Read(dir)
	must(t, err)
	if got := c.Chunks[chunkstore.Pos{X: 0, Y: 0}][3*savetest.ChunkSize+3]; got != uint32(last.px) {
		t.Errorf("the committed pixel is %08x, the last save painted %08x", got, uint32(last.px))
	}
	code, stdout, stderr := arksave("check", dir)
	expectCode(t, 0, code, stdout+stderr)
}

// backupGeneration returns the oldest backed-up generation of the save in
// dir, for a restore to ask for.
func backupGeneration(t *testing.T, dir string) uint64 {
	t.Helper()
	d, err := savedir.OpenDirReadOnly(nil, dir)
	must(t, err)
	b := d.Backups()
	if len(b) == 0 {
		t.Fatal("the save has no backup")
	}
	return b[len(b)-1].Generation
}
