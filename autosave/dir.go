package autosave

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/vfs"
)

// Dir is a save directory: the manifest (the commit point), the ECS world
// file of the committed generation, the chunk store, and backups/.
//
//	<save>/
//	  manifest            generation G, file names, sizes, CRC32-C
//	  world-<G>.pecs      the ECS world of generation G
//	  chunks.pxsw         the chunk store (chunks-<g>.pxsw after a compaction at g)
//	  backups/            manifest-<g> and world-<g>.pecs of older generations
//
// Files newer than the manifest (from a save that did not commit) are
// ignored and removed when the directory is opened.
//
// A Dir is not safe for concurrent use; the writer goroutine owns it.
// Manifest and Generation are the exception: the game loop may call them
// (through the Writer) while a commit runs, and sees the generation
// committed before or after it.
type Dir struct {
	fs     vfs.FS
	path   string
	man    atomic.Pointer[Manifest] // the committed manifest; never modified once stored
	manErr error                    // why man is nil: ErrNoSave, or a damaged manifest (OpenDirForRepair)
}

// OpenDir opens the save directory at dir, creating it if it is missing.
// If the directory holds a committed save, its manifest is read and
// verified, and files that the manifest and the backups do not name are
// removed. A directory without a manifest is an empty save (Manifest
// returns nil); a corrupt manifest is an error wrapping [ErrCorrupt].
func OpenDir(fsys vfs.FS, dir string) (*Dir, error) {
	if fsys == nil {
		fsys = vfs.OS
	}
	if err := mkdirDurable(fsys, dir); err != nil {
		return nil, fmt.Errorf("autosave: create save directory: %w", err)
	}
	d := &Dir{fs: fsys, path: dir}
	data, err := vfs.ReadFile(fsys, d.join(ManifestName))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("autosave: read manifest: %w", err)
	default:
		m, err := decodeManifest(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.join(ManifestName), err)
		}
		d.man.Store(m)
	}
	if err := d.cleanup(); err != nil {
		return nil, err
	}
	return d, nil
}

// OpenDirForRepair opens the save directory at dir as it is, for tools that
// inspect or mend it: nothing is created or removed, and a missing or
// damaged manifest is no error: Manifest then returns nil and ManifestErr
// says why. Commit works as on a directory from OpenDir; when the manifest
// is lost, set Commit.Generation above HighestGeneration.
func OpenDirForRepair(fsys vfs.FS, dir string) (*Dir, error) {
	if fsys == nil {
		fsys = vfs.OS
	}
	st, err := fsys.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("autosave: open save directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("autosave: %s is not a directory", dir)
	}
	d := &Dir{fs: fsys, path: dir}
	data, err := vfs.ReadFile(fsys, d.join(ManifestName))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.manErr = fmt.Errorf("%w: %s has no manifest", ErrNoSave, dir)
	case err != nil:
		d.manErr = fmt.Errorf("autosave: read manifest: %w", err)
	default:
		var m *Manifest
		if m, d.manErr = decodeManifest(data); d.manErr == nil {
			d.man.Store(m)
		}
	}
	return d, nil
}

// ManifestErr returns nil when the directory has a valid manifest, an error
// wrapping ErrNoSave when it has none, and for a directory opened with
// OpenDirForRepair the reason its manifest cannot be used (wrapping
// ErrCorrupt or ErrVersion, or an I/O error).
func (d *Dir) ManifestErr() error {
	if d.man.Load() != nil {
		return nil
	}
	if d.manErr == nil {
		return fmt.Errorf("%w: %s has no manifest", ErrNoSave, d.path)
	}
	return d.manErr
}

