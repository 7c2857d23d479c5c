package arksave

import (
	"errors"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/errs"
	"github.com/arksave/arksave/internal/plugin"
)

// Errors of the plugin and of the save directory, matched with errors.Is.
var (
	// ErrCorrupt is matched by every error about damaged data, whatever
	// layer found it: the world file codec's (archetype.ErrCorrupt), the
	// chunk store's (chunkstore.ErrCorrupt and chunkstore.ErrChecksum) and
	// the save directory's (autosave.ErrCorrupt: a damaged or lost
	// manifest, a file that fails its size or checksum). The layer's own
	// error, and its detail (file, section, offset), stay in the chain.
	ErrCorrupt = errs.Corrupt

	// ErrLocked is returned by [Plugin.Install] (and by a
	// [Persistence.Load] or [Persistence.SaveAs] into another directory)
	// when another holder, in this process or another, has the save
	// directory open: one writer per world. The message names the holder
	// (program, pid, host, since when) and what to do.
	ErrLocked = autosave.ErrLocked

	// ErrNoSave is returned by [Plugin.Install] with Load, and by
	// [Persistence.Load], when the directory does not exist or holds no
	// save (unless LoadOrCreate asks to start a new world there). A game
	// checks for it to offer "new game" instead of "continue".
	ErrNoSave = autosave.ErrNoSave

	// ErrManifestLost is returned by [Plugin.Install] (with Load,
	// LoadOrCreate or Overwrite) and by [Persistence.Load] when the
	// directory has lost its manifest, the commit point, but holds a save's
	// files: it is not a directory without a save, and no new world is
	// started over it. The error names the files and arksave repair, which
	// rebuilds the manifest; it matches ErrCorrupt too.
	ErrManifestLost = autosave.ErrManifestLost

	// ErrClosed is returned at once by every call of a [Persistence] that
	// can fail after its Close (Close again included): Save and SaveAs
	// return a handle that is complete already with this error, SaveNow,
	// Wait and WaitIdle a Result that holds it. Saves asked for before
	// Close that had not started complete with it too. The save directory
	// was released: install the plugin again to save there.
	ErrClosed = autosave.ErrClosed

	// ErrInstalled is returned by [Plugin.Install] into a world the plugin
	// is installed in already, while that installation's Persistence is
	// open: one world saves to one directory. The first installation
	// keeps its directory and goes on saving; Close it first, or switch
	// saves with [Persistence.Load] or [Persistence.SaveAs].
	ErrInstalled = errors.New("arksave: the plugin is installed in this world already")

	// ErrReadOnly is the error of every save into a directory that cannot
	// be written (a read-only medium): the save loads, saves report it.
	ErrReadOnly = autosave.ErrReadOnly

	// ErrExhausted is the error of every save into a directory whose
	// committed generation is the last one a save directory can have
	// (savedir.MaxGeneration): the game keeps running and the save stays
	// loadable; a [Persistence.SaveAs] into a new directory starts its
	// generations again at 1.
	ErrExhausted = autosave.ErrExhausted

	// ErrNoPlayer is returned by [Persistence.LoadPlayer] for a player the
	// save holds no record of (a new player), and by
	// [Persistence.SavePlayer] for one without entities in the world.
	ErrNoPlayer = plugin.ErrNoPlayer

	// ErrPlayerOnline is returned by [Persistence.LoadPlayer] for a player
	// whose entities are in the world already, and by
	// [Persistence.DeletePlayer] for such a player.
	ErrPlayerOnline = plugin.ErrPlayerOnline

	// ErrChunkNotLoaded is returned by [Persistence.SetChunkData] and
	// [Persistence.ChunkData] for a chunk that is not loaded.
	ErrChunkNotLoaded = plugin.ErrChunkNotLoaded

	// ErrSaveExists is returned by [Plugin.Install] when the directory
	// holds a save and the plugin was asked neither to load it nor to
	// overwrite it.
	ErrSaveExists = errors.New("arksave: the save directory holds a save; set Plugin.Load to continue it or Plugin.Overwrite to start a new world there")
)
