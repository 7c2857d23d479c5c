package chunkstore

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"
)

// minCompactionDead keeps NeedsCompaction quiet for tiny files.
const minCompactionDead = 16 << 10

// minDead is the dead space below which compaction is not worth a new file:
// four raw chunks' worth (4 MiB for 512x512 chunks). A small world whose
// few chunks are saved over and over would otherwise pass the threshold and
// be rewritten every other save.
func (s *Store) minDead() int64 {
	return max(minCompactionDead, 4*int64(s.cc.npix)*pixelSize)
}

// NeedsCompaction reports whether dead bytes exceed CompactionThreshold of
// the file and amount to at least four raw chunks.
func (s *Store) NeedsCompaction() bool {
	st := s.Stats()
	return st.DeadBytes >= s.minDead() && float64(st.DeadBytes) > s.cfg.CompactionThreshold*float64(st.FileSize)
}

// Compact rewrites the store with only its live records and a fresh sorted
// checkpoint, as generation Generation()+1, and atomically replaces the
// file: it writes path+".compact", syncs it, renames it over path and
// syncs the directory, then reopens. A crash at any point leaves the old
// file or the new one, with the same contents. The new file's other header
// slot holds the old generation with the same table, so OpenAt with the
// old generation still works.
//
// A record that fails its checksum while being copied is dropped (its chunk
// regenerates) and listed in OpenReport. If the rename succeeds but
// reopening fails, the store refuses further commits until reopened.
func (s *Store) Compact() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.writable(); err != nil {
		return err
	}
	tmp := s.path + ".compact"
	dropped, err := s.writeCompacted(tmp)
	if err != nil {
		s.cfg.FS.Remove(tmp) // best effort: a leftover is overwritten next time
		return fmt.Errorf("chunkstore: compact: %w", err)
	}
	if err := s.cfg.FS.Rename(tmp, s.path); err != nil {
		s.cfg.FS.Remove(tmp)
		return fmt.Errorf("chunkstore: compact: %w", err)
	}
	dirErr := s.cfg.FS.SyncDir(filepath.Dir(s.path))
	n, err := openStore(s.path, s.cfg, openCompacted, 0)
	if err != nil {
		s.stale = err
		return fmt.Errorf("chunkstore: compact: reopen: %w", errors.Join(err, dirErr))
	}
	n.report.Problems = append(dropped.Problems, n.report.Problems...)
	s.adopt(n)
	if dirErr != nil {
		s.needDirSync = true
		return fmt.Errorf("chunkstore: compact: sync directory: %w", dirErr)
	}
	return nil
}

// CompactTo writes a compacted copy of the store, as generation
// Generation()+1, to path (through path+".tmp", synced, renamed, directory
// synced) and opens it. The store itself is unchanged. It works on a
// read-only store too, which makes it the repair step after OpenForRepair.
func (s *Store) CompactTo(path string) (*Store, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if filepath.Clean(path) == filepath.Clean(s.path) {
		return nil, fmt.Errorf("chunkstore: compact to %s: that is the store's own file; use Compact", path)
	}
	tmp := path + ".tmp"
	dropped, err := s.writeCompacted(tmp)
	if err != nil {
		s.cfg.FS.Remove(tmp)
		return nil, fmt.Errorf("chunkstore: compact to %s: %w", path, err)
	}
	if err := s.cfg.FS.Rename(tmp, path); err != nil {
		s.cfg.FS.Remove(tmp)
		return nil, fmt.Errorf("chunkstore: compact to %s: %w", path, err)
	}
	if err := s.cfg.FS.SyncDir(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("chunkstore: compact to %s: %w", path, err)
	}
	cfg := s.cfg
	cfg.ReadOnly = false
	n, err := openStore(path, cfg, openCompacted, 0)
	if err != nil {
		return nil, fmt.Errorf("chunkstore: compact to %s: reopen: %w", path, err)
	}
	n.report.Problems = append(dropped.Problems, n.report.Problems...)
	return n, nil
}

// writeCompacted writes the live records, in page-table order, a
// checkpoint and both header slots to a new file at path, and syncs it.
func (s *Store) writeCompacted(path string) (Report, error) {
	var dropped Report
	f, err := s.cfg.FS.Create(path)
	if err != nil {
		return dropped, err
	}
	fail := func(err error) (Report, error) {
		f.Close()
		return dropped, err
	}
	entries := make([]tableEntry, 0, s.chunks.Len()+s.bodies.Len())
	add := func(ix *index, body bool) {
		ix.each(func(key uint64, v ival) bool {
			entries = append(entries, mutation{key: key, body: body, v: v}.entry())
			return true
		})
	}
	add(s.chunks, false)
	add(s.bodies, true)
	slices.SortFunc(entries, compareEntries)

	cw := &commitWriter{f: f, flushed: dataStart}
	moved := map[int64]Handle{} // shared records, copied once
	kept := entries[:0]
	var buf []byte
	for _, e := range entries {
		if e.h.IsZero() {
			kept = append(kept, e)
			continue
		}
		if nh, ok := moved[e.h.Offset]; ok {
			e.h = nh
			kept = append(kept, e)
			continue
		}
		h, rec, err := readRecord(s.f, e.h, buf)
		buf = rec
		if err == nil && RecordKind(e.typ) != h.kind {
			err = fmt.Errorf("%w: %s at offset %d where the index expects a %s record", ErrCorrupt, h.kind, e.h.Offset, e.typ)
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				return fail(err)
			}
			dropped.addPos(SectionRecord, e.h.Offset, e.pos, fmt.Errorf("dropped by compaction: %w", err))
			continue
		}
		nh := cw.append(rec)
		if _, shared := s.dict.refs[e.h.Offset]; shared {
			moved[e.h.Offset] = nh
		}
		e.h = nh
		kept = append(kept, e)
	}
	g := s.hdr.generation + 1
	rec := make([]byte, recordHeaderSize, recordHeaderSize+tableHeaderSize+entrySize*len(kept))
	rec = appendTable(rec, 0, 0, kept)
	sealRecord(rec, RecordCheckpoint, codecNone, g, uint32(len(rec)-recordHeaderSize))
	ck := cw.append(rec)
	cw.flush()
	if cw.err != nil {
		return fail(cw.err)
	}
	old := s.hdr
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
	if err := writeAll(f, slots, 0); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	return dropped, f.Close()
}

// adopt takes over the state of n, a fresh open of the compacted file.
func (s *Store) adopt(n *Store) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.f
	s.f, s.hdr, s.chunks, s.bodies = n.f, n.hdr, n.chunks, n.bodies
	s.counts, s.liveData = n.counts, n.liveData
	s.w, s.ckpt, s.chain, s.journalEntries = n.w, n.ckpt, n.chain, n.journalEntries
	s.dict, s.needCheckpoint, s.report = n.dict, n.needCheckpoint, n.report
	old.Close()
}
