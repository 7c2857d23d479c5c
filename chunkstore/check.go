package chunkstore

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/arksave/arksave/internal/errs"
	"github.com/arksave/arksave/internal/pxsw"
	"github.com/arksave/arksave/vfs"
)

// Check reads the whole store and reports every problem it finds, not
// only the first: damaged header slots (a slot never written is not a
// problem), data files of the generation that are missing, cut short or not
// the store's, damaged page-table records and entries, damaged records
// anywhere in the files of the generation (live or dead), and live records
// that do not decode. It runs beside readers but waits for a running
// commit. A problem in a data file names it (Problem.File) and its offset
// in it.
func (s *Store) Check() Report { return s.checking(s.check) }

// check is Check's work, under the commit lock; false when the store file
// could not be read at all.
func (s *Store) check(r *Report) bool {
	main := s.files.main()
	size, err := main.Size()
	if err != nil {
		r.add(SectionHeader, 0, err)
		return false
	}
	s.checkSlots(r, main, size)
	files := s.fileList()
	s.checkFilesInto(r, files)
	inChain := s.checkTable(r)
	damaged, order := s.scanFiles(r, files)
	s.checkLive(r, damaged)
	for _, off := range order {
		ev, ok := damaged[off]
		switch {
		case !ok || inChain[off]:
		case ev.hdrOK && !ev.hdr.kind.IsTable():
			// A chunk or body record no entry uses (an older version, or one
			// a rebuild skipped): its header still says which chunk.
			r.addKey(SectionRecord, off, ev.hdr.keyAny(nil), fmt.Errorf("unreferenced %s (%d bytes): %w", ev.hdr.kind, ev.length, ev.bad))
		default:
			r.add(SectionRecord, off, fmt.Errorf("unreferenced bytes (%d): %w", ev.length, ev.bad))
		}
	}
	return true
}

// checking runs a check (Check's, a load's verify) under the commit lock:
// it runs beside readers, never beside a commit. Unless fn gave up, it
// adds the header's chunk count against the page table's, sorts the
// problems by offset and names the data file of each.
func (s *Store) checking(fn func(r *Report) bool) Report {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var r Report
	if s.closed {
		r.add(SectionHeader, 0, ErrClosed)
		return r
	}
	if !fn(&r) {
		return r
	}
	if n := s.chunks.Len(); s.hdr.chunkCount != uint32(n) {
		r.add(SectionHeader, slotOffset(s.hdr.generation), fmt.Errorf("%w: header counts %d chunks, the page table %d", ErrCorrupt, s.hdr.chunkCount, n))
	}
	slices.SortStableFunc(r.Problems, func(a, b Problem) int { return cmp.Compare(a.Offset, b.Offset) })
	return s.localize(r)
}

// checkSlots reports the damaged header slots of the store file, of size
// bytes, and counts the valid ones.
func (s *Store) checkSlots(r *Report, main vfs.File, size int64) {
	slots := make([]byte, min(size, dataStart))
	if n, err := main.ReadAt(slots, 0); n < len(slots) {
		r.add(SectionHeader, 0, err)
	}
	for i := range slotCount {
		_, err := parseHeader(slots[min(len(slots), i*headerSize):], i)
		switch {
		case err == nil:
			r.Slots++
		case !errors.Is(err, errEmptySlot):
			r.add(SectionHeader, int64(i)*headerSize, err)
		}
	}
}

// checkTable walks the page table of the committed generation, newest
// record first, reports its damaged records and entries, and returns the
// offsets of its records.
func (s *Store) checkTable(r *Report) map[int64]bool {
	inChain := map[int64]bool{}
	var buf []byte
	for off, n := s.hdr.root, 0; off != 0 && n < 1<<20; n++ {
		inChain[off] = true
		h, rec, err := s.readTableRecord(off, buf)
		buf = rec
		if err != nil && rec == nil {
			r.add(SectionTable, off, err)
			break
		}
		r.Tables++
		if err != nil {
			r.add(SectionTable, off, err)
		}
		t, problems, perr := parseTable(h.payload(rec), off, true, s.axes)
		if perr != nil {
			r.add(SectionTable, off, perr)
			break
		}
		r.Entries += len(t.entries) + len(problems)
		for _, p := range problems {
			r.add(SectionTable, off, p)
		}
		if err != nil || h.kind == pxsw.RecordCheckpoint || t.prev >= off {
			break // a damaged record's previous pointer is not to be trusted
		}
		off = t.prev
	}
	return inChain
}

