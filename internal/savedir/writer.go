package savedir

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/conv"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/snapshot"
	"github.com/arksave/arksave/vfs"
)

// Options configure a [Writer].
type Options struct {
	// FS is the file system; nil means the real one.
	FS vfs.FS
	// Store is the chunk store configuration: the game's constants, the
	// generator and the persisted layers. Its FS field is set to FS.
	Store chunkstore.Options
	// Fresh starts a new save in the directory even if it holds one: the
	// next save commits a new world on top, and the old generations become
	// backups (as many as MaxBackups keeps).
	Fresh bool
	// LockTimeout is how long opening a directory waits for another holder
	// to release it (see LockTimeout); zero fails at once with ErrLocked.
	LockTimeout time.Duration
	// Logger receives what the writer does, through log/slog: each save's
	// start (Info "save started") and outcome (Info "save committed" with
	// generation, duration, bytes, chunks, bodies, entities; Error "save
	// failed" with the error), and failures between saves (Warn
	// "compaction failed", "backup copy failed": the mirrors, see
	// copyBackup). Nil is silent.
	Logger *slog.Logger
}

// Job is one save for the writer.
type Job struct {
	Snap       *snapshot.Snapshot
	MaxBackups int
	// Retention keeps older generations by age on top of the newest
	// MaxBackups (Config.Retention).
	Retention autosave.Retention
	// SaveTo, when set, writes a complete save into that directory instead
	// and continues there ("Save As"). The current directory stays at its
	// last committed generation.
	SaveTo string
	// RequestedAt is when the save was asked for; Result.Duration counts from it.
	RequestedAt time.Time
	// BackupCopyEvery is ignored (Config.BackupCopyEvery is deprecated):
	// the writer grows the mirrors of the committed generation's files
	// after every save instead (see mirror.go).
	BackupCopyEvery int
	// Meta, when set, is what the game gives the save's description
	// (meta.json, thumbnail.png), written after the commit, between saves.
	Meta *MetaInput
}

// Writer owns a save directory and its chunk store and commits saves on a
// goroutine of its own. It holds the directory's lock from opening until
// Close (a directory it switches to, by Switch, Continue or a Save As,
// until it moves on again). The game loop submits a [Job] when the writer
// is idle and polls for the [autosave.Result]; loaders read chunks through it
// concurrently with a commit.
type Writer struct {
	opts Options

	mu      sync.RWMutex // guards dir, store and players against the loader's reads
	dir     *Dir
	store   *chunkstore.Store
	players *Players // the committed players index; nil without players
	name    string   // the store's file name within dir
	fresh   bool     // store is a new world's that no commit has named yet
	// storeErr is why store is nil: a failed save could not reopen it.
	storeErr error

	// use is held while the writer goroutine uses the store between saves
	// (a compaction step), so that Switch and Continue wait for it.
	use       sync.Mutex
	compacted compaction // compaction steps since the last commit, for the next Result

	// The chunk store copied for the committed generation (CopiedChunksName),
	// and its players (CopiedPlayersName), by a writer of an earlier version
	// that made such copies: its backup manifest names them once the next
	// save commits; nil when there is none (this writer makes none). Only
	// the writer goroutine and Switch touch them.
	copied        *StoreRef
	copiedPlayers *PlayersRef
	copyStats     backupCopy // the mirrors grown after the last save, for the next Result

	jobs      chan Job
	results   chan *autosave.Result
	busy      atomic.Bool
	progress  atomic.Uint32 // in millionths; only grows within a save
	copyBytes atomic.Int64  // bytes the chunk store's files have had written

	// Progress of the running save: what it has done of what it will do.
	pmu            sync.Mutex            // orders progress updates, so that onProgress sees them rise
	track          atomic.Pointer[track] // the running save's work, nil between saves
	recordEstimate int64                 // bytes a chunk record takes, from the last save
	onProgress     func(float32)         // test hook: every value published, in order

	log    *slog.Logger // never nil: a silent one when Options.Logger is
	closed bool
	done   chan struct{}

	// after counts the jobs submitted whose work after the save (the backup
	// copy, compaction steps) has not ended; WaitIdle waits for it to be 0.
	afterMu   sync.Mutex
	afterDone *sync.Cond
	after     int
}

// OpenWriter opens the save directory at dir for writing (OpenDir: taking
// its lock, creating it if needed), opens its chunk store at the
// generation the manifest names, and starts the writer goroutine.
func OpenWriter(dir string, opts Options) (*Writer, error) {
	if opts.FS == nil {
		opts.FS = vfs.OS
	}
	d, err := OpenDir(opts.FS, dir, LockTimeout(opts.LockTimeout))
	if err != nil {
		return nil, err
	}
	return NewWriter(d, opts)
}

// NewWriter starts a writer on a save directory the caller opened with
// OpenDir, for a caller that looks at the directory before deciding
// (Options.Fresh). The writer takes d over, its lock included, and closes
// it on Close, or at once when NewWriter fails.
func NewWriter(d *Dir, opts Options) (*Writer, error) {
	if opts.FS == nil {
		opts.FS = d.FS()
	}
	// A job submitted while the writer compacts between saves waits in the
	// channel: Submit never blocks the game loop.
	w := &Writer{jobs: make(chan Job, 1), results: make(chan *autosave.Result, 1), done: make(chan struct{}), recordEstimate: defaultRecordEstimate,
		log: logger(opts.Logger)}
	w.afterDone = sync.NewCond(&w.afterMu)
	opts.Store.FS = vfs.Counting(opts.FS, w.countBytes)
	w.opts = opts
	store, name, err := w.openStoreOf(d, opts.Fresh)
	if err != nil {
		d.Close()
		return nil, err
	}
	players, err := readPlayersOf(d, opts.Fresh)
	if err != nil {
		store.Close()
		d.Close()
		return nil, err
	}
	w.dir, w.store, w.name, w.fresh, w.players = d, store, name, store.Generation() == 0, players
	if !opts.Fresh {
		w.copied, w.copiedPlayers = d.pendingCopy(), d.pendingPlayers() // made after the last save of an earlier session
	}
	go w.loop()
	return w, nil
}

