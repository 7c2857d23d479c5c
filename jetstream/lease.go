package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/arksave/arksave/vfs"
)

// LostError is the error of every change to a world after its holder lost
// its lock: another program took the world over (its lease expired while
// this one was paused or cut off, or it was stolen). The changes that were
// not stored before stay unstored, and none after it is ever made: the
// new holder's generations are safe. It matches [vfs.ErrLocked]; Holder is
// the lock's value now (the new holder, as its lock file says), nil when
// nobody holds it any more (the one that took it over let go since).
//
// A lease that expired while nobody else took the world (its holder could
// not renew it during a stream leader's election, or while cut off) is no
// loss: the holder takes it back at its next change.
type LostError struct {
	World  string
	Holder []byte
}

func (e *LostError) Error() string {
	who := "another program took it over after its lease expired, and has let go of it since"
	if len(e.Holder) > 0 {
		who = "it is held by " + describeHolder(e.Holder)
	}
	return fmt.Sprintf("jetstream: this program lost the lock of world %s (%s); it can no longer change the world", e.World, who)
}

// Is makes errors.Is(err, vfs.ErrLocked) true.
func (e *LostError) Is(target error) bool { return target == vfs.ErrLocked }

// describeHolder says who a lock's value names, for a message.
func describeHolder(data []byte) string {
	var h struct {
		PID     int    `json:"pid"`
		Host    string `json:"host"`
		Program string `json:"program"`
	}
	if json.Unmarshal(data, &h) != nil || h.PID == 0 {
		return "another program"
	}
	return fmt.Sprintf("%s (pid %d on host %s)", h.Program, h.PID, h.Host)
}

// holder is the state of a world while this FS holds its lock.
type holder struct {
	token    string
	ttl      time.Duration
	ownerSeq uint64 // the sequence of the owner message stored when this holder took the lease

	mu        sync.Mutex // guards the fields below it, and usable's reads
	lost      error
	uncertain error
	deadline  time.Time // the lease counts as lapsed after it, until a resync
	leaseSeq  uint64    // the sequence of the lease's newest message
	payload   []byte    // the lock file's content: who holds it

	// Guarded by world.mu.
	lastSeq uint64           // the stream's last sequence, as this holder published it
	sent    uint64           // the highest lastSeq ever reached: what a message still on its way may expect, less one
	names   map[string]entry // every name of the world
	inodes  map[string]*inode
	pending []*ack
	markers []pendingMarker
	orphans map[string]bool // inodes no name uses any more: purged when closed and stored

	resyncMu sync.Mutex
	renewMu  sync.Mutex
	stop     chan struct{}
	done     chan struct{}
	bg       sync.WaitGroup
}

type marker struct {
	subject string
	seq     uint64
}

type pendingMarker struct {
	subject string
	fut     *ack
}

func (h *holder) deadlineAt() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.deadline
}

// inode returns the holder's inode of ino; world.mu held.
func (h *holder) inode(w *world, ino string) *inode {
	in := h.inodes[ino]
	if in == nil {
		in = newInode(w, ino, h)
		h.inodes[ino] = in
	}
	return in
}

// unlink notes that a name no longer uses ino; world.mu held.
func (h *holder) unlink(ino string) {
	for _, e := range h.names {
		if e.Ino == ino {
			return
		}
	}
	h.orphans[ino] = true
}

// parentOK checks that rel's directory exists; world.mu held.
func (h *holder) parentOK(rel string) error {
	dir, _, found := strings.Cut(reverseCut(rel), "/")
	if !found {
		return nil
	}
	e, ok := h.names[dir]
	if !ok {
		return fs.ErrNotExist
	}
	if !e.Dir {
		return fmt.Errorf("%s: not a directory", dir)
	}
	return nil
}

// reverseCut returns rel's directory, then "/", then its base ("base" alone at the top).
func reverseCut(rel string) string {
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return rel
	}
	return rel[:i] + "/" + rel[i+1:]
}

func (h *holder) hasChildren(dir string) bool {
	for n := range h.names {
		if strings.HasPrefix(n, dir+"/") {
			return true
		}
	}
	return false
}

