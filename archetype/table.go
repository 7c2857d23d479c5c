package archetype

import (
	"fmt"
	"hash/fnv"
)

// tableEntry is one entry of the archetype table: one Ark table, that is an archetype together
// with the targets of its relation components.
type tableEntry struct {
	archID uint64     // FNV-1a 64 of the component type ids, in order
	count  uint32     // entities
	comps  []uint16   // type registry indices, ascending
	rels   []relEntry // one per relation component, ascending by type index
	offset uint64     // file offset of the first column blob
	size   uint64     // bytes of all column blobs, CRCs included
	cols   []colEntry // one per component with data, in component order
	first  uint64     // index of the table's first entity in the pool's alive list
}

type relEntry struct {
	comp   uint16
	target slot
}

type colEntry struct {
	comp   uint16 // type registry index
	raw    uint64 // bytes before compression
	stored uint64 // bytes in the file (less than raw when LZ4-compressed)
}

// archetypeID hashes the type ids of the given registry entries.
func archetypeID(ids [][typeIDSize]byte, comps []uint16) uint64 {
	h := fnv.New64a()
	for _, c := range comps {
		_, _ = h.Write(ids[c][:])
	}
	return h.Sum64()
}

func entrySize(e *tableEntry) int {
	return entryFixedSize + len(e.comps)*entryCompSize + len(e.rels)*entryRelSize + len(e.cols)*entryColSize
}

// appendTables encodes the archetype table section.
func appendTables(entries []tableEntry) []byte {
	size := 0
	for i := range entries {
		size += entrySize(&entries[i])
	}
	b := sectionBuf(uint32(len(entries)), size)
	for i := range entries {
		e := &entries[i]
		b.u64(e.archID)
		b.u32(e.count)
		b.u16(uint16(len(e.comps)))
		for _, c := range e.comps {
			b.u16(c)
		}
		b.u16(uint16(len(e.rels)))
		for _, r := range e.rels {
			b.u16(r.comp)
			b.u32(r.target.id)
			b.u32(r.target.gen)
		}
		b.u64(e.offset)
		b.u64(e.size)
		b.u16(uint16(len(e.cols)))
		for _, c := range e.cols {
			b.u64(c.raw)
			b.u64(c.stored)
		}
	}
	return finishSection(b)
}

// readTables reads the archetype table section and checks every entry against the type
// registry and the header: type indices, canonical order, relation targets for exactly the
// relation components, column sizes, and data offsets that follow each other.
func readTables(s *streamReader, h *fileHeader, types []fileType, buf []byte) ([]tableEntry, []byte, error) {
	r, count, buf, err := s.section(buf, "archetype table", entryFixedSize)
	if err != nil {
		return nil, buf, err
	}
	if count != h.Archetypes {
		return nil, buf, fmt.Errorf("%w: archetype table at offset %d: %d entries, header says %d", ErrCorrupt, r.base-sectionHeadSize, count, h.Archetypes)
	}
	lz4 := h.Flags&FlagLZ4 != 0
	ids := make([][typeIDSize]byte, len(types))
	for i := range types {
		ids[i] = types[i].id
	}
	entries := make([]tableEntry, count)
	var total, dataEnd uint64
	for i := range entries {
		e := &entries[i]
		at := r.offset()
		why, err := readEntry(&r, e)
		if err != nil {
			return nil, buf, err
		}
		if why == "" {
			why = checkEntry(e, types, ids, lz4)
		}
		if why == "" {
			why = checkEntryData(e, i > 0, dataEnd, h)
		}
		if why != "" {
			return nil, buf, fmt.Errorf("%w: archetype table entry %d at offset %d: %s", ErrCorrupt, i, at, why)
		}
		e.first = total
		total += uint64(e.count)
		dataEnd = e.offset + e.size
	}
	if r.remaining() != 0 {
		return nil, buf, fmt.Errorf("%w: archetype table at offset %d: %d bytes after the last entry", ErrCorrupt, r.offset(), r.remaining())
	}
	if total != h.Entities {
		return nil, buf, fmt.Errorf("%w: archetype table: entries hold %d entities, header says %d", ErrCorrupt, total, h.Entities)
	}
	return entries, buf, nil
}

