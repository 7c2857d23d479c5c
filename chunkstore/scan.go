package chunkstore

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/arksave/arksave/internal/crc8"
	"github.com/arksave/arksave/internal/pxsw"
	"github.com/arksave/arksave/vfs"
)

// scanWindow is how much of the file a scan reads at a time.
const scanWindow = 1 << 20

// scanner reads a file forward through a window, for scans.
type scanner struct {
	f    vfs.File
	end  int64
	win  []byte
	base int64
}

// bytes returns the file's bytes [off, off+n), which must lie before end.
func (sc *scanner) bytes(off int64, n int) ([]byte, error) {
	if off >= sc.base && off+int64(n) <= sc.base+int64(len(sc.win)) {
		return sc.win[off-sc.base : off-sc.base+int64(n)], nil
	}
	size := int(min(int64(max(n, scanWindow)), sc.end-off))
	if cap(sc.win) < size {
		sc.win = make([]byte, size)
	}
	sc.win = sc.win[:size]
	sc.base = off
	if err := readFull(sc.f, sc.win, off); err != nil {
		sc.win = sc.win[:0]
		return nil, err
	}
	return sc.win[:n], nil
}

// scanEvent is one record, or one damaged stretch, met by a scan.
type scanEvent struct {
	off    int64
	length int64        // bytes covered
	hdr    recordHeader // valid when hdrOK
	hdrOK  bool         // the header checked out (the payload may not)
	rec    []byte       // the record's bytes when hdrOK and it fits; valid during the callback
	bad    error        // nil for a good record
}

// recordAt returns the checked record at off, or an error.
func (sc *scanner) recordAt(off int64) (recordHeader, []byte, error) {
	if sc.end-off < recordHeaderSize {
		return recordHeader{}, nil, fmt.Errorf("%w: %d bytes at %v, too few for a record: %w", ErrCorrupt, sc.end-off, loc(off), io.ErrUnexpectedEOF)
	}
	hb, err := sc.bytes(off, recordHeaderSize)
	if err != nil {
		return recordHeader{}, nil, err
	}
	h, err := parseRecordHeader(hb, off)
	if err != nil {
		return h, nil, err
	}
	if int64(h.length()) > sc.end-off {
		return h, nil, fmt.Errorf("%w: %s at %v: %d bytes, %d remain: %w", ErrCorrupt, h.kind, loc(off), h.length(), sc.end-off, io.ErrUnexpectedEOF)
	}
	rec, err := sc.bytes(off, int(h.length()))
	if err != nil {
		return h, nil, err
	}
	_, err = checkRecord(rec, off)
	return h, rec, err
}

// headerOK reports whether a record header that checks out starts at off.
func (sc *scanner) headerOK(off int64) bool {
	if sc.end-off < recordHeaderSize {
		return false
	}
	hb, err := sc.bytes(off, recordHeaderSize)
	if err != nil {
		return false
	}
	_, err = parseRecordHeader(hb, off)
	return err == nil
}

// next returns the first offset at or after from where a good record
// starts, or end.
func (sc *scanner) next(from int64) int64 {
	for p := from; p+recordHeaderSize <= sc.end; p++ {
		hb, err := sc.bytes(p, recordHeaderSize)
		if err != nil {
			return sc.end
		}
		// A cheap test first: most offsets fail the header CRC-8.
		if crc8.Checksum(hb[:recordHCRCOff]) != hb[recordHCRCOff] {
			continue
		}
		if _, _, err := sc.recordAt(p); err == nil {
			return p
		}
	}
	return sc.end
}

// scanRecords calls fn for every record in [start, end) and for every
// damaged stretch between them, until fn returns false. After a record
// whose header is good but whose payload is not, it goes on after that
// record if a good one follows; otherwise, and after a bad header, it
// searches byte by byte for the next good record.
func scanRecords(f vfs.File, start, end int64, fn func(scanEvent) bool) error {
	sc := &scanner{f: f, end: end}
	for off := start; off < end; {
		h, rec, err := sc.recordAt(off)
		if err == nil {
			if !fn(scanEvent{off: off, length: int64(h.length()), hdr: h, hdrOK: true, rec: rec}) {
				return nil
			}
			off += int64(h.length())
			continue
		}
		if !isCorrupt(err) {
			return err
		}
		ev := scanEvent{off: off, hdr: h, bad: err}
		if rec != nil {
			// The header is good: copy the record (the window moves) and go
			// on after it if a good record follows.
			ev.hdrOK, ev.rec = true, append([]byte(nil), rec...)
			after := off + int64(h.length())
			if _, _, err := sc.recordAt(after); after == end || err == nil {
				ev.length = int64(h.length())
				if !fn(ev) {
					return nil
				}
				off = after
				continue
			}
		} else if sc.headerOK(off) {
			// A good header whose record runs past the end (a truncated
			// file): its kind and key are known.
			ev.hdrOK = true
		}
		p := sc.next(off + 1)
		ev.length = p - off
		if !fn(ev) {
			return nil
		}
		off = p
	}
	return nil
}

