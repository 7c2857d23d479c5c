package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// Names in JetStream. They are part of the storage format.
const (
	subjectRoot  = "arksave"  // every subject of every world starts with it
	streamPrefix = "ARKSAVE_" // a world's stream is ARKSAVE_<world>
	lockName     = "lock"     // the save directory's lock file: the lease

	hdrSize  = "Arksave-Size"  // a block's message: the file's size after it
	hdrOp    = "Arksave-Op"    // "del" on a name's deletion, "trunc" on a cut block
	hdrToken = "Arksave-Lease" // the lease's message: its holder's token

	metaBlock  = "arksave-block"  // stream metadata: the world's block size
	metaFormat = "arksave-format" // stream metadata: this layout's version
	formatV1   = "1"
)

// entry is a name's value: a file (its inode) or a directory.
type entry struct {
	Ino   string `json:"ino,omitempty"`
	Dir   bool   `json:"dir,omitempty"`
	MTime int64  `json:"mtime,omitempty"` // Unix milliseconds
}

// world is one world of an FS: its stream and, while the FS holds its
// lock, the holder's state.
type world struct {
	fs     *FS
	name   string
	stream string
	prefix string // arksave.<world>

	mu    sync.Mutex
	st    jetstream.Stream // nil until the stream is known to exist
	block int64
	held  *holder // non-nil while this FS holds the world's lock
}

func newWorld(f *FS, name string) *world {
	return &world{fs: f, name: name, stream: streamPrefix + name, prefix: subjectRoot + "." + name}
}

func (w *world) leaseSubject() string          { return w.prefix + ".lease" }
func (w *world) ownerSubject() string          { return w.prefix + ".owner" }
func (w *world) nameSubject(rel string) string { return w.prefix + ".n." + escapeName(rel) }
func (w *world) dataSubject(ino string, k int64) string {
	return w.prefix + ".d." + ino + "." + strconv.FormatInt(k, 10)
}
func (w *world) dataWildcard(ino string) string { return w.prefix + ".d." + ino + ".>" }

