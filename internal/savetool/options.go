package savetool

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/errs"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/vfs"
)

// Options are what every operation of the package takes.
type Options struct {
	// FS is the file system; nil means the real one.
	FS vfs.FS
	// Progress, when set, is called as a long operation advances: with the
	// stage it is in and how far, in bytes or chunks. Calls come from the
	// calling goroutine and the store's, often: keep it cheap.
	Progress func(Progress)
	// Key is the save's key (Plugin.Key, archetype.Key): encrypted world
	// files and players' records are decrypted with it. Without it they
	// are checked as stored (their checksums), and their content is not.
	Key []byte
}

// Progress is how far a long operation is.
type Progress struct {
	Stage string // what is being done, e.g. "checking chunks.pxsw"
	Done  int64  // units done in this stage
	Total int64  // units in this stage; an estimate for byte counts, 0 when unknown
}

func (o Options) fs() vfs.FS {
	if o.FS == nil {
		return vfs.OS
	}
	return o.FS
}

// tracker counts the bytes an operation reads and writes through its file
// system and reports them as the progress of the current stage.
type tracker struct {
	fn    func(Progress)
	stage atomic.Pointer[string]
	total atomic.Int64
	done  atomic.Int64
}

// newTracker returns a tracker for o.Progress and the file system to use:
// o's, counting bytes when progress is wanted.
func newTracker(o Options) (*tracker, vfs.FS) {
	t := &tracker{fn: o.Progress}
	if t.fn == nil {
		return t, o.fs()
	}
	return t, vfs.Counting(o.fs(), func(n int64, _ bool) { t.add(n) })
}

// begin starts a stage of about total units.
func (t *tracker) begin(stage string, total int64) {
	if t.fn == nil {
		return
	}
	t.stage.Store(&stage)
	t.total.Store(total)
	t.done.Store(0)
	t.fn(Progress{Stage: stage, Total: total})
}

// add counts n units of the current stage.
func (t *tracker) add(n int64) {
	if t.fn == nil || n == 0 {
		return
	}
	st := t.stage.Load()
	if st == nil {
		return
	}
	done := t.done.Add(n)
	total := t.total.Load()
	if total > 0 && done > total {
		done = total // byte totals are estimates
	}
	t.fn(Progress{Stage: *st, Done: done, Total: total})
}

// end completes the current stage.
func (t *tracker) end() {
	if t.fn == nil {
		return
	}
	if st := t.stage.Load(); st != nil {
		total := t.total.Load()
		t.fn(Progress{Stage: *st, Done: total, Total: total})
	}
	t.stage.Store(nil)
}

// fileSize returns the size of a regular file, 0 when it is missing or
// anything else: a symbolic link is not followed, and a named pipe or a
// device holds nothing a save wrote.
func fileSize(fsys vfs.FS, name string) int64 {
	if st, err := fsys.Lstat(name); err == nil && st.Mode().IsRegular() {
		return st.Size()
	}
	return 0
}

// dirFileSize is fileSize of a file of the save directory d named as a
// manifest names it; 0 for a name the directory refuses.
func dirFileSize(fsys vfs.FS, d *savedir.Dir, name string) int64 {
	p, err := d.File(name)
	if err != nil {
		return 0
	}
	return fileSize(fsys, p)
}

// inspectOptions open stores read-only without a generator: every record
// as stored, no generator version to match; encrypted records (Plugin.Key)
// open with key, the save's (Options.Key), and without it (nil) their
// content reads as archetype.ErrEncrypted. What only moves records as
// stored (compact, migrate, repair) needs no key.
func inspectOptions(fsys vfs.FS, key []byte) *chunkstore.Options {
	return &chunkstore.Options{FS: fsys, ReadOnly: true, Key: key}
}

// rootOf returns the chunk store root of a manifest's generation: the one
// it keeps, or for format 1 the one found in the store.
func rootOf(d *savedir.Dir, m *savedir.Manifest) ([]byte, error) {
	if len(m.Chunks.Root) > 0 {
		return m.Chunks.Root, nil
	}
	p, err := d.File(m.Chunks.Name)
	if err != nil {
		return nil, err
	}
	return storetool.Tool.FindRoot(d.FS(), p, m.Chunks.Generation)
}

// openGeneration opens the chunk store generation a manifest names with o
// (read-only inspection unless o says otherwise).
func openGeneration(d *savedir.Dir, m *savedir.Manifest, o chunkstore.Options) (*chunkstore.Store, error) {
	root, err := rootOf(d, m)
	if err != nil {
		return nil, err
	}
	p, err := d.File(m.Chunks.Name)
	if err != nil {
		return nil, err
	}
	o.Root = root
	return chunkstore.Open(p, &o)
}

