// Package arksave is a persistence plugin for the Ark ECS
// (github.com/mlange-42/ark): it saves and loads the whole ECS world, a
// chunked pixel world that is regenerated procedurally where nobody touched
// it, and the pixel bodies that move in it. It autosaves on a background
// goroutine without stalling the game loop, and a crash, a kill or a full
// disk at any instant leaves the last committed save loadable.
//
// Adding it to a game takes three lines:
//
//	systems, err := arksave.Plugin{Dir: "saves/world1", Generator: terrain}.Install(world)
//	// ... then, every tick, after the game's own systems:
//	for _, s := range systems { s.Update(world) }
//
// # Outline
//
//   - [Plugin]: the configuration; [Plugin.Install] checks that every game
//     type can be saved, adds the resources and returns the systems
//     ([System]: Initialize, Update, Finalize: app.AddSystem takes them in
//     ark-tools' app.App, whose scheduler resources are left out of saves,
//     see [SchedulerResources]; a game loop or an Ebiten Update calls them
//     just as well).
//   - [Persistence]: the resource to save ([Persistence.Save],
//     [Persistence.SaveTo]) and load ([Persistence.Load]) on demand.
//   - [AutosaveConfig] and [AutosaveState]: the autosave resources (seed
//     004): interval, on/off, backups; progress and the last [Result].
//   - Components the game uses are in package components: Chunk, ChunkPos,
//     ChunkState, PixelBody, Persistable, Transient, Focus.
//
// # Save directory
//
// One world is one directory: a manifest (the commit point), the ECS world
// file of the committed generation (PECS, package archetype), the chunk
// store (PXSW, package chunkstore), and backups/. See package autosave.
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
package arksave
