package savetool

import (
	"errors"
	"fmt"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
)

// CompactOptions configure [Compact].
type CompactOptions struct {
	Options
	// MaxBackups is how many older generations to keep after compacting;
	// the generation compacted becomes one of them. Negative means as many
	// as the directory keeps now. A backup keeps the old chunk store file,
	// so its space is reclaimed only once no backup uses it.
	MaxBackups int
}

// CompactReport says what [Compact] did.
type CompactReport struct {
	Generation  uint64 // the generation committed
	OldStore    string // the store file compacted
	NewStore    string // the compacted copy the new generation uses
	Before      int64  // bytes of the old store file
	After       int64  // bytes of the new one
	DeadBefore  int64  // dead bytes in the old file
	DirBefore   int64  // bytes of the whole save directory, before
	DirAfter    int64  // and after
	OldKept     bool   // the old store file stays: a backup uses it
	BackupsKept int
}

// Compact rewrites the committed chunk store generation of the save
// directory at dir into a new file with only its live records, and commits
// a new generation (the same world) whose manifest names it, as the game's
// writer does when dead space passes the threshold. The old file is never
// changed: backups keep their roots into it, and it is removed once none
// does. A damaged save is not compacted (ErrDamaged): repair it first.
// Compact takes the directory's lock: while a game holds it, it fails with
// ErrInUse naming the game.
func Compact(dir string, o CompactOptions) (*CompactReport, error) {
	t, fsys := newTracker(o.Options)
	d, err := openLocked(fsys, dir, autosave.OpenDir)
	if err != nil {
		return nil, damagedOr(err, dir)
	}
	defer d.Close()
	m := d.Manifest()
	if m == nil {
		return nil, fmt.Errorf("%w; is %s a save directory? (arksave check tells)", d.ManifestErr(), dir)
	}
	world, err := d.ReadWorld(m)
	if err != nil {
		return nil, damagedOr(err, dir)
	}
	s, err := openGeneration(d, m, *inspectOptions(fsys))
	if err != nil {
		return nil, damagedOr(err, dir)
	}
	defer s.Close()
	st := s.Stats()
	rep := &CompactReport{OldStore: m.Chunks.Name, Before: st.FileSize, DeadBefore: st.DeadBytes, DirBefore: dirBytes(fsys, dir)}
	gen := d.Generation() + 1
	rep.NewStore = autosave.CompactedChunksName(gen)
	newStore, err := d.File(rep.NewStore)
	if err != nil {
		return nil, err
	}
	t.begin("compacting "+m.Chunks.Name, 2*st.RecordBytes)
	c, err := s.CompactTo(newStore)
	t.end()
	if err != nil {
		_ = fsys.Remove(newStore)
		return nil, fmt.Errorf("compact: %w", err)
	}
	defer c.Close()
	if open := c.OpenReport(); !open.OK() {
		c.Close()
		_ = fsys.Remove(newStore)
		return nil, fmt.Errorf("%w: %s: %d damaged records met while compacting (first: %v); run arksave repair",
			ErrDamaged, m.Chunks.Name, len(open.Problems), open.Problems[0])
	}
	keep := o.MaxBackups
	if keep < 0 {
		keep = len(d.Backups())
	}
	nm, _, err := d.Commit(autosave.Commit{
		World:      world,
		Chunks:     autosave.StoreRef{Name: rep.NewStore, Generation: c.Generation(), Root: c.Root()},
		MaxBackups: keep,
	})
	if err != nil {
		_ = fsys.Remove(newStore)
		return nil, fmt.Errorf("compact: commit: %w", err)
	}
	rep.Generation = nm.Generation
	rep.After = c.Stats().FileSize
	rep.DirAfter = dirBytes(fsys, dir)
	rep.BackupsKept = len(d.Backups())
	for _, b := range d.Backups() {
		rep.OldKept = rep.OldKept || b.Chunks.Name == rep.OldStore
	}
	return rep, nil
}

// damagedOr marks damage found on the way as ErrDamaged, with what to do.
func damagedOr(err error, dir string) error {
	if errors.Is(err, autosave.ErrCorrupt) || errors.Is(err, chunkstore.ErrCorrupt) {
		return fmt.Errorf("%w: %v; run arksave check %s, then arksave repair", ErrDamaged, err, dir)
	}
	return err
}