// readPlayersOf reads the players index of a directory's committed
// generation (none for a fresh start).
func readPlayersOf(d *Dir, fresh bool) (*Players, error) {
	if fresh {
		return nil, nil
	}
	p, err := d.ReadPlayers(nil)
	if err != nil {
		return nil, fmt.Errorf("autosave: players of generation %d: %w", d.Generation(), err)
	}
	return p, nil
}

// openStoreOf opens the chunk store of a directory's committed generation,
// or a new chunk store when there is no save or fresh is set. A directory
// that cannot be written opens its store read-only.
func (w *Writer) openStoreOf(d *Dir, fresh bool) (*chunkstore.Store, string, error) {
	if m := d.Manifest(); m != nil && !fresh {
		s, err := w.openStore(d, m.Chunks)
		if err != nil {
			return nil, "", fmt.Errorf("autosave: open chunk store of generation %d: %w", m.Generation, err)
		}
		return s, m.Chunks.Name, nil
	}
	if err := d.ReadOnly(); err != nil {
		return nil, "", fmt.Errorf("autosave: a new save cannot start in %s: %w", d.Path(), err)
	}
	name, err := w.freshStoreName(d)
	if err != nil {
		return nil, "", err
	}
	p, err := d.file(name)
	if err != nil {
		return nil, "", err
	}
	s, err := chunkstore.Create(p, &w.opts.Store)
	if err != nil {
		return nil, "", fmt.Errorf("autosave: create chunk store: %w", err)
	}
	return s, name, nil
}

// openStore opens the chunk store generation a manifest names: through its
// root when the manifest has one (so that a restored backup's generation
// opens even after the store moved on), else through its header slot.
func (w *Writer) openStore(d *Dir, ref StoreRef) (*chunkstore.Store, error) {
	p, err := d.file(ref.Name)
	if err != nil {
		return nil, err
	}
	o := w.existingOptions()
	o.ReadOnly = d.ReadOnly() != nil
	if len(ref.Root) > 0 {
		o.Root = ref.Root
	} else {
		o.Generation = ref.Generation
	}
	return chunkstore.Open(p, &o)
}

// existingOptions are the store options for opening a saved store: the
// world seed comes from the save, whatever seed a new world would get.
func (w *Writer) existingOptions() chunkstore.Options {
	c := w.opts.Store
	c.Seed = 0
	return c
}

// freshStoreName picks a file name for a new chunk store that no file in
// the directory has, so that starting over never overwrites a store that a
// manifest, a backup or a repair might still need.
func (w *Writer) freshStoreName(d *Dir) (string, error) {
	first := d.Generation() + 1
	for i := first; i <= MaxGeneration; i++ {
		name := ChunksName
		if i > 1 || d.Manifest() != nil {
			name = CompactedChunksName(i)
		}
		p, err := d.file(name)
		if err != nil {
			return "", err
		}
		_, err = w.opts.FS.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return name, nil
		}
		if err != nil {
			return "", fmt.Errorf("autosave: %w", err)
		}
		if i > first+1000 {
			break
		}
	}
	return "", fmt.Errorf("autosave: no free chunk store name in %s", d.Path())
}

// Submit hands a job to the writer. It returns false, and takes nothing,
// when a save is still running or its result has not been polled (saves
// never overlap), or when the writer is closed. On true the writer owns
// the snapshot and releases it.
func (w *Writer) Submit(j Job) bool {
	if w.isClosed() || !w.busy.CompareAndSwap(false, true) {
		return false
	}
	if j.RequestedAt.IsZero() {
		j.RequestedAt = time.Now()
	}
	w.pmu.Lock()
	w.progress.Store(0)
	w.pmu.Unlock()
	w.afterMu.Lock()
	w.after++
	w.afterMu.Unlock()
	w.jobs <- j
	return true
}

// WaitIdle waits, as Wait does, for a running save and takes its result,
// then also for the work the writer goroutine does after it: the mirrors it
// grows (see copyBackup) and compaction steps.
// Once it returns, the writer uses no CPU or disk until the next Submit.
func (w *Writer) WaitIdle() *autosave.Result {
	r := w.Wait()
	w.afterMu.Lock()
	for w.after > 0 {
		w.afterDone.Wait()
	}
	w.afterMu.Unlock()
	return r
}

// Seed returns the world seed of the chunk store in use.
func (w *Writer) Seed() uint64 {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.store == nil {
		return w.opts.Store.Seed
	}
	return w.store.Options().Seed
}

// FS returns the file system the writer uses.
func (w *Writer) FS() vfs.FS { return w.opts.FS }

// Busy reports whether a save is running or its result waits to be polled.
func (w *Writer) Busy() bool { return w.busy.Load() }

// Progress returns the running save's progress, from 0 to 1. It moves
// with the work, chunk by chunk as the chunks are compressed and byte by
// byte as the records and the world file are written, never goes back
// within a save, and is 1 only once the save's manifest is durably in
// place: a failed save stops below 1. Submit sets it to 0.
func (w *Writer) Progress() float32 { return float32(w.progress.Load()) / progressScale }

