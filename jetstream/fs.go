package jetstream

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/arksave/arksave/vfs"
)

// Defaults of [Options].
const (
	DefaultLeaseTTL  = 10 * time.Second
	DefaultBlockSize = 64 << 10
	DefaultTimeout   = 5 * time.Second
	// MinLeaseTTL is the shortest lease JetStream can expire (a message's
	// time to live is counted in whole seconds).
	MinLeaseTTL = time.Second
	// maxBlockSize keeps a block and its headers within the server's
	// default max_payload of 1 MiB.
	maxBlockSize = 512 << 10
	// cacheBytes bounds the clean blocks an FS keeps in memory.
	cacheBytes = 64 << 20
	// maxPending bounds the messages on their way: a Sync of a big file
	// waits for acknowledgements to catch up before it sends more (16 MiB
	// of 64 KiB blocks), so that each is answered within the timeout.
	maxPending = 256
)

// Options configure an [FS].
type Options struct {
	// Replicas is the replication factor of a world's stream when the FS
	// creates it (default 1; 3 on a cluster of three). An existing world
	// keeps its own.
	Replicas int
	// LeaseTTL is how long a holder's lock outlives its last renewal: a
	// world whose holder died is free again this long after its last
	// renewal (default 10 s, at least 1 s). The holder renews it every
	// third of it.
	LeaseTTL time.Duration
	// Steal takes a world's lock even while another holder has it: that
	// holder's next change fails with ErrLocked naming this one. For a
	// holder known to be dead, so as not to wait for its lease to expire.
	Steal bool
	// BlockSize is the size of the pieces a file is stored in (default 64
	// KiB, at most 512 KiB). It is fixed per world when the FS first writes
	// a file in it; reading needs the same.
	BlockSize int
	// Timeout bounds each request to the server (default 5 s).
	Timeout time.Duration
}

func (o Options) withDefaults() (Options, error) {
	if o.Replicas == 0 {
		o.Replicas = 1
	}
	if o.LeaseTTL == 0 {
		o.LeaseTTL = DefaultLeaseTTL
	}
	if o.BlockSize == 0 {
		o.BlockSize = DefaultBlockSize
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	switch {
	case o.Replicas < 1 || o.Replicas > 5:
		return o, fmt.Errorf("jetstream: %d replicas: want 1 to 5", o.Replicas)
	case o.LeaseTTL < MinLeaseTTL:
		return o, fmt.Errorf("jetstream: lease of %v: at least %v", o.LeaseTTL, MinLeaseTTL)
	case o.BlockSize < 512 || o.BlockSize > maxBlockSize:
		return o, fmt.Errorf("jetstream: block size %d: want 512 to %d", o.BlockSize, maxBlockSize)
	case o.Timeout < 0:
		return o, fmt.Errorf("jetstream: negative timeout %v", o.Timeout)
	}
	return o, nil
}

// FS is a file system whose top-level directories are worlds kept in
// NATS JetStream: "<world>/manifest", "<world>/chunks.pxsw" and so on, as
// a save directory holds them. It implements [vfs.FS]; the package
// documentation describes how files map to JetStream.
//
// An FS is safe for concurrent use. Close it (or the connection it was
// made with) when done.
type FS struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	opts   Options
	ownsNC bool
	perm   *permissions
	cache  *blockCache

	mu     sync.Mutex
	worlds map[string]*world
}

// New returns an FS over an open connection. The caller keeps the
// connection and closes it after the FS.
func New(nc *nats.Conn, opts Options) (*FS, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(maxPending), jetstream.WithPublishAsyncTimeout(o.Timeout))
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	return &FS{nc: nc, js: js, opts: o, cache: newBlockCache(cacheBytes), worlds: map[string]*world{}}, nil
}

// Close releases every world's lock this FS holds and, when the FS made
// its own connection (Open, the "nats" location), closes it.
func (f *FS) Close() error {
	f.mu.Lock()
	ws := make([]*world, 0, len(f.worlds))
	for _, w := range f.worlds {
		ws = append(ws, w)
	}
	f.mu.Unlock()
	for _, w := range ws {
		w.release()
	}
	if f.ownsNC {
		f.nc.Close()
	}
	return nil
}

// Conn returns the FS's connection.
func (f *FS) Conn() *nats.Conn { return f.nc }

// worldPattern is what a world's name may hold: it becomes a subject token
// and a stream's name.
var worldPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidWorld reports whether name can name a world: 1 to 64 letters,
// digits, '-' and '_'.
func ValidWorld(name string) bool { return worldPattern.MatchString(name) }

