package archetype

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// writeBuf appends little-endian values to a byte slice.
type writeBuf []byte

func (b *writeBuf) u8(v uint8)     { *b = append(*b, v) }
func (b *writeBuf) u16(v uint16)   { *b = binary.LittleEndian.AppendUint16(*b, v) }
func (b *writeBuf) u32(v uint32)   { *b = binary.LittleEndian.AppendUint32(*b, v) }
func (b *writeBuf) u64(v uint64)   { *b = binary.LittleEndian.AppendUint64(*b, v) }
func (b *writeBuf) bytes(v []byte) { *b = append(*b, v...) }
func (b *writeBuf) str16(v string) { b.u16(uint16(len(v))); *b = append(*b, v...) }

// sectionBuf starts a section: count, and a size placeholder that finish fills in.
func sectionBuf(count uint32, capacity int) writeBuf {
	b := make(writeBuf, 0, capacity+sectionHeadSize+crcSize)
	b.u32(count)
	b.u64(0)
	return b
}

// finishSectionNoHead appends the CRC of a section whose head already holds its size.
func finishSectionNoHead(b writeBuf) []byte {
	b.u32(crc32.Checksum(b, castagnoli))
	return b
}

// finishSection writes the section size into the head and appends the CRC of everything before it.
func finishSection(b writeBuf) []byte {
	binary.LittleEndian.PutUint64(b[4:12], uint64(len(b)+crcSize))
	b.u32(crc32.Checksum(b, castagnoli))
	return b
}

// readBuf reads little-endian values from a section held in memory. A read past the end
// records an [ErrCorrupt] error naming the section and the absolute file offset, and returns
// zero; check err once after a group of reads.
type readBuf struct {
	b       []byte
	pos     int
	base    int64 // file offset of b[0]
	section string
	err     error
}

func (r *readBuf) offset() int64 { return r.base + int64(r.pos) }

func (r *readBuf) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s at offset %d: %s", ErrCorrupt, r.section, r.offset(), fmt.Sprintf(format, args...))
	}
}

func (r *readBuf) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b)-r.pos {
		r.fail("%d bytes needed, %d left in the section", n, len(r.b)-r.pos)
		return nil
	}
	p := r.b[r.pos : r.pos+n]
	r.pos += n
	return p
}

