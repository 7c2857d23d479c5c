package hud_test

import (
	"strings"
	"testing"
	"time"

	"github.com/arksave/arksave/demo/hud"
	"github.com/arksave/arksave/demo/sim"
)

func TestLines(t *testing.T) {
	lines := hud.Lines(hud.Info{
		FPS: 59.9, TPS: 60, Tick: 42, Loaded: 12, Dirty: 3, ChunkSize: 512, CameraX: -10, CameraY: 600,
		Save:  sim.SaveStatus{Dir: "/tmp/w", Autosave: 2 * time.Second, LastDuration: 12 * time.Millisecond, LastBytes: 3 << 20, LongestStall: 400 * time.Microsecond},
		Wired: true,
	})
	all := strings.Join(lines, "\n")
	for _, want := range []string{"FPS  59.9", "TPS  60.0", "loaded 12", "dirty 3", "chunk -1,1", "every 2s", "12.0 ms", "3.0 MiB", "stall from saving 0.4 ms"} {
		if !strings.Contains(all, want) {
			t.Errorf("overlay lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "not wired") {
		t.Errorf("a wired save system must not be called unwired")
	}
}