// split turns a name into its world and the path inside it ("" for the
// world itself); world is "" for the FS's root.
func (f *FS) split(op, name string) (w *world, rel string, err error) {
	p := path.Clean("/" + filepath.ToSlash(name))[1:]
	if p == "" {
		return nil, "", nil
	}
	wname, rel, _ := strings.Cut(p, "/")
	if !ValidWorld(wname) {
		return nil, "", &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: %q is not a world's name (1 to 64 letters, digits, '-' and '_')", fs.ErrInvalid, wname)}
	}
	for _, el := range strings.Split(rel, "/") {
		if rel != "" && (el == "" || el == "." || el == "..") {
			return nil, "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
		}
	}
	return f.world(wname), rel, nil
}

func (f *FS) world(name string) *world {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.worlds[name]
	if w == nil {
		w = newWorld(f, name)
		f.worlds[name] = w
	}
	return w
}

func (f *FS) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), f.opts.Timeout)
}

// pipelineFull reports whether as many published messages await their
// acknowledgement as the FS lets be on their way.
func (f *FS) pipelineFull() bool { return f.js.PublishAsyncPending() >= maxPending }

// drain waits until every published message is acknowledged (or failed),
// for up to the timeout.
func (f *FS) drain() error {
	t := time.NewTimer(f.opts.Timeout)
	defer t.Stop()
	select {
	case <-f.js.PublishAsyncComplete():
		return nil
	case <-t.C:
		return fmt.Errorf("no acknowledgement within %v: %w", f.opts.Timeout, nats.ErrTimeout)
	}
}

// read runs a request that changes nothing, within the FS's timeout in
// all, and asks again while the cluster cannot answer for a moment: a
// stream or meta leader is being elected (the server says it is
// temporarily unavailable, or nobody answers), or a request went to a
// server that is going away. Each attempt gets a quarter of the timeout.
func (f *FS) read(do func(ctx context.Context) error) error {
	deadline := time.Now().Add(f.opts.Timeout)
	attempt := max(f.opts.Timeout/4, 250*time.Millisecond)
	for {
		end := time.Now().Add(attempt)
		if end.After(deadline) {
			end = deadline
		}
		ctx, cancel := context.WithDeadline(context.Background(), end)
		err := do(ctx)
		cancel()
		if err == nil || !transient(err) || !time.Now().Before(deadline) {
			return err
		}
		time.Sleep(min(retryWait, time.Until(deadline))) // a pause before asking again, not a wait for an event
	}
}

// transient reports whether a request's error may go away by itself while
// a cluster elects a leader: no answer in time, nobody to answer, or the
// server's "temporarily unavailable".
func transient(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.As(err, &apiErr) && apiErr.Code == 503
}

