package autosave

import (
	"fmt"
	"time"
)

// Config is the ECS resource that controls autosave: arksave.Plugin's
// Autosave field gives its first value. The plugin reads it every tick, so a game can change it
// at any time, for example from a settings menu.
type Config struct {
	// Interval between automatic saves. The timer counts game ticks, not wall
	// time, and restarts after every save, automatic or requested.
	Interval time.Duration
	// Enabled turns automatic saves on or off. Requested saves always run.
	Enabled bool
	// MaxBackups is how many older generations are kept in backups/ and can
	// be restored, whatever Retention says: the newest MaxBackups are kept
	// on top of what Retention keeps. 0 keeps none beyond Retention's.
	MaxBackups int
	// Retention decides which older generations stay in backups/ by their
	// age (see Retention); the zero value keeps none by age, so that only
	// MaxBackups counts. DefaultConfig fills it in.
	Retention Retention
	// BackupCopyEvery is deprecated and ignored: the writer no longer
	// copies the whole chunk store for a backup. After every save it grows
	// one mirror per file that generations share, in backups/ (each data
	// file of the chunk store and the players data up to what the
	// generation uses, the players index and the store file's header
	// slots): a sealed data file is copied once in its life, a save's
	// records twice, and a load that finds a file damaged reads its mirror
	// (docs/format.md, "Backups"). The field stays so that games that set
	// it compile. Backups written with copies (backups/chunks-<G>.pxsw,
	// backups/players-<G>.pxpl) still load.
	BackupCopyEvery int
	// PauseDuringSave asks the game to pause its simulation while a save is
	// in progress: the plugin sets
	// SimulationState.Paused, the game's systems honour it.
	PauseDuringSave bool
}

// DefaultConfig returns the defaults: every 300 s, enabled, one backup
// whatever its age, and a retention that keeps every save of the last hour,
// one per 10 minutes for a day and one a day for a week.
func DefaultConfig() Config {
	return Config{Interval: 300 * time.Second, Enabled: true, MaxBackups: 1, Retention: Retention{
		All:  time.Hour,
		Thin: []Keep{{Every: 10 * time.Minute, For: 24 * time.Hour}, {Every: 24 * time.Hour, For: 7 * 24 * time.Hour}},
	}}
}

// Retention is a policy that keeps older generations by their age: every
// generation saved within All, then, for each Keep of Thin, one
// generation per Keep.Every among those younger than Keep.For. A
// generation's age is measured from the committed generation's save time
// (the manifests' modified times), not from the clock: a save directory
// left alone for a month keeps what it kept. A generation is kept when
// the policy keeps it or when it is among the newest Config.MaxBackups;
// the rest are dropped at the next save, and with them the data files
// only they used (docs/format.md, "Backups").
//
// The kept generations share the chunk store's data files: what a kept
// generation costs is the records that changed after it (compaction keeps
// every record a kept generation uses), plus its own world file.
//
// Durations must not be negative: Plugin.Install refuses them with an
// error matching ErrInvalidConfig (set later, a negative one keeps nothing,
// as zero does: a zero duration keeps nothing by itself).
type Retention struct {
	// All keeps every generation saved within it.
	All time.Duration
	// Thin keeps fewer generations as they age: for each Keep, the oldest
	// generation of each Keep.Every (counted from the Unix epoch, so that a
	// generation kept stays kept as time goes on) among those younger
	// than Keep.For.
	Thin []Keep
}

// Keep is one step of a Retention's thinning: one generation per Every,
// for generations younger than For.
type Keep struct {
	Every time.Duration
	For   time.Duration
}

