package chunkstore

import (
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arksave/arksave/internal/pxsw"
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
	Palette      int           // chunks written as Palette records
	Empty        int           // chunks stored as Empty (no record)
	Shared       int           // Full chunks that reuse an identical record (chunk dictionary)
	Reverted     int           // chunks identical to generation, removed or never stored
	Deleted      int           // chunks removed by DeleteChunk
	BodyBlocks   int           // body blocks written
	BodyRemovals int           // body sets removed
	Checkpoint   bool          // the page table was written whole, not as a journal segment
	DataFiles    int           // data files the commit started (it passed the data file size)
	MergedLevel  int           // > 0: the journal segment merged earlier segments up to this level
	RecordBytes  int64         // bytes of chunk and body records written
	TableBytes   int64         // bytes of the page-table record written
	BytesWritten int64         // everything written, header slot included
	Syncs        int           // fsyncs issued
	Duration     time.Duration // wall time of the commit
}

// mutation is one change to the index that a commit makes.
type mutation struct {
	key  ikey
	body bool
	del  bool
	v    ival
}

// entry returns the page-table entry of m in a store of n axes.
func (m mutation) entry(n int) tableEntry {
	e := tableEntry{pos: keyOf(m.key, n), h: m.v.h, typ: m.v.typ, deleted: m.del}
	if m.body {
		e.typ = BodyBlock
	}
	if m.del {
		e.h = handle{}
	}
	return e
}

// commitWriter appends records at a store offset in pieces, starting the
// next data file when a record would take the current one past the data
// file size (a record larger than that gets a data file of its own).
type commitWriter struct {
	files    *fileSet
	id       header // the store's identity, for new data files' headers
	limit    int64  // data file size
	cur      vfs.File
	buf      []byte
	flushed  int64 // store offset: bytes before it are written
	wrote    int64
	written  []uint32 // data files written to, to sync
	created  []uint32 // data files created
	dictAdds map[uint64]handle
	err      error
}

func newCommitWriter(files *fileSet, id header, limit, at int64) *commitWriter {
	cw := &commitWriter{files: files, id: id, limit: limit, flushed: at, dictAdds: map[uint64]handle{}}
	if b, ok := commitBufs.Get().(*[]byte); ok {
		cw.buf = *b
	}
	return cw
}

func (cw *commitWriter) end() int64 { return cw.flushed + int64(len(cw.buf)) }

// append adds rec and returns its handle (zero after an error, which
// cw.err keeps).
func (cw *commitWriter) append(rec []byte) handle {
	if cw.err != nil {
		return handle{}
	}
	end := cw.end()
	n, local := fileOf(end), localOf(end)
	full := local > dataHeaderSize && local+int64(len(rec)) > cw.limit
	switch {
	case cw.cur == nil && full:
		cw.seal(end)
		cw.open(n + 1)
	case cw.cur == nil:
		cw.open(n)
	case full:
		cw.flush()
		cw.seal(cw.flushed)
		cw.open(n + 1)
	}
	if cw.err != nil {
		return handle{}
	}
	h := handle{Offset: cw.end(), Length: uint32(len(rec))}
	if len(cw.buf)+len(rec) > commitFlushBytes {
		// Write what the buffer holds first, so that it never grows past
		// commitFlushBytes, and a record as large bypasses it.
		cw.flush()
		if len(rec) >= commitFlushBytes {
			cw.writeThrough(rec)
			return h
		}
	}
	if n := len(cw.buf) + len(rec); n > cap(cw.buf) {
		// Grow by doubling as append does, but never past commitFlushBytes,
		// so that release keeps the buffer.
		cw.buf = append(make([]byte, 0, min(commitFlushBytes, max(n, 2*cap(cw.buf)))), cw.buf...)
	}
	cw.buf = append(cw.buf, rec...)
	return h
}

