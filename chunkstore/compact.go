package chunkstore

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/arksave/arksave/internal/pxsw"
)

// minCompactionDead keeps NeedsCompaction quiet for tiny stores: below this
// many dead bytes a data file is not worth rewriting.
const minCompactionDead = 16 << 10

// CompactStats describes what a compaction did.
type CompactStats struct {
	Generation uint64   // the generation the compaction committed
	Files      []uint32 // the files it emptied: no record of the generation is in them any more
	Moved      int64    // bytes of live records copied into the newest data file
	Freed      int64    // bytes of the emptied files: what removing them gives back
	Dropped    int      // damaged records dropped (their chunks read as generated; OpenReport lists them)
	Zstd       int      // records moved that it stored as zstd (Options.ZstdArchive)
	Commit     CommitStats
}

// candidates returns the files file-by-file compaction may empty, with
// their stats: every data file, and the store file while it holds records
// of the generation (a store of format 1: its records move to data files;
// its space is given back only by Compact or CompactTo).
func (s *Store) candidates() []fileStats {
	files := s.fileList()
	s.mu.RLock()
	mainLive := s.live[0] > 0 || s.ckpt.File() == 0 && !s.ckpt.IsZero()
	for _, sg := range s.chain {
		mainLive = mainLive || sg.h.File() == 0
	}
	s.mu.RUnlock()
	return slices.DeleteFunc(files, func(f fileStats) bool { return f.Number == 0 && !mainLive })
}

// NeedsCompaction reports whether the dead bytes of the data files exceed
// CompactionThreshold of their size (and amount to at least 16 KiB all
// together): a compaction (CompactNext) then pays.
func (s *Store) NeedsCompaction() bool {
	_, ok := s.nextCompaction()
	return ok
}

// nextCompaction returns the file with the most dead bytes when the store
// needs compaction.
func (s *Store) nextCompaction() (fileStats, bool) {
	var size, dead int64
	var best fileStats
	for _, f := range s.candidates() {
		size += f.Size
		dead += f.Dead
		if f.Dead > best.Dead {
			best = f
		}
	}
	ok := best.Dead > 0 && dead >= max(minCompactionDead, s.minDead) && float64(dead) > s.cfg.CompactionThreshold*float64(size)
	return best, ok
}

// CompactNext compacts the file with the most dead bytes, when the store
// needs compaction (see NeedsCompaction), and reports whether it did: a
// step whose cost is that file's live records, whatever the size of the
// world. See compactFile.
func (s *Store) CompactNext() (CompactStats, bool, error) {
	f, ok := s.nextCompaction()
	if !ok {
		return CompactStats{}, false, nil
	}
	st, err := s.compactFile(f.Number)
	return st, err == nil, err
}

// compactFile moves the live records of file n (a data file, or the store
// file of a format 1 store) to the newest data file (the next one when n is
// the newest), as a commit of generation Generation()+1 that changes no
// chunk: its page-table record points the moved entries at their copies
// and replaces the journal segments or the checkpoint that lay in file n.
// Its cost grows with what file n holds, not with the world.
//
// With Options.ZstdArchive the records it moves are stored as zstd where
// that is smaller (see archiver).
//
// File n is not removed: generations before this one still read it (a
// save directory removes it once no manifest it keeps names it; Compact
// removes what neither header slot uses). A record that fails its checks
// while being copied is dropped (its chunk regenerates) and listed in
// OpenReport. On error nothing is published and the files are taken back,
// as for a failed Commit.
func (s *Store) compactFile(n uint32) (CompactStats, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.relocate(map[uint32]bool{n: true}, false)
}