// publishLocked sends msg in the holder's pipeline: it carries the
// sequence the stream must have last, so that it is stored only if
// nothing else was since this holder's previous message (a new holder's
// lease is). world.mu held.
func (w *world) publishLocked(h *holder, msg *nats.Msg, opts ...jetstream.PublishOpt) (*ack, error) {
	h.mu.Lock()
	lost, uncertain := h.lost, h.uncertain
	h.mu.Unlock()
	if lost != nil {
		return nil, lost
	}
	if uncertain != nil {
		return nil, fmt.Errorf("jetstream: world %s: an earlier change failed: %w", w.name, uncertain)
	}
	// A full pipeline (another goroutine's messages) waits for room rather
	// than failing.
	opts = append(opts, jetstream.WithExpectLastSequence(h.lastSeq), jetstream.WithStallWait(w.fs.opts.Timeout))
	fut, err := w.fs.js.PublishMsgAsync(msg, opts...)
	if err != nil {
		w.setUncertain(h, err)
		return nil, w.fs.explain(err)
	}
	h.lastSeq++
	h.sent = max(h.sent, h.lastSeq)
	a := &ack{fut: fut}
	h.pending = append(h.pending, a)
	return a, nil
}

func (w *world) setUncertain(h *holder, err error) {
	h.mu.Lock()
	if h.uncertain == nil {
		h.uncertain = err
	}
	h.mu.Unlock()
}

// wait waits for acks; the first failure makes the holder uncertain and
// is settled by a resync, which says whether the lease is lost.
func (w *world) wait(h *holder, acks []*ack) error {
	if err := waitAll(acks, w.fs.opts.Timeout); err != nil {
		return w.failed(h, err)
	}
	return nil
}

// failed handles a change the server did not store, or whose fate is
// unknown: a resync finds out whether the lease is still held (then the
// error is returned as it is) or lost (a LostError).
func (w *world) failed(h *holder, err error) error {
	w.setUncertain(h, err)
	if rerr := w.resync(h); rerr != nil {
		var lost *LostError
		if errors.As(rerr, &lost) {
			return rerr
		}
	}
	return fmt.Errorf("jetstream: world %s: %w", w.name, w.fs.explain(err))
}

// flush waits until every change the holder published is stored, then
// purges what no name uses any more: the inodes whose last name went away
// in a change stored now, the deletion markers stored.
func (w *world) flush() error {
	w.mu.Lock()
	h := w.held
	if h == nil {
		w.mu.Unlock()
		return nil
	}
	futs := slices.Clone(h.pending)
	unlinked := make([]string, 0, len(h.orphans))
	for ino := range h.orphans {
		unlinked = append(unlinked, ino)
	}
	w.mu.Unlock()
	if err := w.usable(h); err != nil {
		return err
	}
	if err := w.wait(h, futs); err != nil {
		return err
	}
	w.mu.Lock()
	h.pending = prune(h.pending)
	var done []marker
	keep := h.markers[:0]
	for _, m := range h.markers {
		if !m.fut.settled() {
			keep = append(keep, m)
		} else if seq, err, _ := m.fut.wait(closed); err == nil {
			done = append(done, marker{m.subject, seq})
		}
	}
	h.markers = keep
	var orphans []string
	for _, ino := range unlinked {
		// Still an orphan (a resync since may have found the name's change
		// lost, and the inode named again), and no handle open.
		if in := h.inodes[ino]; h.orphans[ino] && (in == nil || in.refs == 0) {
			orphans = append(orphans, ino)
			delete(h.orphans, ino)
			delete(h.inodes, ino)
		}
	}
	w.mu.Unlock()
	if len(done)+len(orphans) > 0 {
		h.bg.Add(1)
		go func() {
			defer h.bg.Done()
			w.purge(done, orphans)
		}()
	}
	return nil
}

// prune drops the acks that arrived.
func prune(acks []*ack) []*ack {
	var out []*ack
	for _, a := range acks {
		if !a.settled() {
			out = append(out, a)
		}
	}
	return out
}

// purge removes deletion markers (up to their sequence: a name made again
// since stays) and the blocks of inodes no name uses. Neither is fenced:
// an inode is never used again once its last name was removed by a stored
// change, and a marker's purge never reaches a newer message. Best effort:
// what stays is purged by the next holder's lock.
func (w *world) purge(markers []marker, orphans []string) {
	st, _, err := w.streamOf()
	if err != nil {
		return
	}
	for _, m := range markers {
		ctx, cancel := w.fs.ctx()
		_ = st.Purge(ctx, jetstream.WithPurgeSubject(m.subject), jetstream.WithPurgeSequence(m.seq+1))
		cancel()
	}
	for _, ino := range orphans {
		ctx, cancel := w.fs.ctx()
		_ = st.Purge(ctx, jetstream.WithPurgeSubject(w.dataWildcard(ino)))
		cancel()
	}
}

