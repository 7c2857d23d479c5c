package savetool

import (
	"fmt"
	"time"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/savedir"
)

// RestoreReport says what [Restore] and [RestoreAt] did.
type RestoreReport struct {
	Restored   uint64    // the kept generation restored
	At         time.Time // when Restored was committed
	Generation uint64    // the generation committed with its contents; Restored when it was the committed one already
	Previous   uint64    // the generation that was current, a backup now (unless it is Restored)
	Backups    []uint64  // the backups before the restore
}

// Restore makes backed-up generation gen of the save directory at dir
// current again, as a new generation committed like a save; the generation
// that was current becomes a backup, and every backup stays. It takes the
// directory's lock: while a game holds it, it fails with ErrInUse naming
// the game (whose next save would otherwise overwrite the restore).
func Restore(dir string, gen uint64, o Options) (*RestoreReport, error) {
	return restore(dir, gen, time.Time{}, o)
}

// RestoreAt is Restore of the newest kept generation committed at or
// before at (savedir.Dir.GenerationAt, as Plugin.LoadVersion picks it).
// When that is the committed generation, nothing is changed and the
// report says so (Generation == Restored). No generation that old is an
// error matching autosave.ErrNoGeneration naming the oldest kept
// generation and its time.
func RestoreAt(dir string, at time.Time, o Options) (*RestoreReport, error) {
	return restore(dir, 0, at, o)
}

func restore(dir string, gen uint64, at time.Time, o Options) (*RestoreReport, error) {
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
	if !at.IsZero() {
		m, err := d.GenerationAt(at)
		if err != nil {
			return nil, err
		}
		rep.Restored, rep.At = m.Generation, time.UnixMilli(m.ModifiedMS)
		if m.Generation == d.Generation() {
			rep.Generation = m.Generation
			return rep, nil
		}
	}
	m, err := d.Restore(rep.Restored, len(rep.Backups)+1)
	if err != nil {
		return nil, fmt.Errorf("%w (backups: %v)", err, rep.Backups)
	}
	if rep.At.IsZero() {
		if b, err := d.Backup(rep.Restored); err == nil {
			rep.At = time.UnixMilli(b.ModifiedMS)
		}
	}
	rep.Generation = m.Generation
	return rep, nil
}
