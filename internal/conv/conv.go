// Package conv converts between the game's components and the chunk
// store's values (pixels, positions, pixel bodies) and hashes what the
// runtime compares between saves.
package conv

import (
	"unsafe"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
)

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