// open makes data file n the one appended to: a new file when nothing has
// been written to it yet (its header just written), else the existing one
// (after a reopen, the newest data file).
func (cw *commitWriter) open(n uint32) {
	if cw.err != nil {
		return
	}
	if n == 0 || n > MaxDataFiles {
		cw.err = fmt.Errorf("chunkstore: no data file after %d: the store has reached its last one", n-1)
		return
	}
	at := cw.flushed
	if fileOf(at) != n || localOf(at) <= dataHeaderSize {
		f, err := cw.files.create(n, cw.id)
		if err != nil {
			cw.err = fmt.Errorf("create %s: %w", filepath.Base(cw.files.name(n)), err)
			return
		}
		cw.cur, cw.flushed = f, storeOffset(n, dataHeaderSize)
		cw.created = append(cw.created, n)
		cw.written = append(cw.written, n)
		cw.wrote += dataHeaderSize
		return
	}
	f, err := cw.files.get(n)
	if err != nil {
		cw.err = err
		return
	}
	cw.cur = f
}

// seal ends the data file that end is in at end, when the file is longer
// (the records of a commit that failed and could not be taken back): the
// next file starts, and nothing after end in this one must look like a
// record of the store.
func (cw *commitWriter) seal(end int64) {
	if cw.err != nil || localOf(end) <= dataHeaderSize {
		return
	}
	n := fileOf(end)
	f, err := cw.files.get(n)
	if err != nil {
		cw.err = err
		return
	}
	size, err := f.Size()
	if err == nil && size > localOf(end) {
		if err = f.Truncate(localOf(end)); err == nil && (len(cw.written) == 0 || cw.written[len(cw.written)-1] != n) {
			cw.written = append(cw.written, n)
		}
	}
	if err != nil {
		cw.err = err
	}
}

// writeThrough writes rec, which the buffer does not hold, at the end of
// what is written; the buffer must be empty.
func (cw *commitWriter) writeThrough(rec []byte) {
	saved := cw.buf
	cw.buf = rec
	cw.flush()
	cw.buf = saved[:0]
}

func (cw *commitWriter) flush() {
	if cw.err != nil || len(cw.buf) == 0 {
		return
	}
	if err := writeAll(cw.cur, cw.buf, localOf(cw.flushed)); err != nil {
		cw.err = err
		return
	}
	if n := fileOf(cw.flushed); len(cw.written) == 0 || cw.written[len(cw.written)-1] != n {
		cw.written = append(cw.written, n)
	}
	cw.wrote += int64(len(cw.buf))
	cw.flushed += int64(len(cw.buf))
	cw.buf = cw.buf[:0]
}

// sync flushes and makes everything written durable: each data file
// written to, and the directory when a data file was created. It returns
// the fsyncs issued.
func (cw *commitWriter) sync(fsys vfs.FS) (int, error) {
	cw.flush()
	if cw.err != nil {
		return 0, cw.err
	}
	syncs := 0
	for _, n := range cw.written {
		f, err := cw.files.get(n)
		if err == nil {
			syncs++
			err = f.Sync()
		}
		if err != nil {
			return syncs, fmt.Errorf("sync %s: %w", filepath.Base(cw.files.name(n)), err)
		}
	}
	if len(cw.created) > 0 {
		syncs++
		if err := fsys.SyncDir(filepath.Dir(cw.files.path)); err != nil {
			return syncs, fmt.Errorf("sync directory: %w", err)
		}
	}
	return syncs, nil
}

// record returns the bytes of a record of this commit or of the store.
func (cw *commitWriter) record(h handle) ([]byte, error) {
	if h.Offset >= cw.flushed {
		at := h.Offset - cw.flushed
		return cw.buf[at : at+int64(h.Length)], nil
	}
	f, err := cw.files.get(h.File())
	if err != nil {
		return nil, err
	}
	_, rec, err := readRecord(f, h, nil)
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
	undo, err := s.begin()
	if err != nil {
		return st, fmt.Errorf("chunkstore: commit: %w", err)
	}
	st, err = s.commit(b, st, start)
	if err != nil {
		s.undo(undo)
	}
	return st, err
}

// begin checks that a commit may run and marks the files, so that a
// failed one is taken back. The caller holds wmu.
func (s *Store) begin() (fileMark, error) {
	if err := s.writable(); err != nil {
		return fileMark{}, err
	}
	if s.hdr.generation >= maxGeneration {
		return fileMark{}, fmt.Errorf("generation %d is the last", s.hdr.generation)
	}
	if s.needDirSync {
		if err := s.cfg.FS.SyncDir(filepath.Dir(s.path)); err != nil {
			return fileMark{}, fmt.Errorf("sync directory: %w", err)
		}
		s.needDirSync = false
	}
	return s.mark()
}

