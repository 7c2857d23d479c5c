package mapserve

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"sync"
)

// encodePNG writes img as a PNG, fast: a tile is encoded once and kept.
// Every row is filtered by its left neighbour (PNG filter type 1, Sub)
// rather than by the best of five filters per row, as image/png does, and
// deflated at zlib.BestSpeed; an opaque image is written as RGB. The
// result is a plain PNG any decoder reads.
func encodePNG(w *bytes.Buffer, img *image.RGBA) error {
	b := img.Rect
	width, height := b.Dx(), b.Dy()
	opaque := img.Opaque()
	bpp, colorType := 4, byte(6) // RGBA, not premultiplied
	if opaque {
		bpp, colorType = 3, 2 // RGB
	}
	e := encoders.Get().(*pngEncoder)
	defer encoders.Put(e)
	e.z.Reset()
	e.zw.Reset(&e.z)
	e.row = append(e.row[:0], make([]byte, 1+width*bpp)...)
	px := e.row[1:]
	e.row[0] = 1 // Sub
	for y := 0; y < height; y++ {
		src := img.Pix[(y)*img.Stride : y*img.Stride+4*width]
		for x := 0; x < width; x++ {
			s := src[4*x : 4*x+4]
			d := px[bpp*x : bpp*x+bpp]
			if opaque {
				d[0], d[1], d[2] = s[0], s[1], s[2]
				continue
			}
			d[0], d[1], d[2], d[3] = unpremultiply(s[0], s[3]), unpremultiply(s[1], s[3]), unpremultiply(s[2], s[3]), s[3]
		}
		for i := len(px) - 1; i >= bpp; i-- {
			px[i] -= px[i-bpp]
		}
		if _, err := e.zw.Write(e.row); err != nil {
			return err
		}
	}
	if err := e.zw.Close(); err != nil {
		return err
	}
	w.WriteString("\x89PNG\r\n\x1a\n")
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(width))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(height))
	ihdr[8], ihdr[9] = 8, colorType // bit depth, colour type; compression, filter, interlace 0
	pngChunk(w, "IHDR", ihdr[:])
	pngChunk(w, "IDAT", e.z.Bytes())
	pngChunk(w, "IEND", nil)
	return nil
}

// unpremultiply turns a colour channel premultiplied by alpha a into a
// straight one.
func unpremultiply(c, a uint8) uint8 {
	if a == 0 {
		return 0
	}
	return uint8(min(255, (uint32(c)*255+uint32(a)/2)/uint32(a)))
}

// pngChunk writes one chunk: length, type, data, CRC-32 of type and data.
func pngChunk(w *bytes.Buffer, typ string, data []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	w.Write(n[:])
	start := w.Len()
	w.WriteString(typ)
	w.Write(data)
	binary.BigEndian.PutUint32(n[:], crc32.ChecksumIEEE(w.Bytes()[start:]))
	w.Write(n[:])
}

// pngEncoder is what one encoding needs, kept for the next.
type pngEncoder struct {
	z   bytes.Buffer
	zw  *zlib.Writer
	row []byte
}

var encoders = sync.Pool{New: func() any {
	e := &pngEncoder{}
	e.zw, _ = zlib.NewWriterLevel(&e.z, zlib.BestSpeed) // the level is valid
	return e
}}
