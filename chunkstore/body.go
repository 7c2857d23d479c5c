package chunkstore

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/arksave/arksave/internal/crc8"
	"github.com/pierrec/lz4/v4"
)

// Body records. Their layout is part of the file format; see the package
// documentation.
const (
	bodyBlockHeaderSize = 8       // body count u32, entity section count u32 (0 before entity sections)
	sectionLenSize      = 4       // an entity section's length u32, before its bytes
	bodyHeaderSize      = 64      // a pixel-body record's header
	bodyCRCOff          = 60      // CRC-8 of the other 63 header bytes
	bodyFlagsOff        = 61      // bit 0: pixels stored raw; bit 1: mask stored raw
	bodyPixelsRaw       = 1 << 0  // pixel section is not LZ4
	bodyMaskRaw         = 1 << 1  // shape-mask section is not LZ4
	maxBodyPixels       = 1 << 26 // a body has at most 64 Mi pixels (a 8192x8192 grid)
)

// Body is a pixel body kept with the chunk that holds its centre, as its
// record in the file holds it. X, Y and Rotation are the blitted transform.
type Body struct {
	ID               uint64  // stable id: session<<32 | counter
	X, Y             float32 // blitted position, world pixels
	Rotation         float32 // radians
	VX, VY           float32 // linear velocity
	AngularVelocity  float32 // radians per second
	Width, Height    uint32  // pixel grid size
	OriginX, OriginY int32   // grid offset of the rotation origin
	Pixels           []uint32
	Shape            []bool // Width*Height: true where the body has a pixel
	Extension        []byte // game-defined data, stored as is
	_                struct{}
}

// EntityBlock is what the store keeps with a chunk besides its pixels: the
// chunk's pixel bodies, and the entities that stand in it as entity sections
// (package archetype's AppendEntities) that the store keeps as they are,
// oldest first. A body and an entity of a section may be one game entity:
// the body record holds its pixels, the section its other components, and
// both carry its stable id; the store does not look.
type EntityBlock struct {
	Bodies   []Body
	Sections [][]byte
}

// IsEmpty reports whether the block has no non-empty body and no section:
// a chunk with such a block has nothing stored besides its pixels.
func (b *EntityBlock) IsEmpty() bool {
	if len(b.Sections) > 0 {
		return false
	}
	for i := range b.Bodies {
		if !b.Bodies[i].IsEmpty() {
			return false
		}
	}
	return true
}

// IsEmpty reports whether no Shape bit is set. Empty bodies are never stored.
func (b *Body) IsEmpty() bool {
	for _, s := range b.Shape {
		if s {
			return false
		}
	}
	return true
}

func (b *Body) check() error {
	n := uint64(b.Width) * uint64(b.Height)
	switch {
	case n > maxBodyPixels:
		return fmt.Errorf("%w: body %d: %dx%d pixels, at most %d", ErrInvalidBody, b.ID, b.Width, b.Height, maxBodyPixels)
	case uint64(len(b.Pixels)) != n:
		return fmt.Errorf("%w: body %d: %d pixels for a %dx%d grid", ErrInvalidBody, b.ID, len(b.Pixels), b.Width, b.Height)
	case uint64(len(b.Shape)) != n:
		return fmt.Errorf("%w: body %d: %d shape bits for a %dx%d grid", ErrInvalidBody, b.ID, len(b.Shape), b.Width, b.Height)
	}
	return nil
}

// packShape packs bools 8 per byte, least significant bit first.
func packShape(dst []byte, shape []bool) []byte {
	n := (len(shape) + 7) / 8
	dst = grow(dst[:0], n)
	clear(dst)
	for i, s := range shape {
		if s {
			dst[i/8] |= 1 << (i % 8)
		}
	}
	return dst
}

func unpackShape(dst []bool, packed []byte) {
	for i := range dst {
		dst[i] = packed[i/8]>>(i%8)&1 != 0
	}
}

