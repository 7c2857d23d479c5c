package savetool

import "errors"

// Errors of the package's operations. Each is returned wrapped with what
// was found and what to do.
var (
	// ErrNoWorld is returned by Repair when no intact ECS world file is left
	// and RepairOptions.EmptyWorld is not set.
	ErrNoWorld = errors.New("savetool: no intact ECS world file")

	// ErrNoChunks is returned by Repair when no chunk store can be read and
	// RepairOptions.EmptyChunks is not set.
	ErrNoChunks = errors.New("savetool: no readable chunk store")

	// ErrUnknownConfig is returned by Repair when a chunk store must be
	// rebuilt without a header and nothing in the directory records the
	// game's constants, seed or generator version.
	ErrUnknownConfig = errors.New("savetool: the game's constants are unknown")

	// ErrDamaged is returned by operations that need an intact save
	// (Compact, Migrate) when it is damaged.
	ErrDamaged = errors.New("savetool: the save is damaged")

	// ErrInUse is returned by the operations that change a save directory
	// (Repair, Compact, Migrate, Restore, ImportInto) while another program, a game,
	// holds it; the error also matches autosave.ErrLocked and names the
	// holder. The operations that only read (Check, InspectDir, RenderDir,
	// ExportJSON) work meanwhile.
	ErrInUse = errors.New("savetool: the save directory is in use; close the game first")

	// ErrNothingToRender is returned by RenderDir and RenderStore when no
	// region is given and nothing is stored.
	ErrNothingToRender = errors.New("savetool: the save stores no chunk; give a region to render")

	// ErrOtherGeneration is returned by ImportInto when the JSON is a save
	// directory's export of another generation than the one committed in
	// the directory (the game saved since, or it comes from another save)
	// and ImportOptions.AnyGeneration is not set.
	ErrOtherGeneration = errors.New("savetool: the JSON was exported from another generation")
)
