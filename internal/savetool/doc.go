// Package savetool looks inside, checks, mends and draws arksave save
// directories without the game: what the arksave command does, as a
// library, so that a game (the demo, with its own generator and colours)
// can offer the same in its menus.
//
// # Outline
//
//   - [Check] verifies a save directory, a world file (.pecs) or a chunk
//     store (.pxsw): every checksum and cross-reference, every problem
//     listed with its file, offset and chunk ([CheckReport]).
//   - [InspectDir] and [InspectStore] describe generations, backups, chunk
//     counts by storage type, dead space, bodies and the ECS world.
//   - [Repair] recovers everything recoverable into a new generation and
//     reports what was kept, dropped and reverted ([RepairReport]).
//   - [Compact] rewrites the chunk store generation into a new file and
//     commits it, leaving the old file to the backups that use it.
//   - [Migrate] upgrades older format versions as a new generation.
//   - [RenderDir] and [RenderStore] draw the saved pixel world as an image,
//     with an optional [chunkstore.Generator] and a [Palette]
//     ([DefaultPalette] knows the demo's materials; [PaletteFunc] adapts
//     a game's own).
//   - [ExportJSON] writes the ECS world and the stored chunks ([StoredChunksOf])
//     as JSON; [ImportJSON] turns the world of that JSON (or of a world
//     file's) back into a world file, and [ImportInto] commits it as a new
//     generation of the save directory.
//
// Every operation takes [Options]: a file system and an optional progress
// callback. Operations that only read open stores read-only, for
// inspection (no generator needed); operations that write commit through
// the save directory's protocol (world file, then the manifest), so a
// crash leaves the old generation or the new one.
package savetool
