package savetool

import (
	"fmt"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/savedir"
)

// RestoreReport says what [Restore] did.
type RestoreReport struct {
	Restored   uint64   // the backed-up generation restored
	Generation uint64   // the generation committed with its contents
	Previous   uint64   // the generation that was current, a backup now
	Backups    []uint64 // the backups before the restore
}

// Restore makes backed-up generation gen of the save directory at dir
// current again, as a new generation committed like a save; the generation
// that was current becomes a backup, and every backup stays. It takes the
// directory's lock: while a game holds it, it fails with ErrInUse naming
// the game (whose next save would otherwise overwrite the restore).
func Restore(dir string, gen uint64, o Options) (*RestoreReport, error) {
	d, err := openLocked(o.fs(), dir, savedir.OpenDir)
	if err != nil {
		return nil, damagedOr(err, dir)
	}
	defer d.Close()
	if d.Manifest() == nil {
		return nil, fmt.Errorf("%w: %s holds no save", autosave.ErrNoSave, dir)
	}
	rep := &RestoreReport{Restored: gen, Previous: d.Generation()}
	for _, b := range d.Backups() {
		rep.Backups = append(rep.Backups, b.Generation)
	}
	m, err := d.Restore(gen, len(rep.Backups)+1)
	if err != nil {
		return nil, fmt.Errorf("%w (backups: %v)", err, rep.Backups)
	}
	rep.Generation = m.Generation
	return rep, nil
}