// Poll returns the result of the last submitted save if it has finished.
// After a result is returned the writer accepts the next job.
func (w *Writer) Poll() (*autosave.Result, bool) {
	select {
	case r := <-w.results:
		w.busy.Store(false)
		return r, true
	default:
		return nil, false
	}
}

// Wait blocks until the submitted save finishes and returns its result, or
// returns nil at once when no save is pending.
func (w *Writer) Wait() *autosave.Result {
	if !w.busy.Load() {
		return nil
	}
	r := <-w.results
	w.busy.Store(false)
	return r
}

// Dir returns the path of the save directory the writer writes to.
func (w *Writer) Dir() string {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.dir.Path()
}

// Generation returns the last committed generation.
func (w *Writer) Generation() uint64 {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.dir.Generation()
}

// Manifest returns the committed manifest, nil before the first save.
func (w *Writer) Manifest() *Manifest {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.dir.Manifest()
}

// ReadWorld returns the committed ECS world file, verified.
func (w *Writer) ReadWorld() ([]byte, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.dir.ReadWorld(nil)
}

// Get reads chunk pos from the committed store into dst, or generates it;
// see [chunkstore.Store.Get]: when the chunk's record is damaged, or the
// store is unavailable after a failed save, dst holds the generated chunk
// and the error says why. Only damage matches chunkstore.ErrCorrupt: a
// chunk read with any other error is still stored, and must not be taken
// for the generated one. Safe to call from a loader goroutine while a save
// runs.
func (w *Writer) Get(pos chunkstore.Pos, dst []uint32) (bool, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.store == nil {
		return w.getDown(pos, dst)
	}
	return w.store.Get(pos, dst)
}

// GetExtra is Get that also returns the extra data the game saved with the
// chunk (nil for none); see [chunkstore.Store.GetExtra].
func (w *Writer) GetExtra(pos chunkstore.Pos, dst []uint32) (bool, []byte, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.store == nil {
		stored, err := w.getDown(pos, dst)
		return stored, nil, err
	}
	return w.store.GetExtra(pos, dst)
}

// getDown generates chunk pos into dst while the store is unavailable.
func (w *Writer) getDown(pos chunkstore.Pos, dst []uint32) (bool, error) {
	clear(dst)
	if g := w.opts.Store.Generator; g != nil {
		g.Generate(pos.X, pos.Y, w.opts.Store.Seed, dst)
	}
	return false, w.storeDown()
}

// errStoreDown is returned by reads while a failed save has left the chunk
// store closed; the next save reopens it. It is not damage: the chunks are
// where they were.
var errStoreDown = errors.New("autosave: chunk store unavailable after a failed save")

// storeDown returns errStoreDown with the reason the store could not be
// reopened, as text only: that reason may match chunkstore.ErrCorrupt (the
// reopen found damage), and a reader must not take the chunk it wanted
// for damaged. Called with w.mu held.
func (w *Writer) storeDown() error {
	if w.storeErr == nil {
		return errStoreDown
	}
	return fmt.Errorf("%w (the next save reopens it; it failed with: %v)", errStoreDown, w.storeErr)
}

// Bodies returns the bodies stored with chunk pos. Safe to call from a
// loader goroutine while a save runs.
func (w *Writer) Bodies(pos chunkstore.Pos) ([]chunkstore.Body, error) {
	blk, err := w.Entities(pos)
	return blk.Bodies, err
}

// Entities returns what is stored with chunk pos besides its pixels: its
// bodies and entity sections. Safe to call from a loader goroutine while a
// save runs.
func (w *Writer) Entities(pos chunkstore.Pos) (chunkstore.EntityBlock, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.store == nil {
		return chunkstore.EntityBlock{}, w.storeDown()
	}
	return w.store.Entities(pos)
}

// Players returns the ids of the players the committed generation holds,
// ascending.
func (w *Writer) Players() []string {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.players.IDs()
}

// ReadPlayer returns the entity section of player id as the committed
// generation holds it, verified; ErrNoPlayer when it holds none. Safe to
// call while a save runs.
func (w *Writer) ReadPlayer(id string) ([]byte, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.dir.ReadPlayer(w.players, id)
}

// Switch makes the writer write to the save directory at dir, opening its
// committed generation (or starting a new save there when fresh is set or
// it holds none). It takes dir's lock and releases the current directory's;
// on error the writer stays where it was. A save must not be pending: call
// [Writer.Wait] first.
func (w *Writer) Switch(dir string, fresh bool) error {
	_, err := w.switchTo(dir, fresh, nil)
	return err
}

// Continue makes the writer write to the save at dir, like Switch without
// fresh, once validate accepts its committed world file, and returns that
// file: a load replaces the game's world with it. When dir holds no save,
// or validate fails, the writer stays where it was and dir is released.
// A damaged committed generation falls back to the newest intact backup
// as ContinueIntact does. A save must not be pending.
func (w *Writer) Continue(dir string, validate func(world []byte) error) ([]byte, error) {
	world, _, err := w.ContinueIntact(dir, validate)
	return world, err
}

