package chunkstore

import (
	"bytes"
	"crypto/cipher"
	"errors"
	"path/filepath"
	"testing"

	"github.com/arksave/arksave/internal/crc8"
	"github.com/arksave/arksave/internal/pxsw"
	"github.com/pierrec/lz4/v4"
)

func TestRecordRoundTrip(t *testing.T) {
	e := &encoder{}
	raw := bytes.Repeat([]byte("pixels!!"), 100)
	rec := e.seal(pxsw.RecordFull, Key2(-3, 9), raw)
	h, err := checkRecord(rec, 4096)
	if err != nil {
		t.Fatal(err)
	}
	if h.kind != pxsw.RecordFull || h.codec != codecLZ4 || h.raw != uint32(len(raw)) || h.keyAny(rec) != Key2(-3, 9) {
		t.Fatalf("header %+v", h)
	}
	got, err := payloadOf(h, rec, 4096, len(raw), nil)
	if err != nil || !bytes.Equal(got, raw) {
		t.Fatalf("payload: %v", err)
	}
	// Incompressible payloads are stored as they are.
	rec = e.seal(pxsw.RecordDelta, Key2(0, 0), []byte{1, 2, 3})
	if h, _ := checkRecord(rec, 128); h.codec != codecNone {
		t.Fatalf("codec %d for 3 bytes", h.codec)
	}
	// A payload bigger than the caller expects is refused before decoding.
	rec = e.seal(pxsw.RecordFull, Key2(0, 0), raw)
	h, _ = checkRecord(rec, 128)
	if _, err := payloadOf(h, rec, 128, len(raw)-1, nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("oversized payload: %v", err)
	}
	// Every single-bit flip is detected, in the header or the payload.
	for i := range len(rec) * 8 {
		bad := bytes.Clone(rec)
		bad[i/8] ^= 1 << (i % 8)
		if _, err := checkRecord(bad, 128); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("bit %d: %v", i, err)
		}
	}
}

func TestEntryLayout(t *testing.T) {
	e := tableEntry{pos: Key2(-1, 2), h: handle{Offset: 4096, Length: 300}, typ: Delta}
	var b [entrySize]byte
	e.put(b[:], 2)
	if b[0] != 0xFF || b[4] != 2 || b[8] != 0x00 || b[9] != 0x10 || b[16] != 44 || b[17] != 1 || b[20] != 1 {
		t.Fatalf("layout % x", b)
	}
	got, err := parseEntry(b[:], 0, 2)
	if err != nil || got != e {
		t.Fatalf("%v %+v", err, got)
	}
	expectEveryBitFlipCaught(t, b[:], 2)
}

// Entries of 3 and 4 axes put the extra axes after y and move the rest
// along: 28 and 32 bytes.
func TestEntryLayoutAxes(t *testing.T) {
	for _, k := range []Key{Key3(-1, 2, -3), Key4(-1, 2, -3, 4)} {
		n := k.Axes()
		e := tableEntry{pos: k, h: handle{Offset: 4096, Length: 300}, typ: Delta}
		b := make([]byte, entrySizeOf(n))
		e.put(b, n)
		if len(b) != 4*n+16 || b[0] != 0xFF || b[4] != 2 || b[8] != 0xFD || b[4*n+1] != 0x10 || b[4*n+8] != 44 || b[4*n+12] != 1 {
			t.Fatalf("%d axes: layout % x", n, b)
		}
		got, err := parseEntry(b, 0, n)
		if err != nil || got != e {
			t.Fatalf("%d axes: %v %+v", n, err, got)
		}
		expectEveryBitFlipCaught(t, b, n)
	}
}

func expectEveryBitFlipCaught(t *testing.T, b []byte, n int) {
	t.Helper()
	for i := range len(b) * 8 {
		bad := bytes.Clone(b)
		bad[i/8] ^= 1 << (i % 8)
		if _, err := parseEntry(bad, 0, n); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%d axes: bit %d not detected", n, i)
		}
	}
}

