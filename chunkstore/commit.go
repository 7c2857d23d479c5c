package chunkstore

import (
	"fmt"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arksave/arksave/vfs"
)

// Commit tuning. None of it is part of the file format.
const (
	commitFlushBytes     = 4 << 20 // write records in pieces of about this size
	minCheckpointJournal = 4096    // never checkpoint for fewer journal entries than this
	journalFanIn         = 8       // merge this many segments of one level into one of the next
)

// CommitStats describes what a commit wrote.
type CommitStats struct {
	Generation   uint64        // the generation the commit created
	Full         int           // chunks written as Full records
	Delta        int           // chunks written as Delta records
	Empty        int           // chunks stored as Empty (no record)
	Shared       int           // Full chunks that reuse an identical record (chunk dictionary)
	Reverted     int           // chunks identical to generation, removed or never stored
	Deleted      int           // chunks removed by DeleteChunk
	BodyBlocks   int           // body blocks written
	BodyRemovals int           // body sets removed
	Checkpoint   bool          // the page table was written whole, not as a journal segment
	MergedLevel  int           // > 0: the journal segment merged earlier segments up to this level
	RecordBytes  int64         // bytes of chunk and body records written
	TableBytes   int64         // bytes of the page-table record written
	BytesWritten int64         // everything written, header slot included
	Syncs        int           // fsyncs issued
	Duration     time.Duration // wall time of the commit
}

// mutation is one change to the index that a commit makes.
type mutation struct {
	key  uint64
	body bool
	del  bool
	v    ival
}

func (m mutation) entry() tableEntry {
	e := tableEntry{pos: keyPos(m.key), h: m.v.h, typ: m.v.typ, deleted: m.del}
	if m.body {
		e.typ = BodyBlock
	}
	if m.del {
		e.h = Handle{}
	}
	return e
}

// commitWriter appends a commit's records after the committed end, in
// pieces.
type commitWriter struct {
	f        vfs.File
	buf      []byte
	flushed  int64 // bytes before this offset are written
	wrote    int64
	dictAdds map[uint64]Handle
	err      error
}

func (cw *commitWriter) end() int64 { return cw.flushed + int64(len(cw.buf)) }

func (cw *commitWriter) append(rec []byte) Handle {
	h := Handle{cw.end(), uint32(len(rec))}
	cw.buf = append(cw.buf, rec...)
	if len(cw.buf) >= commitFlushBytes {
		cw.flush()
	}
	return h
}

func (cw *commitWriter) flush() {
	if cw.err != nil || len(cw.buf) == 0 {
		return
	}
	if err := writeAll(cw.f, cw.buf, cw.flushed); err != nil {
		cw.err = err
		return
	}
	cw.wrote += int64(len(cw.buf))
	cw.flushed += int64(len(cw.buf))
	cw.buf = cw.buf[:0]
}

// record returns the bytes of a record of this commit or of the file.
func (cw *commitWriter) record(h Handle) ([]byte, error) {
	if h.Offset >= cw.flushed {
		at := h.Offset - cw.flushed
		return cw.buf[at : at+int64(h.Length)], nil
	}
	_, rec, err := readRecord(cw.f, h, nil)
	return rec, err
}

// Commit writes the batch as generation Generation()+1 and returns when it
// is durable. It compresses on Options.Workers goroutines, appends the
// chunk and body records and the page-table change (a journal segment, now
// and then a checkpoint) after the committed end, syncs, writes the header
// slot not holding the current generation and syncs again: two fsyncs, one
// when nothing changed. A crash at any point leaves the file opening at the
// old generation or, once Commit has returned, the new one.
//
// On error nothing is published: the store stays at its generation and
// remains usable; a later Commit may succeed. The file is taken back to the
// size it had (and its header slot to what it held), so that failing
// commits, however many, never make it grow.
func (s *Store) Commit(b *Batch) (CommitStats, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	start := time.Now()
	st := CommitStats{Generation: s.hdr.generation + 1}
	if err := s.writable(); err != nil {
		return st, err
	}
	if s.hdr.generation >= maxGeneration {
		return st, fmt.Errorf("chunkstore: commit: generation %d is the last", s.hdr.generation)
	}
	if s.needDirSync {
		if err := s.cfg.FS.SyncDir(filepath.Dir(s.path)); err != nil {
			return st, fmt.Errorf("chunkstore: commit: sync directory: %w", err)
		}
		s.needDirSync = false
	}
	undo, err := s.mark()
	if err != nil {
		return st, fmt.Errorf("chunkstore: commit: %w", err)
	}
	st, err = s.commit(b, st, start)
	if err != nil {
		s.undo(undo)
	}
	return st, err
}

