package systems

import (
	"github.com/mlange-42/ark/ecs"
)

// StreamSystem keeps the chunks around every [components.Focus] loaded.
// Chunks within a focus's Radius are read on a loader goroutine (nearest
// first; from the chunk store, or generated where nobody changed anything)
// and spawned when they arrive, with their regional entities; chunks
// further than Radius+1 from every focus are unloaded: a dirty chunk and
// the regional entities saved with it (pixel bodies among them) are kept in
// memory for the next save, then their entities are removed. Bodies that
// are not regional (no [components.Persistable], no Regional) are removed
// with their chunk. Each tick it also places new regional entities, moves
// those that crossed a border past the hysteresis margin, and runs the
// share of the checkpoints due. A world without a Focus loads no chunk: its
// regional entities are unloaded into their chunks. It never waits on disk.
//
// arksave.Plugin.Install returns it. Its methods panic when the world has
// no arksave plugin installed.
//
// [components.Focus]: https://pkg.go.dev/github.com/arksave/arksave/components#Focus
// [components.Persistable]: https://pkg.go.dev/github.com/arksave/arksave/components#Persistable
type StreamSystem struct{ installed }

// Initialize implements ark-tools' system interface: it finds the plugin
// installed in w.
func (s *StreamSystem) Initialize(w *ecs.World) { s.of(w) }

// Update streams chunks in and out: run it once a tick, after the systems
// that move the game's Focus entities.
func (s *StreamSystem) Update(w *ecs.World) { s.of(w).UpdateStream() }

// Finalize implements ark-tools' system interface. It does nothing.
func (s *StreamSystem) Finalize(w *ecs.World) {}

// SaveSystem applies finished saves, runs the autosave timer on game time
// and starts saves: each tick, when a save is due (autosave) or asked for
// (arksave.Persistence.Save), it takes a snapshot of the dirty chunks, the
// chunks whose regional entities changed, the players that changed and the
// ECS world, and hands it to the writer
// goroutine. Chunks a save committed become Persisted unless they changed
// since its snapshot. Run it once a tick, after the systems that change
// the world. It never waits on disk.
//
// Finalize does not save, unless the plugin was installed with
// SaveOnFinalize: a game that wants a final save after its scheduler's run
// calls arksave.Persistence.SaveNow, then Close.
//
// arksave.Plugin.Install returns it. Its methods panic when the world has
// no arksave plugin installed.
type SaveSystem struct{ installed }

// Initialize implements ark-tools' system interface: it finds the plugin
// installed in w.
func (s *SaveSystem) Initialize(w *ecs.World) { s.of(w) }

// Update runs the save system's tick.
func (s *SaveSystem) Update(w *ecs.World) { s.of(w).UpdateSave() }

// Finalize makes a final save, waiting for its commit, when the plugin was
// installed with SaveOnFinalize; otherwise it does nothing.
func (s *SaveSystem) Finalize(w *ecs.World) { s.of(w).FinalizeSave() }

// installed finds the runtime of the plugin installed in a world, once per
// world: the state the systems work on lives there, not in them.
type installed struct {
	rt *runner
	w  *ecs.World
}

func (p *installed) of(w *ecs.World) *runner {
	if p.w != w {
		p.rt, p.w = of(w), w
	}
	return p.rt
}