func TestHeaderLayout(t *testing.T) {
	h := header{flags: flagLZ4, seed: 0x1122334455667788, created: 1, modified: 2, chunkCount: 5, root: 4096,
		chunkSize: 512, tileSize: 32, pixelSize: 4, generation: 7, genVersion: 0x030201, version: 2, axes: 2}
	b := h.marshal()
	if string(b[:4]) != "PXSW" || b[8] != 0x88 || b[48] != 0x00 || b[49] != 0x02 || b[52] != 4 ||
		b[headerGenOff] != 7 || b[headerGenVerOff] != 1 || b[headerGenVerOff+2] != 3 || b[headerRootOff+1] != 0x10 {
		t.Fatalf("layout % x", b)
	}
	got, err := parseHeader(b[:], 1)
	if err != nil || got != h {
		t.Fatalf("%v\n%+v\n%+v", err, got, h)
	}
	if _, err := parseHeader(b[:], 0); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("generation 7 accepted in slot A: %v", err)
	}
	// Magic, then version, then checksum, each with its own error.
	bad := b
	bad[0], bad[4], bad[20] = 'Q', 9, 0xEE
	if _, err := parseHeader(bad[:], 1); !errors.Is(err, ErrBadMagic) {
		t.Fatalf("magic first: %v", err)
	}
	bad[0] = 'P'
	if _, err := parseHeader(bad[:], 1); !errors.Is(err, ErrVersion) {
		t.Fatalf("version second: %v", err)
	}
	bad[4] = 1
	if _, err := parseHeader(bad[:], 1); !errors.Is(err, ErrChecksum) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("checksum third: %v", err)
	}
	if _, err := parseHeader(make([]byte, headerSize), 0); !errors.Is(err, errEmptySlot) {
		t.Fatalf("zero slot: %v", err)
	}
}

// Every store is written as format 3; one of 3 or 4 axes keeps its axes
// in flag bits 1-2. Format 2 knows no such flags, so a slot of format 2
// that holds them is refused with a version error rather than its 28- or
// 32-byte entries misread.
func TestHeaderAxes(t *testing.T) {
	for n := MinAxes; n <= MaxAxes; n++ {
		h := header{flags: flagLZ4, chunkSize: 64, pixelSize: 4, generation: 1, axes: uint8(n)}
		b := h.marshal()
		wantVersion, wantFlags := uint16(3), uint16(flagLZ4)
		if n > 2 {
			wantFlags = uint16(flagLZ4 | (n-2)<<flagAxesShift)
		}
		if v, f := uint16(b[4])|uint16(b[5])<<8, uint16(b[6])|uint16(b[7])<<8; v != wantVersion || f != wantFlags {
			t.Fatalf("%d axes: version %d flags %#x, want %d %#x", n, v, f, wantVersion, wantFlags)
		}
		got, err := parseHeader(b[:], 1)
		if err != nil || got.keyAxes() != n {
			t.Fatalf("%d axes: %v, read back %d axes", n, err, got.keyAxes())
		}
		if n == 2 {
			continue
		}
		// What a format 2 reader sees: a version it does not read.
		old := b
		old[4] = 2
		old[headerCRCOff], old[headerCRCOff+1], old[headerCRCOff+2], old[headerCRCOff+3] = 0, 0, 0, 0
		c := headerChecksum(old[:])
		old[headerCRCOff], old[headerCRCOff+1], old[headerCRCOff+2], old[headerCRCOff+3] = byte(c), byte(c>>8), byte(c>>16), byte(c>>24)
		if _, err := parseHeader(old[:], 1); !errors.Is(err, ErrVersion) {
			t.Fatalf("%d-axis flags in a format 2 slot: %v", n, err)
		}
	}
	// Five axes do not exist.
	h := header{flags: flagLZ4, chunkSize: 64, pixelSize: 4, generation: 1, axes: 5}
	b := h.marshal()
	if _, err := parseHeader(b[:], 1); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("5 axes: %v", err)
	}
}

