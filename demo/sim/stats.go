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
	Ticks     uint64 `json:"ticks"`      // ticks run
	StartTick uint64 `json:"start_tick"` // the world's tick at the start (a loaded save's)
	WorldTick uint64 `json:"world_tick"` // the world's tick at the end
	Seed      uint64 `json:"seed"`       // the world's (a loaded save brings its own)
	ChunkSize int    `json:"chunk_size"`
	Dir       string `json:"dir"`
	Loaded    bool   `json:"loaded"`            // started from the directory's last save
	Stopped   bool   `json:"stopped,omitempty"` // ended early by Ctrl-C or SIGTERM, with the final save

	Generation      uint64  `json:"generation"` // committed at the end, final save included
	Saves           uint64  `json:"saves"`      // finished, final save included
	FailedSaves     uint64  `json:"failed_saves"`
	ChunksWritten   uint64  `json:"chunks_written"`
	BytesWritten    uint64  `json:"bytes_written"`
	FinalSaveMs     float64 `json:"final_save_ms"`
	FinalSaveBytes  uint64  `json:"final_save_bytes"`
	FinalSaveChunks int     `json:"final_save_chunks"`

	TickMsP50 float64 `json:"tick_ms_p50"`
	TickMsP99 float64 `json:"tick_ms_p99"`
	TickMsMax float64 `json:"tick_ms_max"`
	// LongestSaveStallMs is arksave's autosave.State.LongestStall during
	// play: the longest time the game loop spent on saving in one tick
	// (a save's snapshot, and tiles copied for a running save).
	LongestSaveStallMs float64 `json:"longest_save_stall_ms"`
	// LongestTickDuringSaveMs is the longest whole tick (simulation
	// included) while a save was in progress.
	LongestTickDuringSaveMs float64 `json:"longest_tick_during_save_ms"`
	WarmMs                  float64 `json:"warm_ms"`  // building (and loading) the world until the chunks around the camera were in
	CloseMs                 float64 `json:"close_ms"` // the final save and closing

	ChunksLoaded   uint64 `json:"chunks_loaded"` // streamed in
	ChunksUnloaded uint64 `json:"chunks_unloaded"`
	ChunksResident int    `json:"chunks_resident"`
	DirtyChunks    int    `json:"dirty_chunks"`    // after the final save: 0 unless it failed
	Bodies         int    `json:"bodies"`          // loaded at the end
	Regional       int    `json:"regional"`        // regional entities loaded at the end (the bodies)
	RegionsWritten uint64 `json:"regions_written"` // chunks whose regional entities the saves wrote
	Players        int    `json:"players"`         // players the save holds (the camera: 1)
	Problems       int    `json:"problems"`        // damaged chunks or bodies found while loading
	LastError      string `json:"last_error,omitempty"`
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
	d []time.Duration
}

// Add records one tick.
func (t *TickTimes) Add(d time.Duration) { t.d = append(t.d, d) }

// Len returns how many ticks were recorded.
func (t *TickTimes) Len() int { return len(t.d) }

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

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
