package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/vfs"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
	buildOut  []byte
)

// build builds the window demo and the headless one once per test run,
// both named demo (the name a save directory's lock file records), and
// returns the directory that holds window/demo and headless/demo.
func build(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "arksave-demo-e2e"); buildErr != nil {
			return
		}
		for _, b := range []struct{ dir, pkg string }{
			{"window", "github.com/arksave/arksave/demo"},
			{"headless", "github.com/arksave/arksave/demo/headless"},
		} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(buildDir, b.dir, "demo"), b.pkg)
			if buildOut, buildErr = cmd.CombinedOutput(); buildErr != nil {
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatalf("building the demo: %v\n%s", buildErr, buildOut)
	}
	return buildDir
}

// demo returns the window demo's binary (it needs a display).
func demo(t *testing.T) string { return filepath.Join(build(t), "window", "demo") }

// demoHeadless returns the headless demo's binary (demo/headless: no Ebiten,
// no display needed).
func demoHeadless(t *testing.T) string { return filepath.Join(build(t), "headless", "demo") }

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// withoutDisplay returns the environment with every display variable removed.
func withoutDisplay() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "DISPLAY=") || strings.HasPrefix(kv, "WAYLAND_DISPLAY=") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// stats is what the tests read of the headless run's JSON line.
type stats struct {
	Ticks          int     `json:"ticks"`
	StartTick      int     `json:"start_tick"`
	WorldTick      int     `json:"world_tick"`
	Loaded         bool    `json:"loaded"`
	Generation     int     `json:"generation"`
	Saves          int     `json:"saves"`
	FailedSaves    int     `json:"failed_saves"`
	ChunksLoaded   int     `json:"chunks_loaded"`
	ChunksUnloaded int     `json:"chunks_unloaded"`
	Bodies         int     `json:"bodies"`
	DirtyChunks    int     `json:"dirty_chunks"`
	Problems       int     `json:"problems"`
	P99            float64 `json:"tick_ms_p99"`
}

// headless runs the demo headless with args, without a display, and returns
// its stats.
func headless(t *testing.T, args ...string) stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, demoHeadless(t), args...)
	cmd.Env = withoutDisplay()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("headless %v: %v\nstderr:\n%s", args, err, stderr.String())
	}
	var st stats
	line := strings.TrimSpace(stdout.String())
	if strings.Count(line, "\n") != 0 || json.Unmarshal([]byte(line), &st) != nil {
		t.Fatalf("want one JSON line on stdout, got %q", stdout.String())
	}
	t.Logf("%v: %s", args, line)
	return st
}

// The headless demo runs where there is no display (its command imports no
// Ebiten, which panics at init without one), saves, and prints one JSON
// line.
func TestHeadlessWithoutDisplay(t *testing.T) {
	st := headless(t, "-ticks", "720", "-seed", "4", "-chunk", "128", "-autosave", "2s", "-save", t.TempDir())
	if st.Ticks != 720 || st.ChunksUnloaded == 0 || st.Bodies == 0 || st.Saves < 2 || st.Generation != st.Saves || st.DirtyChunks != 0 {
		t.Fatalf("unexpected stats: %+v", st)
	}
}

// The command make demo prints without a display works as printed, twice in
// a row in the same directory (a new world each time), and -load carries on
// from where the last run stopped.
func TestHeadlessTwiceThenLoad(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "arksave-demo")
	args := []string{"-ticks", "600", "-seed", "1", "-save", dir}
	first := headless(t, args...)
	second := headless(t, args...)
	if first.StartTick != 0 || second.StartTick != 0 || second.Generation <= first.Generation {
		t.Fatalf("a run without -load starts a new world on top: %+v, then %+v", first, second)
	}
	third := headless(t, append(args, "-load")...)
	if !third.Loaded || third.StartTick != second.WorldTick || third.WorldTick != second.WorldTick+600 || third.Generation <= second.Generation {
		t.Fatalf("-load did not carry on: %+v after %+v", third, second)
	}
}

// A headless run killed with SIGKILL while it autosaves (every 50 ms of game
// time, so the writer is busy most of the run) leaves a save that -load
// continues, every time: a handful of kills at random instants, each on the
// directory the previous kill left.
func TestKillWhileSaving(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "world")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	gen := 0
	for i := range 4 {
		args := []string{"-ticks", "1000000", "-seed", "2", "-autosave", "50ms", "-save", dir}
		if i > 0 {
			args = append(args, "-load")
		}
		cmd := exec.Command(demoHeadless(t), args...)
		cmd.Env = withoutDisplay()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Once this run has committed a save of its own, kill it at a random instant.
		deadline := time.Now().Add(time.Minute)
		for generation(dir) <= gen && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(time.Duration(100+rng.IntN(700)) * time.Millisecond)
		cmd.Process.Kill()
		err := cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("run %d was not killed: %v\n%s", i, err, stderr.String())
		}
		gen = generation(dir)
		st := headless(t, "-ticks", "30", "-autosave", "0", "-load", "-save", dir)
		if !st.Loaded || st.Problems != 0 || st.FailedSaves != 0 || st.Generation != gen+1 || st.StartTick == 0 {
			t.Fatalf("after kill %d at generation %d: %+v", i, gen, st)
		}
		gen = st.Generation
	}
}