// FuzzRecord decodes arbitrary bytes as a whole record and, past the
// checksums, directly as each payload kind. Whatever decodes must encode
// back to something that decodes the same.
func FuzzRecord(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzRecord", "*"))
	if len(names) == 0 {
		e := &encoder{}
		f.Add(e.seal(pxsw.RecordFull, Key2(0, 0), bytes.Repeat([]byte{1, 2, 3, 4}, 64)))
	}
	// A body block with entity sections, as a payload of the kind data[0] selects.
	blk := (&encoder{}).appendBodyBlock(nil, []Body{{ID: 3, Width: 2, Height: 1, Pixels: []uint32{1, 2}, Shape: []bool{true, false}}},
		[][]byte{[]byte("PECS section"), {}}, ^uint32(0))
	f.Add(append([]byte{byte(pxsw.RecordBodies - 1)}, blk...))
	cc := &chunkCodec{npix: 64, mask: ^uint32(0)}
	// Records of format 3: palette chunks of 8- and 16-bit indices, with the
	// layer mask and extra data.
	for _, distinct := range []int{1, 5, 64} {
		e := &encoder{}
		pix := make([]uint32, cc.npix)
		for i := range pix {
			pix[i] = uint32(i%distinct) * 0x01010101
		}
		e.setExt(cc, []byte("heightmap"))
		rec, _ := e.encodePalette(Key2(1, 2), pix, cc.mask)
		f.Add(rec)
		e.setExt(cc, nil)
		rec, _ = e.encodePalette(Key2(1, 2), pix, cc.mask)
		f.Add(rec)
		f.Add(e.encodeFull(Key2(1, 2), pix, cc.mask))
	}
	wide := &chunkCodec{npix: 300, mask: ^uint32(0)}
	{
		e := &encoder{}
		pix := make([]uint32, wide.npix)
		for i := range pix {
			pix[i] = uint32(i * 7)
		}
		e.setExt(wide, []byte{})
		rec, _ := e.encodePalette(Key2(0, 0), pix, wide.mask)
		f.Add(rec)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const off = 4096
		if h, err := checkRecord(data, off); err == nil && h.flags&flagEncrypted != 0 {
			// An encrypted record (a seed of v3-encrypted): opened with
			// its key, another and none, never a panic.
			aead, _ := recordCipher(fuzzKey)
			other, _ := recordCipher(bytes.Repeat([]byte{1}, 32))
			for _, a := range []cipher.AEAD{aead, other, nil} {
				if ph, plain, err := decryptRecord(a, h, data, off, nil); err == nil {
					decodeAny(t, cc, ph, plain, off)
				}
			}
		} else if err == nil {
			decodeAny(t, cc, h, data, off)
			if h.kind == pxsw.RecordPalette {
				decodeAny(t, wide, h, data, off)
			}
		}
		// Payload decoders without the checksum in the way.
		if len(data) > 0 {
			kind := recordKind(data[0]%uint8(pxsw.RecordKindMax) + 1)
			var c lz4.Compressor
			buf := make([]byte, lz4.CompressBlockBound(len(data)))
			codec := uint8(codecNone)
			payload := data[1:]
			if n, _ := c.CompressBlock(payload, buf); n > 0 && data[0]&0x80 != 0 {
				payload, codec = buf[:n], codecLZ4
			}
			rec := make([]byte, recordHeaderSize+len(payload))
			copy(rec[recordHeaderSize:], payload)
			if kind.IsTable() {
				codec = codecNone
				rec = append(rec[:recordHeaderSize], data[1:]...)
			}
			sealRecord(rec, kind, codec, 0, 0, uint32(len(data)-1))
			if h, err := checkRecord(rec, off); err == nil {
				decodeAny(t, cc, h, rec, off)
			}
		}
	})
}

