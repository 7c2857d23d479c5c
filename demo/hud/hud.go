// Package hud composes the text of the demo's overlay and hint bar. It
// holds no Ebiten: the game draws the lines, tests read them.
package hud

import (
	"fmt"
	"strings"
	"time"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/demo/sim"
)

// Info is what the overlay shows.
type Info struct {
	FPS, TPS      float64
	Tick          uint64 // ticks this session
	WorldTick     uint64 // the world's tick, saved with it
	Loaded        int    // chunks
	Tiles         int    // simulation tiles awake last tick
	Bodies, Awake int
	CameraX       float64
	CameraY       float64
	ChunkSize     int
	Save          sim.SaveStatus
}

// Keys is the help line of the overlay.
const Keys = "WASD/arrows pan (shift fast)  left paint  right dig  1-9 material\n" +
	"wheel or [ ] brush  B body  F3 info  F5 save  F6 save as  F9 load  L saves  Esc quit"

// Lines returns the overlay's lines.
func Lines(in Info) []string {
	cx, cy := floorDiv(in.CameraX, in.ChunkSize), floorDiv(in.CameraY, in.ChunkSize)
	s := in.Save
	lines := []string{
		fmt.Sprintf("FPS %5.1f   TPS %5.1f   tick %d (world %d)", in.FPS, in.TPS, in.Tick, in.WorldTick),
		fmt.Sprintf("chunks  loaded %d   dirty %d   awake tiles %d", in.Loaded, s.DirtyChunks, in.Tiles),
		fmt.Sprintf("bodies  %d (%d awake)   camera %.0f,%.0f  chunk %d,%d", in.Bodies, in.Awake, in.CameraX, in.CameraY, cx, cy),
	}
	auto := "autosave off"
	if s.Autosave > 0 {
		auto = fmt.Sprintf("autosave every %s (next in %s)", s.Autosave, max(s.Autosave-s.SinceLast, 0).Truncate(time.Second))
	}
	lines = append(lines, fmt.Sprintf("save    %s   generation %d   %s", s.Dir, s.Generation, auto))
	if s.InProgress {
		lines = append(lines, "saving  "+Bar(s.Progress, 30))
	}
	if r := s.Last; r != nil && r.Err == nil {
		lines = append(lines, fmt.Sprintf("last    %s   %s   %d chunks  %d bodies   world file %s",
			ms(r.Duration), Bytes(uint64(r.BytesWritten)), r.ChunksWritten, r.BodiesWritten, Bytes(uint64(r.WorldBytes))))
	} else if r == nil {
		lines = append(lines, "last    no save yet this session")
	}
	lines = append(lines,
		fmt.Sprintf("saves   %d (%d failed)   %d chunks  %s written", s.Saves, s.Failed, s.ChunksWritten, Bytes(s.BytesWritten)),
		fmt.Sprintf("stall   saving %s (snapshot, %d tiles copied)   longest tick while saving %s", ms(s.SnapshotStall), s.CopiedTiles, ms(s.SaveTick)),
	)
	if s.LastError != "" {
		lines = append(lines, "error   "+clip(s.LastError, 90))
	}
	if s.Problems > 0 {
		lines = append(lines, fmt.Sprintf("damage  %d: %s", s.Problems, clip(s.LastProblem, 80)))
	}
	return lines
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// Hint is the one line always shown at the bottom of the screen.
func Hint(material string, radius int) string {
	return fmt.Sprintf("%s  brush %d   [1-9] material  [ ] size  B body  F3 info", material, radius)
}

// Bar draws progress p (0 to 1) as a text bar of width cells and the
// percentage: "[#######.......]  50%". A save's bar moves chunk by chunk and
// byte by byte and is full only once the save has committed.
func Bar(p float64, width int) string {
	p = min(max(p, 0), 1)
	n := int(p * float64(width))
	return fmt.Sprintf("[%s%s] %3d%%", strings.Repeat("#", n), strings.Repeat(".", width-n), int(p*100))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// Bytes formats a byte count for the overlay: B, KiB or MiB.
func Bytes(n uint64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func floorDiv(v float64, size int) int {
	if size <= 0 {
		return 0
	}
	q := int(v) / size
	if v < float64(q*size) {
		q--
	}
	return q
}

// Slots returns the load menu's lines: one per save slot (name, when it
// was last saved, play time, generation), the selected one marked, and a
// help line. A slot that cannot be loaded says why.
func Slots(saves []arksave.SaveInfo, selected int, now time.Time) []string {
	lines := []string{"Saves (up/down choose, Enter load, L or Esc close)"}
	if len(saves) == 0 {
		return append(lines, "  no saves here yet: F5 saves, F6 saves as a new one")
	}
	for i, s := range saves {
		mark := "  "
		if i == selected {
			mark = "> "
		}
		if s.Err != nil && s.Generation == 0 {
			lines = append(lines, mark+clip(fmt.Sprintf("%s: cannot load: %v", s.Name, s.Err), 90))
			continue
		}
		lines = append(lines, fmt.Sprintf("%s%-20s saved %s ago   played %s   generation %d", mark, clip(s.Name, 20),
			now.Sub(s.LastSaved).Truncate(time.Second), s.PlayTime.Truncate(time.Second), s.Generation))
	}
	return lines
}