func isCorrupt(err error) bool { return err != nil && errors.Is(err, ErrCorrupt) }

// rebuild replaces the index with what a scan of the store up to bound (a
// store offset) finds: every good chunk and body record, in store order
// (the store file's records, then each data file on disk, in number
// order), with the journal segments and checkpoints replayed where they
// occur (a checkpoint resets the index to its entries). Entries of a
// damaged table record are salvaged one by one. Records of later or
// abandoned commits before bound count too: this is recovery, and what it
// skips is reported.
func (s *Store) rebuild(bound int64) error {
	s.chunks, s.bodies = newIndexAxes(0, s.axes), newIndexAxes(0, s.axes)
	s.ckpt, s.chain, s.journalEntries = handle{}, nil, 0
	s.needCheckpoint = true
	var maxGen uint64
	err := s.scanStore(bound, func(ev scanEvent) bool {
		s.report.Records++
		if ev.bad != nil {
			if ev.hdrOK && !ev.hdr.kind.IsTable() {
				s.report.addKey(SectionRecord, ev.off, ev.hdr.keyAny(ev.rec), ev.bad)
			} else {
				s.report.add(SectionRecord, ev.off, ev.bad)
			}
			if ev.hdrOK && ev.hdr.kind.IsTable() && ev.rec != nil {
				s.replayTable(ev.hdr, ev.rec, ev.off, true)
			}
			return true
		}
		h := handle{Offset: ev.off, Length: ev.hdr.length()}
		var pos Key
		if !ev.hdr.kind.IsTable() {
			var err error
			if pos, err = ev.hdr.keyIn(ev.rec, s.axes, ev.off); err != nil {
				s.report.add(SectionRecord, ev.off, err)
				return true
			}
		}
		switch ev.hdr.kind {
		case pxsw.RecordFull, pxsw.RecordDelta, pxsw.RecordPalette:
			s.chunks.set(pos.ik(), ival{h: h, typ: storageOf(ev.hdr.kind)})
		case pxsw.RecordBodies:
			s.bodies.set(pos.ik(), ival{h: h, typ: BodyBlock})
		default:
			maxGen = max(maxGen, ev.hdr.key)
			s.replayTable(ev.hdr, ev.rec, ev.off, false)
		}
		return true
	})
	if s.hdr.root == 0 && maxGen > s.hdr.generation {
		s.hdr.generation = min(maxGen, maxGeneration)
	}
	return err
}

// scanStore scans the records of the store before bound: the store file's,
// then those of each data file on disk up to bound's, in number order. A
// data file that cannot be read is reported and skipped.
func (s *Store) scanStore(bound int64, fn func(scanEvent) bool) error {
	stop := false
	each := func(ev scanEvent) bool {
		if !fn(ev) {
			stop = true
		}
		return !stop
	}
	last := fileOf(bound)
	for _, n := range append([]uint32{0}, s.files.onDisk()...) {
		if n > last || stop {
			break
		}
		f, err := s.file(n)
		if err != nil {
			s.report.add(SectionFile, storeOffset(n, 0), err)
			continue
		}
		end := s.fileEnd(n)
		if n == last {
			end = min(end, bound)
		}
		if err := scanRecords(f, storeOffset(n, firstRecord(n)), end, each); err != nil {
			return err
		}
	}
	return nil
}

// replayTable applies a table record met by a scan, salvaging what it can
// of a damaged one.
func (s *Store) replayTable(h recordHeader, rec []byte, off int64, damaged bool) {
	t, problems, err := parseTable(h.payload(rec), off, true, s.axes)
	if err != nil {
		if !damaged {
			s.report.add(SectionTable, off, err)
		}
		return
	}
	s.report.Tables++
	for _, p := range problems {
		s.report.add(SectionTable, off, p)
	}
	if h.kind == pxsw.RecordCheckpoint {
		s.chunks, s.bodies = newIndexAxes(len(t.entries), s.axes), newIndexAxes(0, s.axes)
	}
	kept := t.entries[:0]
	for i, e := range t.entries {
		if !e.deleted && e.typ != Empty && e.h.End() > off {
			s.report.addKey(SectionTable, off+recordHeaderSize+tableHeaderSize+int64(i*entrySizeOf(s.axes)), e.pos,
				fmt.Errorf("%w: entry points ahead of its table to {%d, %d}", ErrCorrupt, e.h.Offset, e.h.Length))
			continue
		}
		kept = append(kept, e)
	}
	s.applyLoaded(kept)
}

