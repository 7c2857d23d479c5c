// Package savedir owns a save directory: its commit protocol, its lock,
// its walls, and the writer goroutine that commits a game's saves.
//
// # Outline
//
//   - [Dir]: the save directory. [OpenDir] opens it for writing and takes
//     its lock; [OpenDirForRepair] for tools that mend it; [OpenDirReadOnly]
//     for readers, without the lock, while a game may be saving
//     ([ReadConsistent], [Dir.Stale]). [Dir.Commit] makes a generation
//     current (world file, then the manifest); older ones go to backups/,
//     sharing the chunk store and the players data with the generations
//     after them (or, written by writers before mirrors, with a chunk store
//     and players files of their own: [CopiedChunksName],
//     [CopiedPlayersName]).
//   - Mirrors (mirror.go): after each commit the writer grows one mirror
//     per shared file in backups/ ([MirrorName]) by what the committed
//     generation uses of it; [Dir.CheckMirrors], [Dir.RestoreFromMirrors]
//     and [Dir.GrowMirrors] are for arksave check and repair.
//   - Loading: [Dir.VerifyGeneration] reads a generation as a load uses
//     it; [Dir.LoadIntact] (and [Writer.ContinueIntact]) verify a damaged
//     generation again with the mirrors of its damaged files, then fall
//     back to the newest intact backup, and say so in a
//     [autosave.Fallback]; a file that cannot be read without being
//     damaged fails the load ([autosave.ErrUnreadable]) and changes nothing.
//   - [Manifest]: the commit point, JSON with its own CRC32-C; the files of
//     a generation as [FileRef], [StoreRef] and [PlayersRef].
//   - Players files (players.go): an append-only players data file of
//     records and a [Players] index per generation; [Dir.ReadPlayers],
//     [Dir.ReadPlayer], [Writer.ReadPlayer]; a save writes the records of
//     the players that changed ([snapshot.PlayerRecord]).
//   - [Writer]: the goroutine that commits [Job]s and reports [autosave.Result]s,
//     and compacts the chunk store between saves, data file by data file
//     (the next save's manifest names the result: [autosave.Result.Compacted]);
//     [autosave.Config] and [autosave.State] are the game's ECS resources for autosave.
//     [Writer.Progress] moves with the work, chunk by chunk and byte by
//     byte, and is 1 only once a save's manifest is in place;
//     [Options.Logger] gets the writer's log through log/slog.
//   - [ReadConsistent]: a reader's view of one committed generation while
//     a game saves; checking a directory is package savetool's.
//
// # One owner
//
// A directory opened for writing is locked: an exclusive operating-system
// lock on the file [LockName] inside it, which names its holder ([autosave.Holder]:
// program, pid, host, since when), held until [Dir.Close] (a [Writer]
// holds it until [Writer.Close]). A second holder, in this process or
// another, gets [autosave.ErrLocked] (a [*autosave.LockedError] naming the first); the lock
// dies with its process, so a killed game never leaves its directory
// locked. Readers take no lock and change nothing.
//
// Where the file system can (flock on the directory on Unix, see
// the LockDir method of vfs.FS), the directory itself is locked too, so that a lock file
// removed or replaced while its holder runs lets nobody in; the holder
// checks its lock file before each commit and takes it anew. Where the
// directory cannot be locked, a holder whose lock file was removed or
// replaced commits nothing more (a [*autosave.LockedError] with Lost set).
//
// # Walls
//
// Every name a manifest holds must have its field's form: world-<G>.pecs,
// chunks.pxsw or chunks-<G>.pxsw (and a repair's
// chunks-<G>-backup-<B>.pxsw), the data files of that store
// (chunks-data-<N>.pxsd, chunks-<G>-data-<N>.pxsd: [DataFileOf]),
// backups/world-<G>.pecs, a backup's own chunk store
// backups/chunks-<G>.pxsw and its data files (only in the backup manifest
// of generation G), players-<g>.pxpl, players.pxpd or
// players-<g>.pxpd (g no later than G); anything else is
// [autosave.ErrCorrupt] naming the field, and so is a generation above
// [MaxGeneration]. Every file operation of a [Dir] goes through one
// function that checks the name and refuses a symbolic link, or any file
// that is not a regular one, in its place, and a backups/ that is not a
// plain directory: nothing outside the directory is read, written,
// renamed or removed. A directory whose manifest is damaged, or lost while
// a committed save's files remain, is never started over: opening it for
// writing fails naming arksave repair. A directory on a medium that cannot
// be written opens read-only ([autosave.ErrReadOnly] for every change).
//
// # Format
//
// [docs/format.md] describes the save directory (the manifest's JSON and
// its versions, [ManifestVersion], the file names, the lock file, the
// commit protocol) and the two file formats in it, and what this module
// promises about reading older saves.
//
// [docs/format.md]: https://github.com/arksave/arksave/blob/main/docs/format.md
package savedir
