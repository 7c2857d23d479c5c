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
//   - [AutosaveConfig] and [AutosaveState]: the autosave resources:
//     interval, on/off, backups; progress and the last [Result].
//     [SimulationState] asks the game to pause while a save runs, if
//     configured.
//   - Errors: [ErrCorrupt] (damage, whatever layer found it), [ErrNoSave],
//     [ErrLocked], [ErrReadOnly], [ErrSaveExists]; [Problem] is damage met
//     while loading chunks ([Persistence.Problems]).
//   - Components the game uses are in package components: Chunk, ChunkPos,
//     ChunkState, PixelBody, Persistable, Transient, Focus.
//
// # Saving at the end
//
// The systems' Finalize does not save (unless [Plugin.SaveOnFinalize] is
// set): a game saves once more on exit with [Persistence.SaveNow], after a
// scheduler's run too, and releases the save directory with
// [Persistence.Close].
//
// # Save directory
//
// One world is one directory: a manifest (the commit point), the ECS world
// file of the committed generation (PECS, package archetype), the chunk
// store (PXSW, package chunkstore), backups/ and a lock file. Package
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