func (s *Store) commit(b *Batch, st CommitStats, start time.Time) (CommitStats, error) {
	cw := &commitWriter{f: s.f, flushed: s.w, dictAdds: map[uint64]Handle{}}
	muts, err := s.writeRecords(b, cw, &st)
	if err != nil {
		return st, err
	}
	h := s.hdr
	h.generation++
	h.modified = time.Now().Unix()
	h.genVersion = s.cfg.generatorVersion()
	h.chunkCount = uint32(s.chunks.Len() + chunkDelta(s, muts))
	plan, err := s.planTable(muts)
	if err != nil {
		return st, err
	}
	if plan != nil {
		rec := make([]byte, recordHeaderSize, recordHeaderSize+tableHeaderSize+entrySize*len(plan.entries))
		rec = appendTable(rec, plan.prev, plan.level, plan.entries)
		sealRecord(rec, plan.kind, codecNone, h.generation, uint32(len(rec)-recordHeaderSize))
		plan.h = cw.append(rec)
		h.root = plan.h.Offset
		st.TableBytes = int64(len(rec))
		st.Checkpoint = plan.kind == RecordCheckpoint
		st.MergedLevel = int(plan.level)
	}
	cw.flush()
	if cw.err != nil {
		return st, fmt.Errorf("chunkstore: commit: write records: %w", cw.err)
	}
	if cw.wrote > 0 {
		st.Syncs++
		if err := s.f.Sync(); err != nil {
			return st, fmt.Errorf("chunkstore: commit: sync records: %w", err)
		}
	}
	// From here on the records are durable and a header slot may name
	// them: never write over them again.
	s.w = cw.end()
	hb := h.marshal()
	if err := writeAll(s.f, hb[:], slotOffset(h.generation)); err != nil {
		return st, fmt.Errorf("chunkstore: commit: write header slot: %w", err)
	}
	st.Syncs++
	if err := s.f.Sync(); err != nil {
		return st, fmt.Errorf("chunkstore: commit: sync header slot: %w", err)
	}
	st.BytesWritten = cw.wrote + headerSize
	s.publish(h, muts, plan, cw)
	st.Duration = time.Since(start)
	return st, nil
}

func (s *Store) writable() error {
	switch {
	case s.closed:
		return ErrClosed
	case s.readOnly:
		return ErrReadOnly
	case s.stale != nil:
		return fmt.Errorf("chunkstore: the store must be reopened: %w", s.stale)
	}
	return nil
}

// chunkDelta returns how many chunks muts add (negative: remove).
func chunkDelta(s *Store, muts []mutation) int {
	d := 0
	for _, m := range muts {
		if m.body {
			continue
		}
		_, had := s.chunks.get(m.key)
		switch {
		case m.del && had:
			d--
		case !m.del && !had:
			d++
		}
	}
	return d
}

// workItem is one chunk or body set of a batch to encode.
type workItem struct {
	pos    Pos
	chunk  batchChunk
	bodies []Body
	secs   [][]byte // entity sections kept with the bodies
	isBody bool

	res chunkResult
	rec []byte // the record, owned
	err error
}

