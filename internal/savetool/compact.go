package savetool

import (
	"errors"
	"fmt"
	"slices"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/storetool"
)

// CompactOptions configure [Compact].
type CompactOptions struct {
	Options
	// MaxBackups is how many older generations to keep after compacting;
	// the generation compacted becomes one of them. Negative means as many
	// as the directory keeps now. A backup keeps the files its store
	// generation uses, so their space is reclaimed only once no backup
	// uses them.
	MaxBackups int
	// Whole rewrites the whole chunk store into a new store file and data
	// files, every live record once, instead of compacting data file by
	// data file. It also brings a store of format 1 (a single file) to the
	// current format.
	Whole bool
	// Zstd stores the records the compaction moves with zstd where that
	// is smaller (chunkstore.Options.ZstdArchive): file by file, every
	// data file of the generation that holds records is compacted, dead
	// bytes or not, so that every record ends up archived; with Whole,
	// every record of the new store. A save with zstd records needs this
	// version of arksave or a later one to load.
	Zstd bool
}

// CompactReport says what [Compact] did.
type CompactReport struct {
	Generation  uint64   // the generation committed
	OldStore    string   // the store compacted
	NewStore    string   // the store the new generation uses: the same one unless Whole
	Before      int64    // bytes of the old store's files (store file and data files)
	After       int64    // bytes of the new generation's
	DeadBefore  int64    // dead bytes in the old store's files
	DeadAfter   int64    // and in the new generation's
	Emptied     []string // data files the compaction emptied (file by file); removed unless a backup uses them
	DirBefore   int64    // bytes of the whole save directory, before
	DirAfter    int64    // and after
	OldKept     bool     // files the old generation used stay: a backup uses them
	BackupsKept int
	Zstd        int // records the compaction stored as zstd (CompactOptions.Zstd; file by file only, Whole does not count them)

	mark *storetool.Mark // the store before a file-by-file compaction, for a failed commit
}

// Compact reclaims the dead space of the committed chunk store generation
// of the save directory at dir and commits a new generation (the same
// world) whose manifest names the result, as the game's writer does
// between saves. File by file (the default), it moves the live records of
// every data file whose dead bytes pass the store's threshold into the
// newest data file, one data file at a time, within the same store; with
// Whole, it writes a new store. Files the committed generation used are
// never changed: backups keep their roots into them, and they are removed
// once none does. A damaged save is not compacted (ErrDamaged): repair it
// first. Compact takes the directory's lock: while a game holds it, it
// fails with ErrInUse naming the game.
func Compact(dir string, o CompactOptions) (*CompactReport, error) {
	t, fsys := newTracker(o.Options)
	d, err := openLocked(fsys, dir, savedir.OpenDir)
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
	rep := &CompactReport{OldStore: m.Chunks.Name, NewStore: m.Chunks.Name, DirBefore: dirBytes(fsys, dir)}
	var c *chunkstore.Store
	if o.Whole || isFormat1(m) {
		c, err = compactWhole(d, m, rep, t, o.Zstd)
	} else {
		c, err = compactFiles(d, m, rep, t, o.Zstd)
	}
	if err != nil {
		return nil, err
	}
	defer c.Close()
	keep := o.MaxBackups
	if keep < 0 {
		keep = len(d.Backups())
	}
	nm, _, err := d.Commit(savedir.Commit{
		World:      world,
		Chunks:     savedir.StoreRef{Name: rep.NewStore, Generation: c.Generation(), Root: c.Root(), Data: storetool.Tool.DataFileNames(c)},
		Players:    m.Players,
		MaxBackups: keep,
	})
	if err != nil {
		if rep.NewStore != rep.OldStore {
			_ = removeStore(d, rep.NewStore)
		} else if rep.mark != nil {
			_ = storetool.Tool.Revert(c, *rep.mark) // the store's files as they were
		}
		return nil, fmt.Errorf("compact: commit: %w", err)
	}
	rep.Generation = nm.Generation
	st := storetool.Tool.Stats(c)
	rep.After, rep.DeadAfter = st.FileSize, st.DeadBytes
	rep.DirAfter = dirBytes(fsys, dir)
	rep.BackupsKept = len(d.Backups())
	for _, b := range d.Backups() {
		rep.OldKept = rep.OldKept || b.Chunks.Name == rep.OldStore && (rep.NewStore != rep.OldStore || len(rep.Emptied) > 0)
	}
	return rep, nil
}

// isFormat1 reports whether the manifest's store generation is of chunk
// store format 1: a single file, which file-by-file compaction cannot
// shrink.
func isFormat1(m *savedir.Manifest) bool {
	ri, err := storetool.Tool.ParseRoot(m.Chunks.Root)
	return err == nil && ri.FormatVersion < chunkstore.FormatVersion && len(m.Chunks.Data) == 0
}

