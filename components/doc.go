// Package components defines the ECS components and resources that arksave
// reads and writes in a game's [ecs.World].
//
// # Outline
//
// Chunks of the pixel world are entities with three components:
//   - [ChunkPos]: the chunk's coordinates in chunk units.
//   - [Chunk]: its pixels, in a copy-on-write [PixelBuffer], and its
//     simulation-only heat layer.
//   - [ChunkState]: Clean, Dirty or Persisted, and a version counter.
//
// Pixel bodies (rigid bodies made of pixels) are entities with a [PixelBody];
// those that also carry the [Persistable] marker are saved with the chunk
// that holds their centre. [BodyIDs] hands out their stable ids.
//
// Entities with the [Transient] marker are never saved.
//
// # Pixels
//
// A pixel is a uint32 whose little-endian bytes are its layers (see [Pixel]):
// material, colour, damage and flags. Only [PersistMask] of a pixel is stored;
// simulation flags and the heat layer are rebuilt by the game.
//
// # Copy-on-write
//
// Saving hands a chunk's buffer to the writer goroutine by reference
// ([Chunk.Share]); the game's next write to that chunk ([Chunk.Mut]) copies
// the buffer first, so a save never copies pixels on the game loop unless the
// game writes to a chunk while that chunk is being saved.
//
// [ecs.World]: https://pkg.go.dev/github.com/mlange-42/ark/ecs#World
package components