// resync settles an uncertain holder: it waits for what is in flight,
// checks that the lease is still this holder's (else the holder is lost
// for good), and reloads the stream's last sequence and the names; the
// inodes forget what they cached, but keep what was not yet stored.
func (w *world) resync(h *holder) error {
	h.resyncMu.Lock()
	defer h.resyncMu.Unlock()
	h.mu.Lock()
	lost, uncertain := h.lost, h.uncertain
	h.mu.Unlock()
	if lost != nil {
		return lost
	}
	if uncertain == nil && time.Now().Before(h.deadlineAt()) {
		return nil // another resync settled it
	}
	w.mu.Lock()
	futs := h.pending
	h.pending = nil
	w.mu.Unlock()
	_ = waitAll(futs, w.fs.opts.Timeout) // only to let them land or fail
	last, leaseSeq, err := w.fence(h)
	if err != nil {
		return err
	}
	names, _, err := w.loadNames()
	if err != nil {
		return err
	}
	w.mu.Lock()
	h.lastSeq = last
	h.names = names
	for _, e := range names {
		// A name whose removal or replacement was not stored still uses its inode.
		delete(h.orphans, e.Ino)
	}
	for _, in := range h.inodes {
		in.forget()
	}
	w.mu.Unlock()
	h.mu.Lock()
	h.uncertain = nil
	h.leaseSeq = leaseSeq
	h.mu.Unlock()
	// The lease is still there, so nobody took it: renew it now.
	return w.renewOnce(h)
}

// fence makes sure that no message the holder sent before can still be
// stored: one whose answer was lost may be on its way yet (held in a
// client's reconnect buffer, a slow route, a paused link), and it would be
// stored if the stream's last sequence came to be what it expects. While
// the last sequence is below the highest one the holder's messages ever
// expected, fence publishes the lease again (each time expecting the last
// sequence, so a late message that lands first only moves it on): after
// that, every late message fails. fence returns the stream's last
// sequence and the lease's, or a LostError when the lease is no longer
// the holder's.
func (w *world) fence(h *holder) (last, leaseSeq uint64, err error) {
	st, _, err := w.streamOf()
	if err != nil {
		return 0, 0, err
	}
	w.mu.Lock()
	sent := h.sent
	w.mu.Unlock()
	for {
		m, err := w.get(w.leaseSubject())
		if err != nil {
			return 0, 0, err
		}
		if m == nil {
			// The lease lapsed: take it back if nobody else took it since.
			if err := w.retake(h, st, sent); err != nil {
				return 0, 0, err
			}
			continue
		}
		if m.Header.Get(hdrToken) != h.token {
			return 0, 0, w.lose(h, m.Data)
		}
		last, err = w.lastSeq(st)
		if err != nil {
			return 0, 0, err
		}
		leaseSeq = m.Sequence
		if last >= sent {
			// The lease messages published here count as sent: a later
			// retake expects the stream to end at them.
			w.mu.Lock()
			h.sent = max(h.sent, last)
			w.mu.Unlock()
			return last, leaseSeq, nil
		}
		err = w.publishLease(h, jetstream.WithExpectLastSequence(last), jetstream.WithExpectLastSequencePerSubject(leaseSeq))
		if err != nil && !isWrongSeq(err) {
			return 0, 0, w.fs.explain(err)
		}
	}
}

// lose marks the holder lost for good: another program took the world over
// (holder is its lock's value, nil when it let go since).
func (w *world) lose(h *holder, holder []byte) error {
	lost := &LostError{World: w.name, Holder: holder}
	h.mu.Lock()
	if h.lost == nil {
		h.lost = lost
	}
	h.mu.Unlock()
	return lost
}

// lastSeq reads the stream's last sequence.
func (w *world) lastSeq(st jetstream.Stream) (uint64, error) {
	var info *jetstream.StreamInfo
	err := w.fs.read(func(ctx context.Context) (err error) {
		info, err = st.Info(ctx)
		return err
	})
	if err != nil {
		return 0, w.fs.explain(err)
	}
	return info.State.LastSeq, nil
}

