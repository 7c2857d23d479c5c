package sim

import (
	"fmt"
	"time"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/vfs"
	"github.com/mlange-42/ark/ecs"
)

// SaveConfig is how a world is saved: the cli builds it from the flags.
type SaveConfig struct {
	// Dir is the save directory, or a location with a scheme that a
	// backend the program imports registered ("nats://host:4222/<world>").
	// Without Load a new world starts there (a save it holds becomes a
	// backup); with Load the world continues from its last save, which
	// must exist.
	Dir  string
	Load bool
	// Autosave is the autosave interval in game time; 0 turns autosave off.
	Autosave time.Duration
	// MaxBackups is how many older generations arksave keeps in backups/.
	MaxBackups int
	// PauseDuringSave stops sand and bodies while a save is written
	// (arksave's SimulationState); the camera and the tools keep working.
	PauseDuringSave bool
	// LockTimeout is how long to wait for another program that holds the
	// save to let go of it (arksave's Plugin.LockTimeout): a second demo
	// takes a world over once the first one closes it, or once a killed
	// one's lease expires on JetStream. Zero fails at once with ErrLocked.
	LockTimeout time.Duration
	// FS is the file system saves go through; nil is the real one. Tests
	// inject faults with it.
	FS vfs.FS
	// OnSaving, when set, is told one line on the game loop when saving
	// stops (a save fails after the last one committed, or the session's
	// first save fails) and one when it resumes (a save commits after
	// failures): not a line for every failed save.
	OnSaving func(line string)
}

// Persistence is the demo's face of arksave: the requests the game makes
// (F5 Save, F6 SaveAs, F9 is Sim.Load, the final save is Sim.Close) and
// the figures the overlay and the headless stats show, gathered from the
// plugin's Persistence and autosave.State resources tick by tick.
type Persistence struct {
	w     *ecs.World
	p     *arksave.Persistence
	state *autosave.State
	conf  *autosave.Config

	seen           *autosave.Result // the last result accounted for
	watch          saveWatch
	onSaving       func(string)
	committed      int
	failed         int
	chunksWritten  uint64
	regionsWritten uint64
	bytesWritten   uint64
	lastErr        string
	problems       int
	lastProblem    string
	saveTick       time.Duration // the longest tick while a save was in progress
	chunksLoaded   uint64
	loads          int
}

func newPersistence(s *Sim, p *arksave.Persistence) *Persistence {
	return &Persistence{
		w: s.World, p: p,
		state:    ecs.GetResource[autosave.State](s.World),
		conf:     ecs.GetResource[autosave.Config](s.World),
		onSaving: s.Config.Save.OnSaving,
	}
}

// Plugin returns arksave's Persistence resource.
func (p *Persistence) Plugin() *arksave.Persistence { return p.p }

// State returns arksave's autosave.State resource.
func (p *Persistence) State() *autosave.State { return p.state }

// Autosave returns arksave's autosave.Config resource; changes take effect
// at the next tick.
func (p *Persistence) Autosave() *autosave.Config { return p.conf }

// Save asks for a save at the next tick (F5); the game keeps running while
// it is written. Poll the handle's IsComplete once a tick.
func (p *Persistence) Save() *arksave.SaveHandle { return p.p.Save() }

// SaveAs asks for a complete save into dir (F6), which then becomes the
// directory the game saves to; the current one keeps its last save.
func (p *Persistence) SaveAs(dir string) *arksave.SaveHandle { return p.p.SaveAs(dir) }

// Dir returns the save directory in use.
func (p *Persistence) Dir() string { return p.p.Dir() }

// Generation returns the last committed generation of the directory in use.
func (p *Persistence) Generation() uint64 { return p.p.Generation() }

// observe runs after every tick: it keeps the longest tick during a save
// and accounts for a finished save and for damage found while loading.
func (p *Persistence) observe(tick time.Duration, saving bool) {
	if saving {
		p.saveTick = max(p.saveTick, tick)
	}
	p.account()
}