func (s *Store) commit(b *Batch, st CommitStats, start time.Time) (CommitStats, error) {
	cw := s.newWriter()
	defer cw.release()
	muts, err := s.writeRecords(b, cw, &st)
	if err != nil {
		return st, err
	}
	return s.finish(cw, muts, nil, nil, st, start)
}

// newWriter returns a writer that appends where the next commit goes.
func (s *Store) newWriter() *commitWriter {
	return newCommitWriter(s.files, s.hdr, s.cfg.DataFileSize, s.w)
}

// commitBufs holds the write buffers of finished commits and compactions
// for the next: a save then does not allocate one again, garbage that a
// game pays for in collections while it plays.
var commitBufs sync.Pool // *[]byte

// release gives cw's buffer back to commitBufs once cw is done.
func (cw *commitWriter) release() {
	if b := cw.buf[:0]; cap(b) > 0 && cap(b) <= commitFlushBytes {
		commitBufs.Put(&b)
	}
	cw.buf = nil
}

// finish completes a commit whose records cw holds: it appends the
// page-table record for muts (replacing the chain records in the files
// evict empties, when not nil), syncs what it wrote, writes the header slot
// of the next generation, syncs it and publishes.
func (s *Store) finish(cw *commitWriter, muts []mutation, evict map[uint32]bool, moved map[handle]handle, st CommitStats, start time.Time) (CommitStats, error) {
	h := s.hdr
	h.version = h.currentVersion() // a commit writes the current format, whatever it opened
	h.generation++
	h.modified = time.Now().Unix()
	h.genVersion = s.cfg.generatorVersion()
	h.flags |= cryptFlags(s.cfg.Key) // kept once set: the store may hold encrypted records
	h.chunkCount = uint32(s.chunks.Len() + chunkDelta(s, muts))
	plan, err := s.planTable(muts, evict)
	if err != nil {
		return st, err
	}
	if plan != nil {
		rec := make([]byte, recordHeaderSize, recordHeaderSize+tableHeaderSize+entrySizeOf(s.axes)*len(plan.entries))
		rec = appendTable(rec, plan.prev, plan.level, plan.entries, s.axes)
		sealRecord(rec, plan.kind, codecNone, 0, h.generation, uint32(len(rec)-recordHeaderSize))
		plan.h = cw.append(rec)
		h.root = plan.h.Offset
		st.TableBytes = int64(len(rec))
		st.Checkpoint = plan.kind == pxsw.RecordCheckpoint
		st.MergedLevel = int(plan.level)
	}
	syncs, err := cw.sync(s.cfg.FS)
	st.Syncs += syncs
	if err != nil {
		return st, fmt.Errorf("chunkstore: commit: write records: %w", err)
	}
	st.DataFiles = len(cw.created)
	// From here on the records are durable and a header slot may name
	// them: never write over them again.
	s.setAppend(cw.end())
	hb := h.marshal()
	main := s.files.main()
	if err := writeAll(main, hb[:], slotOffset(h.generation)); err != nil {
		return st, fmt.Errorf("chunkstore: commit: write header slot: %w", err)
	}
	st.Syncs++
	if err := main.Sync(); err != nil {
		return st, fmt.Errorf("chunkstore: commit: sync header slot: %w", err)
	}
	st.BytesWritten = cw.wrote + headerSize
	s.publish(h, muts, plan, cw, moved)
	st.Duration = time.Since(start)
	return st, nil
}

// setAppend moves where the next commit appends.
func (s *Store) setAppend(w int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w = w
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
	pos    Key
	chunk  batchChunk
	bodies []Body
	secs   [][]byte // entity sections kept with the bodies
	isBody bool
	base   *baseEntry // the chunk's generated base, when cached as the commit began

	res chunkResult
	rec []byte // the record, owned
	err error
}

