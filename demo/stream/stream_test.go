package stream_test

import (
	"testing"

	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/demo/internal/testworld"
	"github.com/arksave/arksave/demo/stream"
	"github.com/arksave/arksave/demo/terrain"
	"github.com/mlange-42/ark/ecs"
)

var expect = testworld.Expect

func TestStreamsAroundFocus(t *testing.T) {
	w := ecs.NewWorld()
	s := &stream.System{Generator: terrain.Generator{}, Seed: 1, Size: 64, MaxLoadsPerTick: 3}
	s.Initialize(w)
	focus := ecs.NewMap1[components.Focus](w)
	cam := focus.NewEntity(&components.Focus{X: 10, Y: 10, Radius: 1})
	index := ecs.GetResource[components.ChunkIndex](w)
	stats := ecs.GetResource[stream.Stats](w)

	s.Update(w)
	expect(t, index.Len() == 9, "first tick loads the whole 3x3 window at once, got %d", index.Len())
	for y := int32(-1); y <= 1; y++ {
		for x := int32(-1); x <= 1; x++ {
			_, ok := index.Get(components.ChunkPos{X: x, Y: y})
			expect(t, ok, "chunk (%d,%d) not loaded", x, y)
		}
	}

	// one chunk to the right: nothing unloads yet (hysteresis), three load,
	// at most MaxLoadsPerTick a tick
	focus.Get(cam).X += 64
	s.Update(w)
	expect(t, index.Len() == 12 && stats.Unloaded == 0, "after a step right: %d loaded, %d unloaded", index.Len(), stats.Unloaded)

	// far away: the old window unloads, the new one fills in over ticks
	focus.Get(cam).X += 64 * 5
	for range 5 {
		s.Update(w)
	}
	expect(t, index.Len() == 9, "after moving far: %d loaded", index.Len())
	expect(t, stats.Unloaded == 12 && stats.Loaded == 21, "loaded %d, unloaded %d", stats.Loaded, stats.Unloaded)
	_, ok := index.Get(components.ChunkPos{X: 6, Y: 0})
	expect(t, ok, "the chunk under the focus is not loaded")

	// every indexed entity is alive and carries its own position
	chunks := ecs.NewMap1[components.ChunkPos](w)
	index.All(func(pos components.ChunkPos, e ecs.Entity) bool {
		expect(t, w.Alive(e) && *chunks.Get(e) == pos, "index entry %v is stale", pos)
		return true
	})
}