func (r *readBuf) u8() uint8 {
	if p := r.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (r *readBuf) u16() uint16 {
	if p := r.take(2); p != nil {
		return binary.LittleEndian.Uint16(p)
	}
	return 0
}

func (r *readBuf) u32() uint32 {
	if p := r.take(4); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (r *readBuf) u64() uint64 {
	if p := r.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

func (r *readBuf) str16() string {
	n := int(r.u16())
	return string(r.take(n))
}

// remaining is the number of unread bytes.
func (r *readBuf) remaining() int { return len(r.b) - r.pos }

// streamWriter writes a file front to back and keeps the running CRC and offset of everything
// written. The first write error sticks and is returned by flush.
//
// It writes to one of three places: a byte slice it appends to ([AppendEncode]), a writer in
// memory that it sizes once for the whole file (bytes.Buffer, or any writer with a Grow method)
// and writes to directly, or any other writer through a buffer.
type streamWriter struct {
	w   io.Writer     // the destination, or nil when appending to b
	bw  *bufio.Writer // non-nil when w is buffered
	b   []byte        // the destination of AppendEncode, with room for the whole file
	nt  bool          // b is large: copy into it with non-temporal stores (streamCopy)
	off int64
	crc uint32
	err error
	tmp [crcSize]byte
}

// grower is a writer that can make room for n more bytes ahead of time, as bytes.Buffer and
// strings.Builder can.
type grower interface {
	io.Writer
	Grow(n int)
}

// newStreamWriter writes a file of size bytes to w. A writer that can grow is grown once to hold
// the whole file and written to without a buffer between. (A bytes.Buffer does not come here:
// [Encode] fills its memory in place, through fillBuffer.)
func newStreamWriter(w io.Writer, size int) *streamWriter {
	switch g := w.(type) {
	case grower:
		g.Grow(size)
		return &streamWriter{w: w}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	return &streamWriter{w: bw, bw: bw}
}

// newAppendWriter appends a file of size bytes to dst, which is reallocated at most once.
func newAppendWriter(dst []byte, size int) *streamWriter {
	return &streamWriter{b: growRaw(dst, size), nt: size >= streamMin}
}

// streamMin is the file size from which writes into memory bypass the CPU's cache: a file of
// megabytes does not stay in the cache anyway, and an ordinary copy would first read every
// destination cache line from memory. Smaller files are left in the cache for their reader.
const streamMin = 1 << 20

// write writes p and adds it to the running CRC.
func (s *streamWriter) write(p []byte) {
	s.writeKnown(p, crc32.Checksum(p, castagnoli))
}

// writeCRC writes a CRC32C value and adds it to the running CRC.
func (s *streamWriter) writeCRC(crc uint32) {
	binary.LittleEndian.PutUint32(s.tmp[:], crc)
	s.write(s.tmp[:])
}

// writeKnown writes p whose CRC32C the caller has computed already.
func (s *streamWriter) writeKnown(p []byte, crc uint32) {
	if s.err != nil || len(p) == 0 {
		return
	}
	s.crc = crcCombine(s.crc, crc, int64(len(p)))
	s.put(p)
}

// sumChunk is how much of a large write writeSum checksums before it copies it: small enough
// that the copy finds the bytes in the CPU's cache.
const sumChunk = 16 << 10

// writeSum writes p, adds it to the running CRC and returns its own CRC32C. Into a large file in
// memory, p is checksummed and copied in one pass that bypasses the cache (crcCopy). Into other
// memory, each chunk of p is checksummed and then copied while it is in the cache, which spares
// a pass over memory; through a buffer, the whole of p is checksummed first so that the buffer
// passes it on in one write.
func (s *streamWriter) writeSum(p []byte) uint32 {
	if s.bw != nil || len(p) == 0 {
		c := crcOf(p)
		s.writeKnown(p, c)
		return c
	}
	if n := len(s.b); s.w == nil && s.nt && s.err == nil && cap(s.b)-n >= len(p) {
		s.b = s.b[:n+len(p)]
		c := crcCopy(s.b[n:], p, 0)
		s.off += int64(len(p))
		s.crc = crcCombine(s.crc, c, int64(len(p)))
		return c
	}
	var c uint32
	for rest := p; len(rest) > 0 && s.err == nil; {
		n := min(len(rest), sumChunk)
		c = crc32.Update(c, castagnoli, rest[:n])
		s.put(rest[:n])
		rest = rest[n:]
	}
	s.crc = crcCombine(s.crc, c, int64(len(p)))
	return c
}

// put writes p to the destination.
func (s *streamWriter) put(p []byte) {
	if s.err != nil {
		return
	}
	if s.w == nil {
		if n := len(s.b); s.nt && len(p) >= 1<<10 && cap(s.b)-n >= len(p) {
			s.b = s.b[:n+len(p)]
			streamCopy(s.b[n:], p)
		} else {
			s.b = append(s.b, p...)
		}
		s.off += int64(len(p))
		return
	}
	n, err := s.w.Write(p)
	s.off += int64(n)
	if err != nil {
		s.err = err
	}
}

func (s *streamWriter) flush() error {
	if s.err != nil || s.bw == nil {
		return s.err
	}
	return s.bw.Flush()
}

// streamReader reads a PECS file front to back. It keeps the running CRC and the offset of
// everything consumed and checks every length against what the header's file size leaves.
type streamReader struct {
	r        io.Reader
	off      int64
	crc      uint32 // of the bytes before secStart
	secStart int64  // offset of the last beginCRC
	sec      uint32 // of the bytes from secStart to off
	fileSize int64  // from the header; 0 until the header is read
}

func newStreamReader(r io.Reader) *streamReader {
	if br, ok := r.(*bufio.Reader); ok {
		return &streamReader{r: br}
	}
	return &streamReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// remaining returns the number of bytes left before the footer, as the header promises.
func (s *streamReader) remaining() int64 {
	return s.fileSize - footerSize - s.off
}

// corrupt returns an [ErrCorrupt] error naming the section and the current offset.
func (s *streamReader) corrupt(section string, format string, args ...any) error {
	return fmt.Errorf("%w: %s at offset %d: %s", ErrCorrupt, section, s.off, fmt.Sprintf(format, args...))
}

// check returns an error when n bytes do not fit in what remains before the footer.
func (s *streamReader) check(n int64, section string) error {
	if n < 0 || n > s.remaining() {
		return s.corrupt(section, "%d bytes claimed, the file size leaves %d", n, s.remaining())
	}
	return nil
}

// full reads exactly len(p) bytes into p. Input that ends early is [ErrCorrupt] and
// [io.ErrUnexpectedEOF].
func (s *streamReader) full(p []byte, section string) error {
	n, err := io.ReadFull(s.r, p)
	s.sec = crc32.Update(s.sec, castagnoli, p[:n])
	s.off += int64(n)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: %s at offset %d: input ends early: %w", ErrCorrupt, section, s.off, io.ErrUnexpectedEOF)
		}
		return fmt.Errorf("archetype: %s at offset %d: %w", section, s.off, err)
	}
	return nil
}

// next reads n bytes into buf (reusing its memory) and returns them. The buffer grows only
// as bytes arrive, so a length field that lies costs at most about twice the bytes really read.
func (s *streamReader) next(buf []byte, n int64, section string) ([]byte, error) {
	if err := s.check(n, section); err != nil {
		return buf[:0], err
	}
	if int64(cap(buf)) >= n {
		buf = buf[:n]
		return buf, s.full(buf, section)
	}
	buf = buf[:0]
	const step = 1 << 20
	for int64(len(buf)) < n {
		chunk := min(n-int64(len(buf)), max(int64(len(buf)), step))
		start := len(buf)
		buf = growLen(buf, start+int(chunk))
		if err := s.full(buf[start:], section); err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// growLen returns b extended to length n, reallocating when the capacity is short.
func growLen(b []byte, n int) []byte {
	if n <= cap(b) {
		return b[:n]
	}
	nb := make([]byte, n, max(n, 2*cap(b)))
	copy(nb, b)
	return nb
}

// beginCRC starts the checksum of a section or blob. Each byte is checksummed once: the checksum
// of the whole file is assembled from the pieces (see crcCombine).
func (s *streamReader) beginCRC() {
	s.crc = s.fileCRC()
	s.sec, s.secStart = 0, s.off
}

// fileCRC is the CRC32C of everything read so far.
func (s *streamReader) fileCRC() uint32 { return crcCombine(s.crc, s.sec, s.off-s.secStart) }

// endCRC reads the CRC32C that ends a section or blob and compares it with the checksum of
// everything read since beginCRC.
func (s *streamReader) endCRC(section string) error {
	got := s.sec
	var b [crcSize]byte
	if err := s.full(b[:], section); err != nil {
		return err
	}
	if want := binary.LittleEndian.Uint32(b[:]); got != want && verifyChecksums {
		return fmt.Errorf("%w: %s at offset %d: checksum %08x, stored %08x", ErrCorrupt, section, s.off-crcSize, got, want)
	}
	return nil
}

// section reads a whole section (head, payload, CRC) into buf and checks its CRC. It returns a
// readBuf over the payload, positioned after the head, and the count from the head. minSize is
// the least payload the count needs; the section size must be at least that.
func (s *streamReader) section(buf []byte, name string, perItem int64) (readBuf, uint32, []byte, error) {
	start := s.off
	s.beginCRC()
	var head [sectionHeadSize]byte
	if err := s.full(head[:], name); err != nil {
		return readBuf{}, 0, buf, err
	}
	count := binary.LittleEndian.Uint32(head[:])
	size := binary.LittleEndian.Uint64(head[4:])
	if size < sectionHeadSize+crcSize || size > uint64(s.remaining())+sectionHeadSize ||
		uint64(count)*uint64(perItem) > size-sectionHeadSize-crcSize {
		return readBuf{}, 0, buf, fmt.Errorf("%w: %s at offset %d: section size %d for %d items does not fit in the %d bytes left",
			ErrCorrupt, name, start+4, size, count, s.remaining()+sectionHeadSize)
	}
	payloadStart := s.off
	buf, err := s.next(buf, int64(size)-sectionHeadSize-crcSize, name)
	if err != nil {
		return readBuf{}, 0, buf, err
	}
	if err := s.endCRC(name); err != nil {
		return readBuf{}, 0, buf, err
	}
	return readBuf{b: buf, base: payloadStart, section: name}, count, buf, nil
}