// ContinueIntact is Continue that verifies the generation it loads
// ([Dir.LoadIntact]): when the committed generation of dir is damaged (its
// world file, its players, or the chunk store's records it uses), the
// newest intact backup becomes current as a new generation, and the
// returned Fallback says so (nil when the committed generation was
// intact). A damaged generation without an intact backup is an error
// naming arksave repair, and a file that cannot be read without being
// damaged an error matching ErrUnreadable; the writer then stays where it
// was.
func (w *Writer) ContinueIntact(dir string, validate func(world []byte) error) ([]byte, *autosave.Fallback, error) {
	var fb *autosave.Fallback
	world, err := w.switchTo(dir, false, func(d *Dir) ([]byte, error) {
		if d.Manifest() == nil {
			return nil, fmt.Errorf("%w: %s", autosave.ErrNoSave, dir)
		}
		world, f, err := d.LoadIntact(validate)
		fb = f
		return world, err
	})
	if err != nil {
		return nil, nil, err
	}
	return world, fb, nil
}

func (w *Writer) switchTo(dir string, fresh bool, check func(*Dir) ([]byte, error)) ([]byte, error) {
	if w.isClosed() {
		return nil, fmt.Errorf("%w: the writer of %s was closed; open a writer on %s instead", autosave.ErrClosed, w.Dir(), dir)
	}
	if w.Busy() {
		return nil, errors.New("autosave: Switch while a save is pending; Wait for it first")
	}
	w.use.Lock() // a compaction step between saves finishes first
	defer w.use.Unlock()
	w.mu.RLock()
	cur := w.dir
	w.mu.RUnlock()
	d := cur
	same := samePath(cur.Path(), dir)
	if !same && check != nil {
		// A save to continue must be there: a mistyped directory is neither
		// created nor locked.
		ro, err := OpenDirReadOnly(w.opts.FS, dir)
		if err != nil {
			return nil, err
		}
		if ro.IsEmpty() {
			return nil, fmt.Errorf("%w: %s holds none of a save's files", autosave.ErrNoSave, dir)
		}
	}
	if !same {
		var err error
		if d, err = OpenDir(w.opts.FS, dir, LockTimeout(w.opts.LockTimeout)); err != nil {
			return nil, err
		}
	}
	fail := func(err error) ([]byte, error) {
		if !same {
			d.Close()
		}
		return nil, err
	}
	var world []byte
	if check != nil {
		var err error
		if world, err = check(d); err != nil {
			return fail(err)
		}
	}
	s, name, err := w.openStoreOf(d, fresh)
	if err != nil {
		return fail(err)
	}
	players, err := readPlayersOf(d, fresh)
	if err != nil {
		s.Close()
		return fail(err)
	}
	w.mu.Lock()
	old := w.store
	w.dir, w.store, w.name, w.fresh, w.players = d, s, name, s.Generation() == 0, players
	w.copied, w.copiedPlayers = nil, nil // a copy is for the generation it was made at
	if !fresh {
		w.copied, w.copiedPlayers = d.pendingCopy(), d.pendingPlayers()
	}
	w.mu.Unlock()
	if !same {
		cur.Close()
	}
	if old == nil {
		return world, nil
	}
	return world, old.Close()
}

// samePath reports whether two paths name the same directory as written
// (after cleaning and making them absolute).
func samePath(a, b string) bool {
	if a, err := filepath.Abs(a); err == nil {
		if b, err := filepath.Abs(b); err == nil {
			return a == b
		}
	}
	return filepath.Clean(a) == filepath.Clean(b)
}

// isClosed reports whether Close was called.
func (w *Writer) isClosed() bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.closed
}

// Close waits for a running save (and the mirrors grown after it, see
// copyBackup), stops the writer
// and releases the save directory. The last result, if not polled, is
// dropped. Afterwards Submit takes no job and Switch, Continue and
// ContinueIntact return an error matching ErrClosed.
func (w *Writer) Close() error {
	w.Wait()
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	close(w.jobs)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	var err error
	if w.store != nil {
		gen := w.store.Generation()
		err = w.store.Close()
		if m := w.dir.Manifest(); gen == 0 && (m == nil || m.Chunks.Name != w.name) {
			// A new world's store that never committed: nothing of it stays.
			_ = w.dir.removeStore(w.name)
		}
	}
	if derr := w.dir.Close(); err == nil {
		err = derr
	}
	return err
}

func (w *Writer) loop() {
	defer close(w.done)
	for j := range w.jobs {
		r := w.run(j)
		w.track.Store(nil)
		w.logResult(r)
		w.results <- r
		if r.Err == nil && j.SaveTo == "" {
			w.copyBackup(r.Generation)
		}
		// The redundant copies first, then the description for people.
		w.writeMeta(j.Meta, r)
		w.compact()
		w.afterMu.Lock()
		w.after--
		w.afterDone.Broadcast()
		w.afterMu.Unlock()
	}
}

// logger returns l, or a silent logger when l is nil.
func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// logResult logs the outcome of a save.
func (w *Writer) logResult(r *autosave.Result) {
	if r.Err != nil {
		w.log.Error("save failed", "dir", r.Dir, "generation", r.Generation, "duration", r.Duration, "err", r.Err)
		return
	}
	w.log.Info("save committed", "dir", r.Dir, "generation", r.Generation, "duration", r.Duration,
		"bytes", r.BytesWritten, "chunks", r.ChunksWritten, "chunks_stored", r.ChunksStored, "bodies", r.BodiesWritten,
		"entities", r.WorldEntities, "regions", r.RegionsWritten, "players", r.PlayersWritten, "world_bytes", r.WorldBytes,
		"stall", r.Stall)
	if r.CompactErr != nil {
		w.log.Warn("compaction failed", "dir", r.Dir, "err", r.CompactErr)
	}
	if r.BackupCopyErr != nil {
		w.log.Warn("backup copy failed", "dir", r.Dir, "err", r.BackupCopyErr)
	}
}