func decodeAny(t *testing.T, cc *chunkCodec, h recordHeader, rec []byte, off int64) {
	switch h.kind {
	case pxsw.RecordFull:
		dst := make([]uint32, cc.npix)
		if x, err := cc.decodeFull(h, rec, off, dst, &readScratch{}); err == nil {
			reencode(t, cc, pxsw.RecordFull, dst, x)
		}
	case pxsw.RecordDelta:
		raw, x, err := payloadExt(h, rec, off, cc.maxDeltaRaw(), nil)
		if err != nil {
			return
		}
		if _, err := cc.checkDelta(raw, off, x.extra != nil); err == nil {
			dst := make([]uint32, cc.npix)
			cc.applyDelta(raw, dst)
		}
	case pxsw.RecordPalette:
		dst := make([]uint32, cc.npix)
		if x, err := cc.decodeChunkExt(Palette, h, rec, off, dst); err == nil {
			reencode(t, cc, pxsw.RecordPalette, dst, x)
		}
	case pxsw.RecordBodies:
		raw, err := payloadOf(h, rec, off, maxRecordPayload, nil)
		if err != nil {
			return
		}
		blk, err := parseBodyBlock(raw, off, cc.mask)
		if err != nil {
			return
		}
		bodies := blk.Bodies
		e := &encoder{}
		againBlk, err := parseBodyBlock(e.appendBodyBlock(nil, bodies, blk.Sections, cc.mask), off, cc.mask)
		if err != nil {
			t.Fatalf("re-encoded bodies do not decode: %v", err)
		}
		again := againBlk.Bodies
		if len(againBlk.Sections) != len(blk.Sections) {
			t.Fatalf("%d sections after a round trip, want %d", len(againBlk.Sections), len(blk.Sections))
		}
		kept := bodies[:0]
		for _, b := range bodies {
			if !b.IsEmpty() {
				kept = append(kept, b)
			}
		}
		if len(again) != len(kept) {
			t.Fatalf("%d bodies after a round trip, want %d", len(again), len(kept))
		}
		for i := range again {
			a, b := again[i], kept[i]
			if a.ID != b.ID || a.Width != b.Width || !bytes.Equal(pixBytes(a.Pixels), pixBytes(b.Pixels)) || !bytes.Equal(a.Extension, b.Extension) {
				t.Fatalf("body %d changed in a round trip", i)
			}
		}
	case pxsw.RecordJournal, pxsw.RecordCheckpoint:
		// As a table of each number of axes: entries of 24, 28 and 32 bytes.
		for n := MinAxes; n <= MaxAxes; n++ {
			t1, _, err := parseTable(h.payload(rec), off, false, n)
			if err != nil {
				continue
			}
			back := appendTable(nil, t1.prev, t1.level, t1.entries, n)
			if !bytes.Equal(back[:8], rec[recordHeaderSize:recordHeaderSize+8]) || !bytes.Equal(back[tableHeaderSize:], rec[recordHeaderSize+tableHeaderSize:]) {
				t.Fatalf("table of %d axes does not re-encode to the same entries", n)
			}
		}
	}
	if !h.kind.IsTable() {
		// The key: as its key bytes say, and as a store of each number of
		// axes reads it (an error unless the count matches).
		k := h.keyAny(rec)
		for n := MinAxes; n <= MaxAxes; n++ {
			got, err := h.keyIn(rec, n, off)
			if (err == nil) != (keyExtSize(n) == int(h.ext)) {
				t.Fatalf("key of %d axes from %d key bytes: %v", n, h.ext, err)
			}
			if err == nil && got != k {
				t.Fatalf("key %v, keyAny %v", got, k)
			}
			if err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("key of %d axes: %v", n, err)
			}
		}
	}
}

func pixBytes(p []uint32) []byte {
	var b bytes.Buffer
	for _, v := range p {
		b.Write([]byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)})
	}
	return b.Bytes()
}

// decodeChunkExt decodes a Full or Palette record (no generator needed) and
// returns what its flags announce.
func (cc *chunkCodec) decodeChunkExt(typ StorageType, h recordHeader, rec []byte, off int64, dst []uint32) (recordExt, error) {
	extra, err := cc.decodeChunk(Key2(0, 0), typ, h, rec, off, dst, &readScratch{})
	if err != nil {
		return recordExt{}, err
	}
	x, _ := extOf(h, rec, off)
	x.extra = extra
	return x, nil
}

