package chunkstore

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/arksave/arksave/vfs"
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
// slot holds the old generation with the same table, so Open with Options.Generation of the
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
// read-only store too, which makes it the repair step after Open with Options.Repair.
func (s *Store) CompactTo(path string) (*Store, error) {
	n, _, err := s.CompactToFilling(path, nil)
	return n, err
}

// A Filled is a chunk that [Store.CompactToFilling] took from one of its
// fill stores.
type Filled struct {
	Pos     Pos
	From    int  // the index of the fill store it came from
	Damaged bool // the store held it, in a damaged record
}

// CompactToFilling is CompactTo that also takes, record for record, the
// chunks the store lost from the first of fill that holds them intact:
// every chunk whose record in the store is damaged and every one the store
// does not hold for which missing (when not nil) returns true (after a
// damaged page table was rebuilt by a scan, a chunk may be missing because
// its records were lost). A repair brings chunks back from a backup's
// store this way. Body sets are never taken: bodies move between chunks,
// and an older set could hold bodies that live in another chunk's now. A
// fill store with another chunk size, seed or generator version gives no
// Delta chunks: they mean something only against their own generator.
func (s *Store) CompactToFilling(path string, missing func(pos Pos) bool, fill ...*Store) (*Store, []Filled, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.closed {
		return nil, nil, ErrClosed
	}
	if filepath.Clean(path) == filepath.Clean(s.path) {
		return nil, nil, fmt.Errorf("chunkstore: compact to %s: that is the store's own file; use Compact", path)
	}
	tmp := path + ".tmp"
	dropped, filled, err := s.writeCompactedFilling(tmp, missing, fill)
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
	cfg.ReadOnly = false
	n, err := openStore(path, cfg, openCompacted, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("chunkstore: compact to %s: reopen: %w", path, err)
	}
	n.report.Problems = append(dropped.Problems, n.report.Problems...)
	return n, filled, nil
}

// source is where an entry of a compaction reads its record: the store's
// own file (index -1) or a fill store's.
type source struct {
	f    vfs.File
	from int
}

func (s *Store) writeCompacted(path string) (Report, error) {
	dropped, _, err := s.writeCompactedFilling(path, nil, nil)
	return dropped, err
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
			ix.each(func(key uint64, v ival) bool {
				k := tkey{key, body}
				if _, ok := out[k]; !ok && (body || v.typ != Delta || deltas) {
					out[k] = struct {
						e   tableEntry
						src int
					}{mutation{key: key, body: body, v: v}.entry(), i}
				}
				return true
			})
		}
		if !f.closed && f.cc.npix == s.cc.npix {
			add(f.chunks, false)
		}
		f.mu.RUnlock()
	}
	return out
}

// writeCompactedFilling writes the live records, in page-table order, a
// checkpoint and both header slots to a new file at path, and syncs it.
// Records that fail their checks are dropped, or taken from fill (see
// CompactToFilling).
func (s *Store) writeCompactedFilling(path string, missing func(Pos) bool, fill []*Store) (Report, []Filled, error) {
	var dropped Report
	var filled []Filled
	f, err := s.cfg.FS.Create(path)
	if err != nil {
		return dropped, nil, err
	}
	fail := func(err error) (Report, []Filled, error) {
		f.Close()
		return dropped, nil, err
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
	srcs := make([]source, len(entries))
	for i := range srcs {
		srcs[i] = source{s.f, -1}
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
				srcs = append(srcs, source{fill[fe.src].f, fe.src})
			}
		}
	}
	order := make([]int, len(entries))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return compareEntries(entries[a], entries[b]) })

	cw := &commitWriter{f: f, flushed: dataStart}
	type at struct {
		f   vfs.File
		off int64
	}
	moved := map[at]Handle{} // records copied already: shared ones are copied once
	kept := make([]tableEntry, 0, len(entries))
	var buf []byte
	copyRecord := func(e tableEntry, src source) (tableEntry, error) {
		if e.h.IsZero() {
			return e, nil
		}
		if nh, ok := moved[at{src.f, e.h.Offset}]; ok {
			e.h = nh
			return e, nil
		}
		h, rec, err := readRecord(src.f, e.h, buf)
		buf = rec
		if err == nil && RecordKind(e.typ) != h.kind {
			err = fmt.Errorf("%w: %s at offset %d where the index expects a %s record", ErrCorrupt, h.kind, e.h.Offset, e.typ)
		}
		if err != nil {
			return e, err
		}
		nh := cw.append(rec)
		moved[at{src.f, e.h.Offset}] = nh
		e.h = nh
		return e, nil
	}
	for _, i := range order {
		e, src := entries[i], srcs[i]
		ne, err := copyRecord(e, src)
		if err == nil {
			kept = append(kept, ne)
			if src.from >= 0 {
				filled = append(filled, Filled{Pos: e.pos, From: src.from})
			}
			continue
		}
		if !errors.Is(err, ErrCorrupt) {
			return fail(err)
		}
		if src.from >= 0 {
			continue // a fill store's damaged record: the position stays lost
		}
		dropped.addPos(SectionRecord, e.h.Offset, e.pos, fmt.Errorf("dropped by compaction: %w", err))
		if fe, ok := fills[tkey{e.pos.key(), e.isBody()}]; ok {
			if ne, err := copyRecord(fe.e, source{fill[fe.src].f, fe.src}); err == nil {
				kept = append(kept, ne)
				filled = append(filled, Filled{Pos: e.pos, From: fe.src, Damaged: true})
			}
		}
	}
	slices.SortFunc(filled, func(a, b Filled) int { return comparePos(a.Pos, b.Pos) })
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
	return dropped, filled, f.Close()
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