// writeRecords encodes the batch on the workers, appends the records and
// returns the index changes, chunks then bodies, each in (y, x) order.
func (s *Store) writeRecords(b *Batch, cw *commitWriter, st *CommitStats) ([]mutation, error) {
	items := make([]workItem, 0, b.Len())
	for _, p := range sortedPos(b.chunks) {
		items = append(items, workItem{pos: p, chunk: b.chunks[p]})
	}
	for _, p := range sortedPos(b.bodies) {
		items = append(items, workItem{pos: p, bodies: b.bodies[p].Bodies, secs: b.bodies[p].Sections, isBody: true})
	}
	for i := range items {
		if it := &items[i]; it.isBody {
			for j := range it.bodies {
				if bd := &it.bodies[j]; !bd.IsEmpty() {
					if err := bd.check(); err != nil {
						return nil, fmt.Errorf("chunkstore: commit: bodies of chunk %v: %w", it.pos, err)
					}
				}
			}
		} else if !it.chunk.del && it.chunk.src == nil && len(it.chunk.pix) != s.cc.npix {
			return nil, fmt.Errorf("%w: commit: chunk %v has %d pixels, want %d", ErrInvalidChunk, it.pos, len(it.chunk.pix), s.cc.npix)
		}
	}
	var muts []mutation
	group := max(1, s.cfg.Workers) * 4
	for g := 0; g < len(items); g += group {
		part := items[g:min(len(items), g+group)]
		s.encodeParallel(part)
		for i := range part {
			it := &part[i]
			if it.err != nil {
				return nil, fmt.Errorf("chunkstore: commit: chunk %v: %w", it.pos, it.err)
			}
			if m, ok := s.place(it, cw, st); ok {
				muts = append(muts, m)
			}
			it.rec = nil
		}
	}
	return muts, cw.err
}

// place turns an encoded item into an index change, appending its record
// unless the chunk dictionary already holds an identical one.
func (s *Store) place(it *workItem, cw *commitWriter, st *CommitStats) (mutation, bool) {
	ix := s.chunks
	if it.isBody {
		ix = s.bodies
	}
	key := it.pos.key()
	cur, had := ix.get(key)
	m := mutation{key: key, body: it.isBody}
	switch {
	case it.isBody && it.rec == nil:
		if !had {
			return m, false
		}
		st.BodyRemovals++
		m.del = true
		return m, true
	case it.isBody:
		st.BodyBlocks++
		m.v = ival{h: cw.append(it.rec), typ: BodyBlock}
		st.RecordBytes += int64(len(it.rec))
		return m, true
	case it.chunk.del || it.res.remove:
		if it.chunk.del {
			st.Deleted++
		} else {
			st.Reverted++
		}
		m.del = true
		return m, had
	case it.res.typ == Empty:
		st.Empty++
		m.v = ival{typ: Empty}
		return m, !had || cur.typ != Empty
	}
	if it.res.typ == Full {
		st.Full++
	} else {
		st.Delta++
	}
	m.v.typ = it.res.typ
	if sharable(RecordKind(it.res.typ), len(it.rec)) {
		hash := s.dict.hash(it.rec)
		h, ok := cw.dictAdds[hash]
		if !ok {
			h, ok = s.dict.byHash[hash]
		}
		if ok {
			if old, err := cw.record(h); err == nil && samePayload(old, it.rec) {
				st.Shared++
				m.v.h = h
				return m, !had || cur != m.v
			}
		}
		m.v.h = cw.append(it.rec)
		if _, taken := cw.dictAdds[hash]; !taken && len(s.dict.byHash)+len(cw.dictAdds) < dictMaxEntries {
			cw.dictAdds[hash] = m.v.h
		}
	} else {
		m.v.h = cw.append(it.rec)
	}
	st.RecordBytes += int64(len(it.rec))
	return m, true
}

// encodeParallel encodes items on up to Options.Workers goroutines.
func (s *Store) encodeParallel(items []workItem) {
	workers := min(s.cfg.Workers, len(items))
	for len(s.encoders) < workers {
		s.encoders = append(s.encoders, &encoder{})
	}
	if workers <= 1 {
		for i := range items {
			s.encodeItem(s.encoders[0], &items[i])
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var caught any
	for w := range workers {
		wg.Add(1)
		go func(e *encoder) {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					once.Do(func() { caught = fmt.Sprintf("%v\n[compression worker's stack]\n%s", p, debug.Stack()) })
					next.Store(int64(len(items))) // the others stop too
				}
			}()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(items) {
					return
				}
				s.encodeItem(e, &items[i])
			}
		}(s.encoders[w])
	}
	wg.Wait()
	if caught != nil {
		// On the committing goroutine, where the caller (the autosave writer)
		// recovers it as a failed save; on a worker it would end the process.
		panic(caught)
	}
}