// writeRecords encodes the batch on the workers, appends the records and
// returns the index changes, chunks then bodies, each in (y, x) order.
func (s *Store) writeRecords(b *Batch, cw *commitWriter, st *CommitStats) ([]mutation, error) {
	items := make([]workItem, 0, b.Len())
	for _, p := range sortedKeys(b.chunks) {
		items = append(items, workItem{pos: p, chunk: b.chunks[p]})
	}
	for _, p := range sortedKeys(b.bodies) {
		items = append(items, workItem{pos: p, bodies: b.bodies[p].Bodies, secs: b.bodies[p].Sections, isBody: true})
	}
	for i := range items {
		if err := checkAxes(items[i].pos, s.axes, "commit"); err != nil {
			return nil, err
		}
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
	s.pinBases(items)
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

// pinBases takes from the cache the generated bases of the batch's chunks
// that it holds, before any is encoded: encoding the others puts theirs
// and may evict these, and a batch of more chunks than the cache holds
// would then generate every one again. The generator runs at most once per
// chunk of a commit, and never for a chunk whose base was cached.
func (s *Store) pinBases(items []workItem) {
	if s.cc.gen == nil || s.cc.bases == nil {
		return
	}
	for i := range items {
		if it := &items[i]; !it.isBody && !it.chunk.del {
			it.base = s.cc.bases.get(it.pos)
		}
	}
}

// place turns an encoded item into an index change, appending its record
// unless the chunk dictionary already holds an identical one.
func (s *Store) place(it *workItem, cw *commitWriter, st *CommitStats) (mutation, bool) {
	ix := s.chunks
	if it.isBody {
		ix = s.bodies
	}
	key := it.pos.ik()
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
		m.v.typ = BodyBlock
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
	case it.res.typ == Full:
		st.Full++
		m.v.typ = Full
	case it.res.typ == Palette:
		st.Palette++
		m.v.typ = Palette
	default:
		st.Delta++
		m.v.typ = Delta
	}
	var shared bool
	m.v.h, shared = s.put(it.rec, cw, st)
	if shared {
		return m, !had || cur != m.v
	}
	return m, true
}

// dictTakes reports whether the chunk dictionary shares rec. An encrypted
// record never matches another (its nonce is random), and sharing by
// plaintext would show which chunks are equal: it is not shared.
func (s *Store) dictTakes(rec []byte) bool {
	if rec[recordFlagsOff]&flagEncrypted != 0 {
		return false
	}
	kind := recordKind(rec[16])
	switch s.cfg.Dictionary {
	case DictionaryOff:
		return false
	case DictionarySmallFull:
		return kind == pxsw.RecordFull && len(rec) <= smallFullRecord
	}
	return sharable(kind)
}

// put appends rec, or returns an identical record the store or this
// commit holds (the chunk dictionary) and true.
func (s *Store) put(rec []byte, cw *commitWriter, st *CommitStats) (handle, bool) {
	if !s.dictTakes(rec) {
		st.RecordBytes += int64(len(rec))
		return cw.append(rec), false
	}
	hash := s.dict.hash(rec)
	h, ok := cw.dictAdds[hash]
	if !ok {
		h, ok = s.dict.byHash[hash]
	}
	if ok {
		if old, err := cw.record(h); err == nil && samePayload(old, rec) {
			st.Shared++
			return h, true
		}
	}
	h = cw.append(rec)
	if _, taken := cw.dictAdds[hash]; !taken && !h.IsZero() && len(s.dict.byHash)+len(cw.dictAdds) < dictMaxEntries {
		cw.dictAdds[hash] = h
	}
	st.RecordBytes += int64(len(rec))
	return h, false
}

// encodeParallel encodes items on up to Options.Workers goroutines. After
// each item a worker yields the processor: on a machine of few cores, a game
// goroutine waiting for one (its tick preempted) then gets it within one
// chunk's compression, not after the scheduler's 10 ms time slice.
func (s *Store) encodeParallel(items []workItem) {
	workers := min(s.cfg.Workers, len(items))
	for len(s.encoders) < workers {
		s.encoders = append(s.encoders, &encoder{})
	}
	if workers <= 1 {
		for i := range items {
			s.encodeItem(s.encoders[0], &items[i])
			runtime.Gosched()
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
				runtime.Gosched()
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
		if n := len(rec) - recordHeaderSize; n > maxWritePayload {
			// A reader refuses a payload this large: refuse it before anything is written.
			it.err = fmt.Errorf("%w: the chunk's entity block (%d bodies, %d entity sections) takes %d bytes, more than a record holds (%d): keep fewer regional entities in one chunk",
				ErrInvalidBody, len(it.bodies), len(it.secs), n, maxWritePayload)
			return
		}
		it.rec = sealKeyed(rec, pxsw.RecordBodies, codecNone, 0, it.pos, uint32(len(rec)-recordHeaderSize))
		s.encrypt(it)
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
	extra := it.chunk.extra
	if x, ok := it.chunk.src.(ExtraSource); ok {
		extra = x.ChunkExtra()
	}
	it.res, it.err = s.cc.encodeOn(e, it.pos, pix, extra, it.base)
	it.base = nil
	if it.res.rec != nil {
		if s.aead == nil {
			it.rec = slices.Clone(it.res.rec)
		} else {
			it.rec = it.res.rec // encrypt copies it
			s.encrypt(it)
		}
		it.res.rec = nil
	}
}

// tablePlan is the page-table record a commit writes.
type tablePlan struct {
	kind    recordKind
	level   uint8
	prev    int64
	merged  int // journal segments it replaces (from the top of the chain)
	entries []tableEntry
	h       handle
}

type tkey struct {
	key  ikey
	body bool
}

// planTable decides what page-table record the commit writes: nothing when
// the index does not change; a checkpoint of the whole table when the
// journal has grown past CheckpointRatio of it (or after a rebuild); else a
// journal segment of the changes, merged with the newest segments when
// journalFanIn of them share a level, so that opening reads few segments.
//
// evict, when not nil, names the data files a compaction empties: a
// checkpoint in one of them makes the commit write a checkpoint, journal
// segments in them are merged with every newer one into one segment.
func (s *Store) planTable(muts []mutation, evict map[uint32]bool) (*tablePlan, error) {
	if len(muts) == 0 && !s.needCheckpoint && len(evict) == 0 {
		return s.coverPlan(), nil
	}
	overlay := make(map[tkey]mutation, len(muts))
	for _, m := range muts {
		overlay[tkey{m.key, m.body}] = m
	}
	post := s.entriesAfter(muts)
	limit := max(minCheckpointJournal, int(s.cfg.CheckpointRatio*float64(post)))
	if s.needCheckpoint || s.journalEntries+len(muts) > limit || !s.ckpt.IsZero() && evict[s.ckpt.File()] {
		return s.planCheckpoint(overlay, post), nil
	}
	level, k := s.mergeDepth(evict)
	if k == 0 && len(muts) == 0 {
		return s.coverPlan(), nil
	}
	plan := &tablePlan{kind: pxsw.RecordJournal, level: uint8(level), merged: k, prev: s.ckpt.Offset}
	if n := len(s.chain) - k; n > 0 {
		plan.prev = s.chain[n-1].h.Offset
	}
	if k == 0 {
		plan.entries = make([]tableEntry, len(muts))
		for i, m := range muts {
			plan.entries[i] = m.entry(s.axes)
		}
		slices.SortFunc(plan.entries, compareEntries)
		return plan, nil
	}
	entries, ok := s.mergeSegments(overlay, k)
	if !ok {
		return s.planCheckpoint(overlay, post), nil
	}
	plan.entries = entries
	return plan, nil
}

// coverPlan returns the plan of a commit that changes nothing: none (its
// header slot names the generation's root again) while that root record
// ends where the commit appends, else a journal segment of no entries.
// The root of a generation opened through Options.Root may end before
// records of later generations (a save directory keeps them, after making
// this one current again): a slot naming it would end there too, and once
// no slot names anything after it, the next open would append over those
// records.
func (s *Store) coverPlan() *tablePlan {
	end, prev := storeOffset(0, dataStart), s.ckpt.Offset
	if n := len(s.chain); n > 0 {
		end, prev = s.chain[n-1].h.End(), s.chain[n-1].h.Offset
	} else if !s.ckpt.IsZero() {
		end = s.ckpt.End()
	}
	if s.hdr.root == 0 || end >= s.w {
		return nil
	}
	return &tablePlan{kind: pxsw.RecordJournal, prev: prev}
}

// entriesAfter returns how many page-table entries (chunks and bodies) the
// store holds once muts are applied.
func (s *Store) entriesAfter(muts []mutation) int {
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
	return post
}

// mergeDepth returns how many of the newest journal segments the next
// segment replaces, and its level: journalFanIn-1 segments of one level
// merge into one of the next, repeatedly; a segment in a data file that
// evict names is merged with every newer one.
func (s *Store) mergeDepth(evict map[uint32]bool) (level, k int) {
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
	for i, sg := range s.chain {
		if evict[sg.h.File()] {
			if len(s.chain)-i > k {
				k = len(s.chain) - i
				for _, old := range s.chain[i:] {
					level = max(level, int(old.level))
				}
			}
			break
		}
	}
	return level, k
}

// mergeSegments returns the entries of a segment that replaces the k
// newest: the newest value of every position those segments or this
// commit (overlay) touch, sorted. It returns false when a segment cannot
// be read: the commit then writes a checkpoint.
func (s *Store) mergeSegments(overlay map[tkey]mutation, k int) ([]tableEntry, bool) {
	keys := make(map[tkey]struct{}, len(overlay))
	for key := range overlay {
		keys[key] = struct{}{}
	}
	var buf []byte
	for _, sg := range s.chain[len(s.chain)-k:] {
		_, rec, err := s.read(sg.h, buf)
		if err != nil {
			return nil, false
		}
		buf = rec
		t, _, err := parseTable(rec[recordHeaderSize:], sg.h.Offset, false, s.axes)
		if err != nil {
			return nil, false
		}
		for _, e := range t.entries {
			keys[tkey{e.pos.ik(), e.isBody()}] = struct{}{}
		}
	}
	entries := make([]tableEntry, 0, len(keys))
	for k := range keys {
		if m, ok := overlay[k]; ok {
			entries = append(entries, m.entry(s.axes))
			continue
		}
		ix := s.chunks
		if k.body {
			ix = s.bodies
		}
		m := mutation{key: k.key, body: k.body}
		m.v, m.del = ix.get(k.key)
		m.del = !m.del
		entries = append(entries, m.entry(s.axes))
	}
	slices.SortFunc(entries, compareEntries)
	return entries, true
}

// planCheckpoint builds a checkpoint: every entry after the commit, sorted.
func (s *Store) planCheckpoint(overlay map[tkey]mutation, post int) *tablePlan {
	plan := &tablePlan{kind: pxsw.RecordCheckpoint, merged: len(s.chain), entries: make([]tableEntry, 0, post)}
	add := func(ix *index, body bool) {
		ix.each(func(key ikey, v ival) bool {
			if _, ok := overlay[tkey{key, body}]; !ok {
				plan.entries = append(plan.entries, mutation{key: key, body: body, v: v}.entry(s.axes))
			}
			return true
		})
	}
	add(s.chunks, false)
	add(s.bodies, true)
	for _, m := range overlay {
		if !m.del {
			plan.entries = append(plan.entries, m.entry(s.axes))
		}
	}
	slices.SortFunc(plan.entries, compareEntries)
	return plan
}

// publish makes a durable commit visible to readers. moved maps the
// records a compaction copied to their copies.
func (s *Store) publish(h header, muts []mutation, plan *tablePlan, cw *commitWriter, moved map[handle]handle) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for hash, dh := range cw.dictAdds {
		if _, ok := s.dict.refs[dh.Offset]; !ok {
			s.dict.refs[dh.Offset] = dictRef{hash: hash}
		}
		s.dict.byHash[hash] = dh
	}
	for from, to := range moved {
		s.dict.move(from, to)
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
			s.ref(m.key, m.v, m.body)
			if !m.v.h.IsZero() {
				s.ends[m.v.h.File()] = max(s.ends[m.v.h.File()], m.v.h.End())
			}
		}
		if had {
			s.unref(m.key, old, m.body)
		}
	}
	s.updateRange(muts)
	if plan != nil {
		s.ends[plan.h.File()] = max(s.ends[plan.h.File()], plan.h.End())
		sg := segment{h: plan.h, level: plan.level, count: len(plan.entries)}
		if plan.kind == pxsw.RecordCheckpoint {
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
func (s *Store) ref(key ikey, v ival, body bool) {
	if !body {
		s.counts[v.typ]++
	}
	if v.h.IsZero() {
		return
	}
	if s.dict.add(v.h, tkey{key, body}) {
		s.live[v.h.File()] += int64(v.h.Length)
	}
}

func (s *Store) unref(key ikey, v ival, body bool) {
	if !body {
		s.counts[v.typ]--
	}
	if v.h.IsZero() {
		return
	}
	if s.dict.drop(v.h, tkey{key, body}) {
		n := v.h.File()
		if s.live[n] -= int64(v.h.Length); s.live[n] <= 0 {
			delete(s.live, n)
		}
	}
}
