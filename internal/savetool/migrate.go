package savetool

import (
	"bytes"
	"fmt"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/pecs"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/words"
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
}

// Migrate upgrades the save directory at dir to the current format
// versions, in place and safely: the committed generation is rewritten as a
// new generation (the same world, the same chunks), committed like a save
// (world file, then the manifest); the old generation becomes a backup.
// A chunk store of format 1 (a single file; see chunkstore.FormatVersion)
// is written into a new store of the current format (a store file and
// data files); a manifest of format 1 gets the root of its store
// generation, one of format 1 or 2 the data files its store generation
// uses (see [savedir.ManifestVersion]). Backup manifests of older formats
// are then rewritten with their roots and data files, one atomic replace
// each; their stores stay as they are. A damaged save is not migrated
// (ErrDamaged): repair writes the current formats too. Migrate takes the
// directory's lock: while a game holds it, it fails with ErrInUse naming
// the game.
func Migrate(dir string, o Options) (*MigrateReport, error) {
	fsys := o.fs()
	d, err := openLocked(fsys, dir, savedir.OpenDir)
	if err != nil {
		return nil, damagedOr(err, dir)
	}
	defer d.Close()
	check := checkDir(fsys, dir)
	if !check.OK() {
		return nil, fmt.Errorf("%w: %s, first: %v; run arksave repair, which writes the current format too",
			ErrDamaged, words.Count(len(check.Problems), "problem", "problems"), check.Problems[0])
	}
	m := d.Manifest()
	rep := &MigrateReport{From: m.Version, To: m.Version, CurrentManifest: savedir.ManifestVersion, CheckedBeforehand: true}
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
	if m.Version == savedir.ManifestVersion && !oldStore && len(old) == 0 {
		rep.NothingToDo = true
		return rep, nil
	}
	if m.Version < savedir.ManifestVersion || oldStore {
		var ref savedir.StoreRef
		if oldStore {
			// The whole store, into one of the current format.
			ref, err = rewriteStore(d, m, root)
			rep.StoreVersion = chunkstore.FormatVersion
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
			return rep, fmt.Errorf("migrate: backup %d: %w", b.Generation, err)
		}
		rep.BackupsUpgraded = append(rep.BackupsUpgraded, b.Generation)
	}
	return rep, nil
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
// current format, named after the generation the migration commits.
func rewriteStore(d *savedir.Dir, m *savedir.Manifest, root []byte) (savedir.StoreRef, error) {
	s, err := openGeneration(d, m, *inspectOptions(d.FS(), nil))
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
