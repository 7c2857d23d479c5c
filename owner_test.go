package arksave_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/vfs"
)

// Two Install calls on one directory in one process: the second fails with
// ErrLocked naming the holder, and the first keeps saving; once it closes,
// the directory is free.
func TestSecondInstallIsLocked(t *testing.T) {
	for _, tc := range []struct {
		name string
		fs   vfs.FS
		dir  string
	}{{"mem", vfs.NewMem(), "/save"}, {"os", vfs.OS, filepath.Join(t.TempDir(), "save")}} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGame(t, gameOpts{fs: tc.fs, dir: tc.dir})
			must(t, g.waitSave(t, g.pers.Save()).Err)
			for _, o := range []gameOpts{{load: true}, {create: true}, {}} {
				o.fs, o.dir = tc.fs, tc.dir
				_, err := installGame(t, o)
				expect(t, errors.Is(err, arksave.ErrLocked), "a second Install (%+v): %v", o, err)
				msg := err.Error()
				host, _ := os.Hostname()
				for _, part := range []string{fmt.Sprintf("pid %d", os.Getpid()), "host " + host, "since"} {
					expect(t, strings.Contains(msg, part), "the error does not name the holder (%q): %s", part, msg)
				}
			}
			res := g.waitSave(t, g.pers.Save())
			must(t, res.Err)
			must(t, g.pers.Close())
			h := newGame(t, gameOpts{fs: tc.fs, dir: tc.dir, load: true})
			expect(t, h.pers.Generation() == res.Generation, "the first game's generation %d, loaded %d", res.Generation, h.pers.Generation())
		})
	}
}

// Load on a directory that does not exist, or holds nothing, is ErrNoSave,
// and creates nothing; LoadOrCreate starts a new world there, and loads it
// later.
func TestLoadWithoutSave(t *testing.T) {
	root := t.TempDir()
	missing := filepath.Join(root, "mistyped", "save")
	_, err := installGame(t, gameOpts{fs: vfs.OS, dir: missing, load: true})
	expect(t, errors.Is(err, arksave.ErrNoSave) && strings.Contains(err.Error(), "LoadOrCreate"), "Load of a missing directory: %v", err)
	_, err = os.Stat(filepath.Join(root, "mistyped"))
	expect(t, errors.Is(err, fs.ErrNotExist), "Load created the directory: %v", err)

	empty := filepath.Join(root, "empty")
	must(t, os.Mkdir(empty, 0o755))
	_, err = installGame(t, gameOpts{fs: vfs.OS, dir: empty, load: true})
	expect(t, errors.Is(err, arksave.ErrNoSave), "Load of an empty directory: %v", err)
	names, _ := os.ReadDir(empty)
	expect(t, len(names) == 0, "Load left files in an empty directory: %v", names)

	g := newGame(t, gameOpts{fs: vfs.OS, dir: missing, create: true, radius: 0})
	expect(t, g.pers.Generation() == 0, "LoadOrCreate of a missing directory loaded generation %d", g.pers.Generation())
	ecs.GetResource[Score](g.w).Points = 4
	must(t, g.waitSave(t, g.pers.Save()).Err)
	must(t, g.pers.Close())
	h := newGame(t, gameOpts{fs: vfs.OS, dir: missing, create: true})
	expect(t, h.pers.Generation() == 1 && ecs.GetResource[Score](h.w).Points == 4, "LoadOrCreate did not load the save")
}

