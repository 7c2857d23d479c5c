package jetstream

import (
	"container/list"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nats-io/nats.go"
)

// inode is a file's content: blocks of the world's block size, each the
// last message of its subject arksave.<world>.d.<ino>.<k>. A holder's
// inodes are shared by every handle of the FS and are the truth (nobody
// else writes); another program's view is private to one handle and
// reread when it falls behind.
type inode struct {
	w   *world
	ino string
	h   *holder // nil: a reader's private view
	id  uint64  // identifies the inode in the block cache

	// Guarded by w.mu.
	size      int64
	sizeKnown bool
	sizeDirty bool                  // the size changed since the last sync
	dirty     map[int64]*dirtyBlock // written, not yet stored
	gen       uint64                // bumped when cached blocks become invalid
	refs      int                   // open handles
}

// dirtyBlock is a block's content written and not yet stored; nil data
// means the block is cut away. Each write makes a new one, so that a Sync
// knows whether the block changed while it was being stored.
type dirtyBlock struct{ data []byte }

var inodeIDs atomic.Uint64

func newInode(w *world, ino string, h *holder) *inode {
	return &inode{w: w, ino: ino, h: h, id: inodeIDs.Add(1), dirty: map[int64]*dirtyBlock{}}
}

// forget drops what the inode knows of the server after a resync; writes
// not yet stored stay. world.mu held.
func (in *inode) forget() {
	in.gen++
	if len(in.dirty) == 0 && !in.sizeDirty {
		in.sizeKnown = false
	}
}

func (in *inode) handle(name string, rw bool) *file {
	in.w.mu.Lock()
	in.refs++
	in.w.mu.Unlock()
	return &file{in: in, name: name, rw: rw}
}

// sizeOf returns the file's size, asking the server when it is not known:
// the newest block message of the file carries it.
func (in *inode) sizeOf() (int64, error) {
	w := in.w
	w.mu.Lock()
	if in.sizeKnown {
		defer w.mu.Unlock()
		return in.size, nil
	}
	gen := in.gen
	w.mu.Unlock()
	m, err := w.get(w.dataWildcard(in.ino))
	if err != nil {
		return 0, err
	}
	var size int64
	if m != nil {
		if size, err = strconv.ParseInt(m.Header.Get(hdrSize), 10, 64); err != nil || size < 0 {
			return 0, fmt.Errorf("jetstream: world %s: block %s: bad %s header", w.name, m.Subject, hdrSize)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if in.sizeKnown {
		return in.size, nil
	}
	if in.gen == gen {
		in.size, in.sizeKnown = size, true
		if m != nil && m.Header.Get(hdrOp) == "" {
			if k, ok := blockIndex(m.Subject); ok {
				w.fs.cache.put(in.id, gen, k, m.Data)
			}
		}
	}
	return size, nil
}

func blockIndex(subject string) (int64, bool) {
	i := strings.LastIndexByte(subject, '.')
	k, err := strconv.ParseInt(subject[i+1:], 10, 64)
	return k, err == nil && k >= 0
}

// block returns block k's content as stored or written (nil: none). The
// slice must not be changed.
func (in *inode) block(k int64) ([]byte, error) {
	w := in.w
	w.mu.Lock()
	if d, ok := in.dirty[k]; ok {
		w.mu.Unlock()
		return d.data, nil
	}
	gen := in.gen
	if b, ok := w.fs.cache.get(in.id, gen, k); ok {
		w.mu.Unlock()
		return b, nil
	}
	w.mu.Unlock()
	m, err := w.get(w.dataSubject(in.ino, k))
	if err != nil {
		return nil, err
	}
	var data []byte
	if m != nil && m.Header.Get(hdrOp) == "" {
		data = m.Data
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if d, ok := in.dirty[k]; ok {
		return d.data, nil
	}
	if in.gen == gen {
		w.fs.cache.put(in.id, gen, k, data)
	}
	return data, nil
}

// file is an open handle of an inode.
type file struct {
	in     *inode
	name   string
	rw     bool
	closed atomic.Bool
}

func (f *file) Name() string { return f.name }

func (f *file) check(write bool) error {
	if f.closed.Load() {
		return fs.ErrClosed
	}
	if write && !f.rw {
		return &fs.PathError{Op: "write", Path: f.name, Err: fs.ErrPermission}
	}
	return nil
}

func (f *file) Size() (int64, error) {
	if err := f.check(false); err != nil {
		return 0, err
	}
	return f.in.sizeOf()
}

// ReadAt reads from the blocks that hold [off, off+len(p)).
func (f *file) ReadAt(p []byte, off int64) (int, error) {
	if err := f.check(false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: fs.ErrInvalid}
	}
	size, err := f.in.sizeOf()
	if err != nil {
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: err}
	}
	if f.in.h == nil && off+int64(len(p)) > size {
		// A reader's view may be behind the file: look again.
		f.in.w.mu.Lock()
		f.in.sizeKnown = false
		f.in.w.mu.Unlock()
		if size, err = f.in.sizeOf(); err != nil {
			return 0, &fs.PathError{Op: "read", Path: f.name, Err: err}
		}
	}
	bs := f.in.w.blockSize()
	n := 0
	for n < len(p) && off+int64(n) < size {
		at := off + int64(n)
		k := at / bs
		b, err := f.in.block(k)
		if err != nil {
			return n, &fs.PathError{Op: "read", Path: f.name, Err: err}
		}
		in := at - k*bs
		want := min(int64(len(p)-n), size-at, bs-in)
		if f.in.h == nil && in+want > int64(len(b)) && k*bs+int64(len(b)) < size {
			// A short block in a reader's cache: the file grew since.
			f.in.w.mu.Lock()
			f.in.gen++
			f.in.w.mu.Unlock()
			if b, err = f.in.block(k); err != nil {
				return n, &fs.PathError{Op: "read", Path: f.name, Err: err}
			}
		}
		got := 0
		if in < int64(len(b)) {
			got = copy(p[n:n+int(want)], b[in:])
		}
		clear(p[n+got : n+int(want)]) // a block not stored (yet) reads as zeros
		n += int(want)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (w *world) blockSize() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.block
}

// WriteAt changes the file in memory; Sync stores it.
func (f *file) WriteAt(p []byte, off int64) (int, error) {
	if err := f.check(true); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "write", Path: f.name, Err: fs.ErrInvalid}
	}
	in := f.in
	if _, err := in.w.holding(); err != nil {
		return 0, &fs.PathError{Op: "write", Path: f.name, Err: err}
	}
	size, err := in.sizeOf()
	if err != nil {
		return 0, &fs.PathError{Op: "write", Path: f.name, Err: err}
	}
	bs := in.w.blockSize()
	end := off + int64(len(p))
	newSize := max(size, end)
	for k := off / bs; k*bs < end; k++ {
		lo, hi := k*bs, min((k+1)*bs, newSize)
		var cur []byte
		if lo < size && (off > lo || end < min(hi, size)) {
			// The write leaves some of the block's stored bytes: keep them.
			if cur, err = in.block(k); err != nil {
				return 0, &fs.PathError{Op: "write", Path: f.name, Err: err}
			}
		}
		in.w.mu.Lock()
		if d, ok := in.dirty[k]; ok {
			cur = d.data
		}
		b := make([]byte, max(hi-lo, int64(len(cur))))
		copy(b, cur)
		s, e := max(off, lo), min(end, hi)
		copy(b[s-lo:e-lo], p[s-off:e-off])
		in.dirty[k] = &dirtyBlock{b}
		in.w.mu.Unlock()
	}
	in.w.mu.Lock()
	if newSize != in.size {
		// A block that ended the file before keeps its length: the bytes
		// between it and the write read as zeros.
		in.size, in.sizeDirty = newSize, true
	}
	in.w.mu.Unlock()
	return len(p), nil
}

