package archetype

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"sync"
	"unsafe"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/internal/pecs"
)

// An entity section is a PECS file of chosen entities, not of a whole world: the chunk store keeps
// the entities that stand in a chunk in one, and a save directory keeps each player in one. It is
// read into a live world that already holds other entities, so it cannot keep entity ids: its
// entities are created anew, and every ecs.Entity value inside their components (and every
// relation target) is stored as a reference, resolved when the section is read:
//
//   - to an entity of the same section: the entity created for it;
//   - to an entity that the caller knows by a stable id ([StableRefs]): what the caller's resolver
//     returns for that id (the entity with it, when it is loaded);
//   - to any other entity: that entity as it is (a global entity of a world whose ids survive a
//     load, or a handle that is dead anyway).
//
// Layout (format 2.1, header flag [FlagSection]): the file layout of the package documentation,
// with the entity pool replaced by the reference table, no resources and a timestamp of 0:
//
//	header │ type registry │ archetype table │ reference table │ entity data │ resources (0) │ footer
//
//	reference table:  count u32 │ size u64 │ (kind u8, value u64) × count │ CRC32C u32
//	  kind 1 (local):  value = index of the entity in the section (table after table, row after row)
//	  kind 2 (stable): value = the stable id
//	  kind 3 (exact):  value = entity id u32 | generation u32 << 32
//
// Inside the columns and the relation targets of the archetype table, an ecs.Entity value is the
// zero entity or (id = index into the reference table + 1, generation = 0). A section holds at most
// as many entities as it has bytes, so that reading one allocates no more than its size justifies.

// Kinds of reference-table entries (part of the file format).
const (
	refLocal  = 1
	refStable = 2
	refExact  = 3

	refEntrySize = 1 + 8 // kind u8, value u64
)

// StableRefs tells [AppendEntities] and [DecodeEntities] how references to entities outside an
// entity section are kept. AppendEntities asks toStable about every ecs.Entity value (and relation
// target) that points outside the section: an entity with a stable id is stored by that id, any
// other as it is. DecodeEntities asks fromStable for the entity a stored id stands for now; its
// result is written where the reference was (the zero entity when fromStable is nil). Either
// function may be nil. Sections only: [Encode] and [Decode] ignore it.
func StableRefs(toStable func(ecs.Entity) (uint64, bool), fromStable func(uint64) ecs.Entity) Option {
	return func(o *options) {
		o.toStable = toStable
		o.fromStable = fromStable
	}
}

// ref is one entry of the reference table.
type ref struct {
	kind  uint8
	value uint64
}

// refEntity is how a section stores the reference at index i of the reference table.
func refEntity(i int) ecs.Entity { return entityOf(slot{id: uint32(i + 1)}) }

// AppendEntities appends an entity section holding the given entities with all their components
// to dst and returns the extended slice. The entities must be alive and distinct; the section
// lists them grouped by Ark table, in the order given within each table, and [DecodeEntities]
// returns the created entities in that order. Entities with a component of [SkipEntitiesWith] are
// left out. ecs.Entity values inside components, and relation targets, become references (see the
// comment on sections above and [StableRefs]), except inside types with their own encoding
// (encoding.BinaryMarshaler, msgpack's encoders), which are written as they are.
//
// The same entities with the same components give the same bytes (no timestamp is written). A
// type that cannot be saved is refused as by [Encode].
//
// Options: [SkipComponents], [SkipEntitiesWith], [Transient], [LZ4], [TypeVersion], [StableRefs], [Key].
func AppendEntities(dst []byte, world *ecs.World, entities []ecs.Entity, opts ...Option) ([]byte, error) {
	o := buildOptions(opts)
	if err := o.checkKey(); err != nil {
		return dst, err
	}
	e, err := planSection(world, entities, o)
	if err != nil {
		return dst, err
	}
	if e.header.FileSize > math.MaxInt {
		return dst, fmt.Errorf("archetype: section of %d bytes is too large", e.header.FileSize)
	}
	if e.key = o.key; e.key != nil {
		return e.sealed(dst, int(e.header.FileSize))
	}
	sw := newAppendWriter(dst, int(e.header.FileSize))
	if err := e.write(sw); err != nil {
		clear(sw.b[len(sw.b):cap(sw.b)])
		return dst, err
	}
	return sw.b, nil
}

// sectionTable is one group of a section: entities of one Ark table.
type sectionTable struct {
	ids      []ecs.ID
	targets  []ecs.Entity // per relation component among ids, in ids' order
	entities []ecs.Entity
}

