package archetype

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"
	"unsafe"

	"github.com/mlange-42/ark/ecs"
)

// Encode writes the world to w as a PECS file: every alive entity with its id, generation and
// components, Ark's whole entity pool (dead and recycled slots included), the relation targets
// of every table, and the world's resources. The same world gives the same bytes once the
// timestamp is fixed with [Timestamp].
//
// Component types without pointers, strings, slices, maps or interfaces are written as raw
// column memory; all others, and resources, as msgpack values with every field (see the package
// documentation, "Faithful or refused"). A component or resource type that cannot come back
// exactly makes Encode fail with [ErrUnsupportedType] before it writes anything, as does a value
// that cannot ([ErrCycle], an unregistered type behind an interface).
//
// Encode only reads the world. It must not be changed while Encode runs. Encode knows the
// file's size before it writes the first byte: a writer that can grow (one with a Grow(n int)
// method, such as *bytes.Buffer) is grown once to it and written to directly; any other writer
// gets the file through a buffer. Encode holds in memory only the msgpack-encoded columns and
// resources (and, with [LZ4], the compressed blobs), because the archetype table gives every
// column's size before the data. To get the file as bytes, use [AppendEncode].
//
// Options: [Timestamp], [SkipComponents], [SkipEntitiesWith], [Transient], [SkipResources],
// [SkipResourceNames], [WithoutResources], [LZ4], [TypeVersion], [Key] (the file is then
// encrypted, and written whole at once).
func Encode(w io.Writer, world *ecs.World, opts ...Option) error {
	e, size, err := planFile(world, opts)
	if err != nil {
		return err
	}
	if e.key != nil {
		b, err := e.sealed(nil, size)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	if b, ok := w.(*bytes.Buffer); ok {
		return fillBuffer(b, e, size)
	}
	sw := newStreamWriter(w, size)
	if err := e.write(sw); err != nil {
		return err
	}
	return sw.flush()
}

// fillBuffer writes the file of size bytes into buf's own memory, as AppendEncode writes into
// a slice: buf grows once, and the file is encoded straight into its spare capacity through
// ReadFrom, the one way a bytes.Buffer lets a writer fill its memory in place. Writing through
// buf.Write instead would copy every byte a second time.
func fillBuffer(buf *bytes.Buffer, e *plan, size int) error {
	reserve(buf, max(size, bytes.MinRead)) // ReadFrom asks for MinRead bytes of room
	f := &filler{e: e, size: size}
	if _, err := buf.ReadFrom(f); err != nil {
		clear(buf.AvailableBuffer()[:buf.Available()]) // no byte of new memory stays unwritten
		return err
	}
	return nil
}

// filler is the reader through which fillBuffer encodes a file into a bytes.Buffer's memory:
// its first Read writes the whole file into the slice it is given.
type filler struct {
	e    *plan
	size int
	done bool
}

func (f *filler) Read(p []byte) (int, error) {
	if f.done {
		return 0, io.EOF
	}
	f.done = true
	if len(p) < f.size { // reserve gave room for the file: a bytes.Buffer that does otherwise is not the standard library's
		return 0, fmt.Errorf("archetype: bytes.Buffer offered %d bytes for a file of %d", len(p), f.size)
	}
	sw := newAppendWriter(p[:0], f.size)
	if err := f.e.write(sw); err != nil {
		return 0, err
	}
	return len(sw.b), io.EOF
}

// AppendEncode appends the PECS file of the world to dst and returns the extended slice, as
// [Encode] would write it: the same bytes for the same world and options. dst grows at most
// once, to the file's size, which is known before the first byte. On error it returns dst
// unchanged (the bytes between its length and its capacity may have been overwritten).
//
// Options: as for [Encode].
func AppendEncode(dst []byte, world *ecs.World, opts ...Option) ([]byte, error) {
	e, size, err := planFile(world, opts)
	if err != nil {
		return dst, err
	}
	if e.key != nil {
		return e.sealed(dst, size)
	}
	sw := newAppendWriter(dst, size)
	if err := e.write(sw); err != nil {
		clear(sw.b[len(sw.b):cap(sw.b)]) // no byte of the new memory stays unwritten
		return dst, err
	}
	return sw.b, nil
}

// sealed appends the encrypted file of the plan (see [Key]) to dst: the plaintext file of size
// bytes is written into memory of its own first, then sealed.
func (e *plan) sealed(dst []byte, size int) ([]byte, error) {
	sw := newAppendWriter(nil, size)
	if err := e.write(sw); err != nil {
		return dst, err
	}
	return sealFile(dst, sw.b, e.key)
}

// planFile gathers everything Encode writes and returns the plan with the file's size.
func planFile(world *ecs.World, opts []Option) (*plan, int, error) {
	o := buildOptions(opts)
	if err := o.checkKey(); err != nil {
		return nil, 0, err
	}
	e, err := newEncoding(world, o)
	if err != nil {
		return nil, 0, err
	}
	if e.header.FileSize > math.MaxInt {
		return nil, 0, fmt.Errorf("archetype: file of %d bytes is too large", e.header.FileSize)
	}
	e.key = o.key
	return e, int(e.header.FileSize), nil
}

// plan is everything Encode writes, gathered before the first byte.
type plan struct {
	key       []byte // [Key]: the file is sealed once written (nil: plaintext)
	header    fileHeader
	registry  []byte
	entries   []tableEntry
	blobs     [][]blob // per entry, per data column
	pool      pool
	refs      []byte // the reference table of an entity section, instead of the pool
	resources []byte
}

// component is what the encoder knows about one component ID of the world.
type component struct {
	id         ecs.ID
	info       *typeInfo
	relation   bool
	skip       bool // SkipComponents
	skipEntity bool // SkipEntitiesWith
	file       *fileType
}

// worldTable is one non-empty Ark table, found through the world's statistics.
type worldTable struct {
	ids     []ecs.ID // component IDs, Ark's order
	first   int      // index into the dump's alive list
	count   int
	skipped bool
}

var errOutOfStep = errors.New("archetype: Ark's statistics and entity order disagree; this Ark version is not supported")

// planner gathers what Encode writes.
type planner struct {
	world  *ecs.World
	u      ecs.Unsafe
	o      *options
	dump   ecs.EntityDump
	comps  [256]*component
	tables []worldTable
	dead   []bool // slots of skipped entities; nil when none
	types  []*fileType
	index  map[*fileType]uint16 // registry index of each type
	ids    [][typeIDSize]byte   // type id of each registry index
	enc    *venc                // encodes the values that are not raw memory; collects concrete types
}

func newEncoding(world *ecs.World, o *options) (*plan, error) {
	pl := &planner{world: world, u: world.Unsafe(), o: o}
	pl.dump = pl.u.DumpEntities()
	e := &plan{pool: pool{slots: slotsOf(pl.dump.Entities), next: pl.dump.Next, available: pl.dump.Available}}

	// Ark's statistics list the tables in the order its queries visit them, which is the
	// order of the dump's alive list: each table is a run of that list.
	var err error
	if pl.tables, err = findTables(world, &pl.dump); err != nil {
		return nil, err
	}
	pl.skipEntities(&e.pool)
	pl.enc = newVenc()
	res, err := pl.gatherResources()
	if err != nil {
		return nil, err
	}
	if err := pl.registry(res); err != nil {
		return nil, err
	}
	var comp compressor
	for i := range pl.tables {
		if pl.tables[i].skipped {
			continue
		}
		entry, blobs, err := pl.entry(&pl.tables[i], &comp)
		if err != nil {
			return nil, err
		}
		e.entries = append(e.entries, entry)
		e.blobs = append(e.blobs, blobs)
	}
	concrete, err := pl.concreteTypes()
	if err != nil {
		return nil, err
	}
	e.registry = appendRegistry(append(pl.types, concrete...))
	e.resources = appendResources(res, pl.index, o.lz4, &comp)

	ts := time.Now().UnixMilli()
	if o.hasTimestamp {
		ts = o.timestamp
	}
	var flags uint32
	if o.lz4 {
		flags |= FlagLZ4
	}
	minor := uint16(worldMinor)
	if o.compactPool {
		flags |= FlagCompactPool
		e.pool.compact = true
		minor = VersionMinor
	}
	e.header = fileHeader{
		VersionMajor: VersionMajor, VersionMinor: minor, Flags: flags,
		Entities: uint64(len(e.pool.alive)), Archetypes: uint32(len(e.entries)),
		Types: uint32(len(pl.types) + len(concrete)), Resources: uint32(len(res)), Timestamp: ts,
	}
	e.layout()
	return e, nil
}

// component returns what the planner knows about a component ID.
func (pl *planner) component(id ecs.ID) *component {
	if c := pl.comps[id.Index()]; c != nil {
		return c
	}
	ci, _ := ecs.ComponentInfo(pl.world, id)
	t := ci.Type
	c := &component{id: id, info: infoOf(t), relation: ci.IsRelation,
		skip: pl.o.skipComps[t], skipEntity: pl.o.skipEntities[t]}
	pl.comps[id.Index()] = c
	return c
}

// skipEntities marks the tables of SkipEntitiesWith, frees their entities' slots in the pool as
// Ark would on removal, and sets the pool's alive list to the saved entities.
func (pl *planner) skipEntities(p *pool) {
	for i := range pl.tables {
		t := &pl.tables[i]
		for _, id := range t.ids {
			if pl.component(id).skipEntity {
				t.skipped = true
			}
		}
		if !t.skipped {
			continue
		}
		if pl.dead == nil {
			pl.dead = make([]bool, len(p.slots))
		}
		for _, id := range pl.dump.Alive[t.first : t.first+t.count] {
			pl.dead[id] = true
			p.recycle(id)
		}
	}
	p.alive = pl.dump.Alive
	if pl.dead != nil {
		p.alive = make([]uint32, 0, len(pl.dump.Alive))
		for _, id := range pl.dump.Alive {
			if !pl.dead[id] {
				p.alive = append(p.alive, id)
			}
		}
	}
}

// registry lists every component type a saved table uses, then the saved resources, in
// registry order. A component type that cannot be saved makes it fail.
func (pl *planner) registry(res []savedResource) error {
	for i := range pl.tables {
		if pl.tables[i].skipped {
			continue
		}
		for _, id := range pl.tables[i].ids {
			c := pl.component(id)
			if c.skip || c.file != nil {
				continue
			}
			var err error
			if c.file, err = newFileType(c.info, pl.o, pl.o.transient[c.info.typ]); err != nil {
				return err
			}
			if c.relation {
				c.file.flags |= TypeRelation
			}
			pl.types = append(pl.types, c.file)
		}
	}
	for _, r := range res {
		pl.types = append(pl.types, r.file)
	}
	pl.index, pl.ids = indexTypes(pl.types)
	return nil
}

// concreteTypes lists the concrete types met behind interfaces, sorted by name, for the end of
// the registry.
func (pl *planner) concreteTypes() ([]*fileType, error) {
	var out []*fileType
	for name, ce := range pl.enc.types {
		schema, ok := appendValueSchema(nil, ce.plan)
		if !ok {
			return nil, fmt.Errorf("%w: %v, held by an interface, needs a schema of more than %d bytes", ErrUnsupportedType, ce.typ, maxValueSchemaLen)
		}
		if len(name) > maxNameLen {
			return nil, fmt.Errorf("%w: %v, held by an interface, has a name of more than %d bytes", ErrUnsupportedType, ce.typ, maxNameLen)
		}
		t := &fileType{id: typeID(name), name: name, flags: TypeConcrete, schema: schema}
		if ce.typ.Size() <= math.MaxUint32 {
			t.size = uint32(ce.typ.Size())
		}
		if t.size == 0 {
			t.flags |= TypeZeroSized
		}
		out = append(out, t)
	}
	if len(pl.types)+len(out) > 1<<16 {
		return nil, fmt.Errorf("archetype: %d types do not fit in one file", len(pl.types)+len(out))
	}
	sortTypes(out)
	return out, nil
}

// entry describes one saved table and gathers its columns.
func (pl *planner) entry(t *worldTable, comp *compressor) (tableEntry, []blob, error) {
	slots := slotsOf(pl.dump.Entities)
	first := entityOf(slots[pl.dump.Alive[t.first]])
	last := entityOf(slots[pl.dump.Alive[t.first+t.count-1]])
	var kept []*component
	for _, id := range t.ids {
		if c := pl.component(id); !c.skip {
			kept = append(kept, c)
		}
	}
	sort.Slice(kept, func(a, b int) bool { return pl.index[kept[a].file] < pl.index[kept[b].file] })
	entry := tableEntry{count: uint32(t.count)}
	var blobs []blob
	for _, c := range kept {
		ci := pl.index[c.file]
		entry.comps = append(entry.comps, ci)
		if c.relation {
			target := pl.u.GetRelation(first, c.id)
			if target != pl.u.GetRelation(last, c.id) {
				return entry, nil, errOutOfStep
			}
			if !target.IsZero() && (!pl.world.Alive(target) || pl.dead != nil && pl.dead[target.ID()]) {
				target = ecs.Entity{} // as Ark does when a target is removed
			}
			entry.rels = append(entry.rels, relEntry{comp: ci, target: slotOf(target)})
		}
		if !c.file.hasData() {
			continue
		}
		b, err := pl.columnBlob(c, t, first, last)
		if err != nil {
			return entry, nil, err
		}
		b.stored = b.raw
		if pl.o.lz4 {
			comp.compress(&b)
		}
		entry.cols = append(entry.cols, colEntry{comp: ci, raw: uint64(len(b.raw)), stored: uint64(len(b.stored))})
		b.raw = nil // only the stored bytes are written; a replaced msgpack buffer can go
		blobs = append(blobs, b)
	}
	entry.archID = archetypeID(pl.ids, entry.comps)
	return entry, blobs, nil
}

// findTables lists the world's non-empty tables in query order, each with its run of the dump's
// alive list, and checks that the run really is one table.
func findTables(world *ecs.World, dump *ecs.EntityDump) ([]worldTable, error) {
	u := world.Unsafe()
	stats := world.Stats()
	var tables []worldTable
	pos := 0
	for ai := range stats.Archetypes {
		a := &stats.Archetypes[ai]
		for _, ts := range a.Tables {
			if ts.Size == 0 {
				continue
			}
			if pos+ts.Size > len(dump.Alive) {
				return nil, errOutOfStep
			}
			first := dump.Entities[dump.Alive[pos]]
			ids := u.IDs(first)
			t := worldTable{ids: make([]ecs.ID, ids.Len()), first: pos, count: ts.Size}
			if ids.Len() != len(a.ComponentIDs) {
				return nil, errOutOfStep
			}
			for j := range t.ids {
				t.ids[j] = ids.Get(j)
				if t.ids[j].Index() != a.ComponentIDs[j] {
					return nil, errOutOfStep
				}
			}
			tables = append(tables, t)
			pos += ts.Size
		}
	}
	if pos != len(dump.Alive) {
		return nil, errOutOfStep
	}
	return tables, nil
}

// newFileType describes a Go type for the registry. The types whose values are stored as
// msgpack get their value schema; one that cannot be saved is refused.
func newFileType(info *typeInfo, o *options, transient bool) (*fileType, error) {
	t := &fileType{id: info.id, name: info.name, version: o.version(info), size: info.size, info: info}
	switch {
	case info.zero:
		t.flags |= TypeZeroSized
	case transient:
		t.flags |= TypeTransient
	case info.raw:
		t.flags |= TypeRaw
		t.schema = info.schema
	default:
		schema, err := valueSchemaOf(info.typ, "component")
		if err != nil {
			return nil, err
		}
		t.schema = schema
	}
	if transient {
		t.flags |= TypeTransient
	}
	return t, nil
}

// valueSchemaOf returns the value schema of a type, or why it cannot be saved.
func valueSchemaOf(t reflect.Type, kind string) ([]byte, error) {
	p, terr := planOf(t)
	if terr != nil {
		return nil, refusal(kind, t, terr)
	}
	schema, ok := appendValueSchema(nil, p)
	if !ok {
		return nil, refusal(kind, t, &typeError{typ: t, why: fmt.Sprintf("the type needs a schema of more than %d bytes", maxValueSchemaLen)})
	}
	return schema, nil
}

// refusal is the error for a type that cannot be saved: what, where, why, and the ways out.
func refusal(kind string, t reflect.Type, terr *typeError) error {
	leave := "archetype.Transient, SkipComponents or SkipEntitiesWith"
	if kind == "resource" {
		leave = "archetype.SkipResources"
	}
	return fmt.Errorf("%w: %s %s: field %s; ways out: give the field a type that can be saved (or a handle such as an ecs.Entity), "+
		"implement encoding.BinaryMarshaler and BinaryUnmarshaler (or msgpack.CustomEncoder and CustomDecoder) on %s or on the field's type, "+
		"register the concrete types behind interfaces with archetype.Register, or leave the type out with %s",
		ErrUnsupportedType, kind, typeName(t), terr.describe(t), shortName(t), leave)
}

// columnBlob returns the column of component c for table t, from its first to its last row.
// Raw columns are the table's memory itself: Ark keeps a column contiguous, so the first row's
// address is the column's start. A big-endian host writes a swapped copy (endian.go).
func (pl *planner) columnBlob(c *component, t *worldTable, first, last ecs.Entity) (blob, error) {
	count := t.count
	base := pl.u.Get(first, c.id)
	size := uintptr(c.info.size)
	if uintptr(pl.u.Get(last, c.id)) != uintptr(base)+uintptr(count-1)*size {
		return blob{}, errOutOfStep
	}
	if c.info.raw {
		mem := unsafe.Slice((*byte)(base), uintptr(count)*size)
		if hostBigEndian {
			mem = append([]byte(nil), mem...)
			swapColumn(mem, c.info.swaps, size)
		}
		return blob{raw: mem}, nil
	}
	p, _ := planOf(c.info.typ) // checked by newFileType
	e := pl.enc
	e.b = make([]byte, 0, min(count*int(min(size, 64)), 1<<20))
	if p.flat {
		b := e.b
		for i := range count {
			if i == 1 {
				b = slices.Grow(b, (count-1)*(len(b)+len(b)/4))
			}
			b = e.appendFlat(b, p, unsafe.Add(base, uintptr(i)*size))
		}
		e.b = nil
		return blob{raw: b}, nil
	}
	for i := range count {
		if i == 1 { // size the buffer after the first value
			e.b = slices.Grow(e.b, (count-1)*(len(e.b)+len(e.b)/4))
		}
		if err := e.value(p, unsafe.Add(base, uintptr(i)*size)); err != nil {
			return blob{}, valueRefusal("component", c.info.typ, fmt.Sprintf(", entity %d", pl.dump.Alive[t.first+i]), err)
		}
	}
	b := e.b
	e.b = nil
	return blob{raw: b}, nil
}

// valueRefusal is the error for a value that cannot be saved, naming the field.
func valueRefusal(kind string, t reflect.Type, where string, err error) error {
	return &pathError{
		msg: fmt.Sprintf("archetype: %s %s%s, field %s: %s", kind, typeName(t), where, pathOf(err, t), strings.TrimPrefix(err.Error(), "archetype: ")),
		err: err,
	}
}

// pathError is an error with a message of its own that still matches the sentinels of err.
type pathError struct {
	msg string
	err error
}

func (e *pathError) Error() string { return e.msg }
func (e *pathError) Unwrap() error { return e.err }

// savedResource is a resource on its way into the file.
type savedResource struct {
	file *fileType
	blob blob
}

func (pl *planner) gatherResources() ([]savedResource, error) {
	world, o := pl.world, pl.o
	if o.noResources {
		return nil, nil
	}
	var out []savedResource
	for _, id := range ecs.ResourceIDs(world) {
		if !world.Resources().Has(id) {
			continue
		}
		t, _ := ecs.ResourceType(world, id)
		if o.skipsResource(t) {
			continue
		}
		v := reflect.ValueOf(world.Resources().Get(id))
		if v.Kind() != reflect.Pointer || v.Type().Elem() != t || v.IsNil() {
			return nil, fmt.Errorf("archetype: resource %s is held as %s, not as a pointer to it", typeName(t), v.Type())
		}
		info := infoOf(t)
		f := &fileType{id: info.id, name: info.name, version: o.version(info), size: info.size, info: info, flags: TypeResource}
		if info.zero {
			f.flags |= TypeZeroSized
		}
		schema, err := valueSchemaOf(t, "resource")
		if err != nil {
			return nil, err
		}
		f.schema = schema
		p, _ := planOf(t)
		pl.enc.b = nil
		if err := pl.enc.value(p, v.UnsafePointer()); err != nil {
			return nil, valueRefusal("resource", t, "", err)
		}
		out = append(out, savedResource{file: f, blob: blob{raw: pl.enc.b}})
		pl.enc.b = nil
	}
	return out, nil
}

// appendResources encodes the resource section; resources come in registry order.
func appendResources(res []savedResource, index map[*fileType]uint16, lz4 bool, c *compressor) []byte {
	sort.Slice(res, func(i, j int) bool { return index[res[i].file] < index[res[j].file] })
	size := 0
	for i := range res {
		if lz4 {
			c.compress(&res[i].blob)
		} else {
			res[i].blob.stored = res[i].blob.raw
		}
		size += resourceFixSize + len(res[i].blob.stored)
	}
	b := sectionBuf(uint32(len(res)), size)
	for _, r := range res {
		b.u16(index[r.file])
		b.u64(uint64(len(r.blob.raw)))
		b.u64(uint64(len(r.blob.stored)))
		b.bytes(r.blob.stored)
	}
	return finishSection(b)
}

// layout fills in the data offsets and the file size.
func (e *plan) layout() {
	tablesSize := int64(sectionHeadSize + crcSize)
	for i := range e.entries {
		tablesSize += int64(entrySize(&e.entries[i]))
	}
	entities := e.pool.sectionSize()
	if e.header.Flags&FlagSection != 0 {
		entities = int64(len(e.refs))
	}
	off := headerSize + int64(len(e.registry)) + tablesSize + entities
	for i := range e.entries {
		en := &e.entries[i]
		en.offset = uint64(off)
		for _, c := range en.cols {
			en.size += c.stored + crcSize
		}
		off += int64(en.size)
	}
	e.header.FileSize = uint64(off + int64(len(e.resources)) + footerSize)
}

// write writes the planned file; the caller flushes sw.
func (e *plan) write(sw *streamWriter) error {
	sw.write(appendHeader(nil, &e.header))
	sw.write(e.registry)
	sw.write(appendTables(e.entries))
	if e.header.Flags&FlagSection != 0 {
		sw.write(e.refs)
	} else {
		e.pool.write(sw)
	}
	for i := range e.blobs {
		for j := range e.blobs[i] {
			e.blobs[i][j].write(sw)
		}
	}
	sw.write(e.resources)
	if sw.err == nil && sw.off != int64(e.header.FileSize)-footerSize {
		return fmt.Errorf("archetype: wrote %d bytes before the footer, planned %d", sw.off, e.header.FileSize-footerSize)
	}
	sw.write(appendFooter(nil, &footer{checksumType: ChecksumCRC32C, checksum: uint64(sw.crc), fileSize: e.header.FileSize}))
	return sw.err
}