// backupCopy is what growing the mirrors after a save did.
type backupCopy struct {
	name     string
	bytes    int64
	duration time.Duration
	err      error
}

// copyBackup grows the mirrors of the files generation gen, that a save
// just committed, uses (see mirror.go): each data file of its chunk store
// and its players data up to what gen uses of it, its players index and
// the store file's header slots. A sealed data file is thus copied once in
// its life, and a save's records twice; no file is copied whole per save
// any more (Job.BackupCopyEvery is ignored). It runs between saves, like
// compaction: a save submitted meanwhile waits for it.
func (w *Writer) copyBackup(gen uint64) {
	w.use.Lock()
	defer w.use.Unlock()
	w.mu.RLock()
	dir, store, players := w.dir, w.store, w.players
	w.mu.RUnlock()
	// A writer that closes grows them too, so that the generation it
	// leaves has them.
	if store == nil || dir.ReadOnly() != nil || dir.Generation() != gen {
		return
	}
	start := time.Now()
	st := backupCopy{name: BackupDir}
	defer func() {
		if p := recover(); p != nil {
			st.err, st.name = NewPanicError(p), ""
		}
		st.duration = time.Since(start)
		w.copyStats = st
	}()
	st.bytes, st.err = dir.mirror(dir.Manifest(), players)
}

// copyOf returns the chunk store copied for generation prev, the one a
// commit is about to retire, or nil.
func (w *Writer) copyOf(prev uint64) *StoreRef {
	if c := w.copied; c != nil && c.Name == CopiedChunksName(prev) {
		return c
	}
	return nil
}

// playersCopyOf returns the players copied for generation prev, or nil.
func (w *Writer) playersCopyOf(prev uint64) *PlayersRef {
	if p := w.copiedPlayers; p != nil && p.Index.Name == CopiedPlayersName(prev) {
		return p
	}
	return nil
}

// Compaction between saves. A step compacts one data file (the one with the
// most dead bytes) as a chunk store commit of its own; the manifest of the
// next save names the generation it made. Until then the files it emptied
// stay, and a crash leaves the generation the manifest names.
const (
	// maxCompactionSteps bounds the steps after one save: a save that
	// waits is delayed by one step at most.
	maxCompactionSteps = 8
)

// compaction is what the steps between two saves did.
type compaction struct {
	steps int
	err   error
}

// compact runs compaction steps on the store while it needs them: one
// whatever happens, more while no save waits.
func (w *Writer) compact() {
	w.use.Lock()
	defer w.use.Unlock()
	w.mu.RLock()
	dir, store, closing := w.dir, w.store, w.closed
	w.mu.RUnlock()
	if store == nil || closing || dir.checkLock() != nil {
		// No save would commit the steps of a writer that closes, or of
		// one that no longer holds the directory.
		return
	}
	for step := range maxCompactionSteps {
		if step > 0 && len(w.jobs) > 0 {
			return
		}
		_, did, err := w.compactStep(store)
		if err != nil {
			w.compacted.err = err
			return
		}
		if !did {
			return
		}
		w.compacted.steps++
	}
}

// compactStep runs one step, a panic included as an error.
func (w *Writer) compactStep(store *chunkstore.Store) (st chunkstore.CompactStats, did bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = NewPanicError(p)
		}
	}()
	return store.CompactNext()
}

// Progress of a save. Its work is the chunks to compress and the bytes to
// write: a chunk counts as many units as its record is expected to take
// bytes (recordEstimate, learnt from the last save), a byte written as
// one; the bytes a save will write are estimated from its chunks and its
// world file. Estimates are capped, so progress never passes
// maxWorkProgress before the commit, and the manifest's rename sets 1.
const (
	progressScale         = 1e6
	defaultRecordEstimate = 32 << 10 // bytes of a chunk record before the first save
	tableEstimate         = 64 << 10 // page table, header slot, players, manifest
	startProgress         = 0.01     // the save has started
	maxWorkProgress       = 0.99     // everything is written; the manifest is next
)

// track is what one save has to do and has done.
type track struct {
	chunks   int64        // chunks to compress
	perChunk int64        // units of one chunk's compression
	bytes    int64        // bytes it is expected to write
	read     atomic.Int64 // chunks compressed
	written  atomic.Int64 // bytes written
}

func (t *track) fraction() float64 {
	total := t.chunks*t.perChunk + t.bytes
	done := min(t.read.Load(), t.chunks)*t.perChunk + min(t.written.Load(), t.bytes)
	if total <= 0 {
		return 0
	}
	return float64(done) / float64(total)
}

// beginProgress starts the progress of a save of chunks chunks and a world
// file of worldBytes.
func (w *Writer) beginProgress(chunks int, worldBytes int) *track {
	t := &track{chunks: int64(chunks), perChunk: w.recordEstimate}
	t.bytes = t.chunks*w.recordEstimate + int64(worldBytes) + tableEstimate
	w.track.Store(t)
	w.setProgress(startProgress)
	return t
}

// advance publishes the running save's progress after some of its work.
func (w *Writer) advance() {
	if t := w.track.Load(); t != nil {
		w.setProgress(startProgress + (maxWorkProgress-startProgress)*t.fraction())
	}
}

// countBytes counts the bytes the chunk store writes (its file system is a
// vfs.Counting) towards the running save's progress.
func (w *Writer) countBytes(n int64, write bool) {
	if write {
		w.copyBytes.Add(n)
	}
	if t := w.track.Load(); t != nil && write {
		t.written.Add(n)
		w.advance()
	}
}