// escapeName turns a path inside a world into one subject token: letters,
// digits, '-', '_' and '/' stay, every other byte becomes %XX.
func escapeName(rel string) string {
	var b strings.Builder
	for i := 0; i < len(rel); i++ {
		c := rel[i]
		if c == '-' || c == '_' || c == '/' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func unescapeName(tok string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(tok); i++ {
		if tok[i] != '%' {
			b.WriteByte(tok[i])
			continue
		}
		if i+2 >= len(tok) {
			return "", false
		}
		v, err := strconv.ParseUint(tok[i+1:i+3], 16, 8)
		if err != nil {
			return "", false
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String(), true
}

// ensureStream finds the world's stream, creating it when create is set.
// A world that does not exist is fs.ErrNotExist.
func (w *world) ensureStream(create bool) error {
	w.mu.Lock()
	known := w.st != nil
	w.mu.Unlock()
	if known {
		return nil
	}
	var st jetstream.Stream
	err := w.fs.read(func(ctx context.Context) (err error) {
		st, err = w.fs.js.Stream(ctx, w.stream)
		return err
	})
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		if !create {
			return fs.ErrNotExist
		}
		ctx, cancel := w.fs.ctx()
		defer cancel()
		o := w.fs.opts
		st, err = w.fs.js.CreateStream(ctx, jetstream.StreamConfig{
			Name:              w.stream,
			Description:       "arksave world " + w.name,
			Subjects:          []string{w.prefix + ".>"},
			Storage:           jetstream.FileStorage,
			Replicas:          o.Replicas,
			MaxMsgsPerSubject: 1,
			Discard:           jetstream.DiscardOld,
			AllowMsgTTL:       true,
			// A follower may answer a direct get before it has the newest
			// messages: with replicas, reads go to the leader.
			AllowDirect: o.Replicas == 1,
			Metadata:    map[string]string{metaBlock: strconv.Itoa(o.BlockSize), metaFormat: formatV1},
		})
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			st, err = w.fs.js.Stream(ctx, w.stream)
		}
	}
	if err != nil {
		return w.fs.explain(err)
	}
	cfg := st.CachedInfo().Config
	if f := cfg.Metadata[metaFormat]; f != formatV1 {
		return fmt.Errorf("jetstream: stream %s is not an arksave world of format %s (its %s is %q)", w.stream, formatV1, metaFormat, f)
	}
	block, err := strconv.ParseInt(cfg.Metadata[metaBlock], 10, 64)
	if err != nil || block < 512 || block > maxBlockSize {
		return fmt.Errorf("jetstream: stream %s: block size %q", w.stream, cfg.Metadata[metaBlock])
	}
	w.mu.Lock()
	if w.st == nil {
		w.st, w.block = st, block
	}
	w.mu.Unlock()
	return nil
}

func (w *world) streamOf() (jetstream.Stream, int64, error) {
	if err := w.ensureStream(false); err != nil {
		return nil, 0, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.st, w.block, nil
}

// get returns the last message of subject, nil when it has none.
func (w *world) get(subject string) (*jetstream.RawStreamMsg, error) {
	st, _, err := w.streamOf()
	if err != nil {
		return nil, err
	}
	var m *jetstream.RawStreamMsg
	err = w.fs.read(func(ctx context.Context) (err error) {
		m, err = st.GetLastMsgForSubject(ctx, subject)
		return err
	})
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, w.fs.explain(err)
	}
	return m, nil
}

// getEntry reads a name's entry from the server; nil when it has none.
func (w *world) getEntry(rel string) (*entry, error) {
	m, err := w.get(w.nameSubject(rel))
	if err != nil || m == nil || m.Header.Get(hdrOp) == "del" {
		return nil, err
	}
	var e entry
	if err := json.Unmarshal(m.Data, &e); err != nil || (!e.Dir && e.Ino == "") {
		return nil, fmt.Errorf("jetstream: world %s: name %s: damaged entry", w.name, rel)
	}
	return &e, nil
}

// loadNames reads every name of the world from the server, and the names
// whose deletion markers can be purged.
func (w *world) loadNames() (map[string]entry, []marker, error) {
	st, _, err := w.streamOf()
	if err != nil {
		return nil, nil, err
	}
	subjects, err := w.subjects(st, w.prefix+".n.>")
	if err != nil {
		return nil, nil, err
	}
	names := map[string]entry{}
	var markers []marker
	for _, subj := range subjects {
		rel, ok := unescapeName(strings.TrimPrefix(subj, w.prefix+".n."))
		if !ok {
			continue
		}
		m, err := w.get(subj)
		if err != nil {
			return nil, nil, err
		}
		if m == nil {
			continue
		}
		if m.Header.Get(hdrOp) == "del" {
			markers = append(markers, marker{subj, m.Sequence})
			continue
		}
		var e entry
		if json.Unmarshal(m.Data, &e) == nil && (e.Dir || e.Ino != "") {
			names[rel] = e
		}
	}
	return names, markers, nil
}

// subjects lists the subjects of the stream that match filter.
func (w *world) subjects(st jetstream.Stream, filter string) ([]string, error) {
	var info *jetstream.StreamInfo
	err := w.fs.read(func(ctx context.Context) (err error) {
		info, err = st.Info(ctx, jetstream.WithSubjectFilter(filter))
		return err
	})
	if err != nil {
		return nil, w.fs.explain(err)
	}
	out := make([]string, 0, len(info.State.Subjects))
	for s := range info.State.Subjects {
		out = append(out, s)
	}
	sort.Strings(out)
	return out, nil
}

// holding returns the holder state for a change, or why the FS may not
// change the world.
func (w *world) holding() (*holder, error) {
	w.mu.Lock()
	h := w.held
	w.mu.Unlock()
	if h == nil {
		return nil, fmt.Errorf("%w: world %s is not locked by this program: open it for writing first", fs.ErrPermission, w.name)
	}
	if err := w.usable(h); err != nil {
		return nil, err
	}
	return h, nil
}

// usable checks that h may publish: its lease is not lost and nothing
// uncertain is pending (a resync settles that).
func (w *world) usable(h *holder) error {
	h.mu.Lock()
	lost, uncertain := h.lost, h.uncertain
	h.mu.Unlock()
	if lost != nil {
		return lost
	}
	if uncertain != nil || time.Now().After(h.deadlineAt()) {
		return w.resync(h)
	}
	return nil
}

// stat describes a name.
func (w *world) stat(rel string) (fs.FileInfo, error) {
	if rel == "" {
		if err := w.ensureStream(false); err != nil {
			return nil, err
		}
		return dirInfo(w.name), nil
	}
	base := path.Base(rel)
	if rel == lockName {
		data, _, err := w.leaseValue()
		if err != nil {
			return nil, err
		}
		if data == nil {
			return nil, fs.ErrNotExist
		}
		return fileInfo{name: base, size: int64(len(data))}, nil
	}
	e, in, err := w.lookup(rel)
	if err != nil {
		return nil, err
	}
	if e.Dir {
		return fileInfo{name: base, dir: true, mtime: time.UnixMilli(e.MTime)}, nil
	}
	size, err := in.sizeOf()
	if err != nil {
		return nil, err
	}
	return fileInfo{name: base, size: size, mtime: time.UnixMilli(e.MTime)}, nil
}

// lookup finds a name: from the holder's names, else from the server. For
// a file it returns its inode (shared while held, private otherwise).
func (w *world) lookup(rel string) (entry, *inode, error) {
	w.mu.Lock()
	h := w.held
	if h != nil {
		e, ok := h.names[rel]
		if !ok {
			w.mu.Unlock()
			return entry{}, nil, fs.ErrNotExist
		}
		var in *inode
		if !e.Dir {
			in = h.inode(w, e.Ino)
		}
		w.mu.Unlock()
		return e, in, nil
	}
	w.mu.Unlock()
	e, err := w.getEntry(rel)
	if err != nil {
		return entry{}, nil, err
	}
	if e == nil {
		return entry{}, nil, fs.ErrNotExist
	}
	var in *inode
	if !e.Dir {
		in = newInode(w, e.Ino, nil)
	}
	return *e, in, nil
}

func (w *world) open(name, rel string, rw bool) (*file, error) {
	if rw {
		if _, err := w.holding(); err != nil {
			return nil, err
		}
	}
	e, in, err := w.lookup(rel)
	if err != nil {
		return nil, err
	}
	if e.Dir {
		return nil, syscall.EISDIR
	}
	if _, err := in.sizeOf(); err != nil {
		return nil, err
	}
	return in.handle(name, rw), nil
}

// The changes of names wait until the server has them: once a rename
// returns, every program sees it, as on a disk.

func (w *world) create(name, rel string) (*file, error) {
	f, err := w.createName(name, rel)
	if err != nil {
		return nil, err
	}
	if err := w.flush(); err != nil {
		f.closed.Store(true)
		w.mu.Lock()
		f.in.refs--
		w.mu.Unlock()
		return nil, err
	}
	return f, nil
}

func (w *world) rename(from, to string) error {
	if err := w.renameName(from, to); err != nil {
		return err
	}
	return w.flush()
}

func (w *world) remove(rel string, all bool) error {
	if err := w.removeName(rel, all); err != nil {
		return err
	}
	return w.flush()
}

func (w *world) mkdirAll(rel string) error {
	if err := w.mkdirName(rel); err != nil {
		return err
	}
	return w.flush()
}

func (w *world) createName(name, rel string) (*file, error) {
	h, err := w.holding()
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := h.parentOK(rel); err != nil {
		return nil, err
	}
	old, had := h.names[rel]
	if had && old.Dir {
		return nil, syscall.EISDIR
	}
	e := entry{Ino: nuid.Next(), MTime: time.Now().UnixMilli()}
	if err := w.putName(h, rel, e); err != nil {
		return nil, err
	}
	if had {
		h.unlink(old.Ino)
	}
	in := h.inode(w, e.Ino)
	in.size, in.sizeKnown = 0, true
	in.refs++
	return &file{in: in, name: name, rw: true}, nil
}

// putName publishes a name's entry in the holder's pipeline; w.mu held.
func (w *world) putName(h *holder, rel string, e entry) error {
	data, _ := json.Marshal(e)
	if _, err := w.publishLocked(h, &nats.Msg{Subject: w.nameSubject(rel), Data: data}); err != nil {
		return err
	}
	h.names[rel] = e
	return nil
}

// delName publishes a name's deletion; w.mu held.
func (w *world) delName(h *holder, rel string) error {
	subj := w.nameSubject(rel)
	msg := &nats.Msg{Subject: subj, Header: nats.Header{hdrOp: []string{"del"}}}
	fut, err := w.publishLocked(h, msg)
	if err != nil {
		return err
	}
	delete(h.names, rel)
	h.markers = append(h.markers, pendingMarker{subj, fut})
	return nil
}

func (w *world) renameName(from, to string) error {
	h, err := w.holding()
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := h.names[from]
	if !ok {
		return fs.ErrNotExist
	}
	if from == to {
		return nil
	}
	if err := h.parentOK(to); err != nil {
		return err
	}
	if e.Dir && (h.hasChildren(from) || strings.HasPrefix(to, from+"/")) {
		return syscall.EXDEV // directories are renamed only empty
	}
	old, had := h.names[to]
	if had && old.Dir != e.Dir || had && old.Dir && h.hasChildren(to) {
		return syscall.EEXIST
	}
	if err := w.putName(h, to, e); err != nil {
		return err
	}
	if err := w.delName(h, from); err != nil {
		return err
	}
	if had && !old.Dir && old.Ino != e.Ino {
		h.unlink(old.Ino)
	}
	return nil
}

func (w *world) removeName(rel string, all bool) error {
	h, err := w.holding()
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := h.names[rel]
	if !ok {
		if all {
			return nil
		}
		return fs.ErrNotExist
	}
	if e.Dir {
		var children []string
		for n := range h.names {
			if strings.HasPrefix(n, rel+"/") {
				children = append(children, n)
			}
		}
		if len(children) > 0 && !all {
			return syscall.ENOTEMPTY
		}
		sort.Sort(sort.Reverse(sort.StringSlice(children)))
		for _, n := range children {
			c := h.names[n]
			if err := w.delName(h, n); err != nil {
				return err
			}
			if !c.Dir {
				h.unlink(c.Ino)
			}
		}
	}
	if err := w.delName(h, rel); err != nil {
		return err
	}
	if !e.Dir {
		h.unlink(e.Ino)
	}
	return nil
}

func (w *world) mkdirName(rel string) error {
	h, err := w.holding()
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	parts := strings.Split(rel, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		e, ok := h.names[p]
		switch {
		case ok && !e.Dir:
			return syscall.ENOTDIR
		case ok:
			continue
		}
		if err := w.putName(h, p, entry{Dir: true, MTime: time.Now().UnixMilli()}); err != nil {
			return err
		}
	}
	return nil
}

func (w *world) readDir(rel string) ([]string, error) {
	w.mu.Lock()
	h := w.held
	var names map[string]entry
	if h != nil {
		names = h.names
	}
	var out []string
	if names != nil {
		if rel != "" {
			if e, ok := names[rel]; !ok {
				w.mu.Unlock()
				return nil, fs.ErrNotExist
			} else if !e.Dir {
				w.mu.Unlock()
				return nil, syscall.ENOTDIR
			}
		}
		for n := range names {
			if base, ok := child(rel, n); ok {
				out = append(out, base)
			}
		}
		w.mu.Unlock()
		sort.Strings(out)
		return out, nil
	}
	w.mu.Unlock()
	if rel != "" {
		e, err := w.getEntry(rel)
		if err != nil {
			return nil, err
		}
		if e == nil {
			return nil, fs.ErrNotExist
		}
		if !e.Dir {
			return nil, syscall.ENOTDIR
		}
	}
	st, _, err := w.streamOf()
	if err != nil {
		return nil, err
	}
	subjects, err := w.subjects(st, w.prefix+".n.>")
	if err != nil {
		return nil, err
	}
	for _, subj := range subjects {
		n, ok := unescapeName(strings.TrimPrefix(subj, w.prefix+".n."))
		if !ok {
			continue
		}
		base, ok := child(rel, n)
		if !ok {
			continue
		}
		if e, err := w.getEntry(n); err != nil {
			return nil, err
		} else if e != nil {
			out = append(out, base)
		}
	}
	sort.Strings(out)
	return out, nil
}

// child returns the base name of n when n is directly in dir.
func child(dir, n string) (string, bool) {
	if dir == "" {
		return n, !strings.Contains(n, "/")
	}
	rest, ok := strings.CutPrefix(n, dir+"/")
	return rest, ok && rest != "" && !strings.Contains(rest, "/")
}
