// Package components defines the ECS components and resources that arksave
// reads and writes in a game's [ecs.World].
//
// # Outline
//
// Chunks of the pixel world are entities with three components:
//   - [ChunkPos]: the chunk's coordinates in chunk units.
//   - [Chunk]: its pixels, shared with saves by reference and copied per
//     tile on write ([SharedPixels]), and its simulation-only heat layer.
//   - [ChunkState]: Clean, Dirty or Persisted, and a version counter.
//
// Pixel bodies (rigid bodies made of pixels) are entities with a [PixelBody];
// those that also carry the [Persistable] marker are saved with the chunk
// that holds their centre. [BodyIDs] hands out their stable ids.
//
// Entities of any archetype with [Regional] (a stable id) live in the chunk
// they stand in, as pixel bodies do: saved with it, unloaded and spawned
// again with it. Entities with [Player] are saved apart, per player.
//
// Entities with the [Transient] marker are never saved.
//
// # Pixels
//
// A pixel is a uint32 whose little-endian bytes are its layers (see [Pixel]):
// material, colour, damage and flags. The plugin stores the layers
// arksave.DefaultLayers (or the game's Plugin.Layers) marks as persisted, the bits
// of [PersistMask]; simulation flags and the heat layer are rebuilt by the
// game. A chunk also carries the game's own extra data ([Chunk.Data],
// [Chunk.SetData]), saved and loaded with its pixels.
//
// # Copy-on-write
//
// Saving hands a chunk's pixels to the writer goroutine by reference
// ([Chunk.Share] returns a [SharedPixels]); the writer reads them once, when
// it compresses the chunk ([SharedPixels.CopyTo]), while the game keeps
// writing. The game's first write into a tile ([TileSize] x [TileSize]
// pixels, 4 KiB) that the writer has not read yet copies that tile aside for
// the writer ([Chunk.Set], [Chunk.MutRect]); a tile the writer has read is
// written without copying. So a save costs the game loop its snapshot plus
// at most one 4 KiB copy per tile it writes before the writer gets there,
// never a whole chunk (1 MiB at 512x512: 0.25-0.76 ms). The plugin counts
// these copies in autosave.State.LongestStall and CopiedTiles.
//
// A save's writer reads each chunk when it compresses it (the chunk store's
// PixelSource), so a chunk stays held only until then, and a save of many
// chunks holds one chunk's copy per compression goroutine, not one per
// chunk.
//
// Each tile has an atomic state through which the two goroutines hand it
// over: the writer claims a tile before reading it and frees it after; the
// game claims an unread tile before copying it aside. Neither ever touches
// a tile the other is writing, so this is race-free without locks; a game
// write into the one tile the writer is reading at that instant waits for
// that 4 KiB copy.
//
// Why this design, measured on a 2-core VM with 512x512 chunks: the
// chunk's live pixels stay one contiguous, row-major slice that the game
// owns, so the sand automaton and the renderer read them as before (the
// demo's whole tick, BenchmarkTick_4ActiveChunks, is unchanged within
// noise); only writes check a tile's state, and only while a save holds the
// chunk. The alternative, pixels stored as separately shared 4 KiB tiles,
// makes every read find its tile first: on the automaton's scan that is
// 1.5-1.9x the contiguous read (the demo's BenchmarkPixelAccess), every tick,
// to save copies that happen only in the ticks after a snapshot. The first
// write into a held tile costs 0.4-0.8 µs in BenchmarkFirstWriteToSharedChunk,
// against 0.25-0.76 ms for the whole-chunk copy it replaced in the same run
// (635-1363x).
//
// The tiles copied for a save are kept by the chunk (up to 64) for its next
// shares, so that copying rarely allocates on the game loop (an allocation
// there, while the garbage collector runs, can be made to assist it).
//
// [ecs.World]: https://pkg.go.dev/github.com/mlange-42/ark/ecs#World
package components
