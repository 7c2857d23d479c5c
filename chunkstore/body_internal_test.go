package chunkstore

import (
	"bytes"
	"testing"
)

// The bools T F T T F F T F | T, packed LSB first: bits 0, 2, 3 and 6 make
// 0x4D. (The design document's example prints 0b01101101 = 0x6D for them, which
// also sets bit 5; its rule, LSB first, is what the format follows.)
func TestShapeMaskPacking(t *testing.T) {
	shape := []bool{true, false, true, true, false, false, true, false, true}
	got := packShape(nil, shape)
	if !bytes.Equal(got, []byte{0x4D, 0x01}) {
		t.Fatalf("packed % x, want 4d 01", got)
	}
	back := make([]bool, len(shape))
	unpackShape(back, got)
	for i := range shape {
		if back[i] != shape[i] {
			t.Fatalf("bit %d: %v", i, back[i])
		}
	}
}

func TestBodyHeaderLayout(t *testing.T) {
	e := &encoder{}
	b := Body{ID: 0x0102030405060708, Width: 3, Height: 2, OriginX: -1, OriginY: 2,
		Pixels: []uint32{1, 2, 3, 4, 5, 6}, Shape: []bool{true, false, true, true, true, false}, Extension: []byte{9, 9}}
	payload := e.appendBodyBlock(nil, []Body{b}, ^uint32(0))
	h := payload[bodyBlockHeaderSize : bodyBlockHeaderSize+bodyHeaderSize]
	if h[0] != 0x08 || h[7] != 0x01 {
		t.Fatalf("id not little-endian at 0: % x", h[:8])
	}
	if w := h[32]; w != 3 {
		t.Fatalf("width at 32: %d", w)
	}
	if ext := h[56]; ext != 2 {
		t.Fatalf("extension size at 56: %d", ext)
	}
	if h[bodyCRCOff] != bodyCRC(h) {
		t.Fatal("crc8 at 60")
	}
	got, err := parseBodyBlock(payload, 0, ^uint32(0))
	if err != nil || len(got) != 1 || got[0].ID != b.ID || !bytes.Equal(got[0].Extension, b.Extension) {
		t.Fatalf("%v %+v", err, got)
	}
}