// OpenStore opens the chunk store of generation gen (0: the committed
// one; else a backup's) of the save directory at dir, read-only and for
// inspection: every record as stored, no generator needed or checked
// (Entries, ReadRaw, Bodies, RecordInfo and Stats work; Get of a Delta
// chunk does not: apply the game's generator to ReadRaw's delta, as
// [RenderStore] does). It returns the manifest of the generation with it.
//
// It takes no lock and changes nothing, so it works while a game saves
// into the directory: should a commit move a file on before the store is
// open, it opens the new generation instead (savedir.ReadConsistent). The
// caller closes the store.
func OpenStore(dir string, gen uint64, o Options) (*chunkstore.Store, *savedir.Manifest, error) {
	_, fsys := newTracker(o)
	var s *chunkstore.Store
	var man *savedir.Manifest
	err := readSave(fsys, dir, gen, func(d *savedir.Dir, m *savedir.Manifest) error {
		var err error
		s, err = openGeneration(d, m, *inspectOptions(fsys, o.Key))
		man = m
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return s, man, nil
}

// openSave opens the save directory at dir read-only, without its lock,
// for a command that needs a save there: a path that does not exist, is
// not a directory, or holds none of a save's files is a NotASaveError.
// Nothing is created or changed.
func openSave(fsys vfs.FS, dir string) (*savedir.Dir, error) {
	st, err := fsys.Stat(dir)
	switch {
	case err != nil:
		return nil, pathError(dir, err)
	case !st.IsDir():
		return nil, &NotASaveError{Path: dir, Reason: "it is a file; a save is a directory"}
	}
	d, err := savedir.OpenDirReadOnly(fsys, dir)
	if err != nil {
		return nil, err
	}
	if d.IsEmpty() {
		return nil, emptyDir(dir)
	}
	return d, nil
}

// readSave opens the save directory at dir read-only, without its lock
// (nothing is changed: a game may be saving into it), and calls read with
// the manifest of generation gen (0: the committed one). When read fails
// because a concurrent commit moved a file on, it runs again on the new
// generation (savedir.ReadConsistent).
func readSave(fsys vfs.FS, dir string, gen uint64, read func(d *savedir.Dir, m *savedir.Manifest) error) error {
	if _, err := openSave(fsys, dir); err != nil {
		return err
	}
	return savedir.ReadConsistent(fsys, dir, func(d *savedir.Dir) error {
		m, err := pickGeneration(d, dir, gen)
		if err != nil {
			return err
		}
		return read(d, m)
	})
}

// pickGeneration returns the manifest of generation gen (0: the committed
// one) of a directory opened read-only.
func pickGeneration(d *savedir.Dir, dir string, gen uint64) (*savedir.Manifest, error) {
	m := d.Manifest()
	if m == nil {
		err := d.ManifestErr()
		if _, denied := errs.Denied(err); denied {
			return nil, fmt.Errorf("%w; %s", err, errs.DeniedHint(err))
		}
		if errors.Is(err, autosave.ErrNoSave) {
			return nil, fmt.Errorf("%w; arksave check %s lists what is there, arksave repair %s rebuilds it", err, dir, dir)
		}
		return nil, fmt.Errorf("%w; run arksave repair %s", err, dir)
	}
	if gen == 0 || gen == m.Generation {
		return m, nil
	}
	return d.Backup(gen)
}

// openLocked opens the save directory at dir for a command that changes
// it, taking its lock: an error naming the holder, and what can be done
// meanwhile, while a game has it.
func openLocked(fsys vfs.FS, dir string, open func(vfs.FS, string, ...savedir.DirOption) (*savedir.Dir, error)) (*savedir.Dir, error) {
	// A path that is not a save directory is left as it is: not created,
	// no lock file written into it.
	if _, err := openSave(fsys, dir); err != nil {
		return nil, err
	}
	d, err := open(fsys, dir)
	var locked *autosave.LockedError
	if errors.As(err, &locked) {
		return nil, inUseError{locked}
	}
	if err != nil {
		return nil, err
	}
	if err := d.ReadOnly(); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// inUseError is ErrInUse for one holder: it names the holder and what works
// meanwhile, and matches autosave.ErrLocked too.
type inUseError struct{ locked *autosave.LockedError }

func (e inUseError) Error() string {
	return fmt.Sprintf("%s is in use by %s: close the game first (arksave inspect, check, render and export work while it runs)", e.locked.Dir, e.locked.Who())
}

func (e inUseError) Is(target error) bool { return target == ErrInUse }
func (e inUseError) Unwrap() error        { return e.locked }

// keptStoreRef returns the reference to m's chunk store generation that a
// new generation committed with the same chunks names: m's, with its root
// and the data files it uses (which a manifest older than format 3 does
// not name), and the store opened read-only for the caller to close.
func keptStoreRef(d *savedir.Dir, m *savedir.Manifest, fsys vfs.FS) (savedir.StoreRef, *chunkstore.Store, error) {
	s, err := openGeneration(d, m, *inspectOptions(fsys, nil))
	if err != nil {
		return savedir.StoreRef{}, nil, fmt.Errorf("%s: %w", m.Chunks.Name, err)
	}
	ref := m.Chunks
	ref.Root, _ = rootOf(d, m)
	if m.Version < savedir.ManifestVersion {
		ref.Data = storetool.Tool.DataFileNames(s) // the manifest predates data files
	}
	return ref, s, nil
}
