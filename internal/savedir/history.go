package savedir

import (
	"fmt"
	"strings"
	"time"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/words"
)

// Picked says which kept generation a load by generation or by time made
// current: generation Loaded, committed at At, now current as generation
// Generation (equal to Loaded when it was the committed one already).
type Picked struct {
	Loaded     uint64
	At         time.Time
	Generation uint64
}

// String says what the load did in one line.
func (p *Picked) String() string {
	at := p.At.UTC().Format(time.RFC3339)
	if p.Loaded == p.Generation {
		return fmt.Sprintf("loaded generation %d of %s, the committed one", p.Loaded, at)
	}
	return fmt.Sprintf("loaded generation %d of %s as generation %d; the generations after it are kept as backups", p.Loaded, at, p.Generation)
}

// committedAt is the time a manifest's generation was committed.
func committedAt(m *Manifest) time.Time { return time.UnixMilli(m.ModifiedMS) }

// kept returns the committed generation and the intact backups, newest
// first.
func (d *Dir) kept() []*Manifest {
	var out []*Manifest
	if m := d.Manifest(); m != nil {
		out = append(out, m)
	}
	return append(out, d.Backups()...)
}

// GenerationAt returns the manifest of the newest kept generation (the
// committed one or a backup) committed at or before t. When every kept
// generation is younger than t, or none is kept, the error matches
// autosave.ErrNoGeneration and names the oldest kept generation and its
// time.
func (d *Dir) GenerationAt(t time.Time) (*Manifest, error) {
	kept := d.kept()
	for _, m := range kept {
		if !committedAt(m).After(t) {
			return m, nil
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("%w: %s holds no generation at all, so none committed at or before %s", autosave.ErrNoGeneration, d.path, t.UTC().Format(time.RFC3339))
	}
	oldest := kept[len(kept)-1]
	return nil, fmt.Errorf("%w: %s holds no generation committed at or before %s: the oldest kept is generation %d of %s; give a later time, or --generation %d",
		autosave.ErrNoGeneration, d.path, t.UTC().Format(time.RFC3339), oldest.Generation, committedAt(oldest).UTC().Format(time.RFC3339), oldest.Generation)
}

// Pick returns the manifest of the kept generation that gen or at names:
// generation gen (the committed one or a backup), or the newest committed
// at or before at (GenerationAt). Exactly one of them must be set;
// anything else, and a generation the directory does not keep, is an error
// matching autosave.ErrNoGeneration that lists what it keeps.
func (d *Dir) Pick(gen uint64, at time.Time) (*Manifest, error) {
	switch {
	case gen != 0 && !at.IsZero():
		return nil, fmt.Errorf("%w: both generation %d and the time %s were given for %s: give one of them", autosave.ErrNoGeneration, gen, at.UTC().Format(time.RFC3339), d.path)
	case gen == 0 && at.IsZero():
		return nil, fmt.Errorf("%w: neither a generation nor a time was given for %s: give one of them", autosave.ErrNoGeneration, d.path)
	case !at.IsZero():
		return d.GenerationAt(at)
	}
	if m := d.Manifest(); m != nil && m.Generation == gen {
		return m, nil
	}
	return d.Backup(gen)
}

// LoadPicked returns the world file of the kept generation that gen or at
// names (Pick), for a load, having made it current: the committed
// generation loads as LoadIntact loads it (falling back to a backup when
// it is damaged, reported by the Fallback); a backup is verified whole
// (VerifyGeneration with validate) and then made current as a new
// generation by Restore, the committed generation becoming a backup and
// every backup kept, so that nothing is lost and no backup's file is
// written to. A backup that is damaged is an error wrapping ErrCorrupt
// that lists the damage, and nothing is changed; so is any error of Pick,
// of validate, or a file that cannot be read (ErrUnreadable).
func (d *Dir) LoadPicked(gen uint64, at time.Time, validate func(world []byte) error) ([]byte, *autosave.Fallback, *Picked, error) {
	m, err := d.Pick(gen, at)
	if err != nil {
		return nil, nil, nil, err
	}
	picked := &Picked{Loaded: m.Generation, At: committedAt(m), Generation: m.Generation}
	if m.Generation == d.Generation() {
		world, fb, err := d.LoadIntact(validate)
		if err != nil {
			return nil, nil, nil, err
		}
		if fb != nil {
			picked.Generation = fb.Generation
		}
		return world, fb, picked, nil
	}
	world, probs, err := d.VerifyGeneration(m, validate)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(probs) > 0 {
		return nil, nil, nil, fmt.Errorf("%w: generation %d of %s is damaged (%s); nothing was changed: load another of the kept generations (%s), or run arksave check %s",
			autosave.ErrCorrupt, m.Generation, d.path, words.FirstThree(probs), d.keptList(), d.path)
	}
	// Every backup stays: the load makes one more.
	h, err := d.Restore(m.Generation, len(d.Backups())+1)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("load generation %d of %s: %w", m.Generation, d.path, err)
	}
	picked.Generation = h.Generation
	return world, nil, picked, nil
}

// keptList names the kept generations with their times, newest first.
func (d *Dir) keptList() string {
	var s []string
	for _, m := range d.kept() {
		s = append(s, fmt.Sprintf("%d of %s", m.Generation, committedAt(m).UTC().Format(time.RFC3339)))
	}
	return strings.Join(s, ", ")
}

// ContinueAt is ContinueIntact for a kept generation other than the
// committed one: it makes the writer write to the save at dir once the
// generation that gen or at names (Dir.Pick) is current and validate
// accepts its world file, and returns that file and what was loaded
// ([Dir.LoadPicked]). On an error the writer stays where it was; an error
// before the generation is made current (a bad pick, damage, validate's
// verdict, a file that cannot be read) changes nothing in dir. A save must
// not be pending.
func (w *Writer) ContinueAt(dir string, gen uint64, at time.Time, validate func(world []byte) error) ([]byte, *autosave.Fallback, *Picked, error) {
	var fb *autosave.Fallback
	var picked *Picked
	world, err := w.switchTo(dir, false, func(d *Dir) ([]byte, error) {
		if d.Manifest() == nil {
			return nil, fmt.Errorf("%w: %s", autosave.ErrNoSave, dir)
		}
		world, f, p, err := d.LoadPicked(gen, at, validate)
		fb, picked = f, p
		return world, err
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return world, fb, picked, nil
}
