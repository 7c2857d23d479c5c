package vfs

import (
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Mem is an in-memory [FS] that knows what a crash would keep.
//
// A file's content is durable as of its last [File.Sync]; writes since are
// kept in order in a log. Creations, removals, renames and new directories
// are durable once their directory is synced with [FS.SyncDir]; until then
// they are pending, in order. [Mem.Crash] builds the file system a restarted
// machine would find. Renaming directories is not supported.
//
// Mem is safe for concurrent use. The zero Mem is not usable; call [NewMem].
type Mem struct {
	mu      sync.Mutex
	cur     namespace // what the running process sees
	dur     namespace // what a crash keeps, before pending operations
	pending []nsOp    // namespace operations not yet durable, oldest first
	// locks holds the files locked by Lock and dirLocks the directories
	// locked by LockDir: process state, not kept by Crash. A file's lock
	// belongs to the file, not its name, as flock's does: removing or
	// replacing the name leaves the old file locked and the new one free.
	locks    map[*memNode]bool
	dirLocks map[string]*memDirLock
}

type namespace struct {
	files map[string]*memNode
	dirs  map[string]bool
}

func newNamespace() namespace {
	return namespace{files: map[string]*memNode{}, dirs: map[string]bool{}}
}

type memNode struct {
	data    []byte     // current content
	durable []byte     // content as of the last Sync
	log     []memWrite // writes and truncates since the last Sync
	modTime time.Time
}

type memWrite struct {
	off      int64
	data     []byte
	truncate bool // a Truncate to off
}

type nsOpKind uint8

const (
	nsCreate nsOpKind = iota
	nsRemove
	nsRename
	nsMkdir
	nsRmdir
)

type nsOp struct {
	kind    nsOpKind
	name    string
	newname string
	node    *memNode
}

// dirs returns the directories whose SyncDir makes the operation durable.
func (op nsOp) touches(dir string) bool {
	if filepath.Dir(op.name) == dir {
		return true
	}
	return op.kind == nsRename && filepath.Dir(op.newname) == dir
}

// NewMem returns an empty in-memory file system whose root directory exists.
func NewMem() *Mem {
	return &Mem{cur: newNamespace(), dur: newNamespace()}
}

func clean(name string) string { return filepath.Clean(name) }

func isRoot(dir string) bool { return dir == "." || dir == "/" || dir == string(filepath.Separator) }

func (ns *namespace) dirExists(dir string) bool { return isRoot(dir) || ns.dirs[dir] }

func pathErr(op, name string, err error) error { return &fs.PathError{Op: op, Path: name, Err: err} }

// Create implements [FS].
func (m *Mem) Create(name string) (File, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur.dirs[name] {
		return nil, pathErr("create", name, fmt.Errorf("is a directory"))
	}
	if n, ok := m.cur.files[name]; ok {
		n.truncate(0)
		return &memFile{m: m, n: n, name: name}, nil
	}
	if !m.cur.dirExists(filepath.Dir(name)) {
		return nil, pathErr("create", name, fs.ErrNotExist)
	}
	n := &memNode{modTime: time.Now()}
	m.cur.files[name] = n
	m.pending = append(m.pending, nsOp{kind: nsCreate, name: name, node: n})
	return &memFile{m: m, n: n, name: name}, nil
}

// Open implements [FS].
func (m *Mem) Open(name string) (File, error) { return m.open(name, true) }

// OpenRW implements [FS].
func (m *Mem) OpenRW(name string) (File, error) { return m.open(name, false) }

func (m *Mem) open(name string, readOnly bool) (File, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.cur.files[name]
	if !ok {
		return nil, pathErr("open", name, fs.ErrNotExist)
	}
	return &memFile{m: m, n: n, name: name, readOnly: readOnly}, nil
}

// Rename implements [FS]. Only files can be renamed.
func (m *Mem) Rename(oldname, newname string) error {
	oldname, newname = clean(oldname), clean(newname)
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.cur.files[oldname]
	if !ok {
		if m.cur.dirs[oldname] {
			return pathErr("rename", oldname, fmt.Errorf("vfs: Mem cannot rename directories"))
		}
		return pathErr("rename", oldname, fs.ErrNotExist)
	}
	if !m.cur.dirExists(filepath.Dir(newname)) {
		return pathErr("rename", newname, fs.ErrNotExist)
	}
	if m.cur.dirs[newname] {
		return pathErr("rename", newname, fs.ErrExist)
	}
	if oldname == newname {
		return nil
	}
	delete(m.cur.files, oldname)
	m.cur.files[newname] = n
	m.pending = append(m.pending, nsOp{kind: nsRename, name: oldname, newname: newname, node: n})
	return nil
}

// Remove implements [FS].
func (m *Mem) Remove(name string) error {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.removeLocked(name)
}

func (m *Mem) removeLocked(name string) error {
	if _, ok := m.cur.files[name]; ok {
		delete(m.cur.files, name)
		m.pending = append(m.pending, nsOp{kind: nsRemove, name: name})
		return nil
	}
	if !m.cur.dirs[name] {
		return pathErr("remove", name, fs.ErrNotExist)
	}
	if len(m.childrenLocked(name)) > 0 {
		return pathErr("remove", name, fmt.Errorf("directory not empty"))
	}
	delete(m.cur.dirs, name)
	m.pending = append(m.pending, nsOp{kind: nsRmdir, name: name})
	if l := m.dirLocks[name]; l != nil {
		// As flock's, the lock stays with the directory removed: a new
		// directory made at the same path is free, and the holder can tell
		// (see SameDir).
		l.gone = true
		delete(m.dirLocks, name)
	}
	return nil
}

// RemoveAll implements [FS].
func (m *Mem) RemoveAll(name string) error {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.cur.files[name]; ok {
		return m.removeLocked(name)
	}
	if !m.cur.dirs[name] {
		return nil
	}
	// Deepest entries first, so that every directory is empty when removed.
	var all []string
	prefix := name + string(filepath.Separator)
	for f := range m.cur.files {
		if strings.HasPrefix(f, prefix) {
			all = append(all, f)
		}
	}
	for d := range m.cur.dirs {
		if strings.HasPrefix(d, prefix) {
			all = append(all, d)
		}
	}
	sort.Slice(all, func(i, j int) bool { return len(all[i]) > len(all[j]) })
	for _, p := range append(all, name) {
		if err := m.removeLocked(p); err != nil {
			return err
		}
	}
	return nil
}

// MkdirAll implements [FS].
func (m *Mem) MkdirAll(dir string) error {
	dir = clean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	if isRoot(dir) || m.cur.dirs[dir] {
		return nil
	}
	if _, ok := m.cur.files[dir]; ok {
		return pathErr("mkdir", dir, fs.ErrExist)
	}
	var missing []string
	for d := dir; !isRoot(d) && !m.cur.dirs[d]; d = filepath.Dir(d) {
		if _, ok := m.cur.files[d]; ok {
			return pathErr("mkdir", d, fs.ErrExist)
		}
		missing = append(missing, d)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		m.cur.dirs[missing[i]] = true
		m.pending = append(m.pending, nsOp{kind: nsMkdir, name: missing[i]})
	}
	return nil
}

func (m *Mem) childrenLocked(dir string) []string {
	var names []string
	for f := range m.cur.files {
		if filepath.Dir(f) == dir {
			names = append(names, filepath.Base(f))
		}
	}
	for d := range m.cur.dirs {
		if filepath.Dir(d) == dir && d != dir {
			names = append(names, filepath.Base(d))
		}
	}
	sort.Strings(names)
	return names
}

// ReadDir implements [FS].
func (m *Mem) ReadDir(dir string) ([]string, error) {
	dir = clean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.cur.dirExists(dir) {
		return nil, pathErr("readdir", dir, fs.ErrNotExist)
	}
	return m.childrenLocked(dir), nil
}

// SyncDir implements [FS]: pending creations, removals, renames and new
// directories in dir become durable, in the order they happened.
func (m *Mem) SyncDir(dir string) error {
	dir = clean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.cur.dirExists(dir) {
		return pathErr("syncdir", dir, fs.ErrNotExist)
	}
	kept := m.pending[:0]
	for _, op := range m.pending {
		if op.touches(dir) {
			m.dur.apply(op)
		} else {
			kept = append(kept, op)
		}
	}
	m.pending = kept
	return nil
}

func (ns *namespace) apply(op nsOp) {
	switch op.kind {
	case nsCreate:
		if ns.dirExists(filepath.Dir(op.name)) {
			ns.files[op.name] = op.node
		}
	case nsRemove:
		delete(ns.files, op.name)
	case nsRename:
		if ns.files[op.name] == op.node {
			delete(ns.files, op.name)
		}
		if ns.dirExists(filepath.Dir(op.newname)) {
			ns.files[op.newname] = op.node
		}
	case nsMkdir:
		if ns.dirExists(filepath.Dir(op.name)) {
			ns.dirs[op.name] = true
		}
	case nsRmdir:
		delete(ns.dirs, op.name)
	}
}

// Lstat implements [FS]. Mem has no symbolic links: it is Stat.
func (m *Mem) Lstat(name string) (fs.FileInfo, error) { return m.Stat(name) }

// Lock implements [FS]: it creates the file if it is missing (a creation
// that becomes durable like any other) and refuses a second holder until
// the first closes its file. The lock belongs to the file, as flock's
// does: once its name is removed or renamed over, a Lock of the name locks
// the file the name leads to now. A Mem returned by Crash holds no locks,
// as a restarted machine holds none.
func (m *Mem) Lock(name string) (File, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if n, ok := m.cur.files[name]; ok && m.locks[n] {
		return nil, pathErr("lock", name, ErrLocked)
	}
	if m.cur.dirs[name] {
		return nil, pathErr("lock", name, fmt.Errorf("is a directory"))
	}
	n, ok := m.cur.files[name]
	if !ok {
		if !m.cur.dirExists(filepath.Dir(name)) {
			return nil, pathErr("lock", name, fs.ErrNotExist)
		}
		n = &memNode{modTime: time.Now()}
		m.cur.files[name] = n
		m.pending = append(m.pending, nsOp{kind: nsCreate, name: name, node: n})
	}
	if m.locks == nil {
		m.locks = map[*memNode]bool{}
	}
	m.locks[n] = true
	return &memFile{m: m, n: n, name: name, lock: true}, nil
}

// LockDir locks a directory (see [FS]): it refuses a second holder of the
// directory dir until the first closes what LockDir returned. Mem cannot
// rename directories, so a directory's lock belongs to its name until the
// directory is removed: a directory made anew there is another one.
func (m *Mem) LockDir(dir string) (io.Closer, error) {
	dir = clean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.cur.dirExists(dir) {
		if _, ok := m.cur.files[dir]; ok {
			return nil, pathErr("lockdir", dir, fmt.Errorf("not a directory"))
		}
		return nil, pathErr("lockdir", dir, fs.ErrNotExist)
	}
	if m.dirLocks[dir] != nil {
		return nil, pathErr("lockdir", dir, ErrLocked)
	}
	if m.dirLocks == nil {
		m.dirLocks = map[string]*memDirLock{}
	}
	l := &memDirLock{m: m, dir: dir}
	m.dirLocks[dir] = l
	return l, nil
}

type memDirLock struct {
	m    *Mem
	dir  string
	gone bool // the directory was removed while locked; guarded by m.mu
	once sync.Once
}

func (l *memDirLock) Close() error {
	l.once.Do(func() {
		l.m.mu.Lock()
		if l.m.dirLocks[l.dir] == l {
			delete(l.m.dirLocks, l.dir)
		}
		l.m.mu.Unlock()
	})
	return nil
}

// same reports whether the locked directory is still at its path.
func (l *memDirLock) same() bool {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	return !l.gone && l.m.cur.dirExists(l.dir)
}

// Stat implements [FS].
func (m *Mem) Stat(name string) (fs.FileInfo, error) {
	name = clean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if n, ok := m.cur.files[name]; ok {
		return n.info(name), nil
	}
	if m.cur.dirExists(name) {
		return memInfo{name: filepath.Base(name), dir: true}, nil
	}
	return nil, pathErr("stat", name, fs.ErrNotExist)
}

// Crash returns the file system that a machine restarted after a crash at
// this instant would find. What was durable is kept. Of what was not:
//   - keep <= 0 drops all of it;
//   - keep >= 1 keeps all of it (as if the disk had flushed everything);
//   - otherwise a random prefix of the pending namespace operations is kept
//     (a journaling file system applies them in order), and each unsynced
//     write is kept with probability keep, sometimes torn (only a prefix of
//     it reaches the disk), independently of the others.
//
// rng drives the random choices; it may be nil when keep is 0 or 1.
// The receiver is left as it was.
func (m *Mem) Crash(keep float64, rng *rand.Rand) *Mem {
	m.mu.Lock()
	defer m.mu.Unlock()

	ns := namespace{files: make(map[string]*memNode, len(m.dur.files)), dirs: make(map[string]bool, len(m.dur.dirs))}
	for k, v := range m.dur.files {
		ns.files[k] = v
	}
	for k := range m.dur.dirs {
		ns.dirs[k] = true
	}
	nops := 0
	switch {
	case keep >= 1:
		nops = len(m.pending)
	case keep > 0:
		nops = rng.IntN(len(m.pending) + 1)
	}
	for _, op := range m.pending[:nops] {
		ns.apply(op)
	}

	out := &Mem{cur: newNamespace(), dur: newNamespace()}
	copies := map[*memNode]*memNode{}
	for name, n := range ns.files {
		c, ok := copies[n]
		if !ok {
			c = &memNode{data: n.afterCrash(keep, rng), modTime: n.modTime}
			c.durable = append([]byte(nil), c.data...)
			copies[n] = c
		}
		out.cur.files[name] = c
		out.dur.files[name] = c
	}
	for d := range ns.dirs {
		out.cur.dirs[d] = true
		out.dur.dirs[d] = true
	}
	return out
}

// afterCrash returns the content a crash leaves in the file.
func (n *memNode) afterCrash(keep float64, rng *rand.Rand) []byte {
	if keep >= 1 {
		return append([]byte(nil), n.data...)
	}
	data := append([]byte(nil), n.durable...)
	if keep <= 0 {
		return data
	}
	for _, w := range n.log {
		if rng.Float64() >= keep {
			continue
		}
		if w.truncate {
			data = resize(data, w.off)
			continue
		}
		b := w.data
		if len(b) > 1 && rng.IntN(4) == 0 { // torn write
			b = b[:rng.IntN(len(b))]
		}
		data = writeAt(data, b, w.off)
	}
	return data
}

func resize(data []byte, size int64) []byte {
	if int64(len(data)) >= size {
		return data[:size]
	}
	return append(data, make([]byte, size-int64(len(data)))...)
}

func writeAt(data, b []byte, off int64) []byte {
	if end := off + int64(len(b)); end > int64(len(data)) {
		data = resize(data, end)
	}
	copy(data[off:], b)
	return data
}

func (n *memNode) truncate(size int64) {
	n.data = resize(n.data, size)
	n.log = append(n.log, memWrite{off: size, truncate: true})
	n.modTime = time.Now()
}

type memFile struct {
	m        *Mem
	n        *memNode
	name     string
	readOnly bool
	lock     bool // Close releases the lock on name
	closed   bool
}

func (f *memFile) Name() string { return f.name }

func (f *memFile) check(op string, write bool) error {
	if f.closed {
		return pathErr(op, f.name, fs.ErrClosed)
	}
	if write && f.readOnly {
		return pathErr(op, f.name, fs.ErrPermission)
	}
	return nil
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("read", false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("read", f.name, fs.ErrInvalid)
	}
	if off >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.n.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("write", true); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("write", f.name, fs.ErrInvalid)
	}
	f.n.data = writeAt(f.n.data, p, off)
	f.n.log = append(f.n.log, memWrite{off: off, data: append([]byte(nil), p...)})
	f.n.modTime = time.Now()
	return len(p), nil
}

