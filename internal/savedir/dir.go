package savedir

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/errs"
	"github.com/arksave/arksave/internal/fsx"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/vfs"
)

// Dir is a save directory: the manifest (the commit point), the ECS world
// file of the committed generation, the chunk store, and backups/.
//
//	<save>/
//	  manifest            generation G, file names, sizes, CRC32-C
//	  world-<G>.pecs      the ECS world of generation G
//	  chunks.pxsw         the chunk store's header slots (chunks-<g>.pxsw when written whole at g)
//	  chunks-data-<n>.pxsd  its data files, of bounded size (chunks-<g>-data-<n>.pxsd)
//	  players-<g>.pxpl    the players index the manifest names (g <= G), see players.go
//	  players.pxpd        the players' records (players-<g>.pxpd after a compaction at g)
//	  backups/            manifest-<g> and world-<g>.pecs of older generations, and
//	                      chunks-<g>.pxsw (with its data files) for a backup with a store of its own,
//	                      players-<g>.pxpl and players-<g>.pxpd for one with players files of its own
//	  lock                held by the one writer (see LockName)
//
// Files newer than the manifest (from a save that did not commit) and data
// files neither the manifest nor a backup names (a compaction emptied them)
// are ignored and removed when the directory is opened for writing and
// after each commit.
//
// The directory has its walls: every name a manifest holds must have the
// form its field expects (world-<G>.pecs, chunks.pxsw, chunks-<G>.pxsw,
// their data files, backups/world-<G>.pecs; anything else is ErrCorrupt
// naming the field),
// every file operation goes through that check, symbolic links inside the
// directory (a file, or backups/ itself) are refused and never followed,
// and nothing outside the directory is read, written, renamed or removed.
//
// A Dir opened for writing (OpenDir, OpenDirForRepair) holds the
// directory's lock until Close. A Dir is not safe for concurrent use; the
// writer goroutine owns it. Manifest and Generation are the exception: the
// game loop may call them (through the Writer) while a commit runs, and
// sees the generation committed before or after it.
type Dir struct {
	fs     vfs.FS
	path   string
	man    atomic.Pointer[Manifest] // the committed manifest; never modified once stored
	manErr error                    // why man is nil: ErrNoSave, or a damaged manifest (OpenDirForRepair)
	lock   *heldLock                // the directory's lock while held
	roErr  error                    // why changes are refused; nil while the lock is held
}

// DirOption configures how a save directory is opened.
type DirOption func(*dirOptions)

type dirOptions struct {
	lockTimeout time.Duration
}

// LockTimeout makes opening a save directory wait up to d for another
// holder to release its lock, as bbolt's Options.Timeout does, instead of
// returning ErrLocked at once.
func LockTimeout(d time.Duration) DirOption { return func(o *dirOptions) { o.lockTimeout = d } }

func applyDirOptions(opts []DirOption) dirOptions {
	var o dirOptions
	for _, fn := range opts {
		fn(&o)
	}
	return o
}

// maxManifestSize bounds a manifest's file: the format writes well under
// a kilobyte, so anything larger is not read.
const maxManifestSize = 64 << 10

var errClosed = fmt.Errorf("%w: the save directory was closed", autosave.ErrReadOnly)

// OpenDir opens the save directory at dir for writing, creating it if it is
// missing. It takes the directory's lock (an error matching ErrLocked, a
// *LockedError naming the holder, while another holder has it), reads and
// verifies the manifest and removes what saves that did not commit left
// behind. Close releases the lock.
//
// A directory without a manifest holds no save (Manifest returns nil; a
// new world's first commit replaces what a first save that did not commit
// left there). A directory whose manifest is damaged, or lost while files
// that only a committed save leaves remain (backups, a world file or chunk
// store of generation 2 or later), is an error wrapping ErrCorrupt that
// names arksave repair; nothing in it is changed, so that no new world
// ever starts over the old one.
//
// On a medium that cannot be written (the lock file cannot be created: a
// read-only file system, or no permission) the directory opens read-only:
// without the lock, removing nothing; ReadOnly says why and every change
// returns an error wrapping ErrReadOnly.
func OpenDir(fsys vfs.FS, dir string, opts ...DirOption) (*Dir, error) {
	if fsys == nil {
		fsys = vfs.OS
	}
	if err := mkdirDurable(fsys, dir); err != nil {
		return nil, fmt.Errorf("autosave: create save directory: %w", err)
	}
	d, err := openLocked(fsys, dir, applyDirOptions(opts))
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Dir, error) {
		d.Close()
		return nil, err
	}
	if d.manErr != nil {
		switch {
		case errors.Is(d.manErr, fs.ErrPermission):
			return fail(fmt.Errorf("%w; nothing was changed: %s", d.manErr, errs.DeniedHint(d.manErr)))
		case !errors.Is(d.manErr, autosave.ErrNoSave):
			return fail(fmt.Errorf("%w; nothing was changed: run arksave repair %s to rebuild it", d.manErr, dir))
		default:
			if err := d.LostManifest(); err != nil {
				return fail(err)
			}
		}
	}
	if err := d.checkBackupDir(); err != nil {
		return fail(err)
	}
	if d.roErr == nil {
		if err := d.cleanup(); err != nil {
			return fail(err)
		}
	}
	return d, nil
}