func (p *Persistence) account() {
	if r := p.state.LastResult; r != nil && r != p.seen {
		p.seen = r
		if r.Err != nil {
			p.failed++
			p.lastErr = r.Err.Error()
		} else {
			p.committed++
			p.chunksWritten += uint64(r.ChunksWritten)
			p.regionsWritten += uint64(r.RegionsWritten)
			p.bytesWritten += uint64(r.BytesWritten)
			if r.CompactErr != nil {
				p.lastErr = "compaction: " + r.CompactErr.Error()
			}
		}
		if line := p.watch.see(r); line != "" && p.onSaving != nil {
			p.onSaving(line)
		}
	}
	for _, pr := range p.p.Problems() {
		p.problems++
		p.lastProblem = pr.Err.Error()
	}
}

// saveWatch follows the finished saves, in order, to tell when saving
// stops and when it resumes.
type saveWatch struct {
	failing bool
	failed  int // saves failed since saving stopped
}

// see accounts for one finished save. It returns the line that says
// saving stopped (the save failed and the one before it committed, or
// there was none before it) or resumed (the save committed and the one
// before it failed), and "" when the save changed neither.
func (w *saveWatch) see(r *autosave.Result) string {
	if r.Err != nil {
		w.failed++
		if w.failing {
			return ""
		}
		w.failing = true
		return fmt.Sprintf("saving stopped: the save after generation %d of %s failed; the game goes on and tries again at the next save: %v", r.Generation, r.Dir, r.Err)
	}
	if !w.failing {
		return ""
	}
	failed := w.failed
	w.failing, w.failed = false, 0
	return fmt.Sprintf("saving resumed: generation %d of %s committed, after %d failed saves", r.Generation, r.Dir, failed)
}

// WaitIdle lets a running save finish and accounts for it, without
// ticking the world and without starting another save, however short the
// autosave interval; it also waits for the writer's work after the save
// (the backup copy, compaction), so that nothing of the save runs once it
// returns.
func (p *Persistence) WaitIdle() {
	p.p.WaitIdle()
	p.account()
}

// finalSave lets a running save finish (accounting for it), then saves
// synchronously and returns that save's result.
func (p *Persistence) finalSave() *autosave.Result {
	p.WaitIdle()
	res := p.p.SaveNow()
	p.account()
	return res
}

// SaveStatus is what the overlay and the headless stats show of saving.
type SaveStatus struct {
	Dir         string
	Generation  uint64        // last committed generation of Dir
	Autosave    time.Duration // interval; 0 when autosave is off
	SinceLast   time.Duration // game time since the last save finished
	InProgress  bool          // a save is being written
	Progress    float64       // of the save in progress, 0..1
	Saves       int           // saves finished this session, committed or failed
	Failed      int           // of them, failed
	DirtyChunks int           // loaded chunks with unsaved changes plus unloaded ones waiting

	ChunksWritten  uint64 // by the committed saves of this session
	RegionsWritten uint64 // chunks whose regional entities they wrote
	BytesWritten   uint64
	Last           *autosave.Result // the last finished save, nil before the first

	// SnapshotStall is arksave's measure of the longest game-loop stall
	// saving caused in one tick (autosave.State.LongestStall): taking a
	// snapshot (the ECS world encoded, chunk pixels shared), plus the
	// tiles copied for a running save (copy-on-write); CopiedTiles counts
	// those tiles. SaveTick is the demo's: the longest whole tick while a
	// save was in progress.
	SnapshotStall time.Duration
	CopiedTiles   int
	SaveTick      time.Duration

	LastError   string // of the last failed save or compaction
	Problems    int    // damaged chunks or bodies found while loading
	LastProblem string
	Loads       int // F9 loads this session
}

// Status returns the save figures.
func (p *Persistence) Status() SaveStatus {
	st := p.state
	s := SaveStatus{
		Dir: p.p.Dir(), Generation: p.p.Generation(), SinceLast: st.TimeSinceLastSave,
		InProgress: st.InProgress, Progress: float64(st.Progress),
		Saves: p.committed + p.failed, Failed: p.failed, DirtyChunks: p.p.DirtyChunks(),
		ChunksWritten: p.chunksWritten, RegionsWritten: p.regionsWritten, BytesWritten: p.bytesWritten, Last: st.LastResult,
		SnapshotStall: st.LongestStall, CopiedTiles: st.CopiedTiles, SaveTick: p.saveTick,
		LastError: p.lastErr, Problems: p.problems, LastProblem: p.lastProblem, Loads: p.loads,
	}
	if p.conf.Enabled {
		s.Autosave = p.conf.Interval
	}
	return s
}