// setProgress publishes p unless the progress is there already: within a
// save it only rises. The mutex orders the updates of the compression
// goroutines and the writer, so that onProgress sees them rise too.
func (w *Writer) setProgress(p float64) {
	v := uint32(min(max(p, 0), 1) * progressScale)
	w.pmu.Lock()
	defer w.pmu.Unlock()
	if v <= w.progress.Load() {
		return
	}
	w.progress.Store(v)
	if w.onProgress != nil {
		w.onProgress(float32(v) / progressScale)
	}
}

// progressSource counts a chunk towards the save's progress once the store
// has read its pixels for compression.
type progressSource struct {
	src chunkstore.PixelSource
	t   *track
	w   *Writer
}

func (p progressSource) ReadPixels(dst []uint32) error {
	err := p.src.ReadPixels(dst)
	p.t.read.Add(1)
	p.w.advance()
	return err
}

// ChunkExtra passes on the extra data of a source that has some (a
// snapshot's chunk does: chunkstore.ExtraSource), so that counting the
// progress does not hide it from the store.
func (p progressSource) ChunkExtra() []byte {
	if x, ok := p.src.(chunkstore.ExtraSource); ok {
		return x.ChunkExtra()
	}
	return nil
}

// reopenStore opens the chunk store again when a failed save could not.
func (w *Writer) reopenStore(dir *Dir, name string) (*chunkstore.Store, error) {
	w.recover(dir, nil, name, false, nil)
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.store == nil {
		return nil, fmt.Errorf("autosave: chunk store %s in %s cannot be reopened after an earlier failure: %w", name, dir.Path(), w.storeErr)
	}
	return w.store, nil
}

// batchOf puts the snapshot's chunks (read while compressing) and entity
// sets into a batch of store.
func (w *Writer) batchOf(store *chunkstore.Store, j Job, tr *track) (*chunkstore.Batch, error) {
	batch := store.NewBatch()
	for _, c := range j.Snap.Chunks {
		batch.PutChunkFrom(conv.StorePos(c.Pos), progressSource{src: c, t: tr, w: w})
	}
	for _, es := range j.Snap.Entities {
		blk, err := entityBlock(store, es)
		if err != nil {
			return nil, err
		}
		batch.PutEntities(conv.StorePos(es.Pos), blk)
	}
	return batch, nil
}

// worldDone is the outcome of writing a world file.
type worldDone struct {
	ref FileRef
	err error
}

// writeWorld writes and syncs the world file on a goroutine of its own and
// delivers the outcome on the channel it returns; a panic there fails it.
func (w *Writer) writeWorld(dir *Dir, world []byte, tr *track) <-chan worldDone {
	ch := make(chan worldDone, 1)
	go func() {
		var done worldDone
		defer func() {
			if p := recover(); p != nil {
				done.err = NewPanicError(p)
			}
			ch <- done
		}()
		done.ref, done.err = dir.WriteWorld(world)
		if done.err == nil {
			tr.written.Add(done.ref.Size)
			w.advance()
		}
	}()
	return ch
}

// settleCommitted moves what happened between saves into the result of the
// save that committed: the compaction steps and the backup copy, which
// are part of its generation now.
func (w *Writer) settleCommitted(res *autosave.Result, backupChunks *StoreRef) {
	res.Compacted, res.CompactErr = w.compacted.steps > 0, w.compacted.err
	w.compacted = compaction{}
	if backupChunks != nil {
		res.BackupChunks = backupChunks.Name
	}
	w.copied, w.copiedPlayers = nil, nil
	res.BackupCopyBytes, res.BackupCopyDuration, res.BackupCopyErr = w.copyStats.bytes, w.copyStats.duration, w.copyStats.err
	w.copyStats = backupCopy{}
}