// OpenDirForRepair opens the save directory at dir as it is, for tools that
// mend it: it takes the lock like OpenDir, but nothing is created or
// removed, and a missing or damaged manifest is no error: Manifest then
// returns nil and ManifestErr says why. Commit works as on a directory from
// OpenDir; when the manifest is lost, set Commit.Generation above
// HighestGeneration. Close releases the lock.
func OpenDirForRepair(fsys vfs.FS, dir string, opts ...DirOption) (*Dir, error) {
	if fsys == nil {
		fsys = vfs.OS
	}
	if err := isDir(fsys, dir); err != nil {
		return nil, err
	}
	return openLocked(fsys, dir, applyDirOptions(opts))
}

// OpenDirReadOnly opens the save directory at dir to read it, without the
// lock, while a game may be saving into it: nothing is created, changed or
// removed, and every change returns an error wrapping ErrReadOnly. Like
// OpenDirForRepair, a missing or damaged manifest is no error. The Dir sees
// the generation committed when it opened; Stale tells when a writer has
// committed another since (a reader that meets a missing file then opens
// the directory again: see ReadConsistent). Close is optional.
func OpenDirReadOnly(fsys vfs.FS, dir string) (*Dir, error) {
	if fsys == nil {
		fsys = vfs.OS
	}
	if err := isDir(fsys, dir); err != nil {
		return nil, err
	}
	d := &Dir{fs: fsys, path: dir, roErr: fmt.Errorf("%w: %s was opened for reading", autosave.ErrReadOnly, dir)}
	d.loadManifest()
	return d, nil
}

// missingDir is the error for a save directory that does not exist: it
// matches ErrNoSave and fs.ErrNotExist, so that a game can tell it from a
// directory that holds no save.
type missingDir string

func (e missingDir) Error() string {
	return fmt.Sprintf("%v: %s does not exist", autosave.ErrNoSave, string(e))
}

func (e missingDir) Is(target error) bool {
	return target == autosave.ErrNoSave || target == fs.ErrNotExist
}

func isDir(fsys vfs.FS, dir string) error {
	st, err := fsys.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return missingDir(dir)
	}
	if err != nil {
		return fmt.Errorf("autosave: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%w: %s is not a directory", autosave.ErrNoSave, dir)
	}
	return nil
}

// openLocked takes the lock of an existing directory (or notes that the
// medium is read-only) and reads its manifest.
func openLocked(fsys vfs.FS, dir string, o dirOptions) (*Dir, error) {
	d := &Dir{fs: fsys, path: dir}
	lock, err := lockDir(fsys, dir, o.lockTimeout)
	switch {
	case err == nil:
		d.lock = lock
	case fsx.IsReadOnly(err):
		d.roErr = fmt.Errorf("%w: %s cannot be written: %w", autosave.ErrReadOnly, dir, err)
	default:
		var le *autosave.LockedError
		if errors.As(err, &le) || errors.Is(err, autosave.ErrCorrupt) {
			return nil, err
		}
		return nil, fmt.Errorf("autosave: lock save directory %s: %w", dir, err)
	}
	d.loadManifest()
	return d, nil
}

// loadManifest reads and verifies the manifest into man, or says why not
// in manErr.
func (d *Dir) loadManifest() {
	m, err := d.readManifest()
	if err != nil {
		d.manErr = err
		return
	}
	d.man.Store(m)
}

