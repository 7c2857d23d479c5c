package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arksave/arksave/demo/cli"
)

// headless runs the headless demo with args and returns its exit status and
// standard error.
func headless(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.HeadlessMain(append([]string{"-chunk", "64", "-autosave", "0"}, args...), &stdout, &stderr)
	return code, stderr.String()
}

func expectIn(t *testing.T, text string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(text, p) {
			t.Errorf("lacks %q:\n%s", p, text)
		}
	}
}

// -load of a directory that does not exist says so, and how to start a
// new world there, rather than that the directory "holds no save".
func TestLoadMissingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nowhere")
	code, stderr := headless(t, "-save", dir, "-load", "-ticks", "1")
	if code != 1 {
		t.Fatalf("exit status %d, want 1:\n%s", code, stderr)
	}
	expectIn(t, stderr, dir+" does not exist", "run without -load to start a new world there")
	if strings.Contains(stderr, "holds no save") {
		t.Errorf("a missing directory is said to hold no save:\n%s", stderr)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("-load created %s: %v", dir, err)
	}
}

// A -load that finds the committed generation damaged and falls back to a
// backup prints a line naming the generation it loaded and the damaged one
// it kept, before the line that says the world runs.
func TestLoadFallbackIsPrinted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "world")
	if code, stderr := headless(t, "-save", dir, "-ticks", "5"); code != 0 {
		t.Fatalf("first run: exit status %d:\n%s", code, stderr)
	}
	if code, stderr := headless(t, "-save", dir, "-load", "-ticks", "5"); code != 0 {
		t.Fatalf("second run: exit status %d:\n%s", code, stderr)
	}
	world := filepath.Join(dir, "world-2.pecs")
	raw, err := os.ReadFile(world)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 0x40
	if err := os.WriteFile(world, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stderr := headless(t, "-save", dir, "-load", "-ticks", "5")
	if code != 0 {
		t.Fatalf("run after the damage: exit status %d:\n%s", code, stderr)
	}
	expectIn(t, stderr, "generation 2 is damaged", "world-2.pecs", "loaded backup generation 1 as generation 3",
		"damaged generation 2 is kept as a backup", "arksave check "+dir)
	if i, j := strings.Index(stderr, "is damaged"), strings.Index(stderr, "demo: playing"); i < 0 || j < i {
		t.Errorf("the fallback is not told before the world runs:\n%s", stderr)
	}
}