// appendBodyBlock appends the payload of a body block holding the
// non-empty bodies and the entity sections to dst. Pixels are stored masked.
func (e *encoder) appendBodyBlock(dst []byte, bodies []Body, sections [][]byte, mask uint32) []byte {
	start := len(dst)
	dst = grow(dst, bodyBlockHeaderSize)
	count := 0
	for i := range bodies {
		b := &bodies[i]
		if b.IsEmpty() {
			continue
		}
		count++
		at := len(dst)
		dst = grow(dst, bodyHeaderSize)
		var flags uint8

		e.raw = grow(e.raw[:0], 4*len(b.Pixels))
		putPixels(e.raw, b.Pixels, mask)
		pixAt := len(dst)
		dst, flags = e.appendSection(dst, seamPixels(e.raw), flags, bodyPixelsRaw)
		pixSize := len(dst) - pixAt

		e.raw = packShape(e.raw, b.Shape)
		maskAt := len(dst)
		dst, flags = e.appendSection(dst, e.raw, flags, bodyMaskRaw)
		maskSize := len(dst) - maskAt

		dst = append(dst, b.Extension...)

		w := writeBuf(dst[at : at+bodyHeaderSize])
		w.uint64(b.ID)
		for _, f := range [...]float32{b.X, b.Y, b.Rotation, b.VX, b.VY, b.AngularVelocity} {
			w.uint32(math.Float32bits(f))
		}
		w.uint32(b.Width)
		w.uint32(b.Height)
		w.uint32(uint32(b.OriginX))
		w.uint32(uint32(b.OriginY))
		w.uint32(uint32(pixSize))
		w.uint32(uint32(maskSize))
		w.uint32(uint32(len(b.Extension)))
		w.uint8(0) // checksum, below
		w.uint8(flags)
		w.uint16(0)
		h := dst[at : at+bodyHeaderSize]
		h[bodyCRCOff] = bodyCRC(h)
	}
	for _, sec := range sections {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(sec)))
		dst = append(dst, sec...)
	}
	binary.LittleEndian.PutUint32(dst[start:], uint32(count))
	binary.LittleEndian.PutUint32(dst[start+4:], uint32(len(sections)))
	return dst
}

// appendSection appends src LZ4-compressed when that is smaller, else raw
// with rawFlag set in flags.
func (e *encoder) appendSection(dst, src []byte, flags, rawFlag uint8) ([]byte, uint8) {
	at := len(dst)
	bound := lz4.CompressBlockBound(len(src))
	dst = grow(dst, bound)
	n, err := e.c.CompressBlock(src, dst[at:])
	if err != nil || n == 0 || n >= len(src) {
		copy(dst[at:], src)
		return dst[:at+len(src)], flags | rawFlag
	}
	return dst[:at+n], flags
}

func bodyCRC(h []byte) byte {
	return crc8.Update(crc8.Checksum(h[:bodyCRCOff]), h[bodyCRCOff+1:bodyHeaderSize])
}

// parseBodyBlock decodes a body block payload read in the record at off.
// Every size is checked against the bytes that remain before anything is
// allocated. The entity sections are copies.
func parseBodyBlock(payload []byte, off int64, mask uint32) (EntityBlock, error) {
	base := off + recordHeaderSize
	if len(payload) < bodyBlockHeaderSize {
		return EntityBlock{}, fmt.Errorf("%w: body block at offset %d: %d bytes", ErrCorrupt, off, len(payload))
	}
	r := readBuf(payload)
	count := int(r.uint32())
	nsec := int(r.uint32())
	if count > (len(payload)-bodyBlockHeaderSize)/bodyHeaderSize {
		return EntityBlock{}, fmt.Errorf("%w: body block at offset %d: %d bodies in %d bytes", ErrCorrupt, off, count, len(payload))
	}
	if nsec > (len(payload)-bodyBlockHeaderSize-count*bodyHeaderSize)/sectionLenSize {
		return EntityBlock{}, fmt.Errorf("%w: body block at offset %d: %d entity sections in %d bytes", ErrCorrupt, off, nsec, len(payload))
	}
	var blk EntityBlock
	if count > 0 {
		blk.Bodies = make([]Body, count)
	}
	rest := payload[bodyBlockHeaderSize:]
	for i := range blk.Bodies {
		at := base + int64(len(payload)-len(rest))
		n, err := parseBody(&blk.Bodies[i], rest, at, mask)
		if err != nil {
			return EntityBlock{}, err
		}
		rest = rest[n:]
	}
	for i := range nsec {
		at := base + int64(len(payload)-len(rest))
		if len(rest) < sectionLenSize {
			return EntityBlock{}, fmt.Errorf("%w: entity section %d at offset %d: %d bytes left for its length", ErrCorrupt, i, at, len(rest))
		}
		n := uint64(binary.LittleEndian.Uint32(rest))
		if n > uint64(len(rest)-sectionLenSize) {
			return EntityBlock{}, fmt.Errorf("%w: entity section %d at offset %d: %d bytes, %d left", ErrCorrupt, i, at, n, len(rest)-sectionLenSize)
		}
		// A copy: the payload may be a read buffer that is used again.
		blk.Sections = append(blk.Sections, append(make([]byte, 0, n), rest[sectionLenSize:sectionLenSize+n]...))
		rest = rest[sectionLenSize+n:]
	}
	if len(rest) != 0 {
		return EntityBlock{}, fmt.Errorf("%w: body block at offset %d: %d bytes after the last body and section", ErrCorrupt, off, len(rest))
	}
	return blk, nil
}