// relocate moves every live record of the files in evict to the newest data
// file, or with fresh set to new data files after every one there is, as
// one commit. The caller holds wmu.
func (s *Store) relocate(evict map[uint32]bool, fresh bool) (CompactStats, error) {
	start := time.Now()
	st := CompactStats{Generation: s.hdr.generation + 1}
	undo, err := s.begin()
	if err != nil {
		return st, fmt.Errorf("chunkstore: compact: %w", err)
	}
	cw := s.newWriter()
	defer cw.release()
	if n := fileOf(cw.flushed); fresh || evict[n] {
		// The newest file is emptied too: start the next one, sealing this
		// one at the append point first. A save that did not commit may have
		// left bytes after it, and a file that is not the newest must end at
		// its last record: reopened at an older generation that still uses
		// this file (a save directory whose manifest names one), the store
		// appends to the next file and this one is read to its end.
		cw.seal(cw.flushed)
		cw.flushed = storeOffset(n+1, dataHeaderSize)
	}
	var entries []tableEntry
	for _, n := range slices.Sorted(maps.Keys(evict)) {
		entries = append(entries, s.entriesIn(n)...)
	}
	slices.SortFunc(entries, func(a, b tableEntry) int { return cmp.Compare(a.h.Offset, b.h.Offset) })
	moved := map[handle]handle{}
	var muts []mutation
	var dropped []Problem
	var buf []byte
	z := s.archiver()
	for _, e := range entries {
		m := mutation{key: e.pos.ik(), body: e.isBody(), v: ival{typ: e.typ}}
		nh, ok := moved[e.h]
		if !ok {
			rh, rec, err := s.readAs(e.h, e.typ, buf)
			buf = rec
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					s.undo(undo)
					return st, fmt.Errorf("chunkstore: compact: %w", err)
				}
				var r Report
				r.addKey(SectionRecord, e.h.Offset, e.pos, fmt.Errorf("dropped by compaction: %w", err))
				dropped = append(dropped, r.Problems...)
				m.del = true
				muts = append(muts, m)
				continue
			}
			rec = z.archive(rh, rec, e.h.Offset)
			nh = cw.append(rec)
			moved[e.h] = nh
			st.Moved += int64(len(rec))
		}
		m.v.h = nh
		muts = append(muts, m)
	}
	if cw.err != nil {
		s.undo(undo)
		return st, fmt.Errorf("chunkstore: compact: %w", cw.err)
	}
	for _, f := range s.fileList() {
		if evict[f.Number] {
			st.Files = append(st.Files, f.Number)
			st.Freed += f.Size
		}
	}
	cst, err := s.finish(cw, muts, evict, moved, CommitStats{Generation: st.Generation}, start)
	st.Commit = cst
	if err != nil {
		s.undo(undo)
		return st, fmt.Errorf("chunkstore: compact: %w", err)
	}
	st.Dropped, st.Zstd = len(dropped), z.n
	s.mu.Lock()
	s.report.Problems = append(s.report.Problems, dropped...)
	for n := range evict {
		delete(s.ends, n)
	}
	s.mu.Unlock()
	return st, nil
}

// entriesIn returns the index entries whose records are in file n. It scans
// the file (its cost is the file's, not the index's): a record is live when
// the entry of its position points at it, or, for a record the chunk
// dictionary tracks, for each entry that shares it. Should the records
// found not add up to the live bytes the store counts in the file (a
// record the scan cannot read, an entry that points into one), it asks the
// whole index instead. The caller holds wmu.
func (s *Store) entriesIn(n uint32) []tableEntry {
	s.mu.RLock()
	want := s.live[n]
	s.mu.RUnlock()
	var out []tableEntry
	var found int64
	end := s.fileEnd(n)
	if n == fileOf(s.w) {
		end = min(end, s.w)
	}
	f, err := s.file(n)
	if err == nil && want > 0 {
		err = scanRecords(f, storeOffset(n, firstRecord(n)), end, func(ev scanEvent) bool {
			if !ev.hdrOK || ev.hdr.kind.IsTable() {
				return true
			}
			h := handle{Offset: ev.off, Length: ev.hdr.length()}
			body := ev.hdr.kind == pxsw.RecordBodies
			s.mu.RLock()
			var keys []tkey
			if r, ok := s.dict.refs[ev.off]; ok {
				keys = r.keys()
			} else {
				k, err := ev.hdr.keyIn(ev.rec, s.axes, ev.off)
				if err != nil || ev.rec == nil {
					s.mu.RUnlock()
					return true
				}
				keys = []tkey{{k.ik(), body}}
			}
			live := false
			for _, k := range keys {
				ix := s.chunks
				if k.body {
					ix = s.bodies
				}
				if v, ok := ix.get(k.key); ok && v.h == h {
					out = append(out, mutation{key: k.key, body: k.body, v: v}.entry(s.axes))
					live = true
				}
			}
			s.mu.RUnlock()
			if live {
				found += int64(h.Length)
			}
			return true
		})
	}
	if err == nil && found == want {
		return out
	}
	// The slow way: every entry of the index.
	out = out[:0]
	add := func(ix *index, body bool) {
		ix.each(func(key ikey, v ival) bool {
			if !v.h.IsZero() && v.h.File() == n {
				out = append(out, mutation{key: key, body: body, v: v}.entry(s.axes))
			}
			return true
		})
	}
	s.mu.RLock()
	add(s.chunks, false)
	add(s.bodies, true)
	s.mu.RUnlock()
	return out
}

