// Package systems holds the ECS systems of the arksave plugin and the
// [Runtime] they share.
//
// # Outline
//
//   - [Runtime]: the state behind the plugin: the autosave writer, the chunk
//     loader, chunks and bodies unloaded but not yet committed, save requests.
//   - [SaveSystem]: each tick, applies the writer's last result (dirty chunks
//     it committed become Persisted unless they changed since), advances the
//     autosave timer, and when a save is due or asked for takes a
//     [snapshot.Snapshot] and hands it to the writer.
//   - [StreamSystem]: loads chunks around every [components.Focus] on a
//     loader goroutine and spawns them when they arrive; unloads far chunks,
//     keeping dirty ones and their persistable bodies for the next save.
//
// Systems have the ark-tools shape: Initialize, Update and Finalize take
// the [ecs.World]; they run under a scheduler or straight from a game's
// Update. Neither system waits on disk.
//
// [ecs.World]: https://pkg.go.dev/github.com/mlange-42/ark/ecs#World
package systems
