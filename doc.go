// Package arksave is a persistence plugin for the Ark ECS
// (github.com/mlange-42/ark): it saves and loads the whole ECS world, a
// chunked pixel world that is regenerated procedurally where nobody touched
// it, and the pixel bodies that move in it. It autosaves on a background
// goroutine without stalling the game loop, and a crash, a kill or a full
// disk at any instant leaves the last committed save loadable.
//
// Adding it to a game takes three lines (Example has them in a whole
// program, with a chunk generator):
//
//	systems, err := arksave.Plugin{Dir: "saves/world1"}.Install(world)
//	// ... then, every tick, after the game's own systems:
//	for _, s := range systems { s.Update(world) }
//
// # Outline
//
//   - [Plugin]: the configuration; [Plugin.Install] checks that every game
//     type can be saved, adds the resources and returns the systems
//     ([System]: Initialize, Update, Finalize, the shape ark-tools' app.App
//     schedules with app.AddSystem, whose own bookkeeping resources are left
//     out of saves, see [SchedulerResources]; a game loop or an Ebiten
//     Update calls them just as well). The systems themselves are in
//     package systems.
//   - [Persistence]: the resource to save ([Persistence.Save],
//     [Persistence.SaveAs], [Persistence.SaveNow]) and load
//     ([Persistence.Load]) on demand; a [SaveHandle] tracks a save.
//   - [autosave.Config] and [autosave.State]: the autosave resources:
//     interval, on/off, backups; progress and the last [autosave.Result].
//     [autosave.SimulationState] asks the game to pause while a save runs, if
//     configured.
//   - Errors: [ErrCorrupt] (damage, whatever layer found it), [ErrNoSave],
//     [ErrLocked], [ErrReadOnly], [ErrSaveExists]; [Problem] is damage met
//     while loading chunks ([Persistence.Problems]).
//   - Regional entities and players (below): [Plugin.Positions] with
//     [Position], [Plugin.Hysteresis], [Plugin.Checkpoint];
//     [Persistence.SavePlayer], [Persistence.LoadPlayer],
//     [Persistence.DeletePlayer], [Persistence.Players];
//     [Persistence.Resolve], [Persistence.Entity], [Persistence.MarkDirty],
//     [Persistence.RegionStats]; errors [ErrNoPlayer], [ErrPlayerOnline].
//   - Pixel layers and chunk data: [Plugin.Layers] registers the game's
//     layers (saved or not, with defaults; [DefaultLayers] unless
//     set); [Persistence.SetChunkData] and [Persistence.ChunkData], or
//     [SetChunkValue] and [ChunkValue] for a value of the game's own type,
//     keep the game's extra data with a chunk (error [ErrChunkNotLoaded]).
//   - Components the game uses are in package components: Chunk, ChunkPos,
//     ChunkState, PixelBody, Persistable, Regional, Player, Transient,
//     Focus.
//
// # Saving at the end
//
// The systems' Finalize does not save (unless [Plugin.SaveOnFinalize] is
// set): a game saves once more on exit with [Persistence.SaveNow], after a
// scheduler's run too, and releases the save directory with
// [Persistence.Close].
//
// # Regional entities
//
// An entity of any archetype with components.Regional lives in the chunk it
// stands in, read from a position component the game registers
// (Plugin.Positions, made with [Position]; pixel bodies need none): it is
// saved with that chunk, not in the world file, so that a save costs what
// changed (the dirty chunks and the global entities), not the whole world.
// When its chunk unloads, the entity's data is handed to the writer (kept in
// memory until a save commits it) and the entity is despawned; when the
// chunk loads again it is spawned with every component it had and its
// stable id (Regional.ID; zero asks the plugin for one) in a new
// ecs.Entity. An entity placed or moved into a chunk that is not loaded is
// unloaded into it at once. A persistable pixel body (PixelBody and
// Persistable) is made a regional entity by the plugin, with the body's id.
//
// A chunk's entities are rewritten when one is spawned or despawned there,
// when one crosses into or out of it past the hysteresis margin
// ([Plugin.Hysteresis]: 0.20 chunk widths, so that one wandering back and
// forth over a border does not rewrite two chunks every tick), and when a
// checkpoint finds their saved form changed: every loaded chunk is looked at
// once per [Plugin.Checkpoint] of game time (10 s), a share of them each
// tick. So an autosave writes movement within the margin and changed
// components at most a checkpoint late; [Persistence.MarkDirty] makes the
// next one write a chunk at once; and a save the game asks for
// ([Persistence.Save], [Persistence.SaveNow], [Persistence.SaveAs]) looks at
// every loaded chunk and writes every change.
//
// References: an ecs.Entity inside a component that points at a regional
// entity is saved by the target's stable id. On load it is the target's new
// entity when that is loaded; otherwise it is a handle that is never alive
// (saved again as the same stable id), filled in with the new entity when
// the target's chunk loads, in the components of the entities that the same
// load spawned (references inside values with their own encoding and in map
// keys excepted). A handle the game keeps to an entity whose chunk unloads
// goes dead, as any handle to a removed entity; [Persistence.Resolve] turns
// it into the entity with the same stable id once that is loaded again, and
// [Persistence.Entity] finds a loaded entity by stable id. Relation targets
// that are not loaded come back zero (Ark cannot target a dead entity). A
// reference from the world file (a global entity) to a regional entity is
// saved as it is: after a load it is a dead handle.
//
// # Players
//
// Entities with components.Player (an id the game gives) are saved apart,
// per player, in the save's players files, never with a chunk nor in the
// world file: a player's inventory is never lost to regional churn. Every
// entity with one player id makes up that player's record. A save writes
// the records of the loaded players that changed; [Persistence.SavePlayer]
// sets a player's record aside for the next save, so that the game can
// remove the player's entities at once (a player leaves), and
// [Persistence.LoadPlayer] spawns one player by id (a player joins): a
// server loads only the players that are online. Install and Load spawn no
// player; [Persistence.Players] lists those the save holds.
//
// # Save directory
//
// One world is one directory: a manifest (the commit point), the ECS world
// file of the committed generation (PECS, package archetype), the chunk
// store (PXSW, package chunkstore, which keeps each chunk's regional
// entities too), the players files, backups/ and a lock file. Package
// autosave owns it; package savetool (and the arksave command) checks,
// repairs and draws it without the game. [docs/format.md] describes the
// three formats, their versions and what this module promises about
// reading older saves.
//
// # What a save keeps
//
// Every component and resource comes back exactly, or its type is refused
// by Install (archetype.ErrUnsupportedType, naming the field): every field,
// exported or not; values behind interfaces with their concrete types
// (register the game's own with archetype.Register); times with their zones.
// A value that cannot be saved (a pointer cycle) fails that save, and a
// panic while saving fails the save (autosave.ErrPanic), never the game.
// Package archetype has the rules.
//
// # Testing a game's saves
//
// [Plugin.FS] takes any file system of package vfs: a game's own tests save
// and load in memory (vfs.NewMem), inject faults (vfs.Faulty) or simulate a
// crash that drops what was not synced (vfs.NewCrashFS).
//
// [docs/format.md]: https://github.com/arksave/arksave/blob/main/docs/format.md
package arksave