// readEntry reads one entry of the archetype table into e. It returns what is wrong with the
// counts it holds, or the reader's error.
func readEntry(r *readBuf, e *tableEntry) (string, error) {
	e.archID = r.u64()
	e.count = r.u32()
	nc := int(r.u16())
	if nc*entryCompSize > r.remaining() {
		return fmt.Sprintf("%d components do not fit", nc), nil
	}
	e.comps = make([]uint16, nc)
	for j := range e.comps {
		e.comps[j] = r.u16()
	}
	nr := int(r.u16())
	if nr > nc {
		return fmt.Sprintf("%d relations for %d components", nr, nc), nil
	}
	e.rels = make([]relEntry, nr)
	for j := range e.rels {
		e.rels[j] = relEntry{comp: r.u16(), target: slot{id: r.u32(), gen: r.u32()}}
	}
	e.offset = r.u64()
	e.size = r.u64()
	ncol := int(r.u16())
	if ncol > nc {
		return fmt.Sprintf("%d columns for %d components", ncol, nc), nil
	}
	e.cols = make([]colEntry, ncol)
	for j := range e.cols {
		e.cols[j] = colEntry{raw: r.u64(), stored: r.u64()}
	}
	if r.err != nil {
		return "", r.err
	}
	if e.count == 0 {
		return "no entities", nil
	}
	return "", nil
}

// checkEntry checks an entry's components against the type registry: registered components in
// ascending order, a target for exactly the relation components, a column for exactly those
// with data, and the archetype id they hash to. It returns what is wrong, or "".
func checkEntry(e *tableEntry, types []fileType, ids [][typeIDSize]byte, lz4 bool) string {
	col, rel := 0, 0
	for j, c := range e.comps {
		if int(c) >= len(types) || types[c].is(TypeResource) || types[c].is(TypeConcrete) {
			return fmt.Sprintf("component %d is type %d, not a component in the registry", j, c)
		}
		if j > 0 && c <= e.comps[j-1] {
			return "components not in ascending order"
		}
		t := &types[c]
		if t.is(TypeRelation) {
			if rel >= len(e.rels) || e.rels[rel].comp != c {
				return fmt.Sprintf("relation component %q has no target", t.name)
			}
			rel++
		}
		if t.hasData() {
			if col >= len(e.cols) {
				return fmt.Sprintf("column of %q missing", t.name)
			}
			e.cols[col].comp = c
			if err := checkColumn(t, e.count, &e.cols[col], lz4); err != "" {
				return fmt.Sprintf("column of %q: %s", t.name, err)
			}
			col++
		}
	}
	if rel != len(e.rels) || col != len(e.cols) {
		return fmt.Sprintf("%d relations and %d columns, components need %d and %d", len(e.rels), len(e.cols), rel, col)
	}
	if e.archID != archetypeID(ids, e.comps) {
		return fmt.Sprintf("archetype id %#x does not match its components", e.archID)
	}
	return ""
}

// checkEntryData checks where an entry's columns lie: their sizes add up to its data size, it
// starts where the previous table's data ends (after is false for the first), and it ends
// before the footer. It returns what is wrong, or "".
func checkEntryData(e *tableEntry, after bool, dataEnd uint64, h *fileHeader) string {
	var size uint64
	for _, c := range e.cols {
		size += c.stored + crcSize
	}
	if size != e.size {
		return fmt.Sprintf("data size %d, columns add up to %d", e.size, size)
	}
	if after && e.offset != dataEnd {
		return fmt.Sprintf("data offset %d, previous table ends at %d", e.offset, dataEnd)
	}
	end := e.offset + e.size
	if e.offset > h.FileSize || end > h.FileSize-footerSize {
		return fmt.Sprintf("data [%d, %d) lies past the end of the file (%d bytes)", e.offset, end, h.FileSize)
	}
	return ""
}

// checkColumn checks the sizes of one column against its type; it returns what is wrong, or "".
func checkColumn(t *fileType, count uint32, c *colEntry, lz4 bool) string {
	switch {
	case t.is(TypeRaw) && c.raw != uint64(count)*uint64(t.size):
		return fmt.Sprintf("%d raw bytes for %d entities of %d bytes", c.raw, count, t.size)
	case c.raw < uint64(count):
		return fmt.Sprintf("%d bytes for %d entities", c.raw, count)
	case c.stored > c.raw:
		return fmt.Sprintf("%d stored bytes for %d raw bytes", c.stored, c.raw)
	case c.stored < c.raw && !lz4:
		return "compressed, but the header has no LZ4 flag"
	case c.stored < c.raw && (c.stored == 0 || c.raw > c.stored*maxLZ4Ratio+16):
		return fmt.Sprintf("%d raw bytes cannot come from %d compressed bytes", c.raw, c.stored)
	}
	return ""
}