// sectionPlanner gathers what AppendEntities writes.
type sectionPlanner struct {
	world    *ecs.World
	u        ecs.Unsafe
	o        *options
	comps    [256]*component
	local    map[ecs.Entity]int
	refs     []ref
	refIndex map[ref]int
	enc      *venc
}

// mapOut turns an entity value into the reference the section stores for it.
func (pl *sectionPlanner) mapOut(e ecs.Entity) ecs.Entity {
	if e.IsZero() {
		return e
	}
	var r ref
	if i, ok := pl.local[e]; ok {
		r = ref{kind: refLocal, value: uint64(i)}
	} else if id, ok := pl.stable(e); ok {
		r = ref{kind: refStable, value: id}
	} else {
		r = ref{kind: refExact, value: uint64(e.ID()) | uint64(e.Gen())<<32}
	}
	i, ok := pl.refIndex[r]
	if !ok {
		i = len(pl.refs)
		pl.refs = append(pl.refs, r)
		pl.refIndex[r] = i
	}
	return refEntity(i)
}

func (pl *sectionPlanner) stable(e ecs.Entity) (uint64, bool) {
	if pl.o.toStable == nil {
		return 0, false
	}
	return pl.o.toStable(e)
}

func (pl *sectionPlanner) component(id ecs.ID) *component {
	if c := pl.comps[id.Index()]; c != nil {
		return c
	}
	ci, _ := ecs.ComponentInfo(pl.world, id)
	c := &component{id: id, info: infoOf(ci.Type), relation: ci.IsRelation,
		skip: pl.o.skipComps[ci.Type], skipEntity: pl.o.skipEntities[ci.Type]}
	pl.comps[id.Index()] = c
	return c
}

// groups sorts the entities into their Ark tables, in order of first appearance.
func (pl *sectionPlanner) groups(entities []ecs.Entity) ([]*sectionTable, error) {
	var out []*sectionTable
	byKey := map[string]*sectionTable{}
	seen := make(map[ecs.Entity]bool, len(entities))
	var key []byte
	for _, e := range entities {
		if !pl.world.Alive(e) {
			return nil, fmt.Errorf("archetype: entity %d (generation %d) is not alive", e.ID(), e.Gen())
		}
		if seen[e] {
			return nil, fmt.Errorf("archetype: entity %d (generation %d) is listed twice", e.ID(), e.Gen())
		}
		seen[e] = true
		ids := pl.u.IDs(e)
		key = key[:0]
		skipped := false
		var targets []ecs.Entity
		for i := range ids.Len() {
			id := ids.Get(i)
			c := pl.component(id)
			skipped = skipped || c.skipEntity
			key = append(key, id.Index())
			if c.relation && !c.skip {
				t := pl.u.GetRelation(e, id)
				targets = append(targets, t)
				key = append(key, unsafe.Slice((*byte)(unsafe.Pointer(&t)), 8)...)
			}
		}
		if skipped {
			continue
		}
		g := byKey[string(key)]
		if g == nil {
			g = &sectionTable{targets: targets}
			for i := range ids.Len() {
				g.ids = append(g.ids, ids.Get(i))
			}
			byKey[string(key)] = g
			out = append(out, g)
		}
		g.entities = append(g.entities, e)
	}
	return out, nil
}