// run commits one save: the chunk store first (records, then its header
// slot), then the world file and the manifest. An error anywhere leaves the
// previous generation committed; the writer then reopens the store at that
// generation so that the next save starts from a consistent state.
//
// A panic on the way (while compressing or writing) fails the save with a
// [*PanicError] and is handled like an error: the game keeps running.
func (w *Writer) run(j Job) (res *autosave.Result) {
	defer j.Snap.Release()
	// Every path that starts writing the world file waits for it before
	// returning: its memory is free for the next snapshot then.
	defer j.Snap.ReleaseWorld()
	res = &autosave.Result{Stall: j.Snap.Stall}
	defer func() { res.Duration = time.Since(j.RequestedAt) }()

	w.mu.RLock()
	dir, store, name, players := w.dir, w.store, w.name, w.players
	w.mu.RUnlock()
	res.Generation = dir.Generation()
	res.Dir = dir.Path()
	saveAs := j.SaveTo != ""
	w.log.Info("save started", "dir", dir.Path(), "generation", dir.Generation()+1, "chunks", len(j.Snap.Chunks),
		"regions", len(j.Snap.Entities), "players", len(j.Snap.Players), "save_as", j.SaveTo)
	var markp *storetool.Mark // set once the store is marked: a panic after it reverts the store too
	committing := false       // set once the manifest may be replaced
	defer func() {
		// A change refused because the lock was lost names the new holder.
		res.Err = dir.lockLost(res.Err)
	}()
	defer func() {
		if p := recover(); p != nil {
			if committing {
				// The manifest may have been renamed into place: read what
				// is committed, as a commit's uncertain error does.
				dir.reload()
			}
			res.Err = NewPanicError(p)
			res.Generation = w.Generation()
			w.recover(dir, store, name, saveAs, markp)
		}
	}()
	if err := canSaveTo(dir, saveAs); err != nil {
		res.Err = err // before the store is touched
		return res
	}
	if store == nil {
		if store, res.Err = w.reopenStore(dir, name); res.Err != nil {
			return res
		}
	}

	if saveAs {
		var err error
		src := dir
		dir, store, name, err = w.prepareSaveAs(j.SaveTo, store)
		if err == nil {
			if players, err = copyPlayers(src, players, dir, dir.Generation()+1); err != nil {
				w.recover(dir, store, name, true, nil)
				err = fmt.Errorf("autosave: save as %s: copy players: %w", j.SaveTo, err)
			}
		}
		if err != nil {
			res.Err = err
			return res
		}
		res.Dir = dir.Path()
		res.Generation = dir.Generation()
	}
	// Should a later step fail, the store is taken back to this mark: a
	// failed save leaves the file as it was.
	mark, err := storetool.Tool.Mark(store)
	if err != nil {
		res.Err = fmt.Errorf("autosave: save to %s: %w", dir.Path(), err)
		w.recover(dir, store, name, saveAs, nil)
		return res
	}
	markp = &mark
	tr := w.beginProgress(len(j.Snap.Chunks), len(j.Snap.World))

	batch, err := w.batchOf(store, j, tr)
	if err != nil {
		res.Err = fmt.Errorf("autosave: save to %s: %w", dir.Path(), err)
		w.recover(dir, store, name, saveAs, &mark)
		return res
	}
	// The world file does not depend on the chunk store: write and sync it
	// while the store compresses and commits.
	worldCh := w.writeWorld(dir, j.Snap.World, tr)
	stats, err := store.Commit(batch)
	// The store has read every chunk it committed (reading a chunk ends its
	// hold); end the holds a failed commit left, so that the game's writes
	// stop copying tiles while the rest commits.
	j.Snap.Release()
	wd := <-worldCh
	if err != nil {
		res.Err = fmt.Errorf("autosave: commit chunk store: %w", err)
		w.recover(dir, store, name, saveAs, nil)
		return res
	}
	if wd.err != nil {
		res.Err = wd.err
		w.recover(dir, store, name, saveAs, &mark)
		return res
	}
	res.ChunksWritten = len(j.Snap.Chunks)
	res.RegionsWritten = len(j.Snap.Entities)
	res.BodiesWritten = countBodies(j.Snap.Entities)
	res.BytesWritten += stats.BytesWritten
	if n := stats.Full + stats.Delta; n > 0 {
		w.recordEstimate = max(1024, stats.RecordBytes/int64(n))
	}

	// The players that changed: their records appended, the next index
	// written, both synced before the manifest names them. (A Save As
	// writes the players it copied under the target's first index.)
	if len(j.Snap.Players) > 0 || saveAs && players != nil {
		np, n, err := dir.writePlayers(players, dir.Generation()+1, j.Snap.Players)
		res.BytesWritten += n
		if err != nil {
			res.Err = err
			w.recover(dir, store, name, saveAs, &mark)
			return res
		}
		players = np
		res.PlayersWritten = len(j.Snap.Players)
		tr.written.Add(n)
		w.advance()
	}
	var playersRef *PlayersRef
	if players != nil {
		playersRef = &players.Ref
	}
	commitStore, commitName := store, name
	w.setProgress(maxWorkProgress)

	res.BytesWritten += wd.ref.Size
	// From here on the manifest may name what the store committed: a panic
	// must not take the store back.
	markp, committing = nil, true
	var backupChunks *StoreRef
	var backupPlayers *PlayersRef
	if !saveAs {
		backupChunks, backupPlayers = w.copyOf(dir.Generation()), w.playersCopyOf(dir.Generation())
	}
	man, n, err := dir.Commit(Commit{
		backupChunks:  backupChunks,
		backupPlayers: backupPlayers,
		WorldRef:      &wd.ref,
		Chunks: StoreRef{Name: commitName, Generation: commitStore.Generation(), Root: commitStore.Root(),
			Data: storetool.Tool.DataFileNames(commitStore)},
		Players:    playersRef,
		MaxBackups: j.MaxBackups,
		Retention:  j.Retention,
		committed:  func() { w.setProgress(1) },
	})
	res.BytesWritten += n
	if err != nil {
		res.Err = err
		undo := &mark
		var uncertain *uncertainError
		if errors.As(err, &uncertain) {
			undo = nil // the manifest may name what the store committed
		}
		w.recover(dir, store, name, saveAs, undo)
		return res
	}
	res.Generation = man.Generation
	res.WorldBytes = int64(len(j.Snap.World))
	res.WorldEntities = j.Snap.WorldEntities
	if ri, err := storetool.Tool.ParseRoot(commitStore.Root()); err == nil {
		res.ChunksStored = int(ri.Chunks)
	}
	if !saveAs {
		w.settleCommitted(res, backupChunks)
	}

	// Switch readers to what was committed.
	w.mu.Lock()
	w.fresh = false
	w.players = players
	w.mu.Unlock()
	if saveAs {
		w.mu.Lock()
		oldStore, oldDir := w.store, w.dir
		w.dir, w.store, w.name = dir, commitStore, commitName
		w.compacted = compaction{}
		w.copied, w.copiedPlayers = nil, nil
		w.mu.Unlock()
		if oldStore != commitStore {
			oldStore.Close()
		}
		if oldDir != dir {
			oldDir.Close() // Save As: the writer moved on, the old directory is free
		}
	}
	return res
}