// retake takes back a lease that lapsed while nobody else took the world:
// its holder could not renew it in time (the stream's leader was being
// elected, or the holder was cut off for longer than the lease). Every
// program that takes a world stores the owner message before its lease
// (see lock), so the owner message is still the one this holder stored
// exactly when nobody took the world since. The lease is published again
// on two compare-and-sets the server checks together: the owner message's
// sequence (the lease's last revision is still this holder's) and the
// stream's last sequence (nothing but this holder's own messages since).
// When another program took the world, even one that let go of it since,
// the holder is lost for good: that program may have committed. sent is
// the highest sequence the holder's messages ever expected, less one.
//
// retake returns nil when the lease was published again or the
// compare-and-set failed for a reason the caller's next look settles, a
// LostError when the world is another program's now, or the error of a
// request the cluster did not answer (the holder stays uncertain and
// tries again at its next change).
func (w *world) retake(h *holder, st jetstream.Stream, sent uint64) error {
	own, err := w.get(w.ownerSubject())
	if err != nil {
		return err
	}
	if own == nil || own.Sequence != h.ownerSeq || own.Header.Get(hdrToken) != h.token {
		return w.lose(h, nil)
	}
	last, err := w.lastSeq(st)
	if err != nil {
		return err
	}
	if last > sent {
		// Something this holder never sent was stored: not its world any more.
		return w.lose(h, nil)
	}
	err = w.publishLease(h, jetstream.WithExpectLastSequence(last), jetstream.WithExpectLastSequenceForSubject(h.ownerSeq, w.ownerSubject()))
	if err != nil && !isWrongSeq(err) {
		return w.fs.explain(err)
	}
	return nil
}

// publishLease publishes h's lease with its full time to live outside the
// holder's pipeline and waits for the answer; opts are what the stream
// must hold for the server to store it.
func (w *world) publishLease(h *holder, opts ...jetstream.PublishOpt) error {
	h.mu.Lock()
	payload := h.payload
	h.mu.Unlock()
	msg := &nats.Msg{Subject: w.leaseSubject(), Data: payload, Header: nats.Header{hdrToken: []string{h.token}}}
	ctx, cancel := w.fs.ctx()
	defer cancel()
	_, err := w.fs.js.PublishMsg(ctx, msg, w.fs.retries(append(opts, jetstream.WithMsgTTL(h.ttl))...)...)
	return err
}

// renew publishes the lease again with its full time to live; a failure
// is settled by a resync.
func (w *world) renew(h *holder) error {
	if err := w.renewOnce(h); err != nil {
		return w.failed(h, err)
	}
	return nil
}

// renewOnce publishes the lease again and waits for it; a failure makes
// the holder uncertain and is returned as it is.
func (w *world) renewOnce(h *holder) error {
	h.renewMu.Lock()
	defer h.renewMu.Unlock()
	h.mu.Lock()
	payload, leaseSeq := h.payload, h.leaseSeq
	h.mu.Unlock()
	msg := &nats.Msg{Subject: w.leaseSubject(), Data: payload, Header: nats.Header{hdrToken: []string{h.token}}}
	sent := time.Now()
	w.mu.Lock()
	fut, err := w.publishLocked(h, msg, jetstream.WithMsgTTL(h.ttl), jetstream.WithExpectLastSequencePerSubject(leaseSeq))
	w.mu.Unlock()
	if err != nil {
		return err
	}
	seq, err := waitOne(fut, w.fs.opts.Timeout)
	if err != nil {
		w.setUncertain(h, err)
		return err
	}
	h.mu.Lock()
	h.leaseSeq = seq
	h.deadline = sent.Add(h.ttl)
	h.mu.Unlock()
	return nil
}

// leaseValue returns the lease's value (its holder) and whether it is
// this FS's own.
func (w *world) leaseValue() ([]byte, bool, error) {
	w.mu.Lock()
	h := w.held
	w.mu.Unlock()
	if h != nil {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.lost == nil {
			return h.payload, true, nil
		}
	}
	m, err := w.get(w.leaseSubject())
	if err != nil || m == nil {
		return nil, false, err
	}
	return m.Data, false, nil
}

