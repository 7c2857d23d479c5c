package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
	buildOut  []byte
)

// demo builds the demo binary once per test run.
func demo(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "arksave-demo-e2e")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "demo")
		cmd := exec.Command("go", "build", "-o", binary, "github.com/arksave/arksave/demo")
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("building the demo: %v\n%s", buildErr, buildOut)
	}
	return binary
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binary != "" {
		os.RemoveAll(filepath.Dir(binary))
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

// The headless demo runs where there is no display, in the same binary as
// the window (Ebiten panics at init without one; package early runs the
// headless demo first), and prints one JSON line.
func TestHeadlessWithoutDisplay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, demo(t), "-headless", "-ticks", "720", "-seed", "4", "-chunk", "128", "-save", t.TempDir())
	cmd.Env = withoutDisplay()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("headless run: %v\nstderr:\n%s", err, stderr.String())
	}
	var st struct {
		Ticks          int     `json:"ticks"`
		ChunksLoaded   int     `json:"chunks_loaded"`
		ChunksUnloaded int     `json:"chunks_unloaded"`
		Bodies         int     `json:"bodies"`
		P99            float64 `json:"tick_ms_p99"`
	}
	line := strings.TrimSpace(stdout.String())
	if strings.Count(line, "\n") != 0 || json.Unmarshal([]byte(line), &st) != nil {
		t.Fatalf("want one JSON line on stdout, got %q", stdout.String())
	}
	if st.Ticks != 720 || st.ChunksUnloaded == 0 || st.Bodies == 0 {
		t.Fatalf("unexpected stats: %s", line)
	}
}

// Flag errors and -h need no display either.
func TestBadFlag(t *testing.T) {
	cmd := exec.Command(demo(t), "-chunk", "100")
	cmd.Env = withoutDisplay()
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "-chunk 100") {
		t.Fatalf("a bad -chunk must fail with a message, got %v: %s", err, out)
	}
	cmd = exec.Command(demo(t), "-h")
	cmd.Env = withoutDisplay()
	out, err = cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "-headless") {
		t.Fatalf("-h must print usage and succeed, got %v: %s", err, out)
	}
}

// The real window, in a virtual X display: after some ticks of the scripted
// player the screenshot shows sky and terrain.
func TestWindowScreenshot(t *testing.T) {
	xvfb, err := exec.LookPath("xvfb-run")
	if err != nil {
		t.Skip("xvfb-run is not on PATH (Debian package xvfb): skipping the window test")
	}
	shot := filepath.Join(t.TempDir(), "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, xvfb, "-a", "-s", "-screen 0 1280x800x24",
		demo(t), "-autoplay", "-overlay", "-ticks", "150", "-seed", "1", "-screenshot", shot, "-save", t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("window run: %v\n%s", err, out)
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
