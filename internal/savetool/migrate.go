package savetool

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/pecs"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/words"
	"github.com/arksave/arksave/vfs"
)

// MigrateReport says what [Migrate] did.
type MigrateReport struct {
	From, To          int      // manifest format versions of the committed generation
	Generation        uint64   // the generation committed; 0 when nothing was to do
	BackupsUpgraded   []uint64 // backup manifests rewritten in the current format
	NothingToDo       bool
	WorldVersion      string // the world file's format, e.g. "PECS 1.0"
	StoreFrom         int    // the chunk store's format version before
	StoreVersion      int    // and after
	CurrentManifest   int    // savedir.ManifestVersion
	CheckedBeforehand bool   // the directory checked clean first
	PixelFrom         int    // bytes per pixel of the committed chunk store before (1, 2, 4 or 8)
	PixelTo           int    // and after: 4
}

// Migrate upgrades the save directory at dir to the current format
// versions, in place and safely: the committed generation is rewritten as a
// new generation (the same world, the same chunks), committed like a save
// (world file, then the manifest); the old generation becomes a backup.
// A chunk store of format 1 (a single file; see chunkstore.FormatVersion)
// is written into a new store of the current format (a store file and
// data files), and so is one of 1-, 2- or 8-byte pixels (written by
// another build of a game), with 4-byte pixels, after checking that every
// stored value fits in 32 bits: when one does not, Migrate writes nothing
// and returns an error wrapping chunkstore.ErrConfigMismatch that names
// the chunk, the pixel and the value; a manifest of format 1 gets the root of its store
// generation, one of format 1 or 2 the data files its store generation
// uses (see [savedir.ManifestVersion]). Backup manifests of older formats
// are then rewritten with their roots and data files, one atomic replace
// each; their stores stay as they are. A damaged save is not migrated
// (ErrDamaged): repair writes the current formats too. Migrate takes the
// directory's lock: while a game holds it, it fails with ErrInUse naming
// the game.
func Migrate(dir string, o Options) (*MigrateReport, error) {
	fsys := o.fs()
	// A store whose values do not fit is refused before anything, the
	// lock file included, is written (and checked again under the lock).
	if _, err := PixelMigration(dir, o); errors.Is(err, chunkstore.ErrConfigMismatch) {
		return nil, fmt.Errorf("migrate: %w; nothing was written", err)
	}
	d, err := openLocked(fsys, dir, savedir.OpenDir)
	if err != nil {
		return nil, damagedOr(err, dir)
	}
	defer d.Close()
	pixels, err := checkBeforeMigrate(d, fsys, dir)
	if err != nil {
		return nil, err
	}
	m := d.Manifest()
	rep := &MigrateReport{From: m.Version, To: m.Version, CurrentManifest: savedir.ManifestVersion, CheckedBeforehand: true,
		PixelFrom: pixels, PixelTo: pixels}
	world, err := d.ReadWorld(m)
	if err != nil {
		return nil, err
	}
	if info, err := pecs.ReadInfo(bytes.NewReader(world)); err == nil {
		rep.WorldVersion = fmt.Sprintf("PECS %d.%d", info.Header.VersionMajor, info.Header.VersionMinor)
	}
	root, err := rootOf(d, m)
	if err != nil {
		return nil, fmt.Errorf("migrate: the root of store generation %d: %w", m.Chunks.Generation, err)
	}
	ri, err := storetool.Tool.ParseRoot(root)
	if err != nil {
		return nil, damagedOr(err, dir)
	}
	rep.StoreFrom, rep.StoreVersion = int(ri.FormatVersion), int(ri.FormatVersion)
	var old []*savedir.Manifest
	for _, b := range d.Backups() {
		if b.Version < savedir.ManifestVersion {
			old = append(old, b)
		}
	}
	oldStore := ri.FormatVersion < chunkstore.FormatVersion && len(m.Chunks.Data) == 0
	otherPixels := pixels != gamePixelSize
	if m.Version == savedir.ManifestVersion && !oldStore && !otherPixels && len(old) == 0 {
		rep.NothingToDo = true
		return rep, nil
	}
	if m.Version < savedir.ManifestVersion || oldStore || otherPixels {
		var ref savedir.StoreRef
		if oldStore || otherPixels {
			// The whole store, into one of the current format and pixel size.
			ref, err = rewriteStore(d, m)
			rep.StoreVersion, rep.PixelTo = chunkstore.FormatVersion, gamePixelSize
		} else {
			ref, err = currentRef(d, m, root)
		}
		if err != nil {
			return nil, fmt.Errorf("migrate: %w", err)
		}
		nm, _, err := d.Commit(savedir.Commit{World: world, Chunks: ref, Players: m.Players, MaxBackups: len(d.Backups()) + 1})
		if err != nil {
			if ref.Name != m.Chunks.Name {
				_ = removeStore(d, ref.Name)
			}
			return nil, fmt.Errorf("migrate: commit: %w", err)
		}
		rep.Generation, rep.To = nm.Generation, nm.Version
		if m.Version < savedir.ManifestVersion {
			old = append([]*savedir.Manifest{m}, old...) // now a backup of an older format itself
		}
	}
	return rep, upgradeBackups(d, old, rep)
}

