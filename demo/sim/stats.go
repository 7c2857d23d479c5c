package sim

import (
	"encoding/json"
	"io"
	"slices"
	"time"
)

// Stats is the one JSON line the headless run prints at its end. Add fields
// freely: consumers read them by name.
type Stats struct {
	Ticks              uint64  `json:"ticks"`
	Seed               uint64  `json:"seed"`
	ChunkSize          int     `json:"chunk_size"`
	Saves              uint64  `json:"saves"`
	ChunksWritten      uint64  `json:"chunks_written"`
	BytesWritten       uint64  `json:"bytes_written"`
	TickMsP50          float64 `json:"tick_ms_p50"`
	TickMsP99          float64 `json:"tick_ms_p99"`
	TickMsMax          float64 `json:"tick_ms_max"`
	LongestSaveStallMs float64 `json:"longest_save_stall_ms"`
	ChunksLoaded       uint64  `json:"chunks_loaded"`
	ChunksUnloaded     uint64  `json:"chunks_unloaded"`
	ChunksResident     int     `json:"chunks_resident"`
	DirtyChunks        int     `json:"dirty_chunks"`
	Bodies             int     `json:"bodies"`
}

// Write prints s as one line of JSON.
func (s Stats) Write(w io.Writer) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// TickTimes collects the wall-clock time of every tick for the stats. Only
// measurement reads the clock; the simulation never does.
type TickTimes struct {
	d     []time.Duration
	stall time.Duration
}

// Add records one tick; during reports whether a save was in progress
// around it, making it a candidate for the longest stall caused by saving.
func (t *TickTimes) Add(d time.Duration, during bool) {
	t.d = append(t.d, d)
	if during {
		t.stall = max(t.stall, d)
	}
}

// Percentile returns the p-th percentile (0..100) of the tick times in ms.
func (t *TickTimes) Percentile(p float64) float64 {
	if len(t.d) == 0 {
		return 0
	}
	s := slices.Clone(t.d)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p / 100)
	return ms(s[i])
}

// LongestStall returns the longest tick during a save, in ms.
func (t *TickTimes) LongestStall() float64 { return ms(t.stall) }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