// Compact rewrites the whole store in place: every live record moves to
// new data files, in page-table order, with a fresh checkpoint, as
// generation Generation()+1; then the other header slot is written with
// the previous generation over the same table (so that Open with
// Options.Generation of the previous generation still works, with the
// same contents), and every data file neither slot uses is removed (a
// format 1 store file loses its records too). A crash at any point leaves
// the old generation or the new one, with the same contents.
//
// Roots of earlier generations (Options.Root) no longer open afterwards:
// a save directory compacts file by file (CompactNext), or into a new
// store (CompactTo). A record that fails its checksum while being copied
// is dropped (its chunk regenerates) and listed in OpenReport.
func (s *Store) Compact() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.writable(); err != nil {
		return err
	}
	evict := map[uint32]bool{0: true}
	for _, f := range s.fileList() {
		evict[f.Number] = true
	}
	prev := s.hdr
	s.needCheckpoint = true
	if _, err := s.relocate(evict, true); err != nil {
		return err
	}
	// The previous generation, over the compacted table: nothing the
	// compaction emptied is named by a slot any more.
	s.mu.RLock()
	old := s.hdr
	s.mu.RUnlock()
	old.generation, old.modified = prev.generation, prev.modified
	hb := old.marshal()
	main := s.files.main()
	if err := writeAll(main, hb[:], slotOffset(old.generation)); err != nil {
		return fmt.Errorf("chunkstore: compact: write header slot: %w", err)
	}
	if err := main.Sync(); err != nil {
		return fmt.Errorf("chunkstore: compact: sync header slot: %w", err)
	}
	return s.removeUnused()
}

// removeUnused removes the data files of the store that the committed
// generation does not use, and the records of a format 1 store file, once
// neither header slot names anything in them.
func (s *Store) removeUnused() error {
	keep := map[uint32]bool{}
	for _, f := range s.fileList() {
		keep[f.Number] = true
	}
	var errs []error
	removed := false
	for _, n := range append(s.files.onDisk(), s.files.opened()...) {
		if !keep[n] {
			if err := s.files.remove(n); err != nil {
				errs = append(errs, err)
			}
			removed = true
		}
	}
	main := s.files.main()
	if size, err := main.Size(); err == nil && size > dataStart {
		err = main.Truncate(dataStart)
		if err == nil {
			err = main.Sync()
		}
		errs = append(errs, err)
	}
	if removed {
		if err := s.cfg.FS.SyncDir(filepath.Dir(s.path)); err != nil {
			s.needDirSync = true
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("chunkstore: compact: remove unused files: %w", err)
	}
	return nil
}

// CompactTo writes a compacted copy of the store, as generation
// Generation()+1, to path (its data files next to it, then the store file
// through path+".tmp", synced, renamed, directory synced) and opens it.
// The store itself is unchanged. It works on a read-only store too, which
// makes it the repair step after Open with Options.Repair.
func (s *Store) CompactTo(path string) (*Store, error) {
	n, _, err := s.compactToFilling(path, nil)
	return n, err
}

// compactToFilling is CompactTo that also takes, record for record, the
// chunks the store lost from the first of fill that holds them intact:
// every chunk whose record in the store is damaged and every one the store
// does not hold for which missing (when not nil) returns true (after a
// damaged page table was rebuilt by a scan, a chunk may be missing because
// its records were lost; missing gets the chunk's key, of the store's axes).
// A repair brings chunks back from a backup's store this way. Body sets
// are never taken: bodies move between chunks, and an older set could hold
// bodies that live in another chunk's now. A fill store of another chunk
// size or other axes gives nothing; one of another seed or generator
// version no Delta chunks: they mean something only against their own
// generator.
func (s *Store) compactToFilling(path string, missing func(k Key) bool, fill ...*Store) (*Store, []filledChunk, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return nil, nil, ErrClosed
	}
	if filepath.Clean(path) == filepath.Clean(s.path) {
		return nil, nil, fmt.Errorf("chunkstore: compact to %s: that is the store's own file; use Compact", path)
	}
	tmp := path + ".tmp"
	dropped, filled, err := s.writeCompactedFilling(path, tmp, missing, fill)
	if err != nil {
		s.cfg.FS.Remove(tmp)
		return nil, nil, fmt.Errorf("chunkstore: compact to %s: %w", path, err)
	}
	if err := s.cfg.FS.Rename(tmp, path); err != nil {
		s.cfg.FS.Remove(tmp)
		return nil, nil, fmt.Errorf("chunkstore: compact to %s: %w", path, err)
	}
	if err := s.cfg.FS.SyncDir(filepath.Dir(path)); err != nil {
		return nil, nil, fmt.Errorf("chunkstore: compact to %s: %w", path, err)
	}
	cfg := s.cfg
	cfg.ReadOnly, cfg.dataPaths = false, nil // the copy's data files are its own
	cfg.PixelSize, cfg.pixelMigration = pixelSize, false
	n, err := openStore(path, cfg, openCompacted, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("chunkstore: compact to %s: reopen: %w", path, err)
	}
	// What was dropped is about this store's files: name them.
	n.report.Problems = append(s.localize(dropped).Problems, n.report.Problems...)
	return n, filled, nil
}