func pathErr(op, name string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// Create creates or truncates a file of a world whose lock this FS holds.
func (f *FS) Create(name string) (vfs.File, error) {
	w, rel, err := f.split("create", name)
	if err != nil {
		return nil, err
	}
	if w == nil || rel == "" {
		return nil, &fs.PathError{Op: "create", Path: name, Err: syscall.EISDIR}
	}
	file, err := w.create(name, rel)
	return file, pathErr("create", name, err)
}

// Open opens a file to read it.
func (f *FS) Open(name string) (vfs.File, error) { return f.open("open", name, false) }

// OpenRW opens a file of a world whose lock this FS holds to read and write it.
func (f *FS) OpenRW(name string) (vfs.File, error) { return f.open("open", name, true) }

func (f *FS) open(op, name string, rw bool) (vfs.File, error) {
	w, rel, err := f.split(op, name)
	if err != nil {
		return nil, err
	}
	if w == nil || rel == "" {
		return nil, &fs.PathError{Op: op, Path: name, Err: syscall.EISDIR}
	}
	if rel == lockName && !rw {
		file, err := w.openLease(name)
		return file, pathErr(op, name, err)
	}
	file, err := w.open(name, rel, rw)
	return file, pathErr(op, name, err)
}

// Rename renames a file or directory within one world.
func (f *FS) Rename(oldname, newname string) error {
	w, from, err := f.split("rename", oldname)
	if err != nil {
		return err
	}
	w2, to, err := f.split("rename", newname)
	if err != nil {
		return err
	}
	if w == nil || w2 != w || from == "" || to == "" {
		return &fs.PathError{Op: "rename", Path: oldname, Err: syscall.EXDEV}
	}
	return pathErr("rename", oldname, w.rename(from, to))
}

// Remove removes a file or an empty directory; a world (its stream) is
// never removed through the FS.
func (f *FS) Remove(name string) error {
	w, rel, err := f.split("remove", name)
	if err != nil {
		return err
	}
	if w == nil || rel == "" {
		return &fs.PathError{Op: "remove", Path: name, Err: syscall.EPERM}
	}
	return pathErr("remove", name, w.remove(rel, false))
}

// RemoveAll removes a file or directory and everything under it.
func (f *FS) RemoveAll(name string) error {
	w, rel, err := f.split("removeall", name)
	if err != nil {
		return err
	}
	if w == nil || rel == "" {
		return &fs.PathError{Op: "removeall", Path: name, Err: syscall.EPERM}
	}
	return pathErr("removeall", name, w.remove(rel, true))
}

// MkdirAll creates a world (its stream, with Options.Replicas) and the
// directories in it.
func (f *FS) MkdirAll(dir string) error {
	w, rel, err := f.split("mkdir", dir)
	if err != nil || w == nil {
		return err
	}
	if err := w.ensureStream(true); err != nil {
		return pathErr("mkdir", dir, err)
	}
	if rel == "" {
		return nil
	}
	return pathErr("mkdir", dir, w.mkdirAll(rel))
}

// ReadDir lists a directory; at the root, the worlds the server has.
func (f *FS) ReadDir(dir string) ([]string, error) {
	w, rel, err := f.split("readdir", dir)
	if err != nil {
		return nil, err
	}
	if w == nil {
		names, err := f.listWorlds()
		return names, pathErr("readdir", dir, err)
	}
	names, err := w.readDir(rel)
	return names, pathErr("readdir", dir, err)
}

func (f *FS) listWorlds() ([]string, error) {
	ctx, cancel := f.ctx()
	defer cancel()
	lister := f.js.StreamNames(ctx, jetstream.WithStreamListSubject(subjectRoot+".*.>"))
	var out []string
	for n := range lister.Name() {
		if w, ok := strings.CutPrefix(n, streamPrefix); ok && ValidWorld(w) {
			out = append(out, w)
		}
	}
	if err := lister.Err(); err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// SyncDir waits until every change this FS made in the world is stored.
func (f *FS) SyncDir(dir string) error {
	w, _, err := f.split("sync", dir)
	if err != nil || w == nil {
		return err
	}
	return pathErr("sync", dir, w.flush())
}

// Stat describes a file or directory.
func (f *FS) Stat(name string) (fs.FileInfo, error) {
	w, rel, err := f.split("stat", name)
	if err != nil {
		return nil, err
	}
	if w == nil {
		return dirInfo("."), nil
	}
	fi, err := w.stat(rel)
	return fi, pathErr("stat", name, err)
}

// Lstat is Stat: there are no symbolic links.
func (f *FS) Lstat(name string) (fs.FileInfo, error) { return f.Stat(name) }

// Lock takes the lock of the world name is in: its lease. See the package
// documentation.
func (f *FS) Lock(name string) (vfs.File, error) {
	w, rel, err := f.split("lock", name)
	if err != nil {
		return nil, err
	}
	if w == nil || rel == "" {
		return nil, &fs.PathError{Op: "lock", Path: name, Err: syscall.EISDIR}
	}
	file, err := w.lock(name)
	if errors.Is(err, vfs.ErrLocked) {
		err = &vfs.HeldError{What: fmt.Sprintf("world %s in NATS JetStream", w.name), Advice: fmt.Sprintf(
			"wait for it to let go (the demo's -wait, Plugin.LockTimeout; the lease of a holder that died expires %v after its last renewal), "+
				"or, once that holder is known to be dead, take the world over at once with steal=true in its location (nats://host:4222/%s?steal=true; Options.Steal)",
			f.opts.LeaseTTL, w.name)}
	}
	return file, pathErr("lock", name, err)
}

// fileInfo describes a name of a world.
type fileInfo struct {
	name  string
	size  int64
	dir   bool
	mtime time.Time
}

func dirInfo(name string) fileInfo { return fileInfo{name: name, dir: true} }

func (i fileInfo) Name() string { return i.name }
func (i fileInfo) Size() int64  { return i.size }
func (i fileInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i fileInfo) ModTime() time.Time { return i.mtime }
func (i fileInfo) IsDir() bool        { return i.dir }
func (i fileInfo) Sys() any           { return nil }
