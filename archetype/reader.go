package archetype

import (
	"fmt"
	"io"
)

// fileReader walks a PECS file front to back, section by section. Decode, ReadInfo and
// ExportJSON share it; it knows nothing of worlds.
type fileReader struct {
	s      *streamReader
	header fileHeader
	types  []fileType
	tables []tableEntry
	pool   *pool
	refs   []ref // the reference table of an entity section
	footer footer
	buf    []byte // stored bytes of the current section or blob
	zbuf   []byte // decompressed bytes of the current blob
	key    []byte // the key of an encrypted file ([Key]); nil without
	stored uint64 // the file size as stored: the header's, or an encrypted file's outer header's
}

func newFileReader(r io.Reader, key []byte) *fileReader {
	return &fileReader{s: newStreamReader(r), key: key}
}

// readHead reads the header, the type registry and the archetype table.
func (f *fileReader) readHead() error {
	var b [headerSize]byte
	if err := f.s.full(b[:], "header"); err != nil {
		return err
	}
	h, err := parseHeader(b[:])
	if err != nil {
		return err
	}
	f.header = h
	f.s.fileSize = int64(h.FileSize)
	if f.stored == 0 {
		f.stored = h.FileSize
	}
	if h.Flags&flagEncrypted != 0 {
		return f.readEncrypted(&h)
	}
	if f.types, f.buf, err = readRegistry(f.s, &h, f.buf); err != nil {
		return err
	}
	f.tables, f.buf, err = readTables(f.s, &h, f.types, f.buf)
	return err
}

// readEncrypted opens an encrypted file (see crypt.go) and reads the head of the plaintext file
// it holds as readHead does; from then on f reads the plaintext file.
func (f *fileReader) readEncrypted(h *fileHeader) error {
	plain, err := f.openStored(h)
	if err != nil {
		return err
	}
	f.s, f.key = newStreamReader(sectionBuffer(plain)), nil
	return f.readHead()
}

// readPool reads the entity pool and checks the relation targets of every table against it:
// each is the zero entity or a saved alive entity.
func (f *fileReader) readPool() error {
	read := readPool
	if f.header.Flags&FlagCompactPool != 0 {
		read = readCompactPool
	}
	p, err := read(f.s, &f.header)
	if err != nil {
		return err
	}
	for i := range f.tables {
		for _, r := range f.tables[i].rels {
			if r.target != (slot{}) && !p.isAlive(r.target) {
				return fmt.Errorf("%w: archetype table entry %d: relation %q targets entity %d (generation %d), which is not alive",
					ErrCorrupt, i, f.types[r.comp].name, r.target.id, r.target.gen)
			}
		}
	}
	f.pool = p
	if len(f.tables) > 0 && f.tables[0].offset != uint64(f.s.off) {
		return fmt.Errorf("%w: archetype table entry 0: data offset %d, data starts at %d", ErrCorrupt, f.tables[0].offset, f.s.off)
	}
	return nil
}

// columnSection names a column for error messages.
func (f *fileReader) columnSection(table int, c *colEntry) string {
	return fmt.Sprintf("archetype %d column %q", table, f.types[c.comp].name)
}

// resource is one stored resource.
type resource struct {
	typ    uint16
	raw    uint64
	stored []byte // valid until the next read
}

// readResources reads the resource section.
func (f *fileReader) readResources() ([]resource, error) {
	h := &f.header
	if len(f.tables) > 0 {
		last := &f.tables[len(f.tables)-1]
		if end := last.offset + last.size; uint64(f.s.off) != end {
			return nil, fmt.Errorf("%w: resources at offset %d: entity data ends at %d", ErrCorrupt, f.s.off, end)
		}
	}
	r, count, buf, err := f.s.section(f.buf, "resources", resourceFixSize)
	f.buf = buf
	if err != nil {
		return nil, err
	}
	if count != h.Resources {
		return nil, fmt.Errorf("%w: resources at offset %d: %d resources, header says %d", ErrCorrupt, r.base-sectionHeadSize, count, h.Resources)
	}
	out := make([]resource, count)
	for i := range out {
		at := r.offset()
		res := &out[i]
		res.typ = r.u16()
		res.raw = r.u64()
		stored := r.u64()
		if stored > uint64(r.remaining()) {
			r.fail("resource %d: %d stored bytes, %d left", i, stored, r.remaining())
		}
		res.stored = r.take(int(stored))
		if r.err != nil {
			return nil, r.err
		}
		c := colEntry{comp: res.typ, raw: res.raw, stored: stored}
		switch {
		case int(res.typ) >= len(f.types) || !f.types[res.typ].is(TypeResource):
			return nil, fmt.Errorf("%w: resource %d at offset %d: type %d is not a resource type", ErrCorrupt, i, at, res.typ)
		case i > 0 && res.typ <= out[i-1].typ:
			return nil, fmt.Errorf("%w: resource %d at offset %d: resources not in ascending type order", ErrCorrupt, i, at)
		}
		if msg := checkColumn(&f.types[res.typ], 1, &c, h.Flags&FlagLZ4 != 0); msg != "" {
			return nil, fmt.Errorf("%w: resource %d (%q) at offset %d: %s", ErrCorrupt, i, f.types[res.typ].name, at, msg)
		}
	}
	if r.remaining() != 0 {
		return nil, fmt.Errorf("%w: resources at offset %d: %d bytes after the last resource", ErrCorrupt, r.offset(), r.remaining())
	}
	return out, nil
}

// resourceBytes returns the raw bytes of a stored resource, decompressing when needed.
func (f *fileReader) resourceBytes(r *resource) ([]byte, error) {
	if uint64(len(r.stored)) == r.raw {
		return r.stored, nil
	}
	f.zbuf = growLen(f.zbuf[:0], int(r.raw))
	n, err := lz4Uncompress(r.stored, f.zbuf)
	if err != nil || uint64(n) != r.raw {
		return nil, fmt.Errorf("%w: resource %q: LZ4 block does not expand to %d bytes", ErrCorrupt, f.types[r.typ].name, r.raw)
	}
	return f.zbuf, nil
}

// readFooter reads the footer and checks the whole-file checksum.
func (f *fileReader) readFooter() error {
	off := f.s.off
	if off != int64(f.header.FileSize)-footerSize {
		return fmt.Errorf("%w: footer at offset %d: header says it starts at %d", ErrCorrupt, off, int64(f.header.FileSize)-footerSize)
	}
	crc := f.s.fileCRC()
	var b [footerSize]byte
	if err := f.s.full(b[:], "footer"); err != nil {
		return err
	}
	var err error
	f.footer, err = parseFooter(b[:], off, crc, &f.header)
	return err
}