// canSaveTo returns why a save into dir cannot commit there: a read-only
// directory, one whose lock this writer lost, or one at the last
// generation (ErrExhausted). A Save As goes
// to another directory, which prepareSaveAs checks.
func canSaveTo(dir *Dir, saveAs bool) error {
	if saveAs {
		return nil
	}
	// A writer whose lock file was removed or replaced takes it anew, or
	// saves nothing more (see Dir.checkLock).
	if err := dir.checkLock(); err != nil {
		return fmt.Errorf("autosave: save to %s: %w", dir.Path(), err)
	}
	return dir.nextGeneration()
}

// prepareSaveAs opens the target directory for a Save As, taking its lock,
// and gives it a chunk store that holds everything the current store holds
// (a compacted copy); the snapshot's changes then commit on top.
func (w *Writer) prepareSaveAs(target string, cur *chunkstore.Store) (*Dir, *chunkstore.Store, string, error) {
	w.mu.RLock()
	curDir := w.dir
	w.mu.RUnlock()
	if samePath(curDir.Path(), target) {
		return nil, nil, "", fmt.Errorf("autosave: save as %s: that is the directory the game saves to; use Save", target)
	}
	d, err := OpenDir(w.opts.FS, target, LockTimeout(w.opts.LockTimeout))
	if err != nil {
		return nil, nil, "", fmt.Errorf("autosave: save as %s: %w", target, err)
	}
	if err := d.ReadOnly(); err != nil {
		d.Close()
		return nil, nil, "", fmt.Errorf("autosave: save as %s: %w", target, err)
	}
	name, err := w.freshStoreName(d)
	var p string
	if err == nil {
		p, err = d.file(name)
	}
	if err != nil {
		d.Close()
		return nil, nil, "", err
	}
	s, err := cur.CompactTo(p)
	if err != nil {
		_ = d.removeStore(name)
		d.Close()
		return nil, nil, "", fmt.Errorf("autosave: save as %s: copy chunk store: %w", target, err)
	}
	return d, s, name, nil
}

// recover brings the store back to the generation the manifest names after
// a failed save: when the store committed the save before a later step
// failed (mark set), its file is first taken back to mark, so that failed
// saves never make it grow. For a failed Save As the target's store is
// closed, the target released, and the writer stays on its current
// directory.
func (w *Writer) recover(dir *Dir, store *chunkstore.Store, name string, saveAs bool, mark *storetool.Mark) {
	if saveAs {
		store.Close()
		if dir.Manifest() == nil {
			// Nothing of the target was committed: leave no file that
			// would look like a save there.
			_ = dir.removeStore(name)
			_ = dir.remove(WorldName(1))
		}
		dir.Close()
		return
	}
	m := dir.Manifest()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.compacted = compaction{} // the store reopens at what the manifest names: steps since are gone
	if store != nil {
		if mark != nil {
			_ = storetool.Tool.Revert(store, *mark) // closes it
		} else {
			store.Close()
		}
	}
	var s *chunkstore.Store
	var err error
	if m != nil && (m.Chunks.Name == name || !w.fresh) {
		// The manifest names this store, or (a commit whose outcome is
		// unknown switched to a compacted one) another: open what it names.
		s, err = w.openStore(dir, m.Chunks)
		name = m.Chunks.Name
	} else {
		// No manifest names this store yet: it holds nothing committed, so
		// it starts over.
		if err = dir.removeStore(name); err == nil {
			var p string
			if p, err = dir.file(name); err == nil {
				s, err = chunkstore.Create(p, &w.opts.Store)
			}
		}
	}
	if err != nil {
		// The disk refuses even that; keep the closed store's place with a
		// store that reopens on the next save attempt.
		w.store, w.storeErr = nil, err
		return
	}
	w.store, w.name, w.storeErr = s, name, nil
}

// entityBlock returns the block a save writes for an entity set: the set
// itself, or with Merge the set added to what the store holds. A stored
// block proven damaged (chunkstore.ErrCorrupt) is unreadable either way:
// the merge replaces it with the entities that are known. Any other read
// error fails the save, which would otherwise write the set over stored
// entities it could not read.
func entityBlock(store *chunkstore.Store, es snapshot.EntitySet) (chunkstore.EntityBlock, error) {
	blk := chunkstore.EntityBlock{Bodies: make([]chunkstore.Body, len(es.Bodies)), Sections: es.Sections}
	for i := range es.Bodies {
		blk.Bodies[i] = conv.ToStore(&es.Bodies[i])
	}
	if !es.Merge {
		return blk, nil
	}
	stored, err := store.Entities(conv.StorePos(es.Pos))
	if err != nil && !errors.Is(err, chunkstore.ErrCorrupt) {
		return chunkstore.EntityBlock{}, fmt.Errorf("read the stored entities of chunk %v to add to them: %w", es.Pos, err)
	}
	blk.Bodies = conv.MergeByID(stored.Bodies, blk.Bodies, func(b *chunkstore.Body) uint64 { return b.ID })
	blk.Sections = append(append([][]byte(nil), stored.Sections...), es.Sections...)
	return blk, nil
}

func countBodies(sets []snapshot.EntitySet) int {
	n := 0
	for _, s := range sets {
		n += len(s.Bodies)
	}
	return n
}

// NewPanicError wraps a value recovered from a panic, with the current stack.
func NewPanicError(value any) *autosave.PanicError {
	return &autosave.PanicError{Value: value, Stack: debug.Stack()}
}