// compactWhole writes the committed store generation into a new store.
func compactWhole(d *savedir.Dir, m *savedir.Manifest, rep *CompactReport, t *tracker, zstd bool) (*chunkstore.Store, error) {
	o := *inspectOptions(d.FS(), nil)
	o.ZstdArchive = zstd
	s, err := openGeneration(d, m, o)
	if err != nil {
		return nil, damagedOr(err, d.Path())
	}
	defer s.Close()
	st := storetool.Tool.Stats(s)
	rep.Before, rep.DeadBefore = st.FileSize, st.DeadBytes
	rep.NewStore = savedir.CompactedChunksName(d.Generation() + 1)
	newStore, err := d.File(rep.NewStore)
	if err != nil {
		return nil, err
	}
	t.begin("compacting "+m.Chunks.Name, 2*st.RecordBytes)
	c, err := s.CompactTo(newStore)
	t.end()
	if err != nil {
		_ = removeStore(d, rep.NewStore)
		return nil, fmt.Errorf("compact: %w", err)
	}
	if open := c.OpenReport(); !open.OK() {
		c.Close()
		_ = removeStore(d, rep.NewStore)
		return nil, fmt.Errorf("%w: %s: %d damaged records met while compacting (first: %v); run arksave repair",
			ErrDamaged, m.Chunks.Name, len(open.Problems), open.Problems[0])
	}
	return c, nil
}

// compactFiles compacts the committed store generation data file by data
// file, in the store itself: every file with dead bytes, and with zstd
// every data file with records.
func compactFiles(d *savedir.Dir, m *savedir.Manifest, rep *CompactReport, t *tracker, zstd bool) (*chunkstore.Store, error) {
	root, err := rootOf(d, m)
	if err != nil {
		return nil, damagedOr(err, d.Path())
	}
	ri, err := storetool.Tool.ParseRoot(root)
	if err != nil {
		return nil, damagedOr(err, d.Path())
	}
	p, err := d.File(m.Chunks.Name)
	if err != nil {
		return nil, err
	}
	// The tool has no generator: records are moved as they are, and the
	// root's generator version is kept.
	s, err := chunkstore.Open(p, &chunkstore.Options{FS: d.FS(), Root: root, Generator: VersionOnly(ri.GeneratorVersion), ZstdArchive: zstd})
	if err != nil {
		return nil, damagedOr(err, d.Path())
	}
	if open := s.OpenReport(); !open.OK() {
		s.Close()
		return nil, fmt.Errorf("%w: %s: %v; run arksave repair", ErrDamaged, m.Chunks.Name, open.Problems[0])
	}
	st := storetool.Tool.Stats(s)
	rep.Before, rep.DeadBefore = st.FileSize, st.DeadBytes
	t.begin("compacting "+m.Chunks.Name, st.RecordBytes)
	defer t.end()
	// Every file with dead bytes, once (asked for, it need not pass the
	// threshold the game's writer waits for), and with zstd every data
	// file with records; the newest one last, since compacting it starts
	// the next.
	files := storetool.Tool.Files(s)
	slices.SortStableFunc(files, func(a, b storetool.FileStats) int { return cmpBool(a.Newest, b.Newest) })
	mark, err := storetool.Tool.Mark(s)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("compact: %w", err)
	}
	undo := func(err error) (*chunkstore.Store, error) {
		_ = storetool.Tool.Revert(s, mark) // the files as they were; closes the store
		return nil, err
	}
	for _, f := range files {
		if !needsCompacting(f, zstd) {
			continue
		}
		cs, err := storetool.Tool.CompactFile(s, f.Number)
		if err != nil {
			if errors.Is(err, chunkstore.ErrCorrupt) {
				return undo(fmt.Errorf("%w: compact: %v; run arksave repair", ErrDamaged, err))
			}
			return undo(fmt.Errorf("compact: %w", err))
		}
		rep.Zstd += cs.Zstd
		if cs.Dropped > 0 {
			return undo(fmt.Errorf("%w: %s: %d damaged records met while compacting; run arksave repair", ErrDamaged, m.Chunks.Name, cs.Dropped))
		}
		for _, n := range cs.Files {
			if n != 0 {
				rep.Emptied = append(rep.Emptied, storetool.Tool.DataFileName(m.Chunks.Name, n))
			}
		}
	}
	slices.Sort(rep.Emptied)
	rep.mark = &mark
	return s, nil
}

// needsCompacting reports whether file-by-file compaction moves the
// records of f: a file with dead bytes, and with zstd also a data file
// with records to archive.
func needsCompacting(f storetool.FileStats, zstd bool) bool {
	if zstd && f.Number != 0 && f.Live > storetool.DataHeaderSize {
		return true
	}
	return f.Dead > 0
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// removeStore removes a chunk store file the tool wrote and its data files.
func removeStore(d *savedir.Dir, name string) error {
	names, _ := d.FS().ReadDir(d.Path())
	var first error
	for _, n := range append(names, name) {
		if store, _, ok := savedir.DataFileOf(n); n == name || ok && store == name {
			p, err := d.File(n)
			if err == nil {
				err = d.FS().Remove(p)
			}
			if err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// damagedOr marks damage found on the way as ErrDamaged, with what to do.
func damagedOr(err error, dir string) error {
	if errors.Is(err, autosave.ErrCorrupt) || errors.Is(err, chunkstore.ErrCorrupt) {
		return fmt.Errorf("%w: %v; run arksave check %s, then arksave repair", ErrDamaged, err, dir)
	}
	return err
}
