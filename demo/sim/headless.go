package sim

import (
	"io"
	"time"
)

// HeadlessOptions configures a headless run.
type HeadlessOptions struct {
	Config      Config
	Ticks       int
	Persistence Persistence // nil: Unsaved
	Out         io.Writer   // where the JSON line goes
}

// RunHeadless runs the world for o.Ticks ticks with the scripted player, no
// window and no Ebiten, makes the final save, and writes the stats as one
// JSON line to o.Out.
func RunHeadless(o HeadlessOptions) (Stats, error) {
	p := o.Persistence
	if p == nil {
		p = &Unsaved{}
	}
	s := New(o.Config)
	defer s.Close()
	script := NewScript(s)
	var times TickTimes
	for i := 0; i < o.Ticks; i++ {
		script.Plan(s.Ticks, s.Commands())
		before := p.Status().InProgress
		start := time.Now()
		s.Step()
		d := time.Since(start)
		times.Add(d, before || p.Status().InProgress)
	}
	err := p.Close()

	st := p.Status()
	streamed := s.StreamStats()
	loaded, dirty := s.Chunks()
	stats := Stats{
		Ticks:              s.Ticks,
		Seed:               s.Config.Seed,
		ChunkSize:          s.Config.ChunkSize,
		Saves:              st.Saves,
		ChunksWritten:      st.ChunksWritten,
		BytesWritten:       st.BytesWritten,
		TickMsP50:          times.Percentile(50),
		TickMsP99:          times.Percentile(99),
		TickMsMax:          times.Percentile(100),
		LongestSaveStallMs: max(times.LongestStall(), ms(st.LongestStall)),
		ChunksLoaded:       streamed.Loaded,
		ChunksUnloaded:     streamed.Unloaded,
		ChunksResident:     loaded,
		DirtyChunks:        dirty,
		Bodies:             s.Bodies.Stats().Bodies,
	}
	if err != nil {
		return stats, err
	}
	return stats, stats.Write(o.Out)
}
