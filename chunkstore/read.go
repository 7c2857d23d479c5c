package chunkstore

import (
	"fmt"
)

func (s *Store) scratch() *readScratch {
	if sc, ok := s.reads.Get().(*readScratch); ok {
		return sc
	}
	return &readScratch{}
}

// lookup finds pos in ix and reads its record, under the read lock so that
// a compaction cannot swap the file in between. v.typ is Empty or ok is
// false when there is no record to read.
func (s *Store) lookup(ix func() *index, pos Key, sc *readScratch) (v ival, ok bool, h recordHeader, rec []byte, err error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return v, false, h, nil, ErrClosed
	}
	v, ok = ix().get(pos.ik())
	if !ok || v.h.IsZero() {
		return v, ok, h, nil, nil
	}
	h, rec, err = s.read(v.h, sc.rec)
	if rec != nil {
		sc.rec = rec[:0:cap(rec)]
	}
	if err == nil && RecordKind(v.typ) != h.kind {
		err = fmt.Errorf("%w: %s at %v where the index expects a %s record", ErrCorrupt, h.kind, loc(v.h.Offset), v.typ)
	}
	return v, ok, h, rec, err
}

// Get fills dst (ChunkSize*ChunkSize pixels, row-major) with the chunk at
// pos and reports whether it is stored. It reads only that chunk's record.
// A chunk that is not stored is generated (zeros without a Generator).
// Bits outside PersistMask are zero.
//
// When the chunk's record is damaged, Get fills dst with the generated
// chunk and returns false and an error matching ErrCorrupt that names the
// record's offset; the caller may use dst and report the loss.
//
// In a store of 3 or 4 axes Get returns ErrAxes: use GetKey.
func (s *Store) Get(pos Pos, dst []uint32) (stored bool, err error) {
	return s.GetKey(pos.Key(), dst)
}

// GetKey is Get at a key of the store's axes (see [Options.Axes]); a key
// of other axes returns ErrAxes.
func (s *Store) GetKey(pos Key, dst []uint32) (stored bool, err error) {
	if err := checkAxes(pos, s.axes, "get"); err != nil {
		return false, err
	}
	if len(dst) != s.cc.npix {
		return false, fmt.Errorf("%w: Get(%v): dst holds %d pixels, want %d", ErrInvalidChunk, pos, len(dst), s.cc.npix)
	}
	sc := s.scratch()
	defer s.reads.Put(sc)
	v, ok, h, rec, err := s.lookup(func() *index { return s.chunks }, pos, sc)
	switch {
	case err == ErrClosed:
		return false, err
	case err != nil:
	case !ok:
		s.cc.generate(pos, dst)
		return false, nil
	case v.typ == Empty:
		clear(dst)
		return true, nil
	case v.typ == Full:
		sc.raw, err = s.cc.decodeFull(h, rec, v.h.Offset, dst, sc.raw)
	default: // Delta
		err = s.applyDeltaRecord(pos, h, rec, v.h.Offset, dst, sc)
	}
	if err != nil {
		s.cc.generate(pos, dst)
		return false, fmt.Errorf("chunk %v: %w", pos, err)
	}
	return true, nil
}

// applyDeltaRecord applies the Delta record rec, read at off, to the
// generated chunk at pos (the entry's position: the record may be shared
// with another position, whose key it carries).
func (s *Store) applyDeltaRecord(pos Key, h recordHeader, rec []byte, off int64, dst []uint32, sc *readScratch) error {
	if s.cc.gen == nil {
		return fmt.Errorf("%w: delta chunk at %v", ErrNoGenerator, loc(off))
	}
	raw, err := payloadOf(h, rec, off, s.cc.maxDeltaRaw(), sc.raw)
	if err != nil {
		return err
	}
	if h.codec == codecLZ4 {
		sc.raw = raw
	}
	if _, err := s.cc.checkDelta(raw, off); err != nil {
		return err
	}
	s.cc.generate(pos, dst)
	s.cc.applyDelta(raw, dst)
	return nil
}

// Bodies returns the pixel bodies kept with the chunk at pos (nil when
// there are none). A damaged body block returns an error matching
// ErrCorrupt.
func (s *Store) Bodies(pos Pos) ([]Body, error) {
	blk, err := s.Entities(pos)
	return blk.Bodies, err
}

// Entities returns what is kept with the chunk at pos besides its pixels:
// its pixel bodies and entity sections (the zero block when there are
// none). A damaged block returns an error matching ErrCorrupt, and nothing
// of it.
func (s *Store) Entities(pos Pos) (EntityBlock, error) { return s.EntitiesKey(pos.Key()) }