// upgradeBackups rewrites the backup manifests old, of older formats, in
// the current one, each with its root and data files, and lists them in
// rep. A backup whose root cannot be found stays as it is: readable in its
// format.
func upgradeBackups(d *savedir.Dir, old []*savedir.Manifest, rep *MigrateReport) error {
	for _, b := range old {
		nb := *b
		if cur, err := d.Backup(b.Generation); err == nil {
			nb = *cur // the backup's own names (its world moved into backups/)
		}
		root, err := rootOf(d, b)
		if err != nil {
			// It stays readable in its format; restore finds its root itself.
			continue
		}
		ref, err := currentRef(d, &nb, root)
		if err != nil {
			continue
		}
		nb.Version = savedir.ManifestVersion
		nb.Chunks = ref
		if err := d.ReplaceBackup(&nb); err != nil {
			return fmt.Errorf("migrate: backup %d: %w", b.Generation, err)
		}
		rep.BackupsUpgraded = append(rep.BackupsUpgraded, b.Generation)
	}
	return nil
}

// currentRef returns the store reference of manifest m in the current
// format: its root, and the data files its store generation uses.
func currentRef(d *savedir.Dir, m *savedir.Manifest, root []byte) (savedir.StoreRef, error) {
	ref := m.Chunks
	ref.Root = root
	p, err := d.File(ref.Name)
	if err != nil {
		return ref, err
	}
	s, err := chunkstore.Open(p, &chunkstore.Options{FS: d.FS(), ReadOnly: true, Root: root})
	if err != nil {
		return ref, err
	}
	defer s.Close()
	ref.Data = storetool.Tool.DataFileNames(s)
	return ref, nil
}

// rewriteStore writes the store generation of m into a new store of the
// current format and 4-byte pixels, named after the generation the
// migration commits.
func rewriteStore(d *savedir.Dir, m *savedir.Manifest) (savedir.StoreRef, error) {
	s, err := openGeneration(d, m, storetool.Tool.ForPixelMigration(*inspectOptions(d.FS(), nil)))
	if err != nil {
		return savedir.StoreRef{}, err
	}
	defer s.Close()
	name := savedir.CompactedChunksName(d.Generation() + 1)
	p, err := d.File(name)
	if err != nil {
		return savedir.StoreRef{}, err
	}
	c, err := s.CompactTo(p)
	if err != nil {
		_ = removeStore(d, name)
		return savedir.StoreRef{}, err
	}
	defer c.Close()
	if open := c.OpenReport(); !open.OK() {
		_ = removeStore(d, name)
		return savedir.StoreRef{}, fmt.Errorf("%w: %s: %v", ErrDamaged, m.Chunks.Name, open.Problems[0])
	}
	return savedir.StoreRef{Name: name, Generation: c.Generation(), Root: c.Root(), Data: storetool.Tool.DataFileNames(c)}, nil
}

// gamePixelSize is the bytes per pixel of the module's chunk stores.
const gamePixelSize = 4

