package hud_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/demo/hud"
	"github.com/arksave/arksave/demo/sim"
)

func TestLines(t *testing.T) {
	lines := hud.Lines(hud.Info{
		FPS: 59.9, TPS: 60, Tick: 42, WorldTick: 1042, Loaded: 12, ChunkSize: 512, CameraX: -10, CameraY: 600,
		Save: sim.SaveStatus{
			Dir: "/tmp/w", Generation: 7, InProgress: true, Progress: 0.5, Autosave: 2 * time.Second, SinceLast: 500 * time.Millisecond, DirtyChunks: 3,
			Saves: 5, Failed: 1, ChunksWritten: 20, BytesWritten: 5 << 20,
			Last:          &autosave.Result{Generation: 7, Duration: 12 * time.Millisecond, BytesWritten: 3 << 20, ChunksWritten: 4, WorldBytes: 2048},
			SnapshotStall: 400 * time.Microsecond, CopiedTiles: 7, SaveTick: 3100 * time.Microsecond,
			LastError: "autosave: no space left on device", Problems: 1, LastProblem: "chunk 1,2 regenerated",
		},
	})
	all := strings.Join(lines, "\n")
	for _, want := range []string{"FPS  59.9", "TPS  60.0", "world 1042", "loaded 12", "dirty 3", "chunk -1,1", "generation 7",
		"every 2s (next in 1s)", "12.0 ms", "3.0 MiB", "4 chunks", "2.0 KiB", "5 (1 failed)", "5.0 MiB written",
		"saving 0.4 ms", "7 tiles copied", "while saving 3.1 ms", "no space left", "damage  1: chunk 1,2",
		"saving  [###############...............]  50%"} {
		if !strings.Contains(all, want) {
			t.Errorf("overlay lacks %q:\n%s", want, all)
		}
	}
	lines = hud.Lines(hud.Info{ChunkSize: 512})
	if all := strings.Join(lines, "\n"); !strings.Contains(all, "autosave off") || !strings.Contains(all, "no save yet") || strings.Contains(all, "saving  [") {
		t.Errorf("a session before its first save:\n%s", all)
	}
}

func TestSlots(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	saves := []arksave.SaveInfo{
		{Dir: "/s/valley", Name: "The Valley", LastSaved: now.Add(-90 * time.Second), PlayTime: 3723 * time.Second, Generation: 12},
		{Dir: "/s/caves", Name: "caves", LastSaved: now.Add(-time.Hour), PlayTime: time.Minute, Generation: 3},
		{Dir: "/s/lost", Name: "lost", Err: fmt.Errorf("%w: run arksave repair /s/lost", arksave.ErrManifestLost)},
	}
	lines := hud.Slots(saves, 1, now)
	want := []string{
		"Saves (up/down choose, Enter load, L or Esc close)",
		"  The Valley           saved 1m30s ago   played 1h2m3s   generation 12",
		"> caves                saved 1h0m0s ago   played 1m0s   generation 3",
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d: %q, want %q", i, lines[i], w)
		}
	}
	if len(lines) != 4 || !strings.Contains(lines[3], "lost: cannot load") || !strings.Contains(lines[3], "arksave repair") {
		t.Errorf("the slot that cannot load: %q", lines[3:])
	}
	if got := hud.Slots(nil, 0, now); len(got) != 2 || !strings.Contains(got[1], "no saves") {
		t.Errorf("no slots: %q", got)
	}
}