// scanFile walks the records of the store at path forward, without using the
// header slots or the page table, and calls fn for each record and each
// damaged stretch until fn returns false: the store file's records (a
// store of format 1 keeps them there), then those of each of its data
// files found next to it, in number order. Given a data file's path, it
// walks that file only. Handles are store offsets (see Handle). It is what
// a repair tool uses to see a store whose page table is lost.
//
// No file is opened that is not a regular file: a data file that is a
// symbolic link, a named pipe, a device or a directory is reported as one
// damaged stretch of no length at its start (Kind zero, Err wrapping
// ErrCorrupt and naming it) and the scan goes on with the next one; such a
// store file is an error.
func scanFile(fsys vfs.FS, path string, fn func(scanRecord) bool) error {
	if fsys == nil {
		fsys = vfs.OS
	}
	type part struct {
		n    uint32
		path string
	}
	var parts []part
	if store, n, ok := parseDataFileName(filepath.Base(path)); ok && dataFileName(store, n) == filepath.Base(path) {
		parts = []part{{n, path}}
	} else {
		parts = []part{{0, path}}
		for _, n := range dataFilesOnDisk(fsys, path) {
			parts = append(parts, part{n, dataFileName(path, n)})
		}
	}
	stop := false
	for _, pt := range parts {
		f, err := openRegular(fsys, pt.path, false)
		if err != nil && pt.n != 0 && errors.Is(err, ErrCorrupt) {
			// A data file refused unopened (a symbolic link, a pipe): its
			// records are lost, as when it is missing; the others are read.
			if !fn(scanRecord{Handle: handle{Offset: storeOffset(pt.n, 0)}, Err: err}) {
				return nil
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("chunkstore: scan %s: %w", pt.path, err)
		}
		size, err := f.Size()
		if err == nil {
			err = scanRecords(f, storeOffset(pt.n, firstRecord(pt.n)), storeOffset(pt.n, min(size, localMask)), func(ev scanEvent) bool {
				stop = !fn(scanRecordOf(ev))
				return !stop
			})
		}
		f.Close()
		if err != nil {
			return fmt.Errorf("chunkstore: scan %s: %w", pt.path, err)
		}
		if stop {
			return nil
		}
	}
	return nil
}

// scanRange walks the records of the data file at path whose offsets lie
// in [from, to) (offsets within the file; from before the first record
// starts at it, to past the file's end stops there) and calls fn for each
// record and each damaged stretch, as scanFile does, until fn returns
// false. The number of the data file comes from its name, which must be a
// data file's. A save directory copies the records of a data file to its
// redundant copy this way, checking each as it goes.
func scanRange(fsys vfs.FS, path string, from, to int64, fn func(scanRecord) bool) error {
	if fsys == nil {
		fsys = vfs.OS
	}
	store, n, ok := parseDataFileName(filepath.Base(path))
	if !ok || dataFileName(store, n) != filepath.Base(path) {
		return fmt.Errorf("%w: %s is not a data file's name", ErrCorrupt, filepath.Base(path))
	}
	f, err := openRegular(fsys, path, false)
	if err != nil {
		return fmt.Errorf("chunkstore: scan %s: %w", path, err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return fmt.Errorf("chunkstore: scan %s: %w", path, err)
	}
	from, to = max(from, firstRecord(n)), min(to, size, localMask)
	if from >= to {
		return nil
	}
	err = scanRecords(f, storeOffset(n, from), storeOffset(n, to), func(ev scanEvent) bool {
		return fn(scanRecordOf(ev))
	})
	if err != nil {
		return fmt.Errorf("chunkstore: scan %s: %w", path, err)
	}
	return nil
}

// scanRecordOf describes what a scan met.
func scanRecordOf(ev scanEvent) scanRecord {
	r := scanRecord{Handle: handle{Offset: ev.off, Length: uint32(min(ev.length, 1<<32-1))}, Err: ev.bad}
	if ev.hdrOK {
		r.Kind, r.Stored, r.Raw, r.Compressed, r.Zstd = ev.hdr.kind, ev.hdr.size, ev.hdr.raw, ev.hdr.codec != codecNone, ev.hdr.codec == codecZstd
		if ev.hdr.kind.IsTable() {
			r.Generation = ev.hdr.key
		} else {
			r.Key = ev.hdr.keyAny(ev.rec)
			r.Pos = r.Key.Pos()
		}
	}
	return r
}