func (s *Store) encodeItem(e *encoder, it *workItem) {
	if it.isBody {
		if blk := (EntityBlock{Bodies: it.bodies, Sections: it.secs}); blk.IsEmpty() {
			return
		}
		rec := e.appendBodyBlock(make([]byte, recordHeaderSize, 4096), it.bodies, it.secs, s.cc.mask)
		sealRecord(rec, RecordBodies, codecNone, it.pos.recordKey(), uint32(len(rec)-recordHeaderSize))
		it.rec = rec
		return
	}
	if it.chunk.del {
		return
	}
	pix := it.chunk.pix
	if it.chunk.src != nil {
		if cap(e.src) < s.cc.npix {
			e.src = make([]uint32, s.cc.npix)
		}
		pix = e.src[:s.cc.npix]
		if it.err = it.chunk.src.ReadPixels(pix); it.err != nil {
			return
		}
	}
	it.res, it.err = s.cc.encode(e, it.pos, pix)
	if it.res.rec != nil {
		it.rec = slices.Clone(it.res.rec)
		it.res.rec = nil
	}
}

// tablePlan is the page-table record a commit writes.
type tablePlan struct {
	kind    RecordKind
	level   uint8
	prev    int64
	merged  int // journal segments it replaces (from the top of the chain)
	entries []tableEntry
	h       Handle
}

type tkey struct {
	key  uint64
	body bool
}

// planTable decides what page-table record the commit writes: nothing when
// the index does not change; a checkpoint of the whole table when the
// journal has grown past CheckpointRatio of it (or after a rebuild); else a
// journal segment of the changes, merged with the newest segments when
// journalFanIn of them share a level, so that opening reads few segments.
func (s *Store) planTable(muts []mutation) (*tablePlan, error) {
	if len(muts) == 0 && !s.needCheckpoint {
		return nil, nil
	}
	overlay := make(map[tkey]mutation, len(muts))
	for _, m := range muts {
		overlay[tkey{m.key, m.body}] = m
	}
	post := s.chunks.Len() + s.bodies.Len() + chunkDelta(s, muts)
	for _, m := range muts {
		if m.body {
			_, had := s.bodies.get(m.key)
			if m.del && had {
				post--
			} else if !m.del && !had {
				post++
			}
		}
	}
	limit := max(minCheckpointJournal, int(s.cfg.CheckpointRatio*float64(post)))
	if s.needCheckpoint || s.journalEntries+len(muts) > limit {
		return s.planCheckpoint(overlay, post), nil
	}
	level, k := 0, 0
	for {
		n := len(s.chain) - k
		if n < journalFanIn-1 {
			break
		}
		same := true
		for _, sg := range s.chain[n-(journalFanIn-1) : n] {
			same = same && int(sg.level) == level
		}
		if !same {
			break
		}
		k += journalFanIn - 1
		level++
	}
	plan := &tablePlan{kind: RecordJournal, level: uint8(level), merged: k, prev: s.ckpt.Offset}
	if n := len(s.chain) - k; n > 0 {
		plan.prev = s.chain[n-1].h.Offset
	}
	if k == 0 {
		plan.entries = make([]tableEntry, len(muts))
		for i, m := range muts {
			plan.entries[i] = m.entry()
		}
		slices.SortFunc(plan.entries, compareEntries)
		return plan, nil
	}
	// Merge: the newest value of every position the merged segments or
	// this commit touch.
	keys := make(map[tkey]struct{}, len(muts))
	for _, m := range muts {
		keys[tkey{m.key, m.body}] = struct{}{}
	}
	var buf []byte
	for _, sg := range s.chain[len(s.chain)-k:] {
		_, rec, err := readRecord(s.f, sg.h, buf)
		if err != nil {
			return s.planCheckpoint(overlay, post), nil
		}
		buf = rec
		t, _, err := parseTable(rec[recordHeaderSize:], sg.h.Offset, false)
		if err != nil {
			return s.planCheckpoint(overlay, post), nil
		}
		for _, e := range t.entries {
			keys[tkey{e.pos.key(), e.isBody()}] = struct{}{}
		}
	}
	plan.entries = make([]tableEntry, 0, len(keys))
	for k := range keys {
		if m, ok := overlay[k]; ok {
			plan.entries = append(plan.entries, m.entry())
			continue
		}
		ix := s.chunks
		if k.body {
			ix = s.bodies
		}
		m := mutation{key: k.key, body: k.body}
		m.v, m.del = ix.get(k.key)
		m.del = !m.del
		plan.entries = append(plan.entries, m.entry())
	}
	slices.SortFunc(plan.entries, compareEntries)
	return plan, nil
}

