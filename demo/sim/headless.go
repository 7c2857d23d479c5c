package sim

import (
	"io"
	"time"
)

// HeadlessOptions configures a headless run.
type HeadlessOptions struct {
	Config Config
	Ticks  int
	Out    io.Writer // where the JSON line goes
	// Started and Finished, when set, see the world after it is built (and
	// loaded) and after the last tick, before the final save: tests use them.
	Started, Finished func(*Sim)
	// Stop, when closed, ends the run before Ticks, with the same final
	// save (Ctrl-C and SIGTERM close it).
	Stop <-chan struct{}
}

// RunHeadless builds the world (loading the save if asked), runs it for
// o.Ticks ticks with the scripted player, no window and no Ebiten, makes
// the final save, and writes the stats as one JSON line to o.Out. The stats
// are written even when the final save fails; the error says why.
func RunHeadless(o HeadlessOptions) (Stats, error) {
	start := time.Now()
	s, err := New(o.Config)
	if err != nil {
		return Stats{}, err
	}
	warm := time.Since(start)
	startTick := s.Tick()
	if o.Started != nil {
		o.Started(s)
	}
	script := NewScript(s)
	var times TickTimes
	stopped := false
	for i := 0; i < o.Ticks && !stopped; i++ {
		script.Plan(s.Tick(), s.Commands())
		s.Step()
		times.Add(s.LastTick)
		select {
		case <-o.Stop:
			stopped = true
		default:
		}
	}
	// The stats describe the world once the chunks the camera asked for
	// have arrived (with the bodies they hold), however busy the machine
	// was: the loader works in the background while ticks run.
	s.Warm(10 * time.Second)
	if o.Finished != nil {
		o.Finished(s)
	}
	during := s.Persistence.Status() // the stalls of play, before the final save's
	loaded, unloaded := s.Streamed()
	bodies := s.Bodies.Stats().Bodies
	regional := s.Persistence.p.RegionStats().Entities

	closeStart := time.Now()
	final, err := s.Close()
	st := s.Persistence.Status()
	stats := Stats{
		Ticks:                   s.Ticks,
		Stopped:                 stopped,
		StartTick:               startTick,
		WorldTick:               s.Tick(),
		Seed:                    s.Config.Seed,
		ChunkSize:               s.Config.ChunkSize,
		Dir:                     st.Dir,
		Loaded:                  o.Config.Save.Load,
		Generation:              st.Generation,
		Saves:                   uint64(st.Saves),
		FailedSaves:             uint64(st.Failed),
		ChunksWritten:           st.ChunksWritten,
		BytesWritten:            st.BytesWritten,
		TickMsP50:               times.Percentile(50),
		TickMsP99:               times.Percentile(99),
		TickMsMax:               times.Percentile(100),
		LongestSaveStallMs:      ms(during.SnapshotStall),
		LongestTickDuringSaveMs: ms(during.SaveTick),
		WarmMs:                  ms(warm),
		CloseMs:                 ms(time.Since(closeStart)),
		ChunksLoaded:            loaded,
		ChunksUnloaded:          unloaded,
		ChunksResident:          int(loaded - unloaded),
		DirtyChunks:             st.DirtyChunks,
		Bodies:                  bodies,
		Regional:                regional,
		RegionsWritten:          st.RegionsWritten,
		Players:                 len(s.Persistence.p.Players()),
		Problems:                st.Problems,
		LastError:               st.LastError,
	}
	if final != nil {
		stats.FinalSaveMs = ms(final.Duration)
		stats.FinalSaveBytes = uint64(max(final.BytesWritten, 0))
		stats.FinalSaveChunks = final.ChunksWritten
	}
	if werr := stats.Write(o.Out); err == nil {
		err = werr
	}
	return stats, err
}