// EntitiesKey is Entities at a key of the store's axes; a key of other
// axes returns ErrAxes.
func (s *Store) EntitiesKey(pos Key) (EntityBlock, error) {
	if err := checkAxes(pos, s.axes, "entities"); err != nil {
		return EntityBlock{}, err
	}
	sc := s.scratch()
	defer s.reads.Put(sc)
	v, ok, h, rec, err := s.lookup(func() *index { return s.bodies }, pos, sc)
	if err == nil && ok {
		var payload []byte
		if payload, err = payloadOf(h, rec, v.h.Offset, maxRecordPayload, nil); err == nil {
			var blk EntityBlock
			if blk, err = parseBodyBlock(payload, v.h.Offset, s.cc.mask); err == nil {
				return blk, nil
			}
		}
	}
	if err != nil && err != ErrClosed {
		err = fmt.Errorf("chunkstore: bodies of chunk %v: %w", pos, err)
	}
	return EntityBlock{}, err
}

// DeltaPixel is one entry of a Delta chunk: a pixel index (row-major) and
// the pixel stored for it.
type DeltaPixel struct {
	Index uint32
	Pixel uint32
}

// RawChunk is a chunk as stored, without applying it to the generator:
// what export and inspection tools need.
type RawChunk struct {
	Pos    Pos // the first two axes of Key
	Key    Key
	Type   StorageType
	Handle Handle       // zero for Empty
	Delta  []DeltaPixel // Type == Delta: the pixels that differ from generation
	Pixels []uint32     // Type == Full: every pixel
}

// ReadRaw returns the stored form of the chunk at pos, and false when it is
// not stored. It needs no Generator.
func (s *Store) ReadRaw(pos Pos) (RawChunk, bool, error) { return s.ReadRawKey(pos.Key()) }

// ReadRawKey is ReadRaw at a key of the store's axes; a key of other axes
// returns ErrAxes.
func (s *Store) ReadRawKey(pos Key) (RawChunk, bool, error) {
	if err := checkAxes(pos, s.axes, "read"); err != nil {
		return RawChunk{}, false, err
	}
	sc := &readScratch{}
	v, ok, h, rec, err := s.lookup(func() *index { return s.chunks }, pos, sc)
	if err != nil || !ok {
		return RawChunk{}, false, err
	}
	r := RawChunk{Pos: pos.Pos(), Key: pos, Type: v.typ, Handle: v.h}
	switch v.typ {
	case Full:
		r.Pixels = make([]uint32, s.cc.npix)
		_, err = s.cc.decodeFull(h, rec, v.h.Offset, r.Pixels, nil)
	case Delta:
		var raw []byte
		if raw, err = payloadOf(h, rec, v.h.Offset, s.cc.maxDeltaRaw(), nil); err == nil {
			var n int
			if n, err = s.cc.checkDelta(raw, v.h.Offset); err == nil {
				r.Delta = make([]DeltaPixel, n)
				for i := range r.Delta {
					at := deltaCountSize + i*deltaEntrySize
					r.Delta[i].Index = uint32(raw[at]) | uint32(raw[at+1])<<8 | uint32(raw[at+2])<<16
					r.Delta[i].Pixel = (uint32(raw[at+3]) | uint32(raw[at+4])<<8 | uint32(raw[at+5])<<16 | uint32(raw[at+6])<<24) & s.cc.mask
				}
			}
		}
	}
	if err != nil {
		return RawChunk{}, true, fmt.Errorf("chunkstore: chunk %v: %w", pos, err)
	}
	return r, true, nil
}

// RecordInfo describes the record at h (from Entries or Scan): kind, key,
// sizes. It checks the record's checksum.
type RecordInfo struct {
	Kind       RecordKind
	Pos        Pos    // chunk and body records: the first two axes of Key
	Key        Key    // chunk and body records
	Generation uint64 // table records
	Stored     uint32 // payload bytes in the file
	Raw        uint32 // payload bytes decoded
	Compressed bool
}

// RecordInfo reads and checks the record at h and describes it.
func (s *Store) RecordInfo(h Handle) (RecordInfo, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return RecordInfo{}, ErrClosed
	}
	rh, rec, err := s.read(h, nil)
	if err != nil {
		return RecordInfo{}, err
	}
	ri := RecordInfo{Kind: rh.kind, Stored: rh.size, Raw: rh.raw, Compressed: rh.codec == codecLZ4}
	if rh.kind.isTable() {
		ri.Generation = rh.key
	} else {
		if ri.Key, err = rh.keyIn(rec, s.axes, h.Offset); err != nil {
			return RecordInfo{}, err
		}
		ri.Pos = ri.Key.Pos()
	}
	return ri, nil
}
