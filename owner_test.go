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
	"github.com/arksave/arksave/internal/testkit/gametest"
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
			g := gametest.New(t, gametest.Opts{FS: tc.fs, Dir: tc.dir})
			must(t, g.WaitSave(t, g.Pers.Save()).Err)
			for _, o := range []gametest.Opts{{Load: true}, {Create: true}, {}} {
				o.FS, o.Dir = tc.fs, tc.dir
				_, err := gametest.Install(t, o)
				expect(t, errors.Is(err, arksave.ErrLocked), "a second Install (%+v): %v", o, err)
				msg := err.Error()
				host, _ := os.Hostname()
				for _, part := range []string{fmt.Sprintf("pid %d", os.Getpid()), "host " + host, "since"} {
					expect(t, strings.Contains(msg, part), "the error does not name the holder (%q): %s", part, msg)
				}
			}
			res := g.WaitSave(t, g.Pers.Save())
			must(t, res.Err)
			must(t, g.Pers.Close())
			h := gametest.New(t, gametest.Opts{FS: tc.fs, Dir: tc.dir, Load: true})
			expect(t, h.Pers.Generation() == res.Generation, "the first game's generation %d, loaded %d", res.Generation, h.Pers.Generation())
		})
	}
}

// Load on a directory that does not exist, or holds nothing, is ErrNoSave,
// and creates nothing; LoadOrCreate starts a new world there, and loads it
// later.
func TestLoadWithoutSave(t *testing.T) {
	root := t.TempDir()
	missing := filepath.Join(root, "mistyped", "save")
	_, err := gametest.Install(t, gametest.Opts{FS: vfs.OS, Dir: missing, Load: true})
	expect(t, errors.Is(err, arksave.ErrNoSave) && strings.Contains(err.Error(), "LoadOrCreate"), "Load of a missing directory: %v", err)
	_, err = os.Stat(filepath.Join(root, "mistyped"))
	expect(t, errors.Is(err, fs.ErrNotExist), "Load created the directory: %v", err)

	empty := filepath.Join(root, "empty")
	must(t, os.Mkdir(empty, 0o755))
	_, err = gametest.Install(t, gametest.Opts{FS: vfs.OS, Dir: empty, Load: true})
	expect(t, errors.Is(err, arksave.ErrNoSave), "Load of an empty directory: %v", err)
	names, _ := os.ReadDir(empty)
	expect(t, len(names) == 0, "Load left files in an empty directory: %v", names)

	g := gametest.New(t, gametest.Opts{FS: vfs.OS, Dir: missing, Create: true, Radius: 0})
	expect(t, g.Pers.Generation() == 0, "LoadOrCreate of a missing directory loaded generation %d", g.Pers.Generation())
	ecs.GetResource[gametest.Score](g.W).Points = 4
	must(t, g.WaitSave(t, g.Pers.Save()).Err)
	must(t, g.Pers.Close())
	h := gametest.New(t, gametest.Opts{FS: vfs.OS, Dir: missing, Create: true})
	expect(t, h.Pers.Generation() == 1 && ecs.GetResource[gametest.Score](h.W).Points == 4, "LoadOrCreate did not load the save")
}

