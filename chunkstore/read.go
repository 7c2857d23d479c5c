package chunkstore

import (
	"encoding/binary"
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
	h, rec, err = s.readAs(v.h, v.typ, sc.rec)
	if rec != nil {
		sc.rec = rec[:0:cap(rec)]
	}
	if err == nil {
		h, rec, err = s.decrypt(h, rec, v.h.Offset, sc)
	}
	return v, ok, h, rec, err
}

// Get fills dst (ChunkSize*ChunkSize pixels, row-major) with the chunk at
// pos and reports whether it is stored. It reads only that chunk's record.
// A chunk that is not stored is generated (zeros without a Generator).
// Bits of layers that are not persisted read as their layer's default
// ([Options.Layers]).
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
	stored, _, err = s.get(pos, dst, false)
	return stored, err
}

// GetExtra is Get that also returns the extra data the game stored with
// the chunk (see [ExtraSource] and [Batch.PutChunkExtra]): a copy, nil
// when the chunk has none.
func (s *Store) GetExtra(pos Pos, dst []uint32) (stored bool, extra []byte, err error) {
	return s.GetExtraKey(pos.Key(), dst)
}

// GetExtraKey is GetExtra at a key of the store's axes; a key of other
// axes returns ErrAxes.
func (s *Store) GetExtraKey(pos Key, dst []uint32) (stored bool, extra []byte, err error) {
	return s.get(pos, dst, true)
}

func (s *Store) get(pos Key, dst []uint32, wantExtra bool) (stored bool, extra []byte, err error) {
	if err := checkAxes(pos, s.axes, "get"); err != nil {
		return false, nil, err
	}
	if len(dst) != s.cc.npix {
		return false, nil, fmt.Errorf("%w: Get(%v): dst holds %d pixels, want %d", ErrInvalidChunk, pos, len(dst), s.cc.npix)
	}
	sc := s.scratch()
	defer s.reads.Put(sc)
	v, ok, h, rec, err := s.lookup(func() *index { return s.chunks }, pos, sc)
	switch {
	case err == ErrClosed:
		return false, nil, err
	case err != nil:
	case !ok:
		s.cc.generate(pos, dst)
		s.cc.fillLayers(dst, recordExt{})
		return false, nil, nil
	case v.typ == Empty:
		clear(dst)
		s.cc.fillLayers(dst, recordExt{})
		return true, nil, nil
	default:
		extra, err = s.cc.decodeChunk(pos, v.typ, h, rec, v.h.Offset, dst, sc)
	}
	if err != nil {
		s.cc.generate(pos, dst)
		s.cc.fillLayers(dst, recordExt{})
		return false, nil, fmt.Errorf("chunk %v: %w", pos, err)
	}
	if !wantExtra || extra == nil {
		return true, nil, nil
	}
	return true, append(make([]byte, 0, len(extra)), extra...), nil
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

// readRaw returns the stored form of the chunk at pos, and false when it is
// not stored. It needs no Generator.
func (s *Store) readRaw(pos Pos) (rawChunk, bool, error) { return s.readRawKey(pos.Key()) }

// readRawKey is readRaw at a key of the store's axes; a key of other axes
// returns ErrAxes.
func (s *Store) readRawKey(pos Key) (rawChunk, bool, error) {
	if err := checkAxes(pos, s.axes, "read"); err != nil {
		return rawChunk{}, false, err
	}
	sc := &readScratch{}
	v, ok, h, rec, err := s.lookup(func() *index { return s.chunks }, pos, sc)
	if err != nil || !ok {
		return rawChunk{}, false, err
	}
	r := rawChunk{Pos: pos.Pos(), Key: pos, Type: v.typ, Handle: v.h}
	var x recordExt
	switch v.typ {
	case Full:
		r.Pixels = make([]uint32, s.cc.npix)
		x, err = s.cc.decodeFull(h, rec, v.h.Offset, r.Pixels, sc)
	case Palette:
		var raw []byte
		if raw, x, err = payloadExt(h, rec, v.h.Offset, s.cc.maxPaletteRaw(), nil); err == nil {
			r.Pixels = make([]uint32, s.cc.npix)
			var count int
			if count, err = s.cc.decodePalette(raw, v.h.Offset, r.Pixels); err == nil {
				r.Palette = make([]uint32, count)
				for i := range r.Palette {
					r.Palette[i] = binary.LittleEndian.Uint32(raw[paletteHeadSize+4*i:]) & s.cc.mask
				}
			}
		}
	case Delta:
		var raw []byte
		if raw, x, err = payloadExt(h, rec, v.h.Offset, s.cc.maxDeltaRaw(), nil); err == nil {
			var n int
			if n, err = s.cc.checkDelta(raw, v.h.Offset, x.extra != nil); err == nil {
				r.Delta = make([]deltaPixel, n)
				for i := range r.Delta {
					at := deltaCountSize + i*deltaEntrySize
					r.Delta[i].Index = uint32(raw[at]) | uint32(raw[at+1])<<8 | uint32(raw[at+2])<<16
					r.Delta[i].Pixel = (uint32(raw[at+3]) | uint32(raw[at+4])<<8 | uint32(raw[at+5])<<16 | uint32(raw[at+6])<<24) & s.cc.mask
				}
			}
		}
	}
	if err != nil {
		return rawChunk{}, true, fmt.Errorf("chunkstore: chunk %v: %w", pos, err)
	}
	r.Layers = x.layers
	if x.extra != nil {
		r.Extra = append([]byte{}, x.extra...)
	}
	return r, true, nil
}

// recordInfo reads and checks the record at h and describes it.
func (s *Store) recordInfo(h handle) (recordDesc, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return recordDesc{}, ErrClosed
	}
	rh, rec, err := s.read(h, nil)
	if err != nil {
		return recordDesc{}, err
	}
	ri := recordDesc{Kind: rh.kind, Stored: rh.size, Raw: rh.raw, Compressed: rh.codec != codecNone, Zstd: rh.codec == codecZstd, Encrypted: rh.flags&flagEncrypted != 0}
	if !rh.kind.IsTable() {
		if ri.Key, err = rh.keyIn(rec, s.axes, h.Offset); err != nil {
			return recordDesc{}, err
		}
		ri.Pos = ri.Key.Pos()
	} else {
		ri.Generation = rh.key
	}
	if ri.Encrypted && s.aead == nil {
		return ri, nil // what its flags announce is encrypted: described as stored
	}
	if rh, rec, err = s.decrypt(rh, rec, h.Offset, &readScratch{}); err != nil {
		return recordDesc{}, err
	}
	if rh.flags != 0 {
		x, err := extOf(rh, rec, h.Offset)
		if err != nil {
			return recordDesc{}, err
		}
		ri.Layers, ri.Extra = x.layers, len(x.extra)
	}
	return ri, nil
}