// planSection gathers everything AppendEntities writes.
func planSection(world *ecs.World, entities []ecs.Entity, o *options) (*plan, error) {
	pl := &sectionPlanner{world: world, u: world.Unsafe(), o: o,
		local: map[ecs.Entity]int{}, refIndex: map[ref]int{}, enc: newVenc()}
	pl.enc.mapEnt = pl.mapOut
	groups, err := pl.groups(entities)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, g := range groups {
		for _, e := range g.entities {
			pl.local[e] = n
			n++
		}
	}

	// The registry: every component type a saved entity has.
	var types []*fileType
	for _, g := range groups {
		for _, id := range g.ids {
			c := pl.component(id)
			if c.skip || c.file != nil {
				continue
			}
			if c.file, err = newFileType(c.info, o, o.transient[c.info.typ]); err != nil {
				return nil, err
			}
			if c.relation {
				c.file.flags |= TypeRelation
			}
			types = append(types, c.file)
		}
	}
	sortTypes(types)
	index := make(map[*fileType]uint16, len(types))
	ids := make([][typeIDSize]byte, len(types))
	for i, t := range types {
		index[t] = uint16(i)
		ids[i] = t.id
	}

	e := &plan{}
	var comp compressor
	for _, g := range groups {
		var kept []*component
		var keptTargets []ecs.Entity
		ti := 0
		for _, id := range g.ids {
			c := pl.component(id)
			var target ecs.Entity
			if c.relation && !c.skip {
				target = g.targets[ti]
				ti++
			}
			if c.skip {
				continue
			}
			kept = append(kept, c)
			keptTargets = append(keptTargets, target)
		}
		order := make([]int, len(kept))
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(a, b int) bool { return index[kept[order[a]].file] < index[kept[order[b]].file] })
		entry := tableEntry{count: uint32(len(g.entities))}
		var blobs []blob
		for _, k := range order {
			c := kept[k]
			ci := index[c.file]
			entry.comps = append(entry.comps, ci)
			if c.relation {
				target := keptTargets[k]
				if !target.IsZero() && !world.Alive(target) {
					target = ecs.Entity{} // as Ark does when a target is removed
				}
				entry.rels = append(entry.rels, relEntry{comp: ci, target: slotOf(pl.mapOut(target))})
			}
			if !c.file.hasData() {
				continue
			}
			b, err := pl.column(c, g.entities)
			if err != nil {
				return nil, err
			}
			b.stored = b.raw
			if o.lz4 {
				comp.compress(&b)
			}
			entry.cols = append(entry.cols, colEntry{comp: ci, raw: uint64(len(b.raw)), stored: uint64(len(b.stored))})
			b.raw = nil
			blobs = append(blobs, b)
		}
		entry.archID = archetypeID(ids, entry.comps)
		e.entries = append(e.entries, entry)
		e.blobs = append(e.blobs, blobs)
	}
	var concrete []*fileType
	pl2 := &planner{types: types, enc: pl.enc}
	if concrete, err = pl2.concreteTypes(); err != nil {
		return nil, err
	}
	e.registry = appendRegistry(append(types, concrete...))
	e.refs = appendRefs(pl.refs)
	e.resources = appendResources(nil, nil, false, nil)
	flags := FlagSection
	if o.lz4 {
		flags |= FlagLZ4
	}
	e.header = fileHeader{
		VersionMajor: VersionMajor, VersionMinor: VersionMinor, Flags: flags,
		Entities: uint64(n), Archetypes: uint32(len(e.entries)), Types: uint32(len(types) + len(concrete)),
	}
	e.layout()
	return e, nil
}

// column encodes the column of component c for the given entities of one table.
func (pl *sectionPlanner) column(c *component, entities []ecs.Entity) (blob, error) {
	size := uintptr(c.info.size)
	if c.info.raw {
		b := make([]byte, uintptr(len(entities))*size)
		offs := entityOffsets(c.info.typ)
		for i, e := range entities {
			row := b[uintptr(i)*size : uintptr(i+1)*size]
			copy(row, unsafe.Slice((*byte)(pl.u.Get(e, c.id)), size))
			for _, off := range offs {
				p := (*ecs.Entity)(unsafe.Pointer(&row[off]))
				*p = pl.mapOut(*p)
			}
		}
		if hostBigEndian {
			swapColumn(b, c.info.swaps, size)
		}
		return blob{raw: b}, nil
	}
	p, _ := planOf(c.info.typ) // checked by newFileType
	enc := pl.enc
	enc.b = make([]byte, 0, min(len(entities)*int(min(size, 64)), 1<<20))
	for i, e := range entities {
		if err := enc.value(p, pl.u.Get(e, c.id)); err != nil {
			enc.b = nil
			return blob{}, valueRefusal("component", c.info.typ, fmt.Sprintf(", entity %d of the section", i), err)
		}
	}
	b := enc.b
	enc.b = nil
	return blob{raw: b}, nil
}

// appendRefs encodes the reference table section.
func appendRefs(refs []ref) []byte {
	b := sectionBuf(uint32(len(refs)), len(refs)*refEntrySize)
	for _, r := range refs {
		b.u8(r.kind)
		b.u64(r.value)
	}
	return finishSection(b)
}

// entityOffsets returns the offsets of the ecs.Entity values inside a plain-old-data type: its
// fields, nested structs and arrays.
func entityOffsets(t reflect.Type) []uintptr {
	if v, ok := offsetCache.Load(t); ok {
		return v.([]uintptr)
	}
	offs := appendEntityOffsets(nil, t, 0)
	offsetCache.Store(t, offs)
	return offs
}

