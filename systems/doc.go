// Package systems holds the ECS systems of the arksave plugin and the
// runtime they run: chunk streaming, snapshots, regional entities, players
// and save scheduling. The systems come in the shape
// ark-tools' scheduler takes (Initialize, Update, Finalize on the
// [ecs.World]); a game loop or an Ebiten Update calls them just as well.
// arksave.Plugin.Install returns them, in the order to run them every tick
// after the game's own systems.
//
// # Outline
//
//   - [StreamSystem]: loads chunks around every Focus on a loader goroutine
//     and spawns them when they arrive; unloads far chunks, keeping dirty
//     ones and their persistable bodies for the next save.
//   - [SaveSystem]: applies the writer's last result, advances the
//     autosave timer, and when a save is due or asked for takes a snapshot
//     and hands it to the writer goroutine.
//
// The runtime is the plugin's own: a game reaches it through
// arksave.Persistence, which Install adds to the world. The systems hold no
// state of their own: they find the runtime installed in the world they are
// given, so they work with the world Install was given
// (and keep working after arksave.Persistence.Load resets it). Neither
// waits on disk.
//
// [ecs.World]: https://pkg.go.dev/github.com/mlange-42/ark/ecs#World
package systems
