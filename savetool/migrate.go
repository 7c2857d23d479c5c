package savetool

import (
	"bytes"
	"fmt"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/words"
)

// MigrateReport says what [Migrate] did.
type MigrateReport struct {
	From, To          int      // manifest format versions of the committed generation
	Generation        uint64   // the generation committed; 0 when nothing was to do
	BackupsUpgraded   []uint64 // backup manifests rewritten in the current format
	NothingToDo       bool
	WorldVersion      string // the world file's format, e.g. "PECS 1.0"
	StoreVersion      int    // the chunk store's format version
	CurrentManifest   int    // autosave.ManifestVersion
	CheckedBeforehand bool   // the directory checked clean first
}

// Migrate upgrades the save directory at dir to the current format
// versions, in place and safely. Today only the manifest has an older
// format (version 1, without chunk store roots; see
// [autosave.ManifestVersion]): the committed generation is rewritten as a
// new generation whose manifest keeps the root of its store generation
// (opened at the generation the old manifest names), committed like a save
// (world file, then the manifest); the old generation becomes a backup.
// Backup manifests of format 1 are then rewritten with their roots, one
// atomic replace each. A damaged save is not migrated (ErrDamaged): repair
// writes the current format too. Migrate takes the directory's lock: while
// a game holds it, it fails with ErrInUse naming the game.
func Migrate(dir string, o Options) (*MigrateReport, error) {
	fsys := o.fs()
	d, err := openLocked(fsys, dir, autosave.OpenDir)
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
	rep := &MigrateReport{From: m.Version, To: m.Version, CurrentManifest: autosave.ManifestVersion, StoreVersion: 1, CheckedBeforehand: true}
	world, err := d.ReadWorld(m)
	if err != nil {
		return nil, err
	}
	if info, err := archetype.ReadInfo(bytes.NewReader(world)); err == nil {
		rep.WorldVersion = fmt.Sprintf("PECS %d.%d", info.Header.VersionMajor, info.Header.VersionMinor)
	}
	var old []*autosave.Manifest
	for _, b := range d.Backups() {
		if b.Version < autosave.ManifestVersion {
			old = append(old, b)
		}
	}
	if m.Version == autosave.ManifestVersion && len(old) == 0 {
		rep.NothingToDo = true
		return rep, nil
	}
	if m.Version < autosave.ManifestVersion {
		root, err := rootOf(d, m)
		if err != nil {
			return nil, fmt.Errorf("migrate: the root of store generation %d: %w", m.Chunks.Generation, err)
		}
		ref := m.Chunks
		ref.Root = root
		nm, _, err := d.Commit(autosave.Commit{World: world, Chunks: ref, MaxBackups: len(d.Backups()) + 1})
		if err != nil {
			return nil, fmt.Errorf("migrate: commit: %w", err)
		}
		rep.Generation, rep.To = nm.Generation, nm.Version
		old = append([]*autosave.Manifest{m}, old...) // now a backup of format 1 itself
	}
	for _, b := range old {
		root, err := rootOf(d, b)
		if err != nil {
			// It stays readable in format 1; restore finds its root itself.
			continue
		}
		nb := *b
		if cur, err := d.Backup(b.Generation); err == nil {
			nb = *cur // the backup's own names (its world moved into backups/)
		}
		nb.Version = autosave.ManifestVersion
		nb.Chunks.Root = root
		if err := d.ReplaceBackup(&nb); err != nil {
			return rep, fmt.Errorf("migrate: backup %d: %w", b.Generation, err)
		}
		rep.BackupsUpgraded = append(rep.BackupsUpgraded, b.Generation)
	}
	return rep, nil
}