var offsetCache sync.Map // reflect.Type -> []uintptr

func appendEntityOffsets(out []uintptr, t reflect.Type, base uintptr) []uintptr {
	if t == entityType {
		return append(out, base)
	}
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			out = appendEntityOffsets(out, f.Type, base+f.Offset)
		}
	case reflect.Array:
		sub := appendEntityOffsets(nil, t.Elem(), 0)
		for j := range t.Len() {
			for _, o := range sub {
				out = append(out, base+uintptr(j)*t.Elem().Size()+o)
			}
		}
	}
	return out
}

// readRefs reads the reference table of a section and checks every entry and every relation
// target of the archetype table against it.
func (f *fileReader) readRefs() error {
	const name = "reference table"
	r, count, buf, err := f.s.section(f.buf, name, refEntrySize)
	f.buf = buf
	if err != nil {
		return err
	}
	refs := make([]ref, count)
	for i := range refs {
		at := r.offset()
		refs[i] = ref{kind: r.u8(), value: r.u64()}
		if r.err != nil {
			return r.err
		}
		switch refs[i].kind {
		case refLocal:
			if refs[i].value >= f.header.Entities {
				return fmt.Errorf("%w: %s entry %d at offset %d: entity %d of a section of %d", ErrCorrupt, name, i, at, refs[i].value, f.header.Entities)
			}
		case refStable, refExact:
		default:
			return fmt.Errorf("%w: %s entry %d at offset %d: kind %d", ErrCorrupt, name, i, at, refs[i].kind)
		}
	}
	if r.remaining() != 0 {
		return fmt.Errorf("%w: %s at offset %d: %d bytes after the last entry", ErrCorrupt, name, r.offset(), r.remaining())
	}
	for i := range f.tables {
		for _, rel := range f.tables[i].rels {
			if rel.target != (slot{}) && (rel.target.gen != 0 || rel.target.id == 0 || uint64(rel.target.id) > uint64(count)) {
				return fmt.Errorf("%w: archetype table entry %d: relation %q targets reference %d (generation %d) of %d",
					ErrCorrupt, i, f.types[rel.comp].name, rel.target.id, rel.target.gen, count)
			}
		}
	}
	f.refs = refs
	if len(f.tables) > 0 && f.tables[0].offset != uint64(f.s.off) {
		return fmt.Errorf("%w: archetype table entry 0: data offset %d, data starts at %d", ErrCorrupt, f.tables[0].offset, f.s.off)
	}
	return nil
}

// readEntities reads what tells the entities apart: the pool of a world file, the reference table
// of a section.
func (f *fileReader) readEntities() error {
	if f.header.Flags&FlagSection != 0 {
		return f.readRefs()
	}
	return f.readPool()
}

// errNotSection and errSection tell a world file and an entity section apart for the wrong reader.
var (
	errNotSection = errors.New("archetype: a world file, not an entity section; use Decode")
	errSection    = errors.New("archetype: an entity section, not a world file; use DecodeEntities")
)

