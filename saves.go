package arksave

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/vfs"
)

// SaveInfo describes one save slot: a save directory, as a game's load
// menu shows it. Name, PlayTime and Thumbnail come from the save's
// description (meta.json, written with every save; see Plugin.Name and
// Plugin.Thumbnail); Generation and the times from its manifest, which is
// authoritative when the two disagree.
type SaveInfo struct {
	Dir        string // the save directory
	Name       string // Plugin.Name at the last save; the directory's name without a description
	Seed       uint64
	Created    time.Time     // when the world was created
	LastSaved  time.Time     // when its committed generation was saved
	PlayTime   time.Duration // time played in the world, as of the last save
	Generation uint64        // the committed generation
	// Thumbnail is the path of the save's thumbnail.png, or "" when it has
	// none.
	Thumbnail string
	// Err is why the slot cannot be loaded as it is (its manifest is
	// damaged or lost: matching ErrCorrupt or ErrManifestLost, naming
	// arksave repair), or why its description could not be read (the
	// save itself loads). Nil for a slot that loads.
	Err error
}

// ListSaves returns the save slots in root: each directory directly in it
// that holds a save (or a save's files whose manifest is lost, with Err
// set), newest first (by LastSaved; a slot without a manifest last). Other
// directories and files are skipped, and so are symbolic links: nothing
// outside root is read. It reads each save's manifest and description
// only, so it is fast enough for a menu. A root that does not exist is an
// error matching ErrNoSave.
func ListSaves(root string) ([]SaveInfo, error) {
	fsys := vfs.OS
	names, err := fsys.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s does not exist", ErrNoSave, root)
	}
	if err != nil {
		return nil, fmt.Errorf("arksave: list saves in %s: %w", root, err)
	}
	var out []SaveInfo
	for _, name := range names {
		dir := filepath.Join(root, name)
		if fi, err := fsys.Lstat(dir); err != nil || !fi.IsDir() {
			continue // files, symbolic links, whatever vanished meanwhile
		}
		if info, ok := readSlot(fsys, dir); ok {
			out = append(out, info)
		}
	}
	slices.SortFunc(out, func(a, b SaveInfo) int {
		return cmp.Or(b.LastSaved.Compare(a.LastSaved), cmp.Compare(a.Dir, b.Dir))
	})
	return out, nil
}

// readSlot describes the save in dir; ok is false when dir holds none.
func readSlot(fsys vfs.FS, dir string) (SaveInfo, bool) {
	info := SaveInfo{Dir: dir, Name: filepath.Base(dir)}
	d, err := savedir.OpenDirReadOnly(fsys, dir)
	if err != nil {
		return info, false
	}
	man := d.Manifest()
	if man == nil {
		if err := d.LostManifest(); err != nil {
			info.Err = err
			return info, true
		}
		if err := d.ManifestErr(); !errors.Is(err, ErrNoSave) {
			info.Err = fmt.Errorf("%w; run arksave repair %s", err, dir)
			return info, true
		}
		return info, false
	}
	info.Generation = man.Generation
	info.Created = time.UnixMilli(man.CreatedMS)
	info.LastSaved = time.UnixMilli(man.ModifiedMS)
	meta, err := savedir.ReadMeta(fsys, dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		info.Err = fmt.Errorf("arksave: %s: its description: %w (the save itself loads)", dir, err)
	default:
		info.Name, info.Seed, info.PlayTime = cmp.Or(meta.Name, info.Name), meta.Seed, meta.PlayTime()
		thumb := filepath.Join(dir, savedir.ThumbnailName)
		if fi, err := fsys.Lstat(thumb); err == nil && meta.Thumbnail != "" && fi.Mode().IsRegular() {
			info.Thumbnail = thumb // a regular file: never a link out of the directory
		}
	}
	return info, true
}
