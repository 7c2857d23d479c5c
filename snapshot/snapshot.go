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
	"unsafe"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
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
func (c Chunk) ReadPixels(dst []uint32) error { return c.Buf.CopyTo(Pixels(dst)) }

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

// Uint32s views pixels as the chunk store's []uint32 without copying.
// components.Pixel is a uint32, so the memory layouts are identical.
func Uint32s(p []components.Pixel) []uint32 {
	if len(p) == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(&p[0])), len(p))
}

// Pixels views the chunk store's []uint32 as pixels without copying.
func Pixels(u []uint32) []components.Pixel {
	if len(u) == 0 {
		return nil
	}
	return unsafe.Slice((*components.Pixel)(unsafe.Pointer(&u[0])), len(u))
}

// StorePos converts a chunk position to the store's.
func StorePos(p components.ChunkPos) chunkstore.Pos { return chunkstore.Pos{X: p.X, Y: p.Y} }

// ToStore converts a pixel body to the chunk store's record, sharing its slices.
func ToStore(b *components.PixelBody) chunkstore.Body {
	return chunkstore.Body{
		ID: uint64(b.ID), X: b.X, Y: b.Y, Rotation: b.Rotation,
		VX: b.VX, VY: b.VY, AngularVelocity: b.AngularVelocity,
		Width: b.Width, Height: b.Height, OriginX: b.OriginX, OriginY: b.OriginY,
		Pixels: Uint32s(b.Pixels), Shape: b.Shape, Extension: b.Extension,
	}
}

// FromStore converts a chunk store record to a pixel body, sharing its slices.
func FromStore(b *chunkstore.Body) components.PixelBody {
	return components.PixelBody{
		ID: components.BodyID(b.ID), X: b.X, Y: b.Y, Rotation: b.Rotation,
		VX: b.VX, VY: b.VY, AngularVelocity: b.AngularVelocity,
		Width: b.Width, Height: b.Height, OriginX: b.OriginX, OriginY: b.OriginY,
		Pixels: Pixels(b.Pixels), Shape: b.Shape, Extension: b.Extension,
	}
}

// ChunkVersion identifies what a save committed of one chunk.
type ChunkVersion struct {
	Pos     components.ChunkPos
	Version uint64
}

// EntityVersion identifies what a save committed of one chunk's entities.
type EntityVersion struct {
	Pos     components.ChunkPos
	Version uint64
	Hash    uint64
	Merge   bool // the set was merged into the stored one
}

// PlayerHash identifies what a save committed of one player.
type PlayerHash struct {
	ID   string
	Hash uint64 // 0: the record was removed
}

// Committed lists what the snapshot holds, for confirming chunk states,
// entity versions and player records once the save has committed.
func (s *Snapshot) Committed() ([]ChunkVersion, []EntityVersion, []PlayerHash) {
	cv := make([]ChunkVersion, len(s.Chunks))
	for i, c := range s.Chunks {
		cv[i] = ChunkVersion{Pos: c.Pos, Version: c.Version}
	}
	ev := make([]EntityVersion, len(s.Entities))
	for i, e := range s.Entities {
		ev[i] = EntityVersion{Pos: e.Pos, Version: e.Version, Hash: e.Hash, Merge: e.Merge}
	}
	ph := make([]PlayerHash, len(s.Players))
	for i, p := range s.Players {
		ph[i] = PlayerHash{ID: p.ID, Hash: p.Hash}
	}
	return cv, ev, ph
}

// MergeByID returns base with the elements of add replacing those with the
// same id, and the others of add appended, in order.
func MergeByID[T any](base, add []T, id func(*T) uint64) []T {
	ids := make(map[uint64]bool, len(add))
	for i := range add {
		ids[id(&add[i])] = true
	}
	out := make([]T, 0, len(base)+len(add))
	for i := range base {
		if !ids[id(&base[i])] {
			out = append(out, base[i])
		}
	}
	return append(out, add...)
}