func (f *memFile) Sync() error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("sync", false); err != nil {
		return err
	}
	f.n.durable = append(f.n.durable[:0:0], f.n.data...)
	f.n.log = nil
	return nil
}

func (f *memFile) Truncate(size int64) error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("truncate", true); err != nil {
		return err
	}
	if size < 0 {
		return pathErr("truncate", f.name, fs.ErrInvalid)
	}
	f.n.truncate(size)
	return nil
}

func (f *memFile) Size() (int64, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("size", false); err != nil {
		return 0, err
	}
	return int64(len(f.n.data)), nil
}

func (f *memFile) Close() error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("close", false); err != nil {
		return err
	}
	f.closed = true
	if f.lock {
		delete(f.m.locks, f.n)
	}
	return nil
}

// Stat describes the open file, whatever its name leads to now.
func (f *memFile) Stat() (fs.FileInfo, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("stat", false); err != nil {
		return nil, err
	}
	return f.n.info(f.name), nil
}

func (n *memNode) info(name string) memInfo {
	return memInfo{name: filepath.Base(name), size: int64(len(n.data)), mod: n.modTime, node: n}
}

type memInfo struct {
	name string
	size int64
	dir  bool
	mod  time.Time
	node *memNode // the file described (nil for a directory): its identity
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) ModTime() time.Time { return i.mod }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any {
	if i.node == nil {
		return nil
	}
	return i.node // the file's identity, for telling two descriptions of one file
}
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
