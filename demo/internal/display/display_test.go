package display_test

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/arksave/arksave/demo/internal/display"
)

func TestMissing(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if runtime.GOOS != "linux" {
		t.Skip("displays are looked for on Linux and the BSDs")
	}
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, true},
		{map[string]string{"DISPLAY": ":99"}, false},
		{map[string]string{"WAYLAND_DISPLAY": "wayland-0"}, false},
		{map[string]string{"HOME": "/root"}, true},
	} {
		if got := display.Missing(env(c.env)); got != c.want {
			t.Errorf("Missing with %v = %v, want %v", c.env, got, c.want)
		}
	}
}

// The windowed demo without a display prints the hint and exits 2, before
// Ebiten's initialization would panic.
func TestWindowWithoutDisplay(t *testing.T) {
	if testing.Short() || runtime.GOOS != "linux" {
		t.Skip("builds the demo")
	}
	bin := t.TempDir() + "/demo"
	build := exec.Command("go", "build", "-o", bin, "github.com/arksave/arksave/demo")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-save", t.TempDir())
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DISPLAY=") && !strings.HasPrefix(kv, "WAYLAND_DISPLAY=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	code := -1
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if code != 2 || !strings.Contains(string(out), display.Hint) || strings.Contains(string(out), "panic") {
		t.Fatalf("exit %d (%v), output:\n%s", code, err, out)
	}
}
