package autosave

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/vfs"
)

// Problem is one damaged item of a save directory: which file, where in it
// when known, which chunk when known, and what is wrong.
type Problem struct {
	File   string          // relative to the save directory
	Offset int64           // -1 when not about a position in the file
	Chunk  *chunkstore.Pos // the chunk concerned, when known
	Err    error
}

// String formats the problem as "file @offset, chunk (x, y): error".
func (p Problem) String() string {
	where := p.File
	if p.Offset >= 0 {
		where += fmt.Sprintf(" @%d", p.Offset)
	}
	if p.Chunk != nil {
		where += fmt.Sprintf(", chunk %v", *p.Chunk)
	}
	return fmt.Sprintf("%s: %v", where, p.Err)
}

// CheckReport is the result of [CheckDir]: every problem found, not only
// the first, and what was looked at.
type CheckReport struct {
	Manifest *Manifest // nil when there is none or it is unreadable
	Problems []Problem
	Backups  int // backup generations checked
	Stores   int // chunk store generations checked
	Worlds   int // world files checked
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
// every backup, damaged backup manifests included. It collects every
// problem. When the manifest is missing or damaged, that is a problem (a
// lost manifest is repairable: arksave repair), and the files it would name
// are checked on their own: every chunk store and world file of the
// directory. cfg may leave the game's constants zero (they are read from
// the store); its FS is used.
//
// It changes nothing and takes no lock, so it runs while a game saves into
// the directory: a check that finds problems runs again until two checks
// in a row see the same manifest and the same problems, so that a file a
// concurrent commit has just moved or a header slot it is writing is not
// reported as damage.
func CheckDir(fsys vfs.FS, dir string, cfg chunkstore.Options) *CheckReport {
	if fsys == nil {
		fsys = vfs.OS
	}
	var last *CheckReport
	var lastKey string
	for range consistentTries {
		r, d := checkOnce(fsys, dir, cfg)
		if r.OK() || d == nil {
			return r
		}
		key := r.key()
		if last != nil && key == lastKey && !d.Stale() {
			return r
		}
		last, lastKey = r, key
	}
	return last
}

// consistentTries bounds how often a reader starts over because a writer
// moved on under it.
const consistentTries = 8

// key identifies a report's manifest and problems, to tell whether two
// checks agree.
func (r *CheckReport) key() string {
	var b strings.Builder
	if r.Manifest != nil {
		b.Write(r.Manifest.encode())
	}
	for _, p := range r.Problems {
		b.WriteString(p.String())
		b.WriteByte(0)
	}
	return b.String()
}

// ReadConsistent calls read with the save directory at dir opened
// read-only (OpenDirReadOnly) and returns its error. While a game saves
// into the directory, a commit can move a file the reader was about to
// open (the world file into backups/, an old chunk store away): when read
// fails and the directory's manifest has changed since it opened, read is
// called again with the new generation, a few times at most.
func ReadConsistent(fsys vfs.FS, dir string, read func(d *Dir) error) error {
	var err error
	for range consistentTries {
		var d *Dir
		if d, err = OpenDirReadOnly(fsys, dir); err != nil {
			return err
		}
		if err = read(d); err == nil || !d.Stale() {
			return err
		}
	}
	return err
}

// checkOnce checks the directory once; the Dir is nil when it cannot be
// opened.
func checkOnce(fsys vfs.FS, dir string, cfg chunkstore.Options) (*CheckReport, *Dir) {
	r := &CheckReport{}
	d, err := OpenDirReadOnly(fsys, dir)
	if err != nil {
		r.add(".", -1, err)
		return r, nil
	}
	checked := map[string]bool{} // files whose every byte was checked
	if m := d.Manifest(); m != nil {
		r.Manifest = m
		checkGeneration(r, d, m, cfg, checked)
	}
	for _, b := range d.Backups() {
		r.Backups++
		checkGeneration(r, d, b, cfg, checked)
	}
	r.Problems = append(r.Problems, d.DamagedBackups()...)
	if r.Manifest == nil {
		err := d.ManifestErr()
		stores, worlds := d.unnamedFiles(checked)
		if errors.Is(err, ErrNoSave) {
			if len(stores)+len(worlds)+r.Backups+len(d.DamagedBackups()) == 0 {
				r.add(ManifestName, -1, fmt.Errorf("%w: no manifest and no chunk store: this is not a save directory", ErrNoSave))
				return r, d
			}
			err = fmt.Errorf("%w: manifest missing; run arksave repair to rebuild it from the chunk store and the newest intact world file", ErrCorrupt)
		} else if errors.Is(err, ErrCorrupt) {
			err = fmt.Errorf("%w; run arksave repair to rebuild it", err)
		}
		r.add(ManifestName, -1, err)
		for _, name := range worlds {
			r.Worlds++
			data, err := d.readUnnamed(name)
			if err == nil {
				_, err = archetype.ReadInfo(bytes.NewReader(data))
			}
			if err != nil {
				r.add(name, -1, err)
			}
		}
		for _, name := range stores {
			checkStoreFile(r, d, name, cfg)
		}
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
	return r, d
}

// readUnnamed reads a world file no manifest names, checking its name and
// that it is a regular file.
func (d *Dir) readUnnamed(name string) ([]byte, error) {
	p, err := d.file(name)
	if err != nil {
		return nil, err
	}
	return vfs.ReadFile(d.fs, p)
}

// unnamedFiles lists the chunk stores and top-level world files of the
// directory that no checked generation named.
func (d *Dir) unnamedFiles(checked map[string]bool) (stores, worlds []string) {
	names, _ := d.fs.ReadDir(d.path)
	for _, n := range names {
		_, world := worldGeneration(n)
		switch {
		case checked[n]:
		case isStoreName(n):
			stores = append(stores, n)
		case world:
			worlds = append(worlds, n)
		}
	}
	return stores, worlds
}

func checkGeneration(r *CheckReport, d *Dir, m *Manifest, cfg chunkstore.Options, checked map[string]bool) {
	r.Worlds++
	checked[m.World.Name] = true
	world, err := d.readRef(m.World)
	if err != nil {
		r.add(m.World.Name, -1, err)
	} else if _, err := archetype.ReadInfo(bytes.NewReader(world)); err != nil {
		r.add(m.World.Name, -1, err)
	}
	checked[m.Chunks.Name] = true
	cfg.FS = d.fs
	cfg.ReadOnly = true
	cfg.Generator = nil
	cfg.Seed = 0
	root := m.Chunks.Root
	store, err := d.file(m.Chunks.Name)
	if err == nil && len(root) == 0 {
		// Format 1 names the store generation by number only.
		root, err = chunkstore.FindRoot(cfg.FS, store, m.Chunks.Generation)
	}
	var s *chunkstore.Store
	if err == nil {
		s, err = chunkstore.OpenRoot(store, cfg, root)
	}
	var openErr error
	if errors.Is(err, chunkstore.ErrCorrupt) {
		// The generation's page table is damaged: a repair open lets Check
		// report it, and whatever else is damaged.
		if rs, _, rerr := chunkstore.OpenRootForRepair(store, cfg, root); rerr == nil {
			s, openErr, err = rs, err, nil
		}
	}
	if err != nil {
		r.add(m.Chunks.Name, -1, fmt.Errorf("generation %d: %w", m.Generation, err))
		return
	}
	defer s.Close()
	r.Stores++
	problems := s.Check().Problems
	if openErr != nil && !slices.ContainsFunc(problems, func(p chunkstore.Problem) bool { return p.Section == chunkstore.SectionTable }) {
		r.add(m.Chunks.Name, -1, fmt.Errorf("generation %d: %w", m.Generation, openErr))
	}
	addStoreProblems(r, m.Chunks.Name, fmt.Sprintf("generation %d: ", m.Generation), problems)
}

// checkStoreFile checks a chunk store that no manifest names, at its
// newest generation, or scans it when no header slot is valid.
func checkStoreFile(r *CheckReport, d *Dir, name string, cfg chunkstore.Options) {
	cfg.FS = d.fs
	p, err := d.file(name)
	if err != nil {
		r.add(name, -1, err)
		return
	}
	rep := chunkstore.CheckFile(cfg.FS, p)
	if rep.Slots > 0 {
		r.Stores++
	}
	addStoreProblems(r, name, "", rep.Problems)
}

func addStoreProblems(r *CheckReport, file, prefix string, ps []chunkstore.Problem) {
	for _, p := range ps {
		r.Problems = append(r.Problems, Problem{File: file, Offset: p.Offset, Chunk: p.Pos,
			Err: fmt.Errorf("%s%s: %w", prefix, p.Section, p.Err)})
	}
}