// Truncate changes the file's size; blocks past it are cut away (their
// messages replaced by empty ones) at Sync.
func (f *file) Truncate(size int64) error {
	if err := f.check(true); err != nil {
		return err
	}
	if size < 0 {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: fs.ErrInvalid}
	}
	in := f.in
	if _, err := in.w.holding(); err != nil {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: err}
	}
	cur, err := in.sizeOf()
	if err != nil {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: err}
	}
	if size == cur {
		return nil
	}
	bs := in.w.blockSize()
	if size > cur {
		// Growing: zeros, written as a write of zeros past the end.
		_, err := f.WriteAt(make([]byte, size-cur), cur)
		return err
	}
	var last []byte
	if size%bs != 0 {
		if last, err = in.block(size / bs); err != nil {
			return &fs.PathError{Op: "truncate", Path: f.name, Err: err}
		}
	}
	in.w.mu.Lock()
	defer in.w.mu.Unlock()
	for k := (size + bs - 1) / bs; k*bs < cur; k++ {
		in.dirty[k] = &dirtyBlock{}
	}
	if size%bs != 0 {
		k := size / bs
		if d, ok := in.dirty[k]; ok {
			last = d.data
		}
		b := make([]byte, size-k*bs)
		copy(b, last)
		in.dirty[k] = &dirtyBlock{b}
	}
	in.size, in.sizeDirty = size, true
	return nil
}

