package autosave

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/vfs"
)

// Problem is one damaged item of a save directory: which file, where in it
// when known, and what is wrong.
type Problem struct {
	File   string // relative to the save directory
	Offset int64  // -1 when not about a position in the file
	Err    error
}

// String formats the problem as "file @offset: error".
func (p Problem) String() string {
	if p.Offset >= 0 {
		return fmt.Sprintf("%s @%d: %v", p.File, p.Offset, p.Err)
	}
	return fmt.Sprintf("%s: %v", p.File, p.Err)
}

// CheckReport is the result of [CheckDir]: every problem found, not only
// the first, and what was looked at.
type CheckReport struct {
	Manifest *Manifest // nil when there is none or it is unreadable
	Problems []Problem
	Backups  int // backup generations checked
	Stores   int // chunk store generations checked
}

// OK reports whether no problem was found.
func (r *CheckReport) OK() bool { return len(r.Problems) == 0 }

func (r *CheckReport) add(file string, off int64, err error) {
	r.Problems = append(r.Problems, Problem{File: file, Offset: off, Err: err})
}

// CheckDir verifies a save directory without the game: the manifest's own
// checksum; the world file's size and CRC32-C and every checksum inside the
// PECS file; the chunk store generation the manifest names (opened through
// its root, read-only, every record decoded: store.Check); and the same for
// every backup. It collects every problem. cfg may leave the game's
// constants zero (they are read from the store); its FS is used.
func CheckDir(fsys vfs.FS, dir string, cfg chunkstore.Config) *CheckReport {
	if fsys == nil {
		fsys = vfs.OS
	}
	r := &CheckReport{}
	if _, err := fsys.Stat(dir); err != nil {
		r.add(".", -1, err)
		return r
	}
	data, err := vfs.ReadFile(fsys, dirJoin(dir, ManifestName))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			r.add(ManifestName, -1, fmt.Errorf("%w: no manifest: the directory holds no committed save (arksave repair can rebuild one from a chunk store)", ErrNoSave))
		} else {
			r.add(ManifestName, -1, err)
		}
		return r
	}
	m, err := decodeManifest(data)
	if err != nil {
		r.add(ManifestName, -1, err)
		return r
	}
	r.Manifest = m
	d := &Dir{fs: fsys, path: dir}
	d.man.Store(m)
	checkGeneration(r, d, m, cfg)
	for _, b := range d.Backups() {
		r.Backups++
		checkGeneration(r, d, b, cfg)
	}
	// Generations share a store file: report each damaged place once.
	seen := map[string]bool{}
	kept := r.Problems[:0]
	for _, p := range r.Problems {
		key := fmt.Sprintf("%s@%d", p.File, p.Offset)
		if p.Offset < 0 || !seen[key] {
			seen[key] = true
			kept = append(kept, p)
		}
	}
	r.Problems = kept
	return r
}

func checkGeneration(r *CheckReport, d *Dir, m *Manifest, cfg chunkstore.Config) {
	world, err := d.readRef(m.World)
	if err != nil {
		r.add(m.World.Name, -1, err)
	} else if _, err := archetype.ReadInfo(bytes.NewReader(world)); err != nil {
		r.add(m.World.Name, -1, err)
	}
	cfg.FS = d.fs
	cfg.ReadOnly = true
	cfg.Generator = nil
	cfg.Seed = 0
	var s *chunkstore.Store
	if len(m.Chunks.Root) > 0 {
		s, err = chunkstore.OpenRoot(d.join(m.Chunks.Name), cfg, m.Chunks.Root)
	} else {
		cfg.AllowGeneratorChange = true
		s, err = chunkstore.OpenAt(d.join(m.Chunks.Name), cfg, m.Chunks.Generation)
	}
	if err != nil {
		r.add(m.Chunks.Name, -1, fmt.Errorf("generation %d: %w", m.Generation, err))
		return
	}
	defer s.Close()
	r.Stores++
	for _, p := range s.Check().Problems {
		r.add(m.Chunks.Name, p.Offset, fmt.Errorf("generation %d: %s: %w", m.Generation, p.Section, p.Err))
	}
}

func dirJoin(dir, name string) string { return (&Dir{path: dir}).join(name) }
