package components

import "github.com/mlange-42/ark/ecs"

// Focus marks an entity around which chunks are kept loaded: a camera or a
// player. Chunks within Radius chunks (Chebyshev distance) of the chunk that
// holds (X, Y) are loaded; chunks further than Radius+1 are unloaded, so a
// focus that moves back and forth over a border does not thrash.
type Focus struct {
	X, Y   float64 // world pixels
	Radius int32   // in chunks
}

// ChunkIndex is the resource that maps the position of every loaded chunk
// to its entity. The streaming system keeps it up to date; game systems use
// it to find neighbouring chunks.
type ChunkIndex struct {
	byPos map[ChunkPos]ecs.Entity
}

// NewChunkIndex returns an empty index.
func NewChunkIndex() *ChunkIndex {
	return &ChunkIndex{byPos: make(map[ChunkPos]ecs.Entity)}
}

// Get returns the entity of the loaded chunk at pos.
func (ix *ChunkIndex) Get(pos ChunkPos) (ecs.Entity, bool) {
	e, ok := ix.byPos[pos]
	return e, ok
}

// Set records that the chunk at pos is loaded as entity e.
func (ix *ChunkIndex) Set(pos ChunkPos, e ecs.Entity) { ix.byPos[pos] = e }

// Delete records that the chunk at pos is no longer loaded.
func (ix *ChunkIndex) Delete(pos ChunkPos) { delete(ix.byPos, pos) }

// Len returns the number of loaded chunks.
func (ix *ChunkIndex) Len() int { return len(ix.byPos) }

// All calls fn for every loaded chunk, in no particular order, until fn
// returns false.
func (ix *ChunkIndex) All(fn func(pos ChunkPos, e ecs.Entity) bool) {
	for p, e := range ix.byPos {
		if !fn(p, e) {
			return
		}
	}
}
