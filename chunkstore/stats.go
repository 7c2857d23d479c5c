package chunkstore

import (
	"path/filepath"
	"slices"

	"github.com/arksave/arksave/internal/pxsw"
)

// The descriptions of a store and its files that the module's tools read
// (through internal/storetool).
type (
	storeStats = pxsw.Stats
	fileStats  = pxsw.FileStats
)

// statistics returns counts and sizes.
func (s *Store) statistics() storeStats {
	files := s.fileList()
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := storeStats{
		Generation: s.hdr.generation,
		Chunks:     s.chunks.Len(), Empty: s.counts[Empty], Delta: s.counts[Delta], Full: s.counts[Full], Palette: s.counts[Palette],
		BodyBlocks:      s.bodies.Len(),
		TableBytes:      int64(s.ckpt.Length),
		JournalSegments: len(s.chain),
		JournalEntries:  s.journalEntries,
		IndexBytes:      int64(s.chunks.bytes() + s.bodies.bytes()),
	}
	for _, n := range s.live {
		st.RecordBytes += n
	}
	for _, sg := range s.chain {
		st.TableBytes += int64(sg.h.Length)
	}
	st.LiveBytes = st.RecordBytes + st.TableBytes
	for _, f := range files {
		st.FileSize += f.Size
		st.LiveBytes += firstRecord(f.Number)
		if f.Number != 0 {
			st.DataFiles++
		}
	}
	st.DeadBytes = max(0, st.FileSize-st.LiveBytes)
	return st
}

// fileList describes the files of the committed generation, in number order:
// the store file, then every data file that holds a record the generation
// uses, and (unless the store is read-only) the data file the next commit
// appends to.
func (s *Store) fileList() []fileStats {
	s.mu.RLock()
	live := map[uint32]int64{0: dataStart}
	for n, b := range s.live {
		live[n] += b
	}
	if !s.ckpt.IsZero() {
		live[s.ckpt.File()] += int64(s.ckpt.Length)
	}
	for _, sg := range s.chain {
		live[sg.h.File()] += int64(sg.h.Length)
	}
	newest := fileOf(s.w)
	if localOf(s.w) > dataHeaderSize && s.files.rw {
		live[newest] += 0 // the next commit appends to it
	}
	closed := s.closed
	s.mu.RUnlock()
	out := make([]fileStats, 0, len(live))
	for n, b := range live {
		if n != 0 {
			b += dataHeaderSize
		}
		f := fileStats{Number: n, Name: filepath.Base(s.files.name(n)), Live: b, Newest: n == newest && n != 0 && s.files.rw}
		if !closed {
			f.Size, f.Err = s.fileSize(n)
		}
		f.Dead = max(0, f.Size-f.Live)
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b fileStats) int { return int(a.Number) - int(b.Number) })
	return out
}

// dataFileNames returns the base names of the data files the committed
// generation uses (Files without the store file), for a save directory's
// manifest to name.
func (s *Store) dataFileNames() []string {
	var out []string
	for _, f := range s.fileList() {
		if f.Number != 0 {
			out = append(out, f.Name)
		}
	}
	return out
}

// Entry is one entry of the index: a stored chunk, or the body block of a
// chunk (Type BodyBlock).
type Entry struct {
	Pos  Pos // the first two axes of Key
	Key  Key
	Type StorageType
}

// toolEntry is an entry with its record, as tools see it.
type toolEntry = pxsw.Entry[Pos, Key, StorageType]

// Entries calls fn for every index entry in page-table order, (y, x) with
// a chunk before its body block ((w, z, y, x) in a store of 4 axes), until
// fn returns false. It works on a
// copy taken at one generation, so fn may call the store.
func (s *Store) Entries(fn func(Entry) bool) {
	s.entries(func(e toolEntry) bool { return fn(Entry{Pos: e.Pos, Key: e.Key, Type: e.Type}) })
}

// entries is Entries with each entry's record.
func (s *Store) entries(fn func(toolEntry) bool) {
	s.mu.RLock()
	es := make([]toolEntry, 0, s.chunks.Len()+s.bodies.Len())
	collect := func(ix *index) {
		ix.each(func(key ikey, v ival) bool {
			k := keyOf(key, s.axes)
			es = append(es, toolEntry{Pos: k.Pos(), Key: k, Type: v.typ, Handle: v.h})
			return true
		})
	}
	collect(s.chunks)
	collect(s.bodies)
	s.mu.RUnlock()
	slices.SortFunc(es, func(a, b toolEntry) int {
		return compareEntries(tableEntry{pos: a.Key, typ: a.Type}, tableEntry{pos: b.Key, typ: b.Type})
	})
	for _, e := range es {
		if !fn(e) {
			return
		}
	}
}