// scanFiles reads every record in the files of the generation, up to where
// the next commit appends, counts them and returns the damaged ones by
// offset, and their offsets in file order.
func (s *Store) scanFiles(r *Report, files []fileStats) (map[int64]scanEvent, []int64) {
	damaged := map[int64]scanEvent{}
	var order []int64
	for _, fs := range files {
		f, err := s.file(fs.Number)
		if err != nil {
			continue // reported with the files
		}
		end := storeOffset(fs.Number, min(fs.Size, localMask))
		if fs.Number == fileOf(s.w) {
			end = min(end, s.w)
		}
		err = scanRecords(f, storeOffset(fs.Number, firstRecord(fs.Number)), end, func(ev scanEvent) bool {
			r.Records++
			if ev.bad != nil {
				ev.rec = nil
				damaged[ev.off] = ev
				order = append(order, ev.off)
			}
			return true
		})
		if err != nil {
			r.add(SectionRecord, storeOffset(fs.Number, firstRecord(fs.Number)), err)
		}
	}
	return damaged, order
}

// checkLive checks that every live record decodes, counts the entries by
// storage type, and reports a live record that is damaged under its chunk,
// removing it from damaged.
func (s *Store) checkLive(r *Report, damaged map[int64]scanEvent) {
	var entries []toolEntry
	s.entries(func(e toolEntry) bool {
		entries = append(entries, e)
		return true
	})
	checked := map[int64]bool{}
	sc := &readScratch{}
	dst := make([]uint32, s.cc.npix)
	r.Types = map[StorageType]int{}
	for _, e := range entries {
		r.Types[e.Type]++
		if e.Handle.IsZero() {
			continue
		}
		section := sectionOf(e.Type)
		if ev, ok := damaged[e.Handle.Offset]; ok {
			r.addKey(section, e.Handle.Offset, e.Key, ev.bad)
			delete(damaged, e.Handle.Offset)
			continue
		}
		if checked[e.Handle.Offset] {
			continue
		}
		checked[e.Handle.Offset] = true
		codec, err := s.checkEntry(e, sc, dst)
		switch {
		case errors.Is(err, errNotOpened):
			r.Encrypted++
			continue
		case errors.Is(err, errs.ErrWrongKey):
			r.WrongKey++
			continue
		}
		if err != nil {
			r.addKey(section, e.Handle.Offset, e.Key, err)
		} else if codec == codecZstd {
			r.Zstd++
		}
	}
}

// checkFilesInto reports the files of the generation that are missing, cut
// short (shorter than the records the generation uses in them) or not the
// store's (a damaged header, another store's, another number).
func (s *Store) checkFilesInto(r *Report, files []fileStats) {
	s.mu.RLock()
	ends := s.ends
	s.mu.RUnlock()
	for _, f := range files {
		switch {
		case f.Err != nil:
			r.Problems = append(r.Problems, Problem{File: f.Name, Section: SectionFile, Offset: -1, Err: f.Err})
		case storeOffset(f.Number, f.Size) < ends[f.Number]:
			r.Problems = append(r.Problems, Problem{File: f.Name, Section: SectionFile, Offset: f.Size,
				Err: fmt.Errorf("%w: %s ends after %d bytes, the generation's records run to %d: %w",
					ErrCorrupt, f.Name, f.Size, localOf(ends[f.Number]), io.ErrUnexpectedEOF)})
		}
	}
}