// State is the ECS resource that shows what autosave is doing. The
// plugin writes it; the game reads it, for example to
// draw a progress bar.
type State struct {
	// TimeSinceLastSave is the game time since the last save finished.
	TimeSinceLastSave time.Duration
	// InProgress is true from the snapshot until the writer reports back.
	InProgress bool
	// Progress of the running save, from 0 to 1 (Writer.Progress, read
	// once a tick): it moves chunk by chunk as the save compresses its
	// chunks and byte by byte as it writes, never goes back within a save,
	// and reaches 1 only once the save's manifest is durably in place; a
	// failed save stops short of 1. It is 0 when no save runs.
	Progress float32
	// Saves counts the saves that finished, successfully or not.
	Saves int
	// LastResult is the outcome of the last finished save; nil before the first.
	LastResult *Result
	// LongestStall is the longest time the game loop spent on saving in one
	// tick since the plugin started: taking a save's snapshot and handing
	// it off, and copying tiles for the running save (copy-on-write: the
	// first write into a tile of a chunk the writer has not read yet),
	// added up per tick.
	LongestStall time.Duration
	// CopiedTiles counts the tiles (components.TileSize squared pixels)
	// the game copied for running saves since the plugin started.
	CopiedTiles int
	// Fallback is set when the last load found the committed generation
	// damaged and loaded the newest intact backup instead (see
	// Dir.LoadIntact); nil when it loaded the committed generation.
	Fallback *Fallback
}

// Result is the outcome of one save.
type Result struct {
	// Err is nil when the save committed. The previous generation is then
	// still the last committed one, and the next save retries.
	Err error
	// Generation is the committed generation (the previous one on error).
	Generation uint64
	// Dir is the save directory written to.
	Dir string
	// Stall is the time the game loop spent taking the snapshot.
	Stall time.Duration
	// Duration is the time from the request to the durable commit.
	Duration time.Duration
	// ChunksWritten counts the chunk records written, RegionsWritten the
	// chunks whose regional entities were written (entity blocks),
	// BodiesWritten the pixel bodies among them, PlayersWritten the player
	// records.
	ChunksWritten  int
	RegionsWritten int
	BodiesWritten  int
	PlayersWritten int
	// ChunksStored counts the chunks the chunk store holds at the
	// committed generation, WorldEntities the entities in its ECS world
	// file (the PECS header's count: the regional entities and players
	// saved apart are not among them).
	ChunksStored  int
	WorldEntities int
	// BytesWritten counts every byte written to disk for this save.
	BytesWritten int64
	// WorldBytes is the size of the ECS world file.
	WorldBytes int64
	// Compacted tells whether the generation this save committed includes
	// a compaction of the chunk store: the writer compacts between saves,
	// data file by data file, and the next save's manifest names the
	// result (the emptied files are removed then, unless a backup needs
	// them).
	Compacted bool
	// CompactErr is set when a compaction step between the previous save
	// and this one failed; the store stayed as it was and the writer tries
	// again after this save.
	CompactErr error
	// BackupChunks names the chunk store of its own (backups/chunks-<G>.pxsw)
	// that the backup of the generation this save replaced got: the copy
	// the writer made after the previous save. Empty when that backup
	// shares the current store.
	BackupChunks string
	// BackupCopyBytes and BackupCopyDuration are what the last copy of the
	// chunk store (and the players) into backups/, between the previous
	// save and this one, wrote and took; BackupCopyErr why it failed (the
	// backup then shares the current store and players files, and the
	// writer copies again after the next save).
	BackupCopyBytes    int64
	BackupCopyDuration time.Duration
	BackupCopyErr      error
}

// String summarises the result in one line.
func (r *Result) String() string {
	if r.Err != nil {
		return fmt.Sprintf("save failed after %v: %v", r.Duration.Round(time.Microsecond), r.Err)
	}
	return fmt.Sprintf("generation %d: %d chunks (%d stored), %d regions, %d bodies, %d players, %d entities in the world file, %d bytes in %v (stall %v)",
		r.Generation, r.ChunksWritten, r.ChunksStored, r.RegionsWritten, r.BodiesWritten, r.PlayersWritten, r.WorldEntities, r.BytesWritten,
		r.Duration.Round(time.Microsecond), r.Stall.Round(time.Microsecond))
}

// SimulationState is the ECS resource through which the plugin asks the
// game to pause its simulation while a save runs, when
// Config.PauseDuringSave is set. Game systems that move pixels
// skip their update while Paused is true.
type SimulationState struct {
	Paused bool
}