// source is where an entry of a compaction reads its record: the store
// itself (from -1) or a fill store.
type source struct {
	st   *Store
	from int
}

// fillEntries returns the chunk entries of the fill stores, each position
// from the first store that holds it, with the store it comes from; Delta
// chunks only from stores that share s's chunk size, seed and generator
// version.
func (s *Store) fillEntries(fill []*Store) map[tkey]struct {
	e   tableEntry
	src int
} {
	out := map[tkey]struct {
		e   tableEntry
		src int
	}{}
	for i, f := range fill {
		f.mu.RLock()
		deltas := f.cc.npix == s.cc.npix && f.cfg.Seed == s.cfg.Seed && f.hdr.genVersion == s.hdr.genVersion
		add := func(ix *index, body bool) {
			ix.each(func(key ikey, v ival) bool {
				k := tkey{key, body}
				if _, ok := out[k]; !ok && (body || v.typ != Delta || deltas) {
					out[k] = struct {
						e   tableEntry
						src int
					}{mutation{key: key, body: body, v: v}.entry(s.axes), i}
				}
				return true
			})
		}
		if !f.closed && f.cc.npix == s.cc.npix && f.axes == s.axes {
			add(f.chunks, false)
		}
		f.mu.RUnlock()
	}
	return out
}

// writeCompactedFilling writes the live records, in page-table order, and
// a checkpoint to the data files of a new store at path, syncs them and
// the directory, then writes both header slots to tmp and syncs it.
// Records that fail their checks are dropped, or taken from fill (see
// CompactToFilling).
func (s *Store) writeCompactedFilling(path, tmp string, missing func(Key) bool, fill []*Store) (Report, []filledChunk, error) {
	var dropped Report
	var filled []filledChunk
	entries := make([]tableEntry, 0, s.chunks.Len()+s.bodies.Len())
	add := func(ix *index, body bool) {
		ix.each(func(key ikey, v ival) bool {
			entries = append(entries, mutation{key: key, body: body, v: v}.entry(s.axes))
			return true
		})
	}
	add(s.chunks, false)
	add(s.bodies, true)
	srcs := make([]source, len(entries))
	for i := range srcs {
		srcs[i] = source{s, -1}
	}
	fills := s.fillEntries(fill)
	if missing != nil {
		for k, fe := range fills {
			ix := s.chunks
			if k.body {
				ix = s.bodies
			}
			if _, ok := ix.get(k.key); !ok && missing(fe.e.pos) {
				entries = append(entries, fe.e)
				srcs = append(srcs, source{fill[fe.src], fe.src})
			}
		}
	}
	order := make([]int, len(entries))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return compareEntries(entries[a], entries[b]) })

	files := newFileSet(s.cfg.FS, path, nil, true)
	defer func() {
		files.mu.Lock()
		delete(files.open, 0)
		files.mu.Unlock()
		files.closeAll()
	}()
	id := s.hdr
	cw := newCommitWriter(files, id, s.cfg.DataFileSize, storeOffset(1, dataHeaderSize))
	defer cw.release()
	type at struct {
		st  *Store
		off int64
	}
	moved := map[at]handle{} // records copied already: shared ones are copied once
	kept := make([]tableEntry, 0, len(entries))
	var buf []byte
	z := s.archiver()
	copyRecord := func(e tableEntry, src source) (tableEntry, error) {
		if e.h.IsZero() {
			return e, nil
		}
		if nh, ok := moved[at{src.st, e.h.Offset}]; ok {
			e.h = nh
			return e, nil
		}
		h, rec, err := src.st.readAs(e.h, e.typ, buf)
		buf = rec
		if err == nil {
			rec, err = src.st.repixel(h, rec, e.h.Offset) // a store of other pixels is migrated
		}
		if err != nil {
			return e, err
		}
		nh := cw.append(z.archive(h, rec, e.h.Offset))
		if cw.err != nil {
			return e, cw.err
		}
		moved[at{src.st, e.h.Offset}] = nh
		e.h = nh
		return e, nil
	}
	for _, i := range order {
		e, src := entries[i], srcs[i]
		ne, err := copyRecord(e, src)
		if err == nil {
			kept = append(kept, ne)
			if src.from >= 0 {
				filled = append(filled, filledChunk{Pos: e.pos.Pos(), Key: e.pos, From: src.from})
			}
			continue
		}
		if !errors.Is(err, ErrCorrupt) || cw.err != nil {
			return dropped, nil, err
		}
		if src.from >= 0 {
			continue // a fill store's damaged record: the position stays lost
		}
		dropped.addKey(SectionRecord, e.h.Offset, e.pos, fmt.Errorf("dropped by compaction: %w", err))
		if fe, ok := fills[tkey{e.pos.ik(), e.isBody()}]; ok {
			if ne, err := copyRecord(fe.e, source{fill[fe.src], fe.src}); err == nil {
				kept = append(kept, ne)
				filled = append(filled, filledChunk{Pos: e.pos.Pos(), Key: e.pos, From: fe.src, Damaged: true})
			}
		}
	}
	slices.SortFunc(filled, func(a, b filledChunk) int { return compareKeys(a.Key, b.Key) })
	g := s.hdr.generation + 1
	rec := make([]byte, recordHeaderSize, recordHeaderSize+tableHeaderSize+entrySizeOf(s.axes)*len(kept))
	rec = appendTable(rec, 0, 0, kept, s.axes)
	sealRecord(rec, pxsw.RecordCheckpoint, codecNone, 0, g, uint32(len(rec)-recordHeaderSize))
	ck := cw.append(rec)
	if _, err := cw.sync(s.cfg.FS); err != nil {
		return dropped, nil, err
	}
	old := s.hdr
	old.version = old.currentVersion()
	old.pixelSize = pixelSize
	old.root = ck.Offset
	old.chunkCount = 0
	for _, e := range kept {
		if !e.isBody() {
			old.chunkCount++
		}
	}
	next := old
	next.generation = g
	next.modified = time.Now().Unix()
	slots := make([]byte, dataStart)
	ob, nb := old.marshal(), next.marshal()
	copy(slots[slotOffset(old.generation):], ob[:])
	copy(slots[slotOffset(next.generation):], nb[:])
	f, err := s.cfg.FS.Create(tmp)
	if err != nil {
		return dropped, nil, err
	}
	if err := writeAll(f, slots, 0); err != nil {
		f.Close()
		return dropped, nil, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return dropped, nil, err
	}
	return dropped, filled, f.Close()
}

// archiver re-encodes the records a compaction moves as zstd
// (Options.ZstdArchive), reusing its buffers from record to record.
type archiver struct {
	on       bool
	level    int
	rec, raw []byte
	n        int // records it re-encoded
}

func (s *Store) archiver() *archiver {
	return &archiver{on: s.cfg.ZstdArchive, level: s.cfg.ZstdLevel}
}

// archive returns the checked record rec, read at off, or its zstd copy
// when archiving is on and that is smaller. The copy is valid until the
// next call.
func (z *archiver) archive(h recordHeader, rec []byte, off int64) []byte {
	if !z.on {
		return rec
	}
	out, raw := rezstd(h, rec, off, z.level, z.rec, z.raw)
	z.raw = raw
	if len(out) > 0 && len(rec) > 0 && &out[0] != &rec[0] {
		z.rec = out
		z.n++
	}
	return out
}
