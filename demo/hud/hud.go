// Package hud composes the text of the demo's overlay and hint bar. It
// holds no Ebiten: the game draws the lines, tests read them.
package hud

import (
	"fmt"
	"time"

	"github.com/arksave/arksave/demo/sim"
)

// Info is what the overlay shows.
type Info struct {
	FPS, TPS      float64
	Tick          uint64
	Loaded, Dirty int // chunks
	Tiles         int // simulation tiles awake last tick
	Bodies, Awake int
	CameraX       float64
	CameraY       float64
	ChunkSize     int
	Save          sim.SaveStatus
	Wired         bool // a real save system is behind Save
}

// Keys is the help line of the overlay.
const Keys = "WASD/arrows pan (shift fast)  left paint  right dig  1-9 material\n" +
	"wheel or [ ] brush  B body  F3 info  F5 save  F6 save as  F9 load  Esc quit"

// Lines returns the overlay's lines.
func Lines(in Info) []string {
	cx, cy := floorDiv(in.CameraX, in.ChunkSize), floorDiv(in.CameraY, in.ChunkSize)
	lines := []string{
		fmt.Sprintf("FPS %5.1f   TPS %5.1f   tick %d", in.FPS, in.TPS, in.Tick),
		fmt.Sprintf("chunks  loaded %d   dirty %d   awake tiles %d", in.Loaded, in.Dirty, in.Tiles),
		fmt.Sprintf("bodies  %d (%d awake)   camera %.0f,%.0f  chunk %d,%d", in.Bodies, in.Awake, in.CameraX, in.CameraY, cx, cy),
	}
	s := in.Save
	auto := "autosave off"
	if s.Autosave > 0 {
		auto = fmt.Sprintf("autosave every %s", s.Autosave)
	}
	lines = append(lines, fmt.Sprintf("save    %s   %s", s.Dir, auto))
	if !in.Wired {
		lines = append(lines, "        (saving not wired in yet: figures stay at zero)")
	}
	lines = append(lines,
		fmt.Sprintf("last    %s   %s   %d saves   %d chunks written", ms(s.LastDuration), bytes(s.LastBytes), s.Saves, s.ChunksWritten),
		fmt.Sprintf("longest stall from saving %s   since last save %s", ms(s.LongestStall), s.SinceLast.Truncate(time.Second)),
	)
	if s.LastError != "" {
		lines = append(lines, "error   "+s.LastError)
	}
	return lines
}

// Hint is the one line always shown at the bottom of the screen.
func Hint(material string, radius int) string {
	return fmt.Sprintf("%s  brush %d   [1-9] material  [ ] size  B body  F3 info", material, radius)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func bytes(n uint64) string {
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