// A directory whose manifest was lost while its files and backups remain:
// Load (and LoadOrCreate, and Overwrite) fail naming arksave repair, and
// no file is removed, changed or reused.
func TestLoadLostManifest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "save")
	g := newGame(t, gameOpts{fs: vfs.OS, dir: dir, radius: 1})
	g.settle(t)
	for gen := 1; gen <= 3; gen++ {
		g.paint(t, 0, 0, gen, gen, components.MakePixel(9, 0, 0, 0))
		must(t, g.waitSave(t, g.pers.Save()).Err)
	}
	must(t, g.pers.Close())
	_, err := os.Stat(filepath.Join(dir, "backups", "manifest-2"))
	must(t, err)
	must(t, os.Remove(filepath.Join(dir, "manifest")))
	before := osFiles(t, dir)
	for _, o := range []gameOpts{{load: true}, {create: true}, {}} {
		o.fs, o.dir = vfs.OS, dir
		_, err := installGame(t, o)
		expect(t, err != nil && strings.Contains(err.Error(), "arksave repair"), "Install (%+v) over a lost manifest: %v", o, err)
		after := osFiles(t, dir)
		for name, b := range before {
			expect(t, after[name] == b, "Install (%+v) changed or removed %s", o, name)
		}
		for name := range after {
			_, ok := before[name]
			expect(t, ok || name == "lock", "Install (%+v) wrote %s", o, name)
		}
	}
}

// osFiles describes every file below dir: size, modification time and
// content.
func osFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	must(t, filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel != "lock" {
			out[rel] = fmt.Sprint(fi.Size(), fi.ModTime().UnixNano(), string(data))
		}
		return nil
	}))
	return out
}

// A save on a medium that cannot be written loads; every save reports the
// read-only error and names the directory; the game keeps running.
func TestReadOnlyMediumLoads(t *testing.T) {
	mem := vfs.NewMem()
	g := newGame(t, gameOpts{fs: mem, dir: "/save", radius: 1})
	g.settle(t)
	ecs.GetResource[Score](g.w).Points = 7
	g.paint(t, 0, 0, 2, 2, components.MakePixel(9, 0, 0, 0))
	must(t, g.waitSave(t, g.pers.Save()).Err)
	want := g.chunkDigest(t, 0, 0)
	must(t, g.pers.Close())

	h := newGame(t, gameOpts{fs: vfs.ReadOnly(mem), dir: "/save", load: true, radius: 1,
		autosave: &autosave.Config{Interval: 2 * arksave.DefaultTickDuration, Enabled: true, MaxBackups: 1}})
	h.settle(t)
	expect(t, ecs.GetResource[Score](h.w).Points == 7 && h.chunkDigest(t, 0, 0) == want, "the read-only save did not load")
	h.paint(t, 0, 0, 3, 3, components.MakePixel(9, 0, 0, 0))
	res := h.waitSave(t, h.pers.Save())
	expect(t, errors.Is(res.Err, arksave.ErrReadOnly) && res.Dir == "/save" && res.Generation == 1, "a save on a read-only medium: %+v", res)
	for range 10 {
		h.tick() // autosaves fail the same way; the game goes on
	}
	last := h.state().LastResult
	expect(t, last != nil && errors.Is(last.Err, arksave.ErrReadOnly), "autosave on a read-only medium: %v", last)
	expect(t, h.pers.Generation() == 1, "generation %d", h.pers.Generation())
}

// The lock holds across processes: while a child process has the
// directory installed, Install here fails with ErrLocked naming the
// child's pid; once the child exits, or is killed with SIGKILL (the
// operating system releases a dead holder's lock), Install succeeds and
// loads what the child saved.
func TestLockAcrossProcesses(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "save")
	for i, end := range []string{"exit", "kill"} {
		child, done := startHolder(t, dir)
		_, err := installGame(t, gameOpts{fs: vfs.OS, dir: dir, load: true})
		expect(t, errors.Is(err, arksave.ErrLocked) && strings.Contains(err.Error(), fmt.Sprintf("pid %d", child.Process.Pid)),
			"Install while another process holds the directory: %v", err)
		switch end {
		case "exit":
			done()
		case "kill":
			must(t, child.Process.Signal(syscall.SIGKILL))
		}
		err = child.Wait()
		if end == "kill" {
			ws, _ := child.ProcessState.Sys().(syscall.WaitStatus)
			expect(t, ws.Signaled(), "the child was not killed: %v", err)
		} else {
			must(t, err)
		}
		g := newGame(t, gameOpts{fs: vfs.OS, dir: dir, load: true})
		expect(t, g.pers.Generation() == uint64(i+1), "after the holder's %s: generation %d, want %d", end, g.pers.Generation(), i+1)
		must(t, g.pers.Close())
	}
}

