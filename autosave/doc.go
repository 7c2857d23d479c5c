// Package autosave holds what a game sees of saving: the ECS resources it
// configures autosave with and reads its progress from, the result of a
// save, and the errors a save or a load can end with.
//
//   - [Config] (an ECS resource the plugin adds; edit it at any time): how
//     often to save, how many backups to keep.
//   - [State] (an ECS resource the plugin updates every tick): time since
//     the last save, whether one is in progress and how far, the last
//     [Result], and the [Fallback] of a load that found its save damaged.
//   - [SimulationState]: set Paused while a save runs when
//     [Config.PauseDuringSave] is set.
//   - Errors: [ErrLocked] (another program holds the save: a
//     [*LockedError] names it), [ErrNoSave], [ErrCorrupt], [ErrClosed], ...,
//     all matched with errors.Is.
//
// The writer goroutine that commits the saves, and the save directory's
// commit protocol, are the plugin's own (github.com/arksave/arksave); a
// game reaches them through arksave.Persistence. [docs/format.md]
// describes the save directory.
//
// [docs/format.md]: https://github.com/arksave/arksave/blob/main/docs/format.md
package autosave
