// Package snapshot defines the value that the game loop hands to the
// autosave writer: everything a save needs, taken in a few hundred
// microseconds without copying pixels.
//
// # Outline
//
//   - [Snapshot]: the encoded ECS world, the dirty chunks by reference, and
//     the pixel-body sets of the chunks whose bodies changed.
//   - [Chunk]: one dirty chunk: its position, its pixels by reference
//     ([components.SharedPixels]) and the version it had when it was taken.
//   - [BodySet]: every persistable body whose centre lies in one chunk.
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
	Buf     *components.SharedPixels // the pixels at the snapshot, by reference
	Version uint64                   // the chunk's ChunkState.Version when taken
}

// ReadPixels copies the chunk's pixels as they were at the snapshot into
// dst, as the chunk store's [chunkstore.PixelSource]: the writer reads each
// chunk when a compression goroutine gets to it, so that a save of many
// chunks needs no copy of each up front. It can read a chunk once.
func (c Chunk) ReadPixels(dst []uint32) error { return c.Buf.CopyTo(Pixels(dst)) }

// BodySet is the complete set of persistable pixel bodies whose centre lies
// in one chunk. An empty set removes the chunk's stored bodies.
type BodySet struct {
	Pos    components.ChunkPos
	Bodies []components.PixelBody // deep copies, owned by the snapshot
	Hash   uint64                 // Hash of the set, see HashBodies
	// Merge adds Bodies to the chunk's stored set, replacing stored bodies
	// with the same ids, instead of replacing the set. It is used for bodies
	// whose centre moved into a chunk that is not loaded.
	Merge bool
}

// Snapshot is one save's worth of state.
type Snapshot struct {
	// World is the ECS world without chunk and body entities, PECS-encoded.
	World []byte
	// Chunks are the dirty chunks, including chunks unloaded since the last
	// save whose changes are not committed yet.
	Chunks []Chunk
	// Bodies are the body sets that differ from what the store holds.
	Bodies []BodySet
	// TakenAt is when the game loop took the snapshot.
	TakenAt time.Time
	// Stall is the time the game loop spent taking it.
	Stall time.Duration

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

// BodyHash identifies what a save committed of one chunk's bodies.
type BodyHash struct {
	Pos   components.ChunkPos
	Hash  uint64
	Merge bool // the set was merged into the stored one; Hash is the added bodies'
}

// Committed lists what the snapshot holds, for confirming chunk states and
// body hashes once the save has committed.
func (s *Snapshot) Committed() ([]ChunkVersion, []BodyHash) {
	cv := make([]ChunkVersion, len(s.Chunks))
	for i, c := range s.Chunks {
		cv[i] = ChunkVersion{Pos: c.Pos, Version: c.Version}
	}
	bh := make([]BodyHash, len(s.Bodies))
	for i, b := range s.Bodies {
		bh[i] = BodyHash{Pos: b.Pos, Hash: b.Hash, Merge: b.Merge}
	}
	return cv, bh
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