// Sync stores every block written since the last Sync, in one pipeline of
// messages that each carry the file's size, and waits for them; a failed
// Sync keeps them to store again.
func (f *file) Sync() error {
	if err := f.check(false); err != nil {
		return err
	}
	in := f.in
	w := in.w
	if !f.rw {
		return nil
	}
	h, err := w.holding()
	if err != nil {
		return &fs.PathError{Op: "sync", Path: f.name, Err: err}
	}
	w.mu.Lock()
	if len(in.dirty) == 0 && !in.sizeDirty {
		w.mu.Unlock()
		return f.wrap("sync", w.flush())
	}
	keys := make([]int64, 0, len(in.dirty))
	for k := range in.dirty {
		keys = append(keys, k)
	}
	sortInt64(keys)
	bs := w.block
	if len(keys) == 0 {
		// Only the size changed: store the block that ends the file again
		// (or cut block 0 of an empty file), carrying it.
		if in.size == 0 {
			in.dirty[0] = &dirtyBlock{}
			keys = []int64{0}
		} else {
			k := (in.size - 1) / bs
			w.mu.Unlock()
			b, err := in.block(k)
			if err != nil {
				return f.wrap("sync", err)
			}
			w.mu.Lock()
			if _, ok := in.dirty[k]; !ok {
				in.dirty[k] = &dirtyBlock{b}
			}
			keys = []int64{k}
		}
	}
	size := in.size
	sizeHdr := strconv.FormatInt(size, 10)
	sent := make(map[int64]*dirtyBlock, len(keys))
	futs := make([]*ack, 0, len(keys))
	for _, k := range keys {
		if w.fs.pipelineFull() {
			// Let the acknowledgements catch up without holding the world:
			// the lease's renewal must not wait for a big file.
			w.mu.Unlock()
			err := w.fs.drain()
			w.mu.Lock()
			if err != nil {
				w.mu.Unlock()
				return f.wrap("sync", w.failed(h, err))
			}
		}
		d, ok := in.dirty[k]
		if !ok {
			continue // stored by another Sync meanwhile
		}
		data := d.data
		hdr := nats.Header{hdrSize: []string{sizeHdr}}
		if data == nil {
			hdr.Set(hdrOp, "trunc")
		}
		fut, err := w.publishLocked(h, &nats.Msg{Subject: w.dataSubject(in.ino, k), Data: data, Header: hdr})
		if err != nil {
			w.mu.Unlock()
			// A change of another goroutine (the lease's renewal) may have
			// failed since this Sync found the holder usable: settle it, so
			// that a lease another program took is reported as lost.
			return f.wrap("sync", w.failed(h, err))
		}
		futs = append(futs, fut)
		sent[k] = d
	}
	if in.size == size {
		in.sizeDirty = false
	}
	w.mu.Unlock()
	if err := w.wait(h, futs); err != nil {
		w.mu.Lock()
		in.sizeDirty = true
		w.mu.Unlock()
		return f.wrap("sync", err)
	}
	w.mu.Lock()
	for k, d := range sent {
		if in.dirty[k] == d {
			delete(in.dirty, k)
			w.fs.cache.put(in.id, in.gen, k, d.data)
		}
	}
	w.mu.Unlock()
	return f.wrap("sync", w.flush())
}

func (f *file) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return &fs.PathError{Op: op, Path: f.name, Err: err}
}

func sortInt64(s []int64) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// Close releases the handle. Writes not synced are stored first, as a
// file system's cache would write them back.
func (f *file) Close() error {
	if f.closed.Swap(true) {
		return fs.ErrClosed
	}
	in := f.in
	var err error
	if f.rw {
		in.w.mu.Lock()
		dirty := len(in.dirty) > 0 || in.sizeDirty
		in.w.mu.Unlock()
		if dirty {
			f.closed.Store(false)
			err = f.Sync()
			f.closed.Store(true)
		}
	}
	in.w.mu.Lock()
	in.refs--
	if in.h == nil && in.refs == 0 {
		in.w.fs.cache.drop(in.id)
	}
	in.w.mu.Unlock()
	if err != nil && errors.Is(err, fs.ErrClosed) {
		err = nil
	}
	return err
}

// blockCache keeps clean blocks, least recently used first out.
type blockCache struct {
	mu    sync.Mutex
	max   int64
	bytes int64
	ll    *list.List
	m     map[cacheKey]*list.Element
}

type cacheKey struct {
	id, gen uint64
	k       int64
}

type cacheEntry struct {
	key  cacheKey
	data []byte
}

func newBlockCache(max int64) *blockCache {
	return &blockCache{max: max, ll: list.New(), m: map[cacheKey]*list.Element{}}
}

func (c *blockCache) get(id, gen uint64, k int64) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[cacheKey{id, gen, k}]
	if !ok {
		return nil, false
	}
	c.ll.MoveToFront(e)
	return e.Value.(*cacheEntry).data, true
}

func (c *blockCache) put(id, gen uint64, k int64, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := cacheKey{id, gen, k}
	if e, ok := c.m[key]; ok {
		c.bytes += int64(len(data)) - int64(len(e.Value.(*cacheEntry).data))
		e.Value.(*cacheEntry).data = data
		c.ll.MoveToFront(e)
	} else {
		c.m[key] = c.ll.PushFront(&cacheEntry{key, data})
		c.bytes += int64(len(data))
	}
	for c.bytes > c.max && c.ll.Len() > 1 {
		e := c.ll.Back()
		ce := e.Value.(*cacheEntry)
		c.ll.Remove(e)
		delete(c.m, ce.key)
		c.bytes -= int64(len(ce.data))
	}
}

// drop forgets every block of an inode view.
func (c *blockCache) drop(id uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, e := range c.m {
		if key.id == id {
			c.ll.Remove(e)
			delete(c.m, key)
			c.bytes -= int64(len(e.Value.(*cacheEntry).data))
		}
	}
}