// reencode encodes decoded pixels (with the record's extra data) again as
// kind and checks that they decode to the same pixels and extra data.
func reencode(t *testing.T, cc *chunkCodec, kind recordKind, pix []uint32, x recordExt) {
	t.Helper()
	e := &encoder{}
	e.setExt(cc, x.extra)
	var rec []byte
	switch kind {
	case pxsw.RecordPalette:
		var ok bool
		if rec, ok = e.encodePalette(Key2(0, 0), pix, cc.mask); !ok {
			t.Fatalf("a decoded palette chunk does not encode as one")
		}
	default:
		rec = e.encodeFull(Key2(0, 0), pix, cc.mask)
	}
	h, err := checkRecord(rec, 64)
	if err != nil {
		t.Fatalf("re-encoded %s does not check: %v", kind, err)
	}
	back := make([]uint32, cc.npix)
	extra, err := cc.decodeChunk(Key2(0, 0), storageOf(kind), h, rec, 64, back, &readScratch{})
	if err != nil {
		t.Fatalf("re-encoded %s does not decode: %v", kind, err)
	}
	if !bytes.Equal(pixBytes(back), pixBytes(pix)) || !bytes.Equal(extra, x.extra) {
		t.Fatalf("%s changed in a round trip", kind)
	}
}

// Byte 18 of a record header holds the record flags: bit 0 the layer
// mask, bit 1 extra data (both between the header and the payload), bits
// 2..3 the key's axes beyond two, whose int32s follow the payload. A chunk
// record of a store of 3 axes with extra data is thus self-describing: its
// flags are 0b0111, its length is 24 + size + 4, and its key, layer mask
// and extra data read back from its bytes alone. Axes bits of 3 are damage,
// and so are key bytes on a table record.
func TestRecordFlagsByte(t *testing.T) {
	cc := &chunkCodec{npix: 64, mask: 0x00FFFFFF}
	e := &encoder{}
	e.setExt(cc, []byte("chest"))
	pix := make([]uint32, 64)
	for i := range pix {
		pix[i] = uint32(i % 3)
	}
	k := Key3(5, -6, 7)
	rec, ok := e.encodePalette(k, pix, cc.mask)
	if !ok {
		t.Fatal("no palette record")
	}
	if rec[recordFlagsOff] != flagLayers|flagExtra|1<<flagKeyShift {
		t.Fatalf("flags %#02x", rec[recordFlagsOff])
	}
	h, err := checkRecord(rec, 64)
	if err != nil {
		t.Fatal(err)
	}
	if int(h.length()) != len(rec) || h.ext != 4 || int(h.size) != len(rec)-recordHeaderSize-4 {
		t.Fatalf("length %d, size %d, ext %d of a record of %d bytes", h.length(), h.size, h.ext, len(rec))
	}
	if got := h.keyAny(rec); got != k {
		t.Fatalf("key %v, want %v", got, k)
	}
	if _, err := h.keyIn(rec, 4, 64); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a 3-axis record read in a store of 4 axes: %v", err)
	}
	back := make([]uint32, 64)
	extra, err := cc.decodeChunk(k, Palette, h, rec, 64, back, &readScratch{})
	if err != nil || string(extra) != "chest" || !bytes.Equal(pixBytes(back), pixBytes(pix)) {
		t.Fatalf("decoded %q, %v", extra, err)
	}
	x, err := extOf(h, rec, 64)
	if err != nil || !x.hasLayers || x.layers != cc.mask {
		t.Fatalf("layer mask %08x (%v), %v", x.layers, x.hasLayers, err)
	}

	bad := bytes.Clone(rec)
	bad[recordFlagsOff] |= flagKeyAxes // 3 axes beyond two
	bad[recordHCRCOff] = crc8.Checksum(bad[:recordHCRCOff])
	if _, err := parseRecordHeader(bad, 64); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("axes bits 3: %v", err)
	}
	tbl := make([]byte, recordHeaderSize, recordHeaderSize+tableHeaderSize)
	tbl = appendTable(tbl, 0, 0, nil, 3)
	sealRecord(tbl, pxsw.RecordJournal, codecNone, 1<<flagKeyShift, 1, uint32(len(tbl)-recordHeaderSize))
	if _, err := parseRecordHeader(tbl, 64); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("key bytes on a table record: %v", err)
	}
}