// DecodeEntities reads an entity section written by [AppendEntities] into world, which may hold
// other entities, and returns the entities it created, in the section's order. The world needs
// the section's component types registered, as for [Decode]. References are resolved as the
// comment on sections above says, through [StableRefs]' fromStable for stable ids; a relation
// target that resolves to no alive entity is left zero, as Ark does when a target is removed.
//
// Nothing of a damaged section stays in the world: when an error is found after entities were
// created, they are removed before DecodeEntities returns. Errors are those of [Decode]; a world
// file instead of a section is refused.
//
// Options: [SkipComponents], [Alias], [TypeVersion], [Migrate], [IgnoreUnknownTypes], [StableRefs],
// [KeepUndecodable], [Key].
func DecodeEntities(data []byte, world *ecs.World, opts ...Option) (created []ecs.Entity, err error) {
	if world.IsLocked() {
		return nil, errors.New("archetype: the world is locked by an open query; close it before DecodeEntities")
	}
	o := buildOptions(opts)
	if o.keep != nil {
		return decodeKeeping(data, world, opts, o)
	}
	if err := o.checkKey(); err != nil {
		return nil, err
	}
	f, err := readSectionHead(data, o.key)
	if err != nil {
		return nil, err
	}
	binds, err := bindTypes(world, f.types, o)
	if err != nil {
		return nil, err
	}
	if err := f.readRefs(); err != nil {
		return nil, err
	}
	d := &decoder{f: f, world: world, u: world.Unsafe(), binds: binds, conc: newFileConcretes(f.types)}
	if err := d.checkTables(); err != nil {
		return nil, err
	}
	for i := range binds {
		if !binds[i].drop && binds[i].mode == modeMsgpack {
			return nil, fmt.Errorf("%w: type registry entry %d: %q has no value schema, which a section needs", ErrCorrupt, i, f.types[i].name)
		}
	}

	// From here on the world changes: undo it on error.
	defer func() {
		if err != nil {
			for _, e := range created {
				if world.Alive(e) {
					world.RemoveEntity(e)
				}
			}
			created = nil
		}
	}()
	created = make([]ecs.Entity, 0, f.header.Entities)
	var zeroRels []ecs.Relation
	for i := range f.tables {
		t := &f.tables[i]
		d.components(t)
		// Targets are set once every entity exists (some are entities of the section).
		zeroRels = zeroRels[:0]
		for _, r := range t.rels {
			if b := &d.binds[r.comp]; !b.drop {
				zeroRels = append(zeroRels, ecs.RelID(b.id, ecs.Entity{}))
			}
		}
		for range t.count {
			created = append(created, d.u.NewEntityRel(d.ids, zeroRels...))
		}
	}
	s := &sectionDecoder{d: d, o: o, refs: f.refs, created: created}
	if err := s.relations(); err != nil {
		return created, err
	}
	for i := range f.tables {
		if err := s.table(i); err != nil {
			return created, &tableError{table: i, err: err}
		}
	}
	res, err := f.readResources()
	if err != nil {
		return created, err
	}
	if len(res) != 0 {
		return created, fmt.Errorf("%w: resources: a section holds %d resources", ErrCorrupt, len(res))
	}
	return created, f.readFooter()
}

// sectionBuffer reads a section from memory through a buffer no larger than the section: most
// sections are a few KiB, and a file's 64 KiB buffer would cost more than reading them.
func sectionBuffer(data []byte) *bufio.Reader {
	return bufio.NewReaderSize(bytes.NewReader(data), min(len(data), 64<<10))
}

// readSectionHead reads the header, type registry and archetype table of an entity section and
// checks that it is one, of the size it says.
func readSectionHead(data []byte, key []byte) (*fileReader, error) {
	f := newFileReader(sectionBuffer(data), key)
	if err := f.readHead(); err != nil {
		return nil, err
	}
	if f.header.Flags&FlagSection == 0 {
		return nil, errNotSection
	}
	if f.stored != uint64(len(data)) {
		return nil, fmt.Errorf("%w: header at offset 40: file size %d, the section has %d bytes", ErrCorrupt, f.stored, len(data))
	}
	return f, nil
}

// sectionDecoder fills the entities DecodeEntities created.
type sectionDecoder struct {
	d       *decoder
	o       *options
	refs    []ref
	created []ecs.Entity
}

// mapIn resolves a stored reference.
func (s *sectionDecoder) mapIn(e ecs.Entity) (ecs.Entity, error) {
	sl := slotOf(e)
	if sl == (slot{}) {
		return e, nil
	}
	if sl.gen != 0 || sl.id == 0 || int(sl.id) > len(s.refs) {
		return ecs.Entity{}, fmt.Errorf("%w: entity reference %d (generation %d) of %d", ErrCorrupt, sl.id, sl.gen, len(s.refs))
	}
	if s.o.keptRefs[int(sl.id-1)] {
		return ecs.Entity{}, errRefersToKept
	}
	r := s.refs[sl.id-1]
	switch r.kind {
	case refLocal:
		return s.created[r.value], nil
	case refStable:
		if s.o.fromStable == nil {
			return ecs.Entity{}, nil
		}
		return s.o.fromStable(r.value), nil
	}
	return entityOf(slot{id: uint32(r.value), gen: uint32(r.value >> 32)}), nil
}

// relations sets the relation targets of the created entities.
func (s *sectionDecoder) relations() error {
	d := s.d
	first := 0
	var rels []ecs.Relation
	for i := range d.f.tables {
		t := &d.f.tables[i]
		rels = rels[:0]
		for _, r := range t.rels {
			b := &d.binds[r.comp]
			if b.drop {
				continue
			}
			target, err := s.mapIn(entityOf(r.target))
			if errors.Is(err, errRefersToKept) {
				return &tableError{table: i, err: err}
			}
			if err != nil {
				return err
			}
			if !target.IsZero() && d.world.Alive(target) {
				rels = append(rels, ecs.RelID(b.id, target))
			}
		}
		if len(rels) > 0 {
			for _, e := range s.created[first : first+int(t.count)] {
				d.u.SetRelations(e, rels...)
			}
		}
		first += int(t.count)
	}
	return nil
}