// parseBody decodes one body at the front of b (read at off) into body and
// returns how many bytes it took.
func parseBody(body *Body, b []byte, off int64, mask uint32) (int, error) {
	if len(b) < bodyHeaderSize {
		return 0, fmt.Errorf("%w: body at offset %d: header %d of %d bytes", ErrCorrupt, off, len(b), bodyHeaderSize)
	}
	h := b[:bodyHeaderSize]
	if c := bodyCRC(h); c != h[bodyCRCOff] {
		return 0, fmt.Errorf("%w: body at offset %d: crc8 %02x != %02x", ErrChecksum, off, c, h[bodyCRCOff])
	}
	r := readBuf(h)
	body.ID = r.uint64()
	for _, f := range [...]*float32{&body.X, &body.Y, &body.Rotation, &body.VX, &body.VY, &body.AngularVelocity} {
		*f = math.Float32frombits(r.uint32())
	}
	body.Width = r.uint32()
	body.Height = r.uint32()
	body.OriginX = int32(r.uint32())
	body.OriginY = int32(r.uint32())
	pixSize := uint64(r.uint32())
	maskSize := uint64(r.uint32())
	extSize := uint64(r.uint32())
	r.skip(1)
	flags := r.uint8()
	reserved := r.uint16()
	n := uint64(body.Width) * uint64(body.Height)
	rest := uint64(len(b) - bodyHeaderSize)
	switch {
	case flags&^(bodyPixelsRaw|bodyMaskRaw) != 0 || reserved != 0:
		return 0, fmt.Errorf("%w: body at offset %d: flags %#x, reserved %#x", ErrCorrupt, off, flags, reserved)
	case n == 0 || n > maxBodyPixels:
		return 0, fmt.Errorf("%w: body at offset %d: %dx%d pixels", ErrCorrupt, off, body.Width, body.Height)
	case pixSize+maskSize+extSize > rest:
		return 0, fmt.Errorf("%w: body at offset %d: sections of %d+%d+%d bytes, %d remain", ErrCorrupt, off, pixSize, maskSize, extSize, rest)
	}
	sections := b[bodyHeaderSize:]
	pixRaw, err := section(sections[:pixSize], 4*n, flags&bodyPixelsRaw != 0, off, "pixels")
	if err != nil {
		return 0, err
	}
	body.Pixels = make([]uint32, n)
	getPixels(body.Pixels, pixRaw, mask)
	maskRaw, err := section(sections[pixSize:pixSize+maskSize], (n+7)/8, flags&bodyMaskRaw != 0, off, "shape mask")
	if err != nil {
		return 0, err
	}
	body.Shape = make([]bool, n)
	unpackShape(body.Shape, maskRaw)
	if extSize > 0 {
		body.Extension = append([]byte(nil), sections[pixSize+maskSize:pixSize+maskSize+extSize]...)
	}
	return bodyHeaderSize + int(pixSize+maskSize+extSize), nil
}

// section returns a body section of want bytes: src itself when stored raw,
// else src decompressed, after checking that src can hold that much.
func section(src []byte, want uint64, raw bool, off int64, what string) ([]byte, error) {
	if raw {
		if uint64(len(src)) != want {
			return nil, fmt.Errorf("%w: body at offset %d: %s of %d bytes, want %d", ErrCorrupt, off, what, len(src), want)
		}
		return src, nil
	}
	if len(src) == 0 || want > uint64(len(src))*lz4MaxRatio+lz4Slack {
		return nil, fmt.Errorf("%w: body at offset %d: %d LZ4 bytes cannot hold %s of %d", ErrCorrupt, off, len(src), what, want)
	}
	dst := make([]byte, want)
	if n, err := lz4.UncompressBlock(src, dst); err != nil || uint64(n) != want {
		return nil, fmt.Errorf("%w: body at offset %d: %s decodes to %d of %d bytes: %w", ErrCorrupt, off, what, n, want, err)
	}
	return dst, nil
}
