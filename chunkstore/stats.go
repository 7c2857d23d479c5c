package chunkstore

import (
	"slices"
	"unsafe"
)

// Stats describes a store at its committed generation.
type Stats struct {
	Generation      uint64
	Chunks          int   // stored chunks, all types
	Empty           int   // chunks stored as Empty
	Delta           int   // chunks stored as Delta
	Full            int   // chunks stored as Full
	BodyBlocks      int   // chunks with pixel bodies
	RecordBytes     int64 // live chunk and body records (shared records once)
	TableBytes      int64 // live page table: checkpoint and journal segments
	LiveBytes       int64 // header slots + RecordBytes + TableBytes
	DeadBytes       int64 // FileSize - LiveBytes: what compaction reclaims
	FileSize        int64
	JournalSegments int   // journal segments since the checkpoint
	JournalEntries  int   // entries in them
	IndexBytes      int64 // memory held by the runtime index
}

// Stats returns counts and sizes.
func (s *Store) Stats() Stats {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := Stats{
		Generation: s.hdr.generation,
		Chunks:     s.chunks.Len(), Empty: s.counts[Empty], Delta: s.counts[Delta], Full: s.counts[Full],
		BodyBlocks:      s.bodies.Len(),
		RecordBytes:     s.liveData,
		TableBytes:      int64(s.ckpt.Length),
		JournalSegments: len(s.chain),
		JournalEntries:  s.journalEntries,
		IndexBytes:      int64(len(s.chunks.slots)+len(s.bodies.slots)) * int64(unsafe.Sizeof(islot{})),
	}
	for _, sg := range s.chain {
		st.TableBytes += int64(sg.h.Length)
	}
	st.LiveBytes = dataStart + st.RecordBytes + st.TableBytes
	if !s.closed {
		st.FileSize, _ = s.f.Size()
	}
	st.DeadBytes = max(0, st.FileSize-st.LiveBytes)
	return st
}

// Entry is one entry of the index: a stored chunk, or the body block of a
// chunk (Type BodyBlock).
type Entry struct {
	Pos    Pos
	Type   StorageType
	Handle Handle // the record; zero for Empty chunks
}

// Entries calls fn for every index entry in page-table order, (y, x) with
// a chunk before its body block, until fn returns false. It works on a
// copy taken at one generation, so fn may call the store.
func (s *Store) Entries(fn func(Entry) bool) {
	s.mu.RLock()
	es := make([]Entry, 0, s.chunks.Len()+s.bodies.Len())
	collect := func(ix *index) {
		ix.each(func(key uint64, v ival) bool {
			es = append(es, Entry{Pos: keyPos(key), Type: v.typ, Handle: v.h})
			return true
		})
	}
	collect(s.chunks)
	collect(s.bodies)
	s.mu.RUnlock()
	slices.SortFunc(es, func(a, b Entry) int {
		return compareEntries(tableEntry{pos: a.Pos, typ: a.Type}, tableEntry{pos: b.Pos, typ: b.Type})
	})
	for _, e := range es {
		if !fn(e) {
			return
		}
	}
}