// table fills the columns of table i, row by row.
func (s *sectionDecoder) table(i int) error {
	d, f := s.d, s.d.f
	e := &f.tables[i]
	if uint64(f.s.off) != e.offset {
		return fmt.Errorf("%w: archetype %d at offset %d: table says its data starts at %d", ErrCorrupt, i, f.s.off, e.offset)
	}
	rows := s.created[e.first : e.first+uint64(e.count)]
	for j := range e.cols {
		c := &e.cols[j]
		b := &d.binds[c.comp]
		section := f.columnSection(i, c)
		data, err := f.readBlob(section, c.raw, c.stored, nil)
		if err != nil {
			return err
		}
		if b.drop || b.mode == modeNone {
			continue
		}
		ft := &f.types[c.comp]
		switch b.mode {
		case modeRaw, modeRelayout:
			size := uint64(ft.size)
			offs := entityOffsets(b.typ)
			for row, ent := range rows {
				at := d.u.Get(ent, b.id)
				dst := unsafe.Slice((*byte)(at), b.typ.Size())
				if b.mode == modeRelayout {
					relayoutRows(data[uint64(row)*size:], b.stored, at, b.typ.Size(), 1, b.runs)
				} else {
					copy(dst, data[uint64(row)*size:])
				}
				if hostBigEndian {
					swapColumn(dst, b.info.swaps, uintptr(len(dst)))
				}
				for _, off := range offs {
					p := (*ecs.Entity)(unsafe.Pointer(&dst[off]))
					if *p, err = s.mapIn(*p); err != nil {
						return fmt.Errorf("%s row %d: %w", section, row, err)
					}
				}
			}
		case modeValue:
			vd := &vdec{b: data, conc: d.conc, mapEnt: s.mapIn}
			for row, ent := range rows {
				start := vd.pos
				if err := vd.value(b.plan, d.u.Get(ent, b.id)); err != nil {
					return valueError2(section, row, start, b.typ, err)
				}
			}
			if vd.pos != len(data) {
				return fmt.Errorf("%w: %s at value offset %d: %d bytes after the last value", ErrCorrupt, section, vd.pos, len(data)-vd.pos)
			}
		case modeMigrate:
			if err := s.migrate(section, ft, b, data, rows); err != nil {
				return err
			}
		}
	}
	return nil
}

// migrate reads old values by name, resolves the references inside them and hands them to the
// type's migration.
func (s *sectionDecoder) migrate(section string, ft *fileType, b *binding, data []byte, rows []ecs.Entity) (err error) {
	d := s.d
	rd := bytes.NewReader(data)
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %s: undecodable value: %v", ErrCorrupt, section, p)
		}
	}()
	if !ft.is(TypeRaw) {
		if d.loose == nil {
			d.loose = newMsgpackDecoder(true)
		}
		resetDecoder(d.loose, rd, true)
	}
	for row, ent := range rows {
		v, err := d.migrated(section, ft, b, data, row, s.mapLoose)
		if err != nil {
			return err
		}
		reflect.NewAt(b.typ, d.u.Get(ent, b.id)).Elem().Set(v)
	}
	if !ft.is(TypeRaw) && rd.Len() != 0 {
		return fmt.Errorf("%w: %s: %d bytes after the last value", ErrCorrupt, section, rd.Len())
	}
	return nil
}

// mapLoose resolves the references inside an old value read by name.
func (s *sectionDecoder) mapLoose(v any) (any, error) {
	switch x := v.(type) {
	case ecs.Entity:
		return s.mapIn(x)
	case map[string]any:
		for k, e := range x {
			m, err := s.mapLoose(e)
			if err != nil {
				return nil, err
			}
			x[k] = m
		}
	case []any:
		for i, e := range x {
			m, err := s.mapLoose(e)
			if err != nil {
				return nil, err
			}
			x[i] = m
		}
	}
	return v, nil
}

func describeRefs(refs []ref) *pecs.SectionInfo {
	si := &pecs.SectionInfo{Refs: len(refs)}
	for _, r := range refs {
		switch r.kind {
		case refLocal:
			si.Local++
		case refStable:
			si.Stable++
		case refExact:
			si.Exact++
		}
	}
	return si
}