func (d *Dir) readManifest() (*Manifest, error) {
	p, err := d.file(ManifestName)
	if err != nil {
		return nil, err
	}
	data, err := readBounded(d.fs, p, maxManifestSize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: %s has no manifest", autosave.ErrNoSave, d.path)
	case err != nil:
		return nil, fmt.Errorf("autosave: read manifest: %w", err)
	}
	m, err := decodeManifest(data, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return m, nil
}

// readBounded reads a whole file that must not be larger than limit: a
// larger one is corrupt.
func readBounded(fsys vfs.FS, name string, limit int64) ([]byte, error) {
	data, err := vfs.ReadFileLimit(fsys, name, limit)
	if errors.Is(err, vfs.ErrTooLarge) {
		err = fmt.Errorf("%w: %w", autosave.ErrCorrupt, err)
	}
	return data, err
}

// Close releases the directory's lock. The Dir refuses changes afterwards;
// reading its manifest still works.
func (d *Dir) Close() error {
	d.roErr = errClosed
	if d.lock == nil {
		return nil
	}
	err := d.lock.Close()
	d.lock = nil
	return err
}

// ReadOnly returns nil when the Dir may change the directory (it holds its
// lock), else why not: an error wrapping ErrReadOnly.
func (d *Dir) ReadOnly() error { return d.roErr }

// Stale reports whether the manifest on disk is no longer the one the Dir
// holds: another writer committed since the Dir opened (or the manifest
// appeared, went away, or cannot be read now).
func (d *Dir) Stale() bool {
	m, err := d.readManifest()
	cur := d.man.Load()
	if err != nil || cur == nil {
		// Stale unless the manifest was unusable then and is now.
		return err == nil || cur != nil
	}
	return !bytes.Equal(m.encode(), cur.encode())
}

// ManifestErr returns nil when the directory has a valid manifest, an error
// wrapping ErrNoSave when it has none, and for a directory opened with
// OpenDirForRepair or OpenDirReadOnly the reason its manifest cannot be
// used (wrapping ErrCorrupt or ErrVersion, or an I/O error).
func (d *Dir) ManifestErr() error {
	if d.man.Load() != nil {
		return nil
	}
	if d.manErr == nil {
		return fmt.Errorf("%w: %s has no manifest", autosave.ErrNoSave, d.path)
	}
	return d.manErr
}

// LostManifest returns an error matching autosave.ErrManifestLost and
// autosave.ErrCorrupt when the directory has no manifest but holds files
// only a committed save leaves (committedFiles), naming them and arksave
// repair; nil otherwise.
func (d *Dir) LostManifest() error {
	if d.man.Load() != nil || !errors.Is(d.ManifestErr(), autosave.ErrNoSave) {
		return nil
	}
	files := d.committedFiles(3)
	if len(files) == 0 {
		return nil
	}
	return fmt.Errorf("%w (%w): %s has lost its manifest, the commit point, but holds a save's files (%s); nothing was changed: run arksave repair %s to rebuild the manifest from the newest intact files",
		autosave.ErrManifestLost, autosave.ErrCorrupt, d.path, strings.Join(files, ", "), d.path)
}

// committedFiles lists up to n files of a directory without a manifest
// that only a committed save leaves (for an error message): anything in
// backups/, a world file of generation 2 or later, a chunk store whose
// newest generation is 2 or later (or whose header cannot be read). A new
// world's first save that did not commit leaves at most world-1.pecs and
// chunk stores at generation 1: the commit protocol ignores those, and a
// new world replaces them.
func (d *Dir) committedFiles(n int) []string {
	var out []string
	names, _ := d.fs.ReadDir(d.path)
	for _, name := range names {
		g, world := worldGeneration(name)
		switch {
		case world && g >= 2:
			out = append(out, name)
		case isPlayersIndex(name, 2):
			out = append(out, name)
		case isStoreName(name) && d.storeCommitted(name):
			out = append(out, name)
		case name == BackupDir:
			sub, _ := d.fs.ReadDir(filepath.Join(d.path, BackupDir))
			for _, b := range sub {
				if formName(path.Join(BackupDir, b)) {
					out = append(out, BackupDir+"/")
					break
				}
			}
		}
	}
	if len(out) > n {
		out = append(out[:n], "...")
	}
	return out
}

// storeCommitted reports whether the chunk store name has committed more
// than a first save could have: a header slot at generation 2 or later, or
// records behind header slots that cannot be read.
func (d *Dir) storeCommitted(name string) bool {
	p, err := d.file(name)
	if err != nil {
		return true
	}
	g, err := storetool.Tool.NewestGeneration(d.fs, p)
	return err != nil || g >= 2
}

// IsEmpty reports whether the directory holds none of a save's files: no
// manifest (readable or not), world file, chunk store or backup.
func (d *Dir) IsEmpty() bool {
	if d.man.Load() != nil || !errors.Is(d.manErr, autosave.ErrNoSave) || len(d.Leftovers()) > 0 {
		return false
	}
	sub, _ := d.fs.ReadDir(filepath.Join(d.path, BackupDir))
	return len(sub) == 0
}

// Leftovers lists the save format's files in a directory that holds no
// committed save: what a first save that did not commit left (a new world's
// first commit replaces them), for a message.
func (d *Dir) Leftovers() []string {
	var out []string
	names, _ := d.fs.ReadDir(d.path)
	for _, name := range names {
		if name != LockName && name != ManifestName && name != MetaName && name != ThumbnailName && formName(name) {
			out = append(out, name)
		}
	}
	return out
}

// HighestGeneration returns the highest generation any file of the
// directory is named after or any readable manifest names: the manifest,
// world files, backups and compacted chunk stores. A new generation above
// it collides with nothing in the directory.
func (d *Dir) HighestGeneration() uint64 {
	g := d.Generation()
	for _, sub := range []string{".", BackupDir} {
		names, _ := d.fs.ReadDir(filepath.Join(d.path, sub))
		for _, n := range names {
			n = strings.TrimSuffix(n, ".tmp")
			if store, _, ok := DataFileOf(n); ok {
				n = store
			}
			if v, ok := worldGeneration(n); ok {
				g = max(g, v)
			} else if v, ok := storeGeneration(n); ok {
				g = max(g, v)
			} else if v, ok := playersGeneration(n); ok {
				g = max(g, v)
			} else if v, ok := playersDataGeneration(n); ok {
				g = max(g, v)
			} else if v, ok := backupManifestGeneration(n); ok {
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

// File returns the path of a file of the save directory named as a
// manifest names it (slash-separated, relative to the directory), for
// tools that open it themselves. It refuses what Dir refuses: a name the
// save format does not use (anything that could lead outside the
// directory), and a symbolic link or other non-regular file in its place.
func (d *Dir) File(name string) (string, error) { return d.file(name) }

// ReadWorld reads the ECS world file that m names (the committed manifest
// when m is nil) and verifies its size and checksum.
func (d *Dir) ReadWorld(m *Manifest) ([]byte, error) {
	if m == nil {
		m = d.man.Load()
	}
	if m == nil {
		return nil, autosave.ErrNoSave
	}
	return d.readRef(m.World)
}

func (d *Dir) readRef(ref FileRef) ([]byte, error) {
	p, err := d.file(ref.Name)
	if err != nil {
		return nil, err
	}
	f, err := d.fs.Open(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s named by the manifest is missing", autosave.ErrCorrupt, ref.Name)
		}
		return nil, fmt.Errorf("autosave: read %s: %w", ref.Name, err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, fmt.Errorf("autosave: read %s: %w", ref.Name, err)
	}
	if size != ref.Size {
		return nil, fmt.Errorf("%w: %s: size %d, manifest says %d", autosave.ErrCorrupt, ref.Name, size, ref.Size)
	}
	data := make([]byte, size)
	if n, err := f.ReadAt(data, 0); int64(n) < size && !(errors.Is(err, io.EOF) && int64(n) == size) {
		return nil, fmt.Errorf("autosave: read %s: %w", ref.Name, err)
	}
	if got := crc32.Checksum(data, castagnoli); got != ref.CRC32C {
		return nil, fmt.Errorf("%w: %s: crc32c %08x, manifest says %08x", autosave.ErrCorrupt, ref.Name, got, ref.CRC32C)
	}
	return data, nil
}

// Commit is what a new generation consists of.
type Commit struct {
	World    []byte   // the encoded ECS world, unless WorldRef is set
	WorldRef *FileRef // the world file already written by WriteWorld
	Chunks   StoreRef // the chunk store generation, already durable; Root is required
	// Players names the players of the new generation, already durable
	// (nil: none).
	Players    *PlayersRef
	MaxBackups int // older generations to keep in backups/, the newest
	// Retention keeps older generations in backups/ by their age, on top of
	// the newest MaxBackups (autosave.Retention; ages count from Now).
	Retention autosave.Retention
	Now       time.Time
	// Generation is the number of the new generation; zero means the
	// committed one plus one. A repair whose manifest is lost sets it above
	// HighestGeneration. It must exceed the committed generation.
	Generation uint64
	// NoBackup drops the generation being replaced instead of keeping it
	// in backups/: a repair replaces a damaged generation.
	NoBackup bool

	// committed, when set, is called once the new manifest is durably in
	// place, before the previous generation is retired.
	committed func()
	// backupChunks, when set, is the previous generation's own copy of the
	// chunk store (CopiedChunksName): its backup manifest names it instead
	// of the store the new generation goes on using.
	backupChunks *StoreRef
	// backupPlayers, when set, is the previous generation's own copy of
	// its players (CopiedPlayersName): its backup manifest names it.
	backupPlayers *PlayersRef
	// keepDamaged retires the previous generation as a backup whatever
	// happened to its world file, and keeps every backup: a load that
	// found it damaged falls back without removing a file.
	keepDamaged bool
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
	if err := d.writable(); err != nil {
		return nil, 0, err
	}
	gen := d.Generation() + 1
	if c.Generation != 0 {
		if c.Generation < gen {
			return nil, 0, fmt.Errorf("autosave: commit generation %d: the committed generation is %d", c.Generation, d.Generation())
		}
		gen = c.Generation
	}
	if gen > MaxGeneration {
		return nil, 0, d.exhausted(gen)
	}
	if len(c.Chunks.Root) == 0 {
		return nil, 0, fmt.Errorf("autosave: commit generation %d: the chunk store reference has no root", gen)
	}
	if !isStoreName(c.Chunks.Name) {
		return nil, 0, fmt.Errorf("autosave: commit generation %d: %q is not a chunk store's name", gen, c.Chunks.Name)
	}
	if err := checkDataNames(&Manifest{Version: ManifestVersion, Generation: gen, Chunks: c.Chunks}); err != nil {
		return nil, 0, fmt.Errorf("autosave: commit generation %d: %w", gen, err)
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
		Players:    c.Players,
	}
	if err := checkPlayersRef(m, false); err != nil {
		return nil, 0, fmt.Errorf("autosave: commit generation %d: %w", gen, err)
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
		ref, err := d.writeWorld(gen, c.World)
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
	// The last moment before the commit point: a writer whose lock file
	// was removed or replaced meanwhile commits only if it still holds the
	// directory (see checkLock).
	if err := d.checkLock(); err != nil {
		return nil, written, err
	}
	if err := d.rename(tmp, ManifestName); err != nil {
		// On a file system over a network a rename whose answer was lost may
		// still have happened: read the manifest back before calling it failed.
		if cur, rerr := d.readManifest(); rerr != nil || bytes.Equal(cur.encode(), mdata) {
			d.reload()
			return nil, written, &uncertainError{fmt.Errorf("autosave: commit manifest: %w", err)}
		}
		return nil, written, d.lockLost(fmt.Errorf("autosave: commit manifest: %w", err))
	}
	if err := d.fs.SyncDir(d.path); err != nil {
		// The rename may or may not be durable: the outcome is unknown until
		// the directory is read again, so report failure. The caller's next
		// save writes generation gen+1 over whichever is current.
		d.reload()
		return nil, written, &uncertainError{d.lockLost(fmt.Errorf("autosave: sync save directory after commit: %w", err))}
	}
	prev := d.man.Swap(m)
	d.manErr = nil
	if c.committed != nil {
		c.committed()
	}
	if c.NoBackup {
		prev = nil
	}
	if c.keepDamaged {
		d.retireDamaged(prev)
		return d.Manifest(), written, nil
	}
	d.retire(prev, keepPolicy{max: c.MaxBackups, retention: c.Retention}, c.backupChunks, c.backupPlayers)
	return d.Manifest(), written, nil
}

// uncertainError is a commit's error after its manifest was renamed into
// place: the new generation may be the committed one, so nothing it names
// may be taken back.
type uncertainError struct{ err error }

func (e *uncertainError) Error() string { return e.err.Error() }
func (e *uncertainError) Unwrap() error { return e.err }

func (d *Dir) writable() error {
	if d.roErr != nil {
		return d.roErr
	}
	return nil
}

// WriteWorld writes and syncs the world file of the next generation and
// returns its reference for [Commit.WorldRef]. The file gets a name no
// committed manifest uses, so it can be written in place, and while the
// chunk store commits: until a manifest names it, it is ignored (and
// removed by the next OpenDir).
func (d *Dir) WriteWorld(data []byte) (FileRef, error) {
	if err := d.writable(); err != nil {
		return FileRef{}, err
	}
	if err := d.nextGeneration(); err != nil {
		return FileRef{}, err
	}
	return d.writeWorld(d.Generation()+1, data)
}

// nextGeneration returns an error matching ErrExhausted when the committed
// generation is MaxGeneration: no later one can be numbered, so no save
// can commit in the directory. It is nil otherwise.
func (d *Dir) nextGeneration() error {
	if d.Generation() >= MaxGeneration {
		return d.exhausted(d.Generation() + 1)
	}
	return nil
}

// exhausted is the error for a commit of generation gen beyond
// MaxGeneration.
func (d *Dir) exhausted(gen uint64) error {
	return fmt.Errorf("%w: %s is at generation %d, the last generation a save directory can have, so generation %d cannot commit and no save goes there any more (nothing was changed); "+
		"save the world into a new directory (Persistence.SaveAs), whose generations start again at 1 (arksave copy keeps the generation numbers, so a copy is exhausted too)",
		autosave.ErrExhausted, d.path, d.Generation(), gen)
}

func (d *Dir) writeWorld(gen uint64, data []byte) (FileRef, error) {
	ref := FileRef{Name: WorldName(gen), Size: int64(len(data)), CRC32C: crc32.Checksum(data, castagnoli)}
	if err := d.writeSynced(ref.Name, data); err != nil {
		return FileRef{}, err
	}
	return ref, nil
}

// reload re-reads the manifest after a commit whose outcome is unknown.
func (d *Dir) reload() {
	if m, err := d.readManifest(); err == nil {
		d.man.Store(m)
	}
}

func (d *Dir) writeSynced(rel string, data []byte) error {
	p, err := d.file(rel)
	if err != nil {
		return err
	}
	f, err := d.fs.Create(p)
	if err != nil {
		return fmt.Errorf("autosave: create %s: %w", rel, err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		f.Close()
		return fmt.Errorf("autosave: write %s: %w", rel, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("autosave: sync %s: %w", rel, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("autosave: close %s: %w", rel, err)
	}
	return nil
}

// writeAtomic replaces rel with data through rel.tmp (vfs.WriteFileAtomic).
func (d *Dir) writeAtomic(rel string, data []byte) error {
	if _, err := d.file(rel + ".tmp"); err != nil {
		return err
	}
	p, err := d.file(rel)
	if err != nil {
		return err
	}
	return vfs.WriteFileAtomic(d.fs, p, data)
}

func (d *Dir) rename(from, to string) error {
	src, err := d.file(from)
	if err != nil {
		return err
	}
	dst, err := d.file(to)
	if err != nil {
		return err
	}
	return d.fs.Rename(src, dst)
}

func (d *Dir) remove(rel string) error {
	p, err := d.file(rel)
	if err != nil {
		return err
	}
	return d.fs.Remove(p)
}

// removeStore removes the chunk store name and every data file of it in
// the directory: a store no manifest names. It returns the first error but
// for files that are already gone.
func (d *Dir) removeStore(name string) error {
	var first error
	names, _ := d.fs.ReadDir(d.path)
	for _, n := range append(names, name) {
		if store, _, ok := DataFileOf(n); (ok && store == name) || n == name {
			if err := d.remove(n); err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
				first = err
			}
		}
	}
	return first
}

// PendingCopy returns the reference of the copy of the chunk store that
// the writer made for the committed generation's backup
// (backups/chunks-<G>.pxsw), which no manifest names until the next commit
// retires that generation, or nil when there is none that opens. A repair
// reads the chunks of the committed generation from it.
func (d *Dir) PendingCopy() *StoreRef { return d.pendingCopy() }

// pendingCopy returns the reference of the copy of the chunk store made
// for the committed generation (CopiedChunksName), which the next commit's
// backup of that generation names, or nil when there is none that opens.
func (d *Dir) pendingCopy() *StoreRef {
	g := d.Generation()
	if g == 0 || d.checkBackupDir() != nil {
		return nil
	}
	name := CopiedChunksName(g)
	s, err := d.openStoreRef(StoreRef{Name: name})
	if err != nil {
		return nil
	}
	defer s.Close()
	ref := storeRefOf(name, s)
	return &ref
}

// DropCopy removes the copy of the committed generation's chunk store made
// for its backup (backups/chunks-<G>.pxsw and its data files), for a repair
// that found it damaged: the next save's backup of that generation then
// names the store the generation uses, as without a copy.
func (d *Dir) DropCopy() error {
	if err := d.writable(); err != nil {
		return err
	}
	if err := d.removeCopy(d.Generation()); err != nil {
		return fmt.Errorf("autosave: drop %s: %w", CopiedChunksName(d.Generation()), err)
	}
	return d.fs.SyncDir(filepath.Join(d.path, BackupDir))
}

// removeCopy removes backed-up generation g's own chunk store
// (CopiedChunksName) and its data files, and its own players files
// (CopiedPlayersName): what a copy that failed, or that no commit came to
// name, left.
func (d *Dir) removeCopy(g uint64) error {
	name := CopiedChunksName(g)
	first := d.removePlayersFiles(CopiedPlayersName(g), CopiedPlayersDataName(g))
	names, _ := d.fs.ReadDir(filepath.Join(d.path, BackupDir))
	for _, n := range names {
		rel := path.Join(BackupDir, n)
		if store, _, ok := dataFileOf(strings.TrimSuffix(rel, ".tmp")); (ok && store == name) || strings.TrimSuffix(rel, ".tmp") == name {
			if err := d.remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
				first = err
			}
		}
	}
	return first
}

// retire moves the previous generation's world file and manifest into
// backups/ and prunes the backups the policy does not keep. When the previous generation has
// its own copy of the chunk store (copy, made after it committed), its
// backup manifest names that copy, and its own copy of the players
// (players) likewise. Failures are left for cleanup.
func (d *Dir) retire(prev *Manifest, keep keepPolicy, copy *StoreRef, players *PlayersRef) {
	if prev != nil && keep.keepsAny() && d.checkBackupDir() == nil {
		if err := d.fs.MkdirAll(filepath.Join(d.path, BackupDir)); err == nil {
			b := *prev
			b.World.Name = path.Join(BackupDir, WorldName(prev.Generation))
			if copy != nil && copy.Name == CopiedChunksName(prev.Generation) {
				b.Chunks = *copy
				b.Version = ManifestVersion // names data files
			}
			if prev.Players != nil && players != nil && players.Index.Name == CopiedPlayersName(prev.Generation) {
				b.Players = players
				b.Version = ManifestVersion
			}
			if d.rename(prev.World.Name, b.World.Name) == nil {
				_ = d.writeAtomic(backupManifestName(prev.Generation), b.encode())
			}
		}
	}
	_ = d.cleanupWith(keep)
}

// retireDamaged keeps a damaged previous generation as a backup, its
// manifest written even when its world file cannot be moved (it is then
// a damaged backup, for arksave check and repair to find), and removes
// nothing.
func (d *Dir) retireDamaged(prev *Manifest) {
	if prev != nil && d.checkBackupDir() == nil {
		if err := d.fs.MkdirAll(filepath.Join(d.path, BackupDir)); err == nil {
			b := *prev
			b.World.Name = path.Join(BackupDir, WorldName(prev.Generation))
			_ = d.rename(prev.World.Name, b.World.Name)
			_ = d.writeAtomic(backupManifestName(prev.Generation), b.encode())
		}
	}
	_ = d.fs.SyncDir(filepath.Join(d.path, BackupDir))
}

func backupManifestName(g uint64) string {
	return path.Join(BackupDir, fmt.Sprintf("manifest-%d", g))
}

// Backups returns the manifests of the generations kept in backups/, newest
// first. Damaged backup manifests are skipped (DamagedBackups lists them).
func (d *Dir) Backups() []*Manifest {
	out, _ := d.backups()
	return out
}

// DamagedBackups lists the backup manifests that cannot be read, as
// problems of their files, and backups/ itself when it is not a plain
// directory.
func (d *Dir) DamagedBackups() []chunkstore.Problem {
	_, bad := d.backups()
	return bad
}

func (d *Dir) backups() ([]*Manifest, []chunkstore.Problem) {
	if err := d.checkBackupDir(); err != nil {
		return nil, []chunkstore.Problem{{File: BackupDir, Offset: -1, Err: err}}
	}
	names, err := d.fs.ReadDir(filepath.Join(d.path, BackupDir))
	if errors.Is(err, fs.ErrPermission) {
		// Backups that cannot be listed are not "none": say why.
		return nil, []chunkstore.Problem{{File: BackupDir, Offset: -1, Err: fmt.Errorf("autosave: list %s: %w", BackupDir, err)}}
	}
	if err != nil {
		return nil, nil
	}
	var out []*Manifest
	var bad []chunkstore.Problem
	for _, n := range names {
		if _, ok := backupManifestGeneration(n); !ok {
			continue // not a backup manifest's name (a generation out of range among them): not the save's
		}
		rel := path.Join(BackupDir, n)
		m, err := d.readBackup(rel, n)
		if err != nil {
			bad = append(bad, chunkstore.Problem{File: rel, Offset: -1, Err: err})
			continue
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Generation > out[j].Generation })
	return out, bad
}

func (d *Dir) readBackup(rel, name string) (*Manifest, error) {
	g, _ := backupManifestGeneration(name)
	p, err := d.file(rel)
	if err != nil {
		return nil, err
	}
	data, err := readBounded(d.fs, p, maxManifestSize)
	if err != nil {
		return nil, err
	}
	m, err := decodeManifest(data, true)
	if err == nil && m.Generation != g {
		err = fmt.Errorf("%w: backup manifest of generation %d", autosave.ErrCorrupt, m.Generation)
	}
	return m, err
}

// DropBackup removes backed-up generation g, a damaged one included, and
// the files only it used.
func (d *Dir) DropBackup(g uint64) error {
	if err := d.writable(); err != nil {
		return err
	}
	err := d.remove(backupManifestName(g))
	if err == nil {
		err = d.fs.SyncDir(filepath.Join(d.path, BackupDir))
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("autosave: drop backup %d: %w", g, err)
	}
	// Its world file goes too, even when its manifest was unreadable.
	if err := d.remove(path.Join(BackupDir, WorldName(g))); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("autosave: drop backup %d: %w", g, err)
	}
	return d.cleanupWith(keepAll)
}

// ReplaceBackup rewrites the manifest of a backed-up generation (atomically),
// for a migration that upgrades it: m must name a generation in backups/.
func (d *Dir) ReplaceBackup(m *Manifest) error {
	if err := d.writable(); err != nil {
		return err
	}
	if _, err := d.Backup(m.Generation); err != nil {
		return err
	}
	if err := checkManifestNames(m, true); err != nil {
		return fmt.Errorf("autosave: rewrite backup %d: %w", m.Generation, err)
	}
	if err := d.writeAtomic(backupManifestName(m.Generation), m.encode()); err != nil {
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
	return nil, d.noGeneration(g)
}

// noGeneration is the error for a generation g the directory does not
// hold: it lists the generations it does.
func (d *Dir) noGeneration(g uint64) error {
	var there []string
	if m := d.Manifest(); m != nil {
		there = append(there, fmt.Sprintf("%d (committed)", m.Generation))
	}
	for _, b := range d.Backups() {
		there = append(there, fmt.Sprint(b.Generation))
	}
	if len(there) == 0 {
		return fmt.Errorf("%w: %s holds no generation %d, nor any other", autosave.ErrNoGeneration, d.path, g)
	}
	return fmt.Errorf("%w: %s holds no generation %d; the generations there are %s: give one of those", autosave.ErrNoGeneration, d.path, g, strings.Join(there, ", "))
}

// Restore makes backed-up generation g current again, as a new generation:
// its world file is copied into the new generation and the manifest names
// the chunk store generation g used (through its root, which stays valid
// because the store file is append-only and kept while a backup needs it),
// or, when g has a chunk store of its own in backups/, a copy of it (and
// of its own players files likewise).
// The generation that was current becomes a backup like after any commit.
func (d *Dir) Restore(g uint64, maxBackups int) (*Manifest, error) {
	if err := d.writable(); err != nil {
		return nil, err
	}
	b, err := d.Backup(g)
	if err != nil {
		return nil, err
	}
	world, err := d.ReadWorld(b)
	if err != nil {
		return nil, fmt.Errorf("autosave: restore generation %d: %w", g, err)
	}
	store, err := d.file(b.Chunks.Name)
	if err == nil {
		_, err = d.fs.Stat(store)
	}
	if err != nil {
		return nil, fmt.Errorf("autosave: restore generation %d: chunk store %s: %w", g, b.Chunks.Name, err)
	}
	if len(b.Chunks.Root) == 0 {
		// A manifest of format 1 names the store generation by number only.
		root, err := storetool.Tool.FindRoot(d.fs, store, b.Chunks.Generation)
		if err != nil {
			return nil, fmt.Errorf("autosave: restore generation %d: its manifest has no chunk store root and none can be found: %w", g, err)
		}
		b.Chunks.Root = root
	}
	if b.Players != nil {
		if _, err := d.ReadPlayers(b); err != nil {
			return nil, fmt.Errorf("autosave: restore generation %d: %w", g, err)
		}
	}
	// The backup's own players copy stays the backup's, like its store:
	// the generation made current gets a copy.
	players, err := d.adoptPlayers(b, d.Generation()+1)
	if err != nil {
		return nil, fmt.Errorf("autosave: restore generation %d: %w", g, err)
	}
	if b.Version < manifestVersionData {
		// It does not name its data files: the store does.
		s, err := chunkstore.Open(store, &chunkstore.Options{FS: d.fs, ReadOnly: true, Root: b.Chunks.Root})
		if err != nil {
			return nil, fmt.Errorf("autosave: restore generation %d: %w", g, err)
		}
		b.Chunks.Data = storetool.Tool.DataFileNames(s)
		s.Close()
	}
	if isCopiedStore(b.Chunks.Name) {
		// The backup's own store stays the backup's: the generation made
		// current gets a copy, which its saves go on writing to.
		ref, err := d.copyStore(b.Chunks, CompactedChunksName(d.HighestGeneration()+1))
		if err != nil {
			return nil, fmt.Errorf("autosave: restore generation %d: %w", g, err)
		}
		b.Chunks = ref
	}
	m, _, err := d.Commit(Commit{World: world, Chunks: b.Chunks, Players: players, MaxBackups: max(maxBackups, 1)})
	return m, err
}

// Cleanup removes what no manifest names: world files and temp files of
// saves that did not commit, and chunk stores that neither the manifest
// nor a backup uses. A repair calls it after its commit. It needs the
// directory's lock and a manifest; without one it removes nothing.
func (d *Dir) Cleanup() error {
	if err := d.checkLock(); err != nil {
		return err
	}
	return d.cleanup()
}

// cleanup removes what the manifest and the backups do not name, keeping
// every backup that exists.
func (d *Dir) cleanup() error { return d.cleanupWith(keepAll) }

// keepAll is the policy of a cleanup that drops no backup.
var keepAll = keepPolicy{max: -1}

// cleanupWith removes files that no manifest names: world files and temp
// files of saves that did not commit, backups the policy does not keep
// (see retained), and chunk stores and data files that neither the manifest nor a
// kept backup uses (a compaction emptied them, or a save that did not
// commit started them).
// Without a committed manifest it removes nothing: a lost manifest is
// repairable from the files. It removes only regular files whose names the
// save format uses, never the lock file, never a damaged backup (a repair
// decides about that), never a symbolic link.
func (d *Dir) cleanupWith(keep keepPolicy) error {
	cur := d.man.Load()
	if cur == nil || d.roErr != nil {
		return nil
	}
	backups, damaged := d.backups()
	backups = d.dropBackupsOver(backups, keep, time.UnixMilli(cur.ModifiedMS))
	k := keptFiles{names: map[string]bool{ManifestName: true, LockName: true, MetaName: true, ThumbnailName: true}, allData: map[string]bool{}}
	k.names[cur.World.Name] = true
	k.store(cur)
	k.players(cur.Players)
	// The copy of the store made for the current generation waits for the
	// next commit to name it in that generation's backup.
	pending := CopiedChunksName(cur.Generation)
	k.names[pending] = true
	// So does the copy of its players.
	k.names[CopiedPlayersName(cur.Generation)] = true
	k.names[CopiedPlayersDataName(cur.Generation)] = true
	for _, b := range backups {
		k.names[b.World.Name] = true
		k.store(b)
		k.names[backupManifestName(b.Generation)] = true
		k.players(b.Players)
	}
	for _, p := range damaged {
		d.keepDamagedBackup(k.names, p)
	}
	return d.removeStale(k, pending)
}

// dropBackupsOver removes the manifests of the backups (newest first) that
// the policy does not keep when the committed generation was saved at now
// (see retained), and returns the backups kept. The newest backup with a
// chunk store of its own stays beyond keep.max: it is the one that shares
// no file with the current generation.
func (d *Dir) dropBackupsOver(backups []*Manifest, keep keepPolicy, now time.Time) []*Manifest {
	if keep.max < 0 || len(backups) <= keep.max {
		return backups
	}
	own := -1
	for i, b := range backups {
		if isCopiedStore(b.Chunks.Name) {
			own = i
			break
		}
	}
	times := make([]time.Time, len(backups))
	for i, b := range backups {
		times[i] = time.UnixMilli(b.ModifiedMS)
	}
	retain := retained(times, now, keep)
	kept := make([]*Manifest, 0, len(backups))
	for i, b := range backups {
		if retain[i] || keep.max > 0 && i == own {
			kept = append(kept, b)
			continue
		}
		_ = d.remove(backupManifestName(b.Generation))
	}
	return kept
}

// keptFiles is what a cleanup keeps: names, and the stores whose every
// data file stays.
type keptFiles struct {
	names   map[string]bool
	allData map[string]bool
}

// keeps reports whether rel is kept: named, or a data file of a store
// whose every data file stays.
func (k keptFiles) keeps(rel string) bool {
	store, _, ok := DataFileOf(rel)
	return k.names[rel] || ok && k.allData[store]
}

// store keeps a generation's chunk store and the data files it names.
func (k keptFiles) store(m *Manifest) {
	k.names[m.Chunks.Name] = true
	for _, n := range m.Chunks.Data {
		k.names[n] = true
	}
	if m.Version < manifestVersionData {
		// A manifest that predates data files cannot name them: keep
		// all of its store's.
		k.allData[m.Chunks.Name] = true
	}
}

// players keeps a generation's players files.
func (k keptFiles) players(p *PlayersRef) {
	if p != nil {
		k.names[p.Index.Name] = true
		k.names[p.Data] = true
	}
}

// keepDamagedBackup keeps what a damaged backup manifest may name, for a
// repair to decide.
func (d *Dir) keepDamagedBackup(keep map[string]bool, p chunkstore.Problem) {
	g, ok := backupManifestGeneration(path.Base(p.File))
	if !ok {
		return
	}
	keep[p.File] = true
	keep[path.Join(BackupDir, WorldName(g))] = true
	// Which players files it names is unknown: keep every one up to its
	// generation, and its own copy.
	keep[CopiedPlayersName(g)] = true
	keep[CopiedPlayersDataName(g)] = true
	names, _ := d.fs.ReadDir(d.path)
	for _, n := range names {
		if pg, ok := playersGeneration(n); ok && pg <= g {
			keep[n] = true
		} else if pg, ok := playersDataGeneration(n); ok && pg <= g {
			keep[n] = true
		}
	}
}

// removeStale removes every file of a save directory's forms that k does
// not keep, in the directory and in backups/; the data files of the store
// copy pending for the next commit stay.
func (d *Dir) removeStale(k keptFiles, pending string) error {
	subs := []string{"."}
	if d.checkBackupDir() == nil {
		subs = append(subs, BackupDir)
	}
	for _, sub := range subs {
		names, err := d.fs.ReadDir(filepath.Join(d.path, sub))
		if err != nil {
			continue
		}
		for _, n := range names {
			rel := path.Join(sub, n)
			if k.keeps(rel) || !formName(rel) {
				continue
			}
			if live, ok := MirroredName(rel); ok && k.keeps(live) {
				continue // a mirror goes with its file
			}
			if store, _, ok := dataFileOf(rel); ok && store == pending {
				continue
			}
			if err := d.remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, autosave.ErrCorrupt) {
				return fmt.Errorf("autosave: remove stale %s: %w", rel, err)
			}
		}
	}
	return nil
}