// lock takes the world's lease: see the package documentation.
func (w *world) lock(name string) (vfs.File, error) {
	if err := w.ensureStream(false); err != nil {
		return nil, err
	}
	w.mu.Lock()
	busy := w.held != nil
	w.mu.Unlock()
	if busy {
		return nil, vfs.ErrLocked
	}
	cur, err := w.get(w.leaseSubject())
	if err != nil {
		return nil, err
	}
	var curSeq uint64 // the lease's message to replace, 0 when unheld
	if cur != nil {
		if !w.fs.opts.Steal {
			return nil, vfs.ErrLocked
		}
		curSeq = cur.Sequence
	}
	h := &holder{
		token:   nuid.Next(),
		ttl:     w.fs.opts.LeaseTTL,
		payload: holderValue(),
		inodes:  map[string]*inode{},
		orphans: map[string]bool{},
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	// The owner message first, then the lease: a holder whose lease lapsed
	// takes it back only while the owner message is still its own (see
	// retake). Both are stored only while the lease is as read.
	msg := &nats.Msg{Subject: w.ownerSubject(), Data: h.payload, Header: nats.Header{hdrToken: []string{h.token}}}
	ack, err := w.publishTake(msg, jetstream.WithExpectLastSequenceForSubject(curSeq, w.leaseSubject()))
	if err != nil {
		return nil, err
	}
	h.ownerSeq = ack.Sequence
	msg = &nats.Msg{Subject: w.leaseSubject(), Data: h.payload, Header: nats.Header{hdrToken: []string{h.token}}}
	sent := time.Now()
	ack, err = w.publishTake(msg, jetstream.WithMsgTTL(w.fs.opts.LeaseTTL), jetstream.WithExpectLastSequencePerSubject(curSeq))
	if err != nil {
		return nil, err
	}
	h.leaseSeq, h.lastSeq, h.sent, h.deadline = ack.Sequence, ack.Sequence, ack.Sequence, sent.Add(h.ttl)
	names, markers, err := w.loadNames()
	if err != nil {
		w.dropLease(h)
		return nil, err
	}
	h.names = names
	// Found before any change: an inode made from now on is never an orphan.
	orphans := w.orphans(names)
	w.mu.Lock()
	w.held = h
	w.mu.Unlock()
	go w.renewLoop(h)
	h.bg.Add(1)
	go func() {
		defer h.bg.Done()
		w.purge(markers, orphans)
	}()
	return &leaseFile{w: w, h: h, name: name}, nil
}

// publishTake publishes one of the messages that take a world's lease:
// vfs.ErrLocked when its compare-and-set fails (another program took the
// world first).
func (w *world) publishTake(msg *nats.Msg, opts ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	ctx, cancel := w.fs.ctx()
	defer cancel()
	ack, err := w.fs.js.PublishMsg(ctx, msg, w.fs.retries(opts...)...)
	if isWrongSeq(err) {
		return nil, vfs.ErrLocked
	}
	if err != nil {
		return nil, w.fs.explain(err)
	}
	return ack, nil
}

// orphans lists the inodes that have blocks but no name: what a holder that
// died between removing a name and purging its blocks left.
func (w *world) orphans(names map[string]entry) []string {
	st, _, err := w.streamOf()
	if err != nil {
		return nil
	}
	subjects, err := w.subjects(st, w.prefix+".d.*.0")
	if err != nil {
		return nil
	}
	used := map[string]bool{}
	for _, e := range names {
		used[e.Ino] = true
	}
	var out []string
	for _, s := range subjects {
		ino := strings.TrimSuffix(strings.TrimPrefix(s, w.prefix+".d."), ".0")
		if !used[ino] {
			out = append(out, ino)
		}
	}
	return out
}

// retryWait is how long a publish waits before it tries again while no
// server answers for the stream (its leader is being elected, or a new
// stream's interest has not reached every server yet).
const retryWait = 50 * time.Millisecond

// retries adds to a request-reply publish's options that it tries again
// while nobody answers, for up to the FS's timeout. Every publish expects
// the stream's last sequence, so a retry never stores a message twice.
func (f *FS) retries(opts ...jetstream.PublishOpt) []jetstream.PublishOpt {
	return append(opts, jetstream.WithRetryWait(retryWait), jetstream.WithRetryAttempts(max(2, int(f.opts.Timeout/retryWait))))
}

func isWrongSeq(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// holderValue is the lease's first value: who holds it, in the form of a
// save directory's lock file.
func holderValue() []byte {
	host, _ := os.Hostname()
	data, _ := json.Marshal(struct {
		PID     int       `json:"pid"`
		Host    string    `json:"host"`
		Program string    `json:"program"`
		Since   time.Time `json:"since"`
	}{os.Getpid(), host, filepath.Base(os.Args[0]), time.Now().UTC().Truncate(time.Second)})
	return append(data, '\n')
}

func (w *world) renewLoop(h *holder) {
	defer close(h.done)
	t := time.NewTicker(h.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		h.mu.Lock()
		lost := h.lost != nil
		h.mu.Unlock()
		if lost {
			return
		}
		if err := w.usable(h); err != nil {
			continue
		}
		_ = w.renew(h) // a failure is settled by the resync it causes, or the next change
	}
}

// release gives the lease up: what was published is waited for, the lease
// message is purged (only if it is still this holder's) and the world
// forgets its holder.
func (w *world) release() {
	w.mu.Lock()
	h := w.held
	w.held = nil
	w.mu.Unlock()
	if h == nil {
		return
	}
	close(h.stop)
	<-h.done
	w.mu.Lock()
	futs := slices.Clone(h.pending)
	w.mu.Unlock()
	_ = w.wait(h, futs)
	h.bg.Wait()
	w.dropLease(h)
}

// dropLease purges the lease's message if it is still h's.
func (w *world) dropLease(h *holder) {
	h.mu.Lock()
	lost, seq := h.lost, h.leaseSeq
	h.mu.Unlock()
	if lost != nil {
		return
	}
	m, err := w.get(w.leaseSubject())
	if err != nil || m == nil || m.Header.Get(hdrToken) != h.token {
		return
	}
	st, _, err := w.streamOf()
	if err != nil {
		return
	}
	ctx, cancel := w.fs.ctx()
	defer cancel()
	_ = st.Purge(ctx, jetstream.WithPurgeSubject(w.leaseSubject()), jetstream.WithPurgeSequence(max(seq, m.Sequence)+1))
}

// leaseFile is the lock file of a held world: its content is the lease's
// value (who holds it); closing it releases the lease.
type leaseFile struct {
	w      *world
	h      *holder
	name   string
	mu     sync.Mutex
	buf    []byte
	closed bool
}

func (f *leaseFile) Name() string { return f.name }

func (f *leaseFile) ReadAt(p []byte, off int64) (int, error) {
	f.h.mu.Lock()
	data := f.h.payload
	f.h.mu.Unlock()
	if off >= int64(len(data)) {
		return 0, io.EOF
	}
	n := copy(p, data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// WriteAt changes who the lease says holds it, and renews it.
func (f *leaseFile) WriteAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return 0, fs.ErrClosed
	}
	if end := off + int64(len(p)); end > int64(len(f.buf)) {
		f.buf = append(f.buf, make([]byte, end-int64(len(f.buf)))...)
	}
	copy(f.buf[off:], p)
	f.h.mu.Lock()
	f.h.payload = append([]byte(nil), f.buf...)
	f.h.mu.Unlock()
	if err := f.w.usable(f.h); err != nil {
		return 0, err
	}
	if err := f.w.renew(f.h); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (f *leaseFile) Truncate(size int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if size < int64(len(f.buf)) {
		f.buf = f.buf[:size]
	}
	return nil
}

func (f *leaseFile) Size() (int64, error) {
	f.h.mu.Lock()
	defer f.h.mu.Unlock()
	return int64(len(f.h.payload)), nil
}

func (f *leaseFile) Sync() error { return nil }

// Close releases the lease.
func (f *leaseFile) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	f.mu.Unlock()
	f.w.mu.Lock()
	mine := f.w.held == f.h
	f.w.mu.Unlock()
	if mine {
		f.w.release()
	}
	return nil
}

// openLease opens the lock file to read who holds the world.
func (w *world) openLease(name string) (vfs.File, error) {
	data, _, err := w.leaseValue()
	if err != nil {
		return nil, err
	}
	if data == nil {
		return nil, fs.ErrNotExist
	}
	return &valueFile{name: name, data: data}, nil
}

// valueFile is a read-only file of fixed content.
type valueFile struct {
	name string
	data []byte
}

func (f *valueFile) Name() string { return f.name }
func (f *valueFile) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(f.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
func (f *valueFile) WriteAt([]byte, int64) (int, error) { return 0, fs.ErrPermission }
func (f *valueFile) Truncate(int64) error               { return fs.ErrPermission }
func (f *valueFile) Size() (int64, error)               { return int64(len(f.data)), nil }
func (f *valueFile) Sync() error                        { return nil }
func (f *valueFile) Close() error                       { return nil }