// generation returns the committed generation of the save at a location,
// a directory or a world in JetStream (as arksave inspect reads it, without
// a lock, while a demo saves), 0 if there is none yet.
func generation(location string) int {
	loc, err := vfs.OpenLocation(location)
	if err != nil {
		return 0
	}
	defer loc.Close()
	info, err := savetool.InspectDir(loc.Path, savetool.Options{FS: loc.FS})
	if err != nil {
		return 0
	}
	for _, g := range info.Generations {
		if g.Current {
			return int(g.Generation)
		}
	}
	return 0
}

// Flag errors and -h of the headless command need no display.
func TestBadFlag(t *testing.T) {
	cmd := exec.Command(demoHeadless(t), "-chunk", "100")
	cmd.Env = withoutDisplay()
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "-chunk 100") {
		t.Fatalf("a bad -chunk must fail with a message, got %v: %s", err, out)
	}
	cmd = exec.Command(demoHeadless(t), "-h")
	cmd.Env = withoutDisplay()
	out, err = cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "-headless") {
		t.Fatalf("-h must print usage and succeed, got %v: %s", err, out)
	}
}

// The real window, in a virtual X display: the scripted player plays and
// presses F5 (save), F9 (reload it) and F6 (save as world-2); closing saves
// once more into world-2, which -load then continues. The screenshot shows
// sky and terrain.
func TestWindowScreenshot(t *testing.T) {
	xvfb, err := exec.LookPath("xvfb-run")
	if err != nil {
		t.Skip("xvfb-run is not on PATH (Debian package xvfb): skipping the window test")
	}
	tmp := t.TempDir()
	shot, dir := filepath.Join(tmp, "shot.png"), filepath.Join(tmp, "world")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, xvfb, "-a", "-s", "-screen 0 1280x800x24",
		demo(t), "-autoplay", "-overlay", "-ticks", "150", "-seed", "1", "-screenshot", shot, "-save", dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("window run: %v\n%s", err, out)
	}
	t.Logf("window run:\n%s", out)
	for _, want := range []string{
		"F5: save: generation 1 of " + dir + ",",
		"F9: loaded generation 1 of " + dir + " (world tick ",
		"F6: save as: generation 1 of " + dir + "-2,",
		"final save: generation 2 of " + dir + "-2,",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the window run did not log %q", want)
		}
	}
	if st := headless(t, "-ticks", "10", "-load", "-save", dir+"-2"); !st.Loaded || st.StartTick == 0 || st.Generation != 3 {
		t.Errorf("-load of the window's last save: %+v", st)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, out)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	checkWorld(t, img)
}

// checkWorld asserts that img shows the world: sky, grass, dirt and stone
// colours present, many colours, no single colour dominating.
func checkWorld(t *testing.T, img image.Image) {
	t.Helper()
	b := img.Bounds()
	if b.Dx() < 320 || b.Dy() < 180 {
		t.Fatalf("screenshot is %v", b)
	}
	counts := map[uint32]int{}
	var sky, grass, dirt, stone int
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r16, g16, b16, _ := img.At(x, y).RGBA()
			r, g, bl := int(r16>>8), int(g16>>8), int(b16>>8)
			counts[uint32(r)<<16|uint32(g)<<8|uint32(bl)]++
			switch {
			case bl > 150 && bl > r+40 && g > r: // sky blue
				sky++
			case g > r+25 && g > bl+25: // grass and leaves
				grass++
			case r > g+20 && g > bl+10 && r > 80 && r < 180: // dirt and wood
				dirt++
			case abs(r-g) < 12 && abs(g-bl) < 16 && r > 60 && r < 160: // stone
				stone++
			}
		}
	}
	total := b.Dx() * b.Dy()
	most := 0
	for _, n := range counts {
		most = max(most, n)
	}
	t.Logf("%d colours; sky %d, grass %d, dirt %d, stone %d of %d pixels", len(counts), sky, grass, dirt, stone, total)
	if len(counts) < 64 || most > total/2 {
		t.Fatalf("screenshot looks blank: %d colours, the commonest covers %d of %d pixels", len(counts), most, total)
	}
	for name, n := range map[string]int{"sky": sky, "grass": grass, "dirt": dirt, "stone": stone} {
		if n < total/1000 {
			t.Errorf("too little %s in the screenshot: %d of %d pixels", name, n, total)
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// The headless command imports no Ebiten and needs no cgo: it needs no
// init order and no display to run, and builds with CGO_ENABLED=0. (With
// cgo on, the standard library's net, which the NATS client imports, uses
// runtime/cgo for its resolver; it falls back to the pure-Go one without.)
func TestHeadlessImportsNoEbiten(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/arksave/arksave/demo/headless").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.Contains(pkg, "hajimehoshi") || strings.Contains(pkg, "demo/internal/early") {
			t.Errorf("demo/headless depends on %s", pkg)
		}
	}
	cmd := exec.Command("go", "build", "-o", os.DevNull, "github.com/arksave/arksave/demo/headless")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("demo/headless does not build without cgo: %v\n%s", err, out)
	}
}