// localize names the data file of each problem at a store offset in one
// (Problem.File) and makes its offset the offset within that file.
func (s *Store) localize(r Report) Report {
	r.Problems = slices.Clone(r.Problems)
	for i := range r.Problems {
		p := &r.Problems[i]
		if p.File == "" && p.Offset >= 0 && fileOf(p.Offset) != 0 {
			p.File = filepath.Base(s.files.name(fileOf(p.Offset)))
			p.Offset = localOf(p.Offset)
		}
	}
	return r
}

// errNotOpened is checkEntry's answer for an encrypted record that is
// intact as stored, read without the key: counted, not a problem.
var errNotOpened = errors.New("chunkstore: encrypted record not opened")

// checkEntry reads and fully decodes the record of one entry, and returns
// its codec.
func (s *Store) checkEntry(e toolEntry, sc *readScratch, dst []uint32) (uint8, error) {
	h, rec, err := s.readAs(e.Handle, e.Type, sc.rec)
	if rec != nil {
		sc.rec = rec
	}
	if err != nil {
		return h.codec, err
	}
	if h.flags&flagEncrypted != 0 {
		if s.aead == nil {
			return h.codec, errNotOpened // intact as stored; its content needs the key
		}
		if h, rec, err = s.decrypt(h, rec, e.Handle.Offset, sc); err != nil {
			return h.codec, err
		}
	}
	switch e.Type {
	case Full:
		_, err = s.cc.decodeFull(h, rec, e.Handle.Offset, dst, sc)
	case Delta:
		var raw []byte
		var x recordExt
		if raw, x, err = payloadExt(h, rec, e.Handle.Offset, s.cc.maxDeltaRaw(), sc.raw); err == nil {
			sc.keep(h, raw)
			_, err = s.cc.checkDelta(raw, e.Handle.Offset, x.extra != nil)
		}
	case Palette:
		var raw []byte
		if raw, err = payloadOf(h, rec, e.Handle.Offset, s.cc.maxPaletteRaw(), sc.raw); err == nil {
			sc.keep(h, raw)
			_, err = s.cc.decodePalette(raw, e.Handle.Offset, dst)
		}
	case BodyBlock:
		var payload []byte
		if payload, err = payloadOf(h, rec, e.Handle.Offset, maxRecordPayload, nil); err == nil {
			_, err = parseBodyBlock(payload, e.Handle.Offset, s.cc.mask)
		}
	}
	return h.codec, err
}

// checkFile checks the store file at path (through fsys, nil meaning
// vfs.OS) on its own, without the game, with the store's key (nil for
// none): it opens the newest generation
// read-only for inspection and returns what opening skipped together with
// what Check finds. When the file cannot be opened (no valid header slot),
// the report holds that error and every damaged stretch a forward scan of
// the file finds.
func checkFile(fsys vfs.FS, path string, key []byte) Report {
	s, err := Open(path, &Options{FS: fsys, ReadOnly: true, Key: key})
	if err != nil {
		var r Report
		r.add(SectionHeader, 0, err)
		scanErr := scanFile(fsys, path, func(rec scanRecord) bool {
			r.Records++
			if rec.Err != nil {
				switch rec.Kind {
				case pxsw.RecordFull, pxsw.RecordDelta, pxsw.RecordPalette, pxsw.RecordBodies:
					r.addKey(SectionRecord, rec.Handle.Offset, rec.Key, rec.Err)
				default:
					r.add(SectionRecord, rec.Handle.Offset, rec.Err)
				}
			}
			return true
		})
		if scanErr != nil {
			r.add(SectionRecord, dataStart, scanErr)
		}
		return r
	}
	defer s.Close()
	r := s.Check()
	open := s.OpenReport()
	r.Problems = append(open.Problems, r.Problems...)
	slices.SortStableFunc(r.Problems, func(a, b Problem) int { return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Offset, b.Offset)) })
	// Opening and checking both see a damaged header slot: report it once.
	r.Problems = slices.CompactFunc(r.Problems, func(a, b Problem) bool {
		return a.File == b.File && a.Offset == b.Offset && a.Section == b.Section
	})
	return r
}