// planCheckpoint builds a checkpoint: every entry after the commit, sorted.
func (s *Store) planCheckpoint(overlay map[tkey]mutation, post int) *tablePlan {
	plan := &tablePlan{kind: RecordCheckpoint, merged: len(s.chain), entries: make([]tableEntry, 0, post)}
	add := func(ix *index, body bool) {
		ix.each(func(key uint64, v ival) bool {
			if _, ok := overlay[tkey{key, body}]; !ok {
				plan.entries = append(plan.entries, mutation{key: key, body: body, v: v}.entry())
			}
			return true
		})
	}
	add(s.chunks, false)
	add(s.bodies, true)
	for _, m := range overlay {
		if !m.del {
			plan.entries = append(plan.entries, m.entry())
		}
	}
	slices.SortFunc(plan.entries, compareEntries)
	return plan
}

// publish makes a durable commit visible to readers.
func (s *Store) publish(h header, muts []mutation, plan *tablePlan, cw *commitWriter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for hash, dh := range cw.dictAdds {
		s.dict.byHash[hash] = dh
		if _, ok := s.dict.refs[dh.Offset]; !ok {
			s.dict.refs[dh.Offset] = 0
		}
	}
	for _, m := range muts {
		ix := s.chunks
		if m.body {
			ix = s.bodies
		}
		var old ival
		var had bool
		if m.del {
			old, had = ix.del(m.key)
		} else {
			old, had = ix.set(m.key, m.v)
			s.ref(m.v, m.body)
		}
		if had {
			s.unref(old, m.body)
		}
	}
	if plan != nil {
		sg := segment{h: plan.h, level: plan.level, count: len(plan.entries)}
		if plan.kind == RecordCheckpoint {
			s.ckpt, s.chain, s.journalEntries = plan.h, nil, 0
		} else {
			for _, old := range s.chain[len(s.chain)-plan.merged:] {
				s.journalEntries -= old.count
			}
			s.chain = append(s.chain[:len(s.chain)-plan.merged], sg)
			s.journalEntries += sg.count
		}
	}
	s.needCheckpoint = false
	s.hdr = h
}

// ref and unref keep the counters and live bytes as index entries come and go.
func (s *Store) ref(v ival, body bool) {
	if !body {
		s.counts[v.typ]++
	}
	if v.h.IsZero() {
		return
	}
	if r, ok := s.dict.refs[v.h.Offset]; ok {
		if r == 0 {
			s.liveData += int64(v.h.Length)
		}
		s.dict.refs[v.h.Offset] = r + 1
		return
	}
	s.liveData += int64(v.h.Length)
}

func (s *Store) unref(v ival, body bool) {
	if !body {
		s.counts[v.typ]--
	}
	if v.h.IsZero() {
		return
	}
	if r, ok := s.dict.refs[v.h.Offset]; ok {
		if r == 1 {
			s.liveData -= int64(v.h.Length)
		}
		s.dict.refs[v.h.Offset] = max(0, r-1)
		return
	}
	s.liveData -= int64(v.h.Length)
}
