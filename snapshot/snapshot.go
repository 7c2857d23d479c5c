// Package snapshot defines the value that the game loop hands to the
// autosave writer: everything a save needs, taken in a few hundred
// microseconds without copying pixels.
//
// # Outline
//
//   - [Snapshot]: the encoded ECS world, the dirty chunks by reference, the
//     entity sets of the chunks whose regional entities changed, and the
//     player records that changed.
//   - [Chunk]: one dirty chunk: its position, its pixels by reference
//     ([components.SharedPixels]) and the version it had when it was taken.
//   - [EntitySet]: the regional entities of one chunk (entity sections and
//     pixel bodies); [PlayerRecord]: one player's entities.
//   - [ToStore], [FromStore], [Uint32s], [Pixels]: conversions between the
//     ECS components and the chunk store's types.
//
// A snapshot holds the chunks' pixels by reference; the writer reads each
// chunk once, when it compresses it ([Chunk.ReadPixels]), while the game
// keeps writing: the game's first write into a tile of a chunk that the
// writer has not read yet copies that tile (copy-on-write per tile, see
// [components.SharedPixels]). Whoever consumes the snapshot calls
// [Snapshot.Release]; only then do the chunks it did not read stop copying.
package snapshot

import (
	"time"

	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/conv"
)

// Chunk is one dirty chunk in a snapshot.
type Chunk struct {
	Pos     components.ChunkPos
	Buf     components.SharedPixels // the pixels at the snapshot, by reference
	Version uint64                  // the chunk's ChunkState.Version when taken
	// Data is the chunk's extra data when taken ([components.Chunk.Data]:
	// replaced, never written in place, so held by reference), nil for none.
	Data []byte
}

// ChunkExtra returns the chunk's extra data, as the chunk store's
// [chunkstore.ExtraSource].
func (c Chunk) ChunkExtra() []byte { return c.Data }

// ReadPixels copies the chunk's pixels as they were at the snapshot into
// dst, as the chunk store's [chunkstore.PixelSource]: the writer reads each
// chunk when a compression goroutine gets to it, so that a save of many
// chunks needs no copy of each up front. It can read a chunk once.
func (c Chunk) ReadPixels(dst []uint32) error { return c.Buf.CopyTo(conv.Pixels(dst)) }

// EntitySet is what one chunk keeps besides its pixels: its regional
// entities as entity sections (archetype.AppendEntities) and the pixel
// bodies among them. An empty set removes what the store keeps.
type EntitySet struct {
	Pos components.ChunkPos
	// Bodies are the pixel bodies of the chunk's regional entities, deep
	// copies owned by the snapshot; each ID is its entity's stable id.
	Bodies []components.PixelBody
	// Sections are entity sections, oldest first: where two hold the same
	// stable id, the later one wins.
	Sections [][]byte
	// Version is the chunk's entity version when taken: the save confirms
	// it (see EntityVersion).
	Version uint64
	// Hash identifies the set's content, for telling later whether it
	// changed (0 for a merge).
	Hash uint64
	// Merge adds Bodies (replacing stored bodies with the same ids) and
	// Sections to what the store keeps for the chunk, instead of replacing
	// it: entities that moved into a chunk that is not loaded.
	Merge bool
}

// PlayerRecord is one player's record: every entity with its player id, as
// one entity section. A nil Section removes the player's record.
type PlayerRecord struct {
	ID      string
	Section []byte
	Hash    uint64 // identifies Section, for telling later whether it changed
}

// Snapshot is one save's worth of state.
type Snapshot struct {
	// World is the ECS world without chunk, regional and player entities,
	// PECS-encoded.
	World []byte
	// WorldEntities is the number of entities World holds.
	WorldEntities int
	// Chunks are the dirty chunks, including chunks unloaded since the last
	// save whose changes are not committed yet.
	Chunks []Chunk
	// Entities are the entity sets of the chunks whose regional entities
	// changed, including chunks unloaded since the last save.
	Entities []EntitySet
	// Players are the player records that changed.
	Players []PlayerRecord
	// TakenAt is when the game loop took the snapshot.
	TakenAt time.Time
	// Stall is the time the game loop spent taking it.
	Stall time.Duration

	// ReuseWorld, when set, is handed World once the writer no longer
	// needs it (written, or the save failed), so that the next snapshot
	// encodes into the same memory instead of a new allocation the size
	// of the world file. It may be called on the writer's goroutine.
	ReuseWorld func([]byte)

	released bool
}

// Release ends the snapshot's hold on the chunks' pixels: the game's writes
// into the chunks it has not read stop copying tiles. It is safe to call
// more than once; only the first call releases.
func (s *Snapshot) Release() {
	if s.released {
		return
	}
	s.released = true
	for _, c := range s.Chunks {
		c.Buf.Release()
	}
}

// ReleaseWorld hands World to ReuseWorld and forgets it, so that a second
// call hands nothing. Call it only when nothing reads World any more.
func (s *Snapshot) ReleaseWorld() {
	if s.ReuseWorld != nil && s.World != nil {
		s.ReuseWorld(s.World)
	}
	s.World = nil
}