// HighestGeneration returns the highest generation any file of the
// directory is named after or any readable manifest names: the manifest,
// world files, backups and compacted chunk stores. A new generation above
// it collides with nothing in the directory.
func (d *Dir) HighestGeneration() uint64 {
	g := d.Generation()
	for _, sub := range []string{".", BackupDir} {
		names, _ := d.fs.ReadDir(d.join(sub))
		for _, n := range names {
			n = strings.TrimSuffix(n, ".tmp")
			var num string
			switch {
			case strings.HasPrefix(n, "world-") && strings.HasSuffix(n, ".pecs"):
				num = strings.TrimSuffix(strings.TrimPrefix(n, "world-"), ".pecs")
			case strings.HasPrefix(n, "chunks-") && strings.HasSuffix(n, ".pxsw"):
				num = strings.TrimSuffix(strings.TrimPrefix(n, "chunks-"), ".pxsw")
			case strings.HasPrefix(n, "manifest-"):
				num = strings.TrimPrefix(n, "manifest-")
			}
			if v, err := strconv.ParseUint(num, 10, 64); err == nil {
				g = max(g, v)
			}
		}
	}
	for _, b := range d.Backups() {
		g = max(g, b.Generation)
	}
	return g
}

// mkdirDurable creates dir and its missing parents and syncs the parent of
// each one it created, so that the new directories survive a crash before
// anything in them is committed.
func mkdirDurable(fsys vfs.FS, dir string) error {
	dir = filepath.Clean(dir)
	var created []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := fsys.Stat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		created = append(created, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if len(created) == 0 {
		return nil
	}
	if err := fsys.MkdirAll(dir); err != nil {
		return err
	}
	for i := len(created) - 1; i >= 0; i-- {
		if err := fsys.SyncDir(filepath.Dir(created[i])); err != nil {
			return err
		}
	}
	return nil
}

// Path returns the directory's path.
func (d *Dir) Path() string { return d.path }

// FS returns the file system the directory is on.
func (d *Dir) FS() vfs.FS { return d.fs }

// Manifest returns a copy of the committed manifest, or nil if the
// directory holds no save yet.
func (d *Dir) Manifest() *Manifest {
	cur := d.man.Load()
	if cur == nil {
		return nil
	}
	m := *cur
	return &m
}

// Generation returns the committed generation, 0 if none.
func (d *Dir) Generation() uint64 {
	cur := d.man.Load()
	if cur == nil {
		return 0
	}
	return cur.Generation
}

func (d *Dir) join(name string) string { return filepath.Join(d.path, filepath.FromSlash(name)) }

// Join returns the path of a file named relative to the directory, as the
// manifest names them.
func (d *Dir) Join(name string) string { return d.join(name) }

// ReadWorld reads the ECS world file that m names (the committed manifest
// when m is nil) and verifies its size and checksum.
func (d *Dir) ReadWorld(m *Manifest) ([]byte, error) {
	if m == nil {
		m = d.man.Load()
	}
	if m == nil {
		return nil, ErrNoSave
	}
	return d.readRef(m.World)
}

func (d *Dir) readRef(ref FileRef) ([]byte, error) {
	data, err := vfs.ReadFile(d.fs, d.join(ref.Name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s named by the manifest is missing", ErrCorrupt, ref.Name)
		}
		return nil, fmt.Errorf("autosave: read %s: %w", ref.Name, err)
	}
	if int64(len(data)) != ref.Size {
		return nil, fmt.Errorf("%w: %s: size %d, manifest says %d", ErrCorrupt, ref.Name, len(data), ref.Size)
	}
	if got := crc32.Checksum(data, castagnoli); got != ref.CRC32C {
		return nil, fmt.Errorf("%w: %s: crc32c %08x, manifest says %08x", ErrCorrupt, ref.Name, got, ref.CRC32C)
	}
	return data, nil
}

// Commit is what a new generation consists of.
type Commit struct {
	World      []byte   // the encoded ECS world, unless WorldRef is set
	WorldRef   *FileRef // the world file already written by WriteWorld
	Chunks     StoreRef // the chunk store generation, already durable; Root is required
	MaxBackups int      // older generations to keep in backups/
	Now        time.Time
	// Generation is the number of the new generation; zero means the
	// committed one plus one. A repair whose manifest is lost sets it above
	// HighestGeneration. It must exceed the committed generation.
	Generation uint64
	// NoBackup drops the generation being replaced instead of keeping it
	// in backups/: a repair replaces a damaged generation.
	NoBackup bool
}

// Commit makes a new generation durable and current: it writes the world
// file, then replaces the manifest (write temp, sync, sync directory,
// rename, sync directory). The chunk store generation that c names must be
// durable before Commit is called. A crash or an error at any step leaves
// the previous generation committed and loadable. After the switch, the
// previous generation moves to backups/ (or is removed), best effort: a
// failure there is not an error of the commit and is repaired at the next
// OpenDir.
//
// It returns the new manifest and the bytes written.
func (d *Dir) Commit(c Commit) (*Manifest, int64, error) {
	gen := d.Generation() + 1
	if c.Generation != 0 {
		if c.Generation < gen {
			return nil, 0, fmt.Errorf("autosave: commit generation %d: the committed generation is %d", c.Generation, d.Generation())
		}
		gen = c.Generation
	}
	if len(c.Chunks.Root) == 0 {
		return nil, 0, fmt.Errorf("autosave: commit generation %d: the chunk store reference has no root", gen)
	}
	if c.Now.IsZero() {
		c.Now = time.Now()
	}
	m := &Manifest{
		Version:    ManifestVersion,
		Generation: gen,
		CreatedMS:  c.Now.UnixMilli(),
		ModifiedMS: c.Now.UnixMilli(),
		Chunks:     c.Chunks,
	}
	if prev := d.man.Load(); prev != nil {
		m.CreatedMS = prev.CreatedMS
	}
	var written int64
	if c.WorldRef != nil {
		if c.WorldRef.Name != WorldName(gen) {
			return nil, 0, fmt.Errorf("autosave: world file %s was written for another generation than %d", c.WorldRef.Name, gen)
		}
		m.World = *c.WorldRef
	} else {
		ref, err := d.WriteWorld(c.World)
		if err != nil {
			return nil, 0, err
		}
		m.World = ref
		written += ref.Size
	}

	mdata := m.encode()
	tmp := ManifestName + ".tmp"
	if err := d.writeSynced(tmp, mdata); err != nil {
		return nil, written, err
	}
	written += int64(len(mdata))
	// The world file's and the temp manifest's directory entries become
	// durable before the rename that commits, so that no file system can keep
	// the new manifest without the world it names.
	if err := d.fs.SyncDir(d.path); err != nil {
		return nil, written, fmt.Errorf("autosave: sync save directory: %w", err)
	}
	if err := d.fs.Rename(d.join(tmp), d.join(ManifestName)); err != nil {
		return nil, written, fmt.Errorf("autosave: commit manifest: %w", err)
	}
	if err := d.fs.SyncDir(d.path); err != nil {
		// The rename may or may not be durable: the outcome is unknown until
		// the directory is read again, so report failure. The caller's next
		// save writes generation gen+1 over whichever is current.
		d.reload()
		return nil, written, fmt.Errorf("autosave: sync save directory after commit: %w", err)
	}
	prev := d.man.Swap(m)
	d.manErr = nil
	if c.NoBackup {
		prev = nil
	}
	d.retire(prev, c.MaxBackups)
	return d.Manifest(), written, nil
}

// WriteWorld writes and syncs the world file of the next generation and
// returns its reference for [Commit.WorldRef]. The file gets a name no
// committed manifest uses, so it can be written in place, and while the
// chunk store commits: until a manifest names it, it is ignored (and
// removed by the next OpenDir).
func (d *Dir) WriteWorld(data []byte) (FileRef, error) {
	ref := FileRef{Name: WorldName(d.Generation() + 1), Size: int64(len(data)), CRC32C: crc32.Checksum(data, castagnoli)}
	if err := d.writeSynced(ref.Name, data); err != nil {
		return FileRef{}, err
	}
	return ref, nil
}

// reload re-reads the manifest after a commit whose outcome is unknown.
func (d *Dir) reload() {
	data, err := vfs.ReadFile(d.fs, d.join(ManifestName))
	if err != nil {
		return
	}
	if m, err := decodeManifest(data); err == nil {
		d.man.Store(m)
	}
}

func (d *Dir) writeSynced(name string, data []byte) error {
	f, err := d.fs.Create(d.join(name))
	if err != nil {
		return fmt.Errorf("autosave: create %s: %w", name, err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		f.Close()
		return fmt.Errorf("autosave: write %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("autosave: sync %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("autosave: close %s: %w", name, err)
	}
	return nil
}

// retire moves the previous generation's world file and manifest into
// backups/ and prunes backups beyond max. Failures are left for cleanup.
func (d *Dir) retire(prev *Manifest, max int) {
	if prev != nil && max > 0 {
		if err := d.fs.MkdirAll(d.join(BackupDir)); err == nil {
			b := *prev
			b.World.Name = path.Join(BackupDir, WorldName(prev.Generation))
			if d.fs.Rename(d.join(prev.World.Name), d.join(b.World.Name)) == nil {
				_ = vfs.WriteFileAtomic(d.fs, d.join(backupManifestName(prev.Generation)), b.encode())
			}
		}
	}
	_ = d.cleanupWith(max)
}

func backupManifestName(g uint64) string {
	return path.Join(BackupDir, "manifest-"+strconv.FormatUint(g, 10))
}

// Backups returns the manifests of the generations kept in backups/, newest
// first. Damaged backup manifests are skipped (DamagedBackups lists them).
func (d *Dir) Backups() []*Manifest {
	out, _ := d.backups()
	return out
}

// DamagedBackups lists the backup manifests that cannot be read, as
// problems of their files.
func (d *Dir) DamagedBackups() []Problem {
	_, bad := d.backups()
	return bad
}

func (d *Dir) backups() ([]*Manifest, []Problem) {
	names, err := d.fs.ReadDir(d.join(BackupDir))
	if err != nil {
		return nil, nil
	}
	var out []*Manifest
	var bad []Problem
	for _, n := range names {
		if !strings.HasPrefix(n, "manifest-") || strings.HasSuffix(n, ".tmp") {
			continue
		}
		rel := path.Join(BackupDir, n)
		data, err := vfs.ReadFile(d.fs, d.join(rel))
		if err != nil {
			bad = append(bad, Problem{File: rel, Offset: -1, Err: err})
			continue
		}
		m, err := decodeManifest(data)
		if err == nil && "manifest-"+strconv.FormatUint(m.Generation, 10) != n {
			err = fmt.Errorf("%w: backup manifest of generation %d", ErrCorrupt, m.Generation)
		}
		if err != nil {
			bad = append(bad, Problem{File: rel, Offset: -1, Err: err})
			continue
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Generation > out[j].Generation })
	return out, bad
}

// DropBackup removes backed-up generation g, a damaged one included, and
// the files only it used.
func (d *Dir) DropBackup(g uint64) error {
	err := d.fs.Remove(d.join(backupManifestName(g)))
	if err == nil {
		err = d.fs.SyncDir(d.join(BackupDir))
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("autosave: drop backup %d: %w", g, err)
	}
	return d.cleanupWith(-1)
}

// ReplaceBackup rewrites the manifest of a backed-up generation (atomically),
// for a migration that upgrades it: m must name a generation in backups/.
func (d *Dir) ReplaceBackup(m *Manifest) error {
	if _, err := d.Backup(m.Generation); err != nil {
		return err
	}
	if err := vfs.WriteFileAtomic(d.fs, d.join(backupManifestName(m.Generation)), m.encode()); err != nil {
		return fmt.Errorf("autosave: rewrite backup %d: %w", m.Generation, err)
	}
	return nil
}

// Backup returns the manifest of backed-up generation g.
func (d *Dir) Backup(g uint64) (*Manifest, error) {
	for _, m := range d.Backups() {
		if m.Generation == g {
			return m, nil
		}
	}
	return nil, fmt.Errorf("autosave: generation %d is not among the backups of %s", g, d.path)
}

// Restore makes backed-up generation g current again, as a new generation:
// its world file is copied into the new generation and the manifest names
// the chunk store generation g used (through its root, which stays valid
// because the store file is append-only and kept while a backup needs it).
// The generation that was current becomes a backup like after any commit.
func (d *Dir) Restore(g uint64, maxBackups int) (*Manifest, error) {
	b, err := d.Backup(g)
	if err != nil {
		return nil, err
	}
	world, err := d.ReadWorld(b)
	if err != nil {
		return nil, fmt.Errorf("autosave: restore generation %d: %w", g, err)
	}
	if _, err := d.fs.Stat(d.join(b.Chunks.Name)); err != nil {
		return nil, fmt.Errorf("autosave: restore generation %d: chunk store %s: %w", g, b.Chunks.Name, err)
	}
	if len(b.Chunks.Root) == 0 {
		// A manifest of format 1 names the store generation by number only.
		root, err := chunkstore.FindRoot(d.join(b.Chunks.Name), chunkstore.Config{FS: d.fs}, b.Chunks.Generation)
		if err != nil {
			return nil, fmt.Errorf("autosave: restore generation %d: its manifest has no chunk store root and none can be found: %w", g, err)
		}
		b.Chunks.Root = root
	}
	m, _, err := d.Commit(Commit{World: world, Chunks: b.Chunks, MaxBackups: max(maxBackups, 1)})
	return m, err
}

// cleanup removes what the manifest and the backups do not name, keeping
// every backup that exists.
func (d *Dir) cleanup() error { return d.cleanupWith(-1) }

// cleanupWith removes files that no manifest names: world files and temp
// files of saves that did not commit, backups beyond max (max < 0 keeps
// all), and chunk stores that neither the manifest nor a kept backup uses.
func (d *Dir) cleanupWith(max int) error {
	backups := d.Backups()
	if max >= 0 && len(backups) > max {
		for _, b := range backups[max:] {
			_ = d.fs.Remove(d.join(backupManifestName(b.Generation)))
		}
		backups = backups[:max]
	}
	keep := map[string]bool{ManifestName: true}
	cur := d.man.Load()
	if cur != nil {
		keep[cur.World.Name] = true
		keep[cur.Chunks.Name] = true
	}
	for _, b := range backups {
		keep[b.World.Name] = true
		keep[b.Chunks.Name] = true
		keep[backupManifestName(b.Generation)] = true
	}
	if cur == nil {
		// Without a manifest the chunk store and the world files may still
		// hold a player's world (a lost manifest is repairable from them):
		// never remove one.
		keep[ChunksName] = true
		if names, err := d.fs.ReadDir(d.path); err == nil {
			for _, n := range names {
				if strings.HasSuffix(n, ".pxsw") || strings.HasPrefix(n, "world-") && strings.HasSuffix(n, ".pecs") {
					keep[n] = true
				}
			}
		}
	}
	for _, sub := range []string{".", BackupDir} {
		names, err := d.fs.ReadDir(d.join(sub))
		if err != nil {
			continue
		}
		for _, n := range names {
			rel := path.Join(sub, n)
			if keep[rel] || !ours(n) {
				continue
			}
			if err := d.fs.Remove(d.join(rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("autosave: remove stale %s: %w", rel, err)
			}
		}
	}
	return nil
}

// ours reports whether a file name is one the save format uses, so that
// cleanup never removes a file a user put into the directory.
func ours(name string) bool {
	name = strings.TrimSuffix(name, ".tmp")
	switch {
	case name == ManifestName, name == ChunksName:
		return true
	case strings.HasPrefix(name, "world-") && strings.HasSuffix(name, ".pecs"):
		return true
	case strings.HasPrefix(name, "manifest-"):
		return true
	case strings.HasPrefix(name, "chunks-") && strings.HasSuffix(name, ".pxsw"):
		return true
	}
	return false
}