const holderEnv = "ARKSAVE_HOLDER_CHILD"

// startHolder starts this test binary as a child that installs the plugin
// on dir, saves once, says "holding" and waits for its standard input to
// close; done closes it.
func startHolder(t *testing.T, dir string) (*exec.Cmd, func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHolderChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), holderEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && sc.Text() != "holding" {
	}
	if sc.Err() != nil || sc.Text() != "holding" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the holder did not start: %v", sc.Err())
	}
	go io.Copy(io.Discard, stdout)
	return cmd, func() { stdin.Close() }
}

func TestHolderChild(t *testing.T) {
	dir := os.Getenv(holderEnv)
	if dir == "" {
		t.Skip("helper process for TestLockAcrossProcesses")
	}
	g := newGame(t, gameOpts{fs: vfs.OS, dir: dir, create: true})
	must(t, g.waitSave(t, g.pers.Save()).Err)
	fmt.Println("holding")
	io.Copy(io.Discard, os.Stdin)
	must(t, g.pers.Close())
}

// The final-save helper Wait never starts a save, however short the
// autosave interval: waiting, then one SaveNow, makes exactly one more
// save.
func TestWaitStartsNoSave(t *testing.T) {
	g := newGame(t, gameOpts{fs: vfs.NewMem(), dir: "/save",
		autosave: &autosave.Config{Interval: time.Nanosecond, Enabled: true, MaxBackups: 1}})
	for range 5 {
		g.tick() // an autosave starts every tick the writer is idle
	}
	saves := g.state().Saves
	running := g.state().InProgress
	g.pers.Wait()
	expect(t, !g.state().InProgress, "a save runs after Wait")
	if running {
		saves++
	}
	expect(t, g.state().Saves == saves, "Wait: %d saves finished, want %d", g.state().Saves, saves)
	res := g.pers.SaveNow()
	must(t, res.Err)
	expect(t, g.state().Saves == saves+1 && !g.state().InProgress && res.Generation == g.pers.Generation(), "SaveNow after Wait: %d saves", g.state().Saves)
}

// Loading or saving into a directory another game holds fails with
// ErrLocked and changes nothing: the world stays, the game keeps saving
// where it was.
func TestLoadAndSaveToHeldDirectory(t *testing.T) {
	mem := vfs.NewMem()
	other := newGame(t, gameOpts{fs: mem, dir: "/other"})
	must(t, other.waitSave(t, other.pers.Save()).Err)

	g := newGame(t, gameOpts{fs: mem, dir: "/mine", radius: 0})
	ecs.GetResource[Score](g.w).Points = 3
	err := g.pers.Load("/other")
	expect(t, errors.Is(err, arksave.ErrLocked), "Load of a held directory: %v", err)
	expect(t, ecs.GetResource[Score](g.w).Points == 3 && g.w.Alive(g.player), "a refused Load changed the world")
	err = g.pers.Load("/mistyped")
	_, statErr := mem.Stat("/mistyped")
	expect(t, errors.Is(err, arksave.ErrNoSave) && errors.Is(statErr, fs.ErrNotExist), "Load of a missing directory: %v (%v)", err, statErr)
	res := g.waitSave(t, g.pers.SaveAs("/other"))
	expect(t, errors.Is(res.Err, arksave.ErrLocked), "SaveAs into a held directory: %+v", res)
	expect(t, g.pers.Dir() == "/mine", "the game moved to %s", g.pers.Dir())
	res = g.waitSave(t, g.pers.Save())
	must(t, res.Err)
	expect(t, res.Dir == "/mine" && res.Generation == 1 && other.pers.Generation() == 1, "saved %+v; the other game is at %d", res, other.pers.Generation())
}
