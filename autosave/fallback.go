package autosave

import (
	"fmt"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/words"
)

// Fallback describes a load that found the committed generation damaged
// and loaded the newest intact backup instead: the load committed
// that backup's contents as a new generation, the damaged generation
// became a backup (its files were moved or left, none removed), and the
// game continues from the new one.
type Fallback struct {
	// Damaged is the generation the manifest named, Loaded the generation
	// loaded instead (a backup's, or Damaged itself when only its chunk
	// store or its players were damaged and the copies made for its backup
	// are intact),
	// Generation the generation committed with Loaded's contents.
	Damaged, Loaded, Generation uint64
	// Problems is the damage found in generation Damaged, each naming its
	// file; every Err matches ErrCorrupt.
	Problems []chunkstore.Problem
}

// String says what happened in one line.
func (f *Fallback) String() string {
	from := fmt.Sprintf("backup generation %d", f.Loaded)
	if f.Loaded == f.Damaged {
		from = fmt.Sprintf("generation %d from the copies made for its backup (chunk store, players)", f.Loaded)
	}
	return fmt.Sprintf("generation %d is damaged (%s); loaded %s as generation %d; the damaged generation %d is kept as a backup, its files as they were",
		f.Damaged, words.FirstThree(f.Problems), from, f.Generation, f.Damaged)
}

// Problem returns the fallback as one Problem of the manifest, its Err
// matching ErrCorrupt: the report a game shows.
func (f *Fallback) Problem() chunkstore.Problem {
	return chunkstore.Problem{File: "manifest", Section: "generation", Offset: -1, Err: fmt.Errorf("%w: %s", ErrCorrupt, f)}
}
