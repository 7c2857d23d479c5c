package arksave

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/plugin"
)

// SchedulerResources are the full type names of the resources that
// ark-tools' app.App adds to the world for its own bookkeeping, which the
// plugin leaves out of saves (by name: the plugin does not import
// ark-tools): app.Systems (the scheduler: the systems, the world, timers)
// and resource.Termination (the run flag: saved at shutdown it would stop
// the loaded game at once). The game-state resources app.App adds,
// resource.Tick and resource.Rand (its random source, *rand.PCG), are saved.
var SchedulerResources = []string{
	"github.com/mlange-42/ark-tools/app.Systems",
	"github.com/mlange-42/ark-tools/resource.Termination",
}

// worldCodec writes the ECS world file: every entity but chunks, pixel
// bodies, regional entities, players and transient ones (those live in the
// chunk store, the players files or nowhere), and every resource but the
// plugin's own runtime resources.
type worldCodec struct {
	opts  []archetype.Option
	keyed bool // Plugin.Key is set
}

// keyHint adds to an error of an encrypted file the Plugin field to set.
func (c *worldCodec) keyHint(err error) error {
	switch {
	case errors.Is(err, archetype.ErrEncrypted):
		return fmt.Errorf("%w; set Plugin.Key to the key the game saved with", err)
	case errors.Is(err, archetype.ErrWrongKey) && c.keyed:
		return fmt.Errorf("%w (Plugin.Key)", err)
	}
	return err
}

func newWorldCodec(extra []archetype.Option) *worldCodec {
	skip := append([]ecs.Comp{
		ecs.C[components.ChunkPos](),
		ecs.C[components.Chunk](),
		ecs.C[components.ChunkState](),
		ecs.C[components.PixelBody](),
		ecs.C[components.Transient](),
	}, plugin.SavedApart()...)
	opts := []archetype.Option{
		// The entities saved elsewhere leave free slots in the pool: a bit
		// each in a compact pool, not 8 bytes.
		archetype.CompactPool(),
		archetype.SkipEntitiesWith(skip...),
		archetype.SkipResources(
			ecs.C[autosave.Config](),
			ecs.C[autosave.State](),
			ecs.C[autosave.SimulationState](),
			ecs.C[components.ChunkIndex](),
			ecs.C[Persistence](),
			ecs.C[plugin.Slot](),
		),
		archetype.SkipResourceNames(SchedulerResources...),
	}
	return &worldCodec{opts: append(opts, extra...)}
}

// Encode appends the world's file to dst: the memory of the last save's
// world file once the writer is done with it (the runtime hands it back),
// so that a save in play allocates no new buffer the size of the world.
func (c *worldCodec) Encode(dst []byte, w *ecs.World) ([]byte, error) {
	return archetype.AppendEncode(dst, w, c.opts...)
}

func (c *worldCodec) Decode(data []byte, w *ecs.World) error {
	return c.keyHint(archetype.Decode(bytes.NewReader(data), w, c.opts...))
}

// Validate decodes into a scratch world that has w's component and
// resource types, so that a save that cannot load is found before the
// live world is reset.
func (c *worldCodec) Validate(data []byte, w *ecs.World) error {
	scratch := ecs.NewWorld()
	for _, id := range ecs.ComponentIDs(w) {
		if info, ok := ecs.ComponentInfo(w, id); ok {
			ecs.TypeID(scratch, info.Type)
		}
	}
	for _, id := range ecs.ResourceIDs(w) {
		tp, ok := ecs.ResourceType(w, id)
		if !ok || w.Resources().Get(id) == nil {
			continue
		}
		sid := ecs.ResourceTypeID(scratch, tp)
		scratch.Resources().Add(sid, reflect.New(tp).Interface())
	}
	return c.keyHint(archetype.Decode(bytes.NewReader(data), scratch, c.opts...))
}