// checkBeforeMigrate checks the save in d before a migration and returns
// the pixel size of its committed chunk store. A save is migrated only
// when it checks clean, but for its committed store having another pixel
// size than 4 bytes: then every value of that store must fit (it is read
// through, record by record, which checks it too).
func checkBeforeMigrate(d *savedir.Dir, fsys vfs.FS, dir string) (int, error) {
	check := checkDir(fsys, dir)
	pixels := gamePixelSize
	if m := d.Manifest(); m != nil {
		if root, err := rootOf(d, m); err == nil {
			if ri, err := storetool.Tool.ParseRoot(root); err == nil {
				pixels = int(ri.PixelSize)
			}
		}
	}
	problems := check.Problems
	if pixels != gamePixelSize {
		// The committed store's pixel size is what the migration is for.
		problems = slices.DeleteFunc(slices.Clone(problems), func(p chunkstore.Problem) bool {
			return p.File == d.Manifest().Chunks.Name && errors.Is(p.Err, chunkstore.ErrConfigMismatch)
		})
	}
	if len(problems) > 0 {
		return 0, fmt.Errorf("%w: %s, first: %v; run arksave repair, which writes the current format too",
			ErrDamaged, words.Count(len(problems), "problem", "problems"), problems[0])
	}
	if pixels == gamePixelSize {
		return pixels, nil
	}
	if err := checkPixels(d, d.Manifest()); err != nil {
		if errors.Is(err, chunkstore.ErrConfigMismatch) {
			return 0, fmt.Errorf("migrate: %w; nothing was written", err)
		}
		return 0, damagedOr(err, dir)
	}
	return pixels, nil
}

// checkPixels reads every record of the store generation of m and checks
// that each pixel value fits in 4 bytes, writing nothing.
func checkPixels(d *savedir.Dir, m *savedir.Manifest) error {
	s, err := openGeneration(d, m, storetool.Tool.ForPixelMigration(*inspectOptions(d.FS(), nil)))
	if err != nil {
		return err
	}
	defer s.Close()
	if err := storetool.Tool.CheckPixels(s); err != nil {
		return fmt.Errorf("chunk store %s: %d-byte pixels cannot become %d-byte: %w",
			m.Chunks.Name, storetool.Tool.PixelSize(s), gamePixelSize, err)
	}
	return nil
}

// PixelMigration says what Migrate would do with the pixel size of the
// save at dir, writing nothing and taking no lock: the committed chunk
// store's bytes per pixel, and nil when that is 4 or every stored value
// fits in 4 bytes; else the error Migrate would return (wrapping
// chunkstore.ErrConfigMismatch, naming the chunk, the pixel and the value).
func PixelMigration(dir string, o Options) (from int, err error) {
	_, fsys := newTracker(o)
	from = gamePixelSize
	err = readSave(fsys, dir, 0, func(d *savedir.Dir, m *savedir.Manifest) error {
		s, err := openGeneration(d, m, storetool.Tool.ForPixelMigration(*inspectOptions(fsys, nil)))
		if err != nil {
			return err
		}
		from = storetool.Tool.PixelSize(s)
		s.Close()
		if from == gamePixelSize {
			return nil
		}
		return checkPixels(d, m)
	})
	return from, err
}

// checkOtherPixels checks the store generation of m when opening it failed
// with err for having another pixel size than 4 bytes, and reports false
// when err is not about that, for the caller to report it. Every record
// must read and every value fit in 4 bytes; a committed generation whose
// values all fit is still a problem (the game cannot load it): err, which
// names arksave migrate. A backup's is not: a migration keeps the
// generation it migrated as a backup.
func checkOtherPixels(r *CheckReport, d *savedir.Dir, m *savedir.Manifest, err error) bool {
	if !errors.Is(err, chunkstore.ErrConfigMismatch) {
		return false
	}
	current := d.Manifest() != nil && d.Manifest().Generation == m.Generation
	perr := checkPixels(d, m)
	switch {
	case perr != nil:
		r.add(m.Chunks.Name, -1, fmt.Errorf("generation %d: %w", m.Generation, perr))
	case current:
		r.add(m.Chunks.Name, -1, fmt.Errorf("generation %d: %w", m.Generation, err))
	default:
		r.Stores++
	}
	return true
}
