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

	// ErrNothingToRender is returned by RenderDir and RenderStore when no
	// region is given and nothing is stored.
	ErrNothingToRender = errors.New("savetool: the save stores no chunk; give a region to render")
)