// A directory whose manifest was lost while its files and backups remain:
// Load (and LoadOrCreate, and Overwrite) fail naming arksave repair, and
// no file is removed, changed or reused.
func TestLoadLostManifest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "save")
	g := gametest.New(t, gametest.Opts{FS: vfs.OS, Dir: dir, Radius: 1})
	g.Settle(t)
	for gen := 1; gen <= 3; gen++ {
		g.Paint(t, 0, 0, gen, gen, components.MakePixel(9, 0, 0, 0))
		must(t, g.WaitSave(t, g.Pers.Save()).Err)
	}
	must(t, g.Pers.Close())
	_, err := os.Stat(filepath.Join(dir, "backups", "manifest-2"))
	must(t, err)
	must(t, os.Remove(filepath.Join(dir, "manifest")))
	before := osFiles(t, dir)
	for _, o := range []gametest.Opts{{Load: true}, {Create: true}, {}} {
		o.FS, o.Dir = vfs.OS, dir
		_, err := gametest.Install(t, o)
		expect(t, err != nil && strings.Contains(err.Error(), "arksave repair"), "Install (%+v) over a lost manifest: %v", o, err)
		after := osFiles(t, dir)
		for name, b := range before {
			// The lock file names whoever opened the save last.
			expect(t, after[name] == b || name == "lock", "Install (%+v) changed or removed %s", o, name)
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
	g := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 1})
	g.Settle(t)
	ecs.GetResource[gametest.Score](g.W).Points = 7
	g.Paint(t, 0, 0, 2, 2, components.MakePixel(9, 0, 0, 0))
	must(t, g.WaitSave(t, g.Pers.Save()).Err)
	want := g.ChunkDigest(t, 0, 0)
	must(t, g.Pers.Close())

	h := gametest.New(t, gametest.Opts{FS: vfs.ReadOnly(mem), Dir: "/save", Load: true, Radius: 1,
		Autosave: &autosave.Config{Interval: 2 * arksave.DefaultTickDuration, Enabled: true, MaxBackups: 1}})
	h.Settle(t)
	expect(t, ecs.GetResource[gametest.Score](h.W).Points == 7 && h.ChunkDigest(t, 0, 0) == want, "the read-only save did not load")
	h.Paint(t, 0, 0, 3, 3, components.MakePixel(9, 0, 0, 0))
	res := h.WaitSave(t, h.Pers.Save())
	expect(t, errors.Is(res.Err, arksave.ErrReadOnly) && res.Dir == "/save" && res.Generation == 1, "a save on a read-only medium: %+v", res)
	for range 10 {
		h.Tick() // autosaves fail the same way; the game goes on
	}
	last := h.State().LastResult
	expect(t, last != nil && errors.Is(last.Err, arksave.ErrReadOnly), "autosave on a read-only medium: %v", last)
	expect(t, h.Pers.Generation() == 1, "generation %d", h.Pers.Generation())
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
		_, err := gametest.Install(t, gametest.Opts{FS: vfs.OS, Dir: dir, Load: true})
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
		g := gametest.New(t, gametest.Opts{FS: vfs.OS, Dir: dir, Load: true})
		expect(t, g.Pers.Generation() == uint64(i+1), "after the holder's %s: generation %d, want %d", end, g.Pers.Generation(), i+1)
		must(t, g.Pers.Close())
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
	g := gametest.New(t, gametest.Opts{FS: vfs.OS, Dir: dir, Create: true})
	must(t, g.WaitSave(t, g.Pers.Save()).Err)
	fmt.Println("holding")
	io.Copy(io.Discard, os.Stdin)
	must(t, g.Pers.Close())
}

// The final-save helper Wait never starts a save, however short the
// autosave interval: waiting, then one SaveNow, makes exactly one more
// save.
func TestWaitStartsNoSave(t *testing.T) {
	g := gametest.New(t, gametest.Opts{FS: vfs.NewMem(), Dir: "/save",
		Autosave: &autosave.Config{Interval: time.Nanosecond, Enabled: true, MaxBackups: 1}})
	for range 5 {
		g.Tick() // an autosave starts every tick the writer is idle
	}
	saves := g.State().Saves
	running := g.State().InProgress
	g.Pers.Wait()
	expect(t, !g.State().InProgress, "a save runs after Wait")
	if running {
		saves++
	}
	expect(t, g.State().Saves == saves, "Wait: %d saves finished, want %d", g.State().Saves, saves)
	res := g.Pers.SaveNow()
	must(t, res.Err)
	expect(t, g.State().Saves == saves+1 && !g.State().InProgress && res.Generation == g.Pers.Generation(), "SaveNow after Wait: %d saves", g.State().Saves)
}

// Loading or saving into a directory another game holds fails with
// ErrLocked and changes nothing: the world stays, the game keeps saving
// where it was.
func TestLoadAndSaveToHeldDirectory(t *testing.T) {
	mem := vfs.NewMem()
	other := gametest.New(t, gametest.Opts{FS: mem, Dir: "/other"})
	must(t, other.WaitSave(t, other.Pers.Save()).Err)

	g := gametest.New(t, gametest.Opts{FS: mem, Dir: "/mine", Radius: 0})
	ecs.GetResource[gametest.Score](g.W).Points = 3
	err := g.Pers.Load("/other")
	expect(t, errors.Is(err, arksave.ErrLocked), "Load of a held directory: %v", err)
	expect(t, ecs.GetResource[gametest.Score](g.W).Points == 3 && g.W.Alive(g.Player), "a refused Load changed the world")
	err = g.Pers.Load("/mistyped")
	_, statErr := mem.Stat("/mistyped")
	expect(t, errors.Is(err, arksave.ErrNoSave) && errors.Is(statErr, fs.ErrNotExist), "Load of a missing directory: %v (%v)", err, statErr)
	res := g.WaitSave(t, g.Pers.SaveAs("/other"))
	expect(t, errors.Is(res.Err, arksave.ErrLocked), "SaveAs into a held directory: %+v", res)
	expect(t, g.Pers.Dir() == "/mine", "the game moved to %s", g.Pers.Dir())
	res = g.WaitSave(t, g.Pers.Save())
	must(t, res.Err)
	expect(t, res.Dir == "/mine" && res.Generation == 1 && other.Pers.Generation() == 1, "saved %+v; the other game is at %d", res, other.Pers.Generation())
}
