package chunkstore

import (
	"bytes"
	"encoding/binary"
	"errors"
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
	payload := e.appendBodyBlock(nil, []Body{b}, nil, ^uint32(0))
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
	blk, err := parseBodyBlock(payload, 0, ^uint32(0))
	got := blk.Bodies
	if err != nil || len(got) != 1 || got[0].ID != b.ID || !bytes.Equal(got[0].Extension, b.Extension) || blk.Sections != nil {
		t.Fatalf("%v %+v", err, got)
	}
}

// Entity sections follow the bodies, each as its length and its bytes, and come back as they
// were; a block of sections alone is no empty block.
func TestBodyBlockSections(t *testing.T) {
	e := &encoder{}
	b := Body{ID: 5, Width: 1, Height: 1, Pixels: []uint32{7}, Shape: []bool{true}}
	secs := [][]byte{[]byte("first"), {}, []byte("third one")}
	payload := e.appendBodyBlock(nil, []Body{b}, secs, ^uint32(0))
	if n := binary.LittleEndian.Uint32(payload[4:]); n != 3 {
		t.Fatalf("section count at 4: %d", n)
	}
	blk, err := parseBodyBlock(payload, 0, ^uint32(0))
	if err != nil || len(blk.Bodies) != 1 || len(blk.Sections) != 3 {
		t.Fatalf("%v %+v", err, blk)
	}
	for i := range secs {
		if !bytes.Equal(blk.Sections[i], secs[i]) {
			t.Fatalf("section %d: %q", i, blk.Sections[i])
		}
	}
	alone := EntityBlock{Sections: secs[:1]}
	if alone.IsEmpty() || (&EntityBlock{Bodies: []Body{{Shape: []bool{false}}}}).IsEmpty() == false {
		t.Fatal("IsEmpty")
	}
	for cut := bodyBlockHeaderSize; cut < len(payload); cut++ {
		if _, err := parseBodyBlock(payload[:cut], 0, ^uint32(0)); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("cut at %d: %v", cut, err)
		}
	}
}

// An entity block larger than a reader takes is refused by the commit,
// before anything is written: what a commit accepts reads back.
func TestEntityBlockOverTheRecordBound(t *testing.T) {
	defer func(n int) { maxWritePayload = n }(maxWritePayload)
	maxWritePayload = 4096
	path := t.TempDir() + "/chunks.pxsw"
	s, err := Create(path, &Options{ChunkSize: 16, TileSize: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	small := EntityBlock{Sections: [][]byte{bytes.Repeat([]byte{1}, 1000)}}
	b := s.NewBatch()
	b.PutEntities(Pos{X: 1, Y: 1}, small)
	if _, err := s.Commit(b); err != nil {
		t.Fatal(err)
	}
	gen := s.Generation()
	b = s.NewBatch()
	b.PutEntities(Pos{X: 2, Y: 2}, EntityBlock{Sections: [][]byte{bytes.Repeat([]byte{2}, 5000)}})
	if _, err = s.Commit(b); !errors.Is(err, ErrInvalidBody) {
		t.Fatalf("commit of an entity block over the bound: %v, want ErrInvalidBody", err)
	}
	if s.Generation() != gen {
		t.Fatalf("the refused commit moved the store to generation %d", s.Generation())
	}
	got, err := s.Entities(Pos{X: 1, Y: 1})
	if err != nil || len(got.Sections) != 1 || !bytes.Equal(got.Sections[0], small.Sections[0]) {
		t.Fatalf("the block committed before: %v, %d sections", err, len(got.Sections))
	}
}
