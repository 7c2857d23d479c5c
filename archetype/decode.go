package archetype

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unsafe"

	"github.com/mlange-42/ark/ecs"
	"github.com/vmihailenco/msgpack/v5"
)

// Decode reads a PECS file from r into world, which must be fresh or reset and prepared as for
// ark-serde: every component type the file holds registered with ecs.ComponentID[T], every
// resource added as a placeholder with ecs.AddResource(world, &T{}) (a resource type that is
// registered but not added is added). Types are matched by full name (package path and type
// name); [Alias] maps old names.
//
// After Decode, every saved entity is alive with its saved id and generation, dead and recycled
// slots of the pool are as they were (so entity values stored in components and relation
// targets stay valid, and handles to dead entities stay dead), components and relation targets
// are restored, and resources are overwritten with their saved values.
//
// Observers of the target world see each entity's creation (OnCreateEntity, and OnAddRelations
// for relation targets) before its component data is written; they must not change the world
// during Decode.
//
// Decode streams: it reads r front to back, table by table, through a buffer (it may read
// beyond the end of the file when r is not a *bufio.Reader), and holds in memory at most one
// column's stored bytes (raw columns are read straight into the world's memory) besides the
// entity pool. Every section and every column carries a CRC32C that is checked before its
// contents are used; the footer's checksum over the whole file is checked last.
//
// Errors match [ErrCorrupt] (damaged input, naming the section and offset; truncated input also
// matches [io.ErrUnexpectedEOF]), [ErrVersion], [ErrUnknownType], [ErrIncompatible] (an intact
// file whose types the program's no longer match, naming the type and field) or
// [ErrWorldNotEmpty]; an error from a [Migrate] function is returned wrapped. Decode never panics
// on bad input.
//
// State of the world after an error: errors found in the header, the type registry, the
// archetype table or the entity pool (including every unknown type, version mismatch, type whose
// stored fields the program's type cannot take, and unreadable pool) leave the world untouched. Errors found later, in the entity data, the
// resources or the footer, leave it partially filled: some entities exist, some columns or
// resources may hold data from the damaged file. Then call world.Reset(), add the resource
// placeholders again (Reset removes resources; registered component types survive), and
// retry with another file.
//
// Options: [SkipComponents], [SkipResources], [WithoutResources], [Alias], [TypeVersion],
// [Migrate], [IgnoreUnknownTypes], [Key] (an encrypted file without it is [ErrEncrypted], with
// another key [ErrWrongKey]).
func Decode(r io.Reader, world *ecs.World, opts ...Option) error {
	if world.IsLocked() {
		return errors.New("archetype: the world is locked by an open query; close it before Decode")
	}
	st := world.Stats()
	if st.Entities.Total != 0 {
		return fmt.Errorf("%w: it holds %d entities (alive or recycled); use a new world or world.Reset()", ErrWorldNotEmpty, st.Entities.Total)
	}
	observed := st.Observers > 0
	o := buildOptions(opts)
	if err := o.checkKey(); err != nil {
		return err
	}
	f := newFileReader(r, o.key)
	if err := f.readHead(); err != nil {
		return err
	}
	if f.header.Flags&FlagSection != 0 {
		return errSection
	}
	binds, err := bindTypes(world, f.types, o)
	if err != nil {
		return err
	}
	if err := f.readPool(); err != nil {
		return err
	}
	d := &decoder{f: f, world: world, u: world.Unsafe(), binds: binds, conc: newFileConcretes(f.types),
		batch: !observed && batchCreation()}
	if err := d.checkTables(); err != nil {
		return err
	}

	// Everything that decides what gets created has been read and checked. From here on the
	// world changes.
	dump := f.pool.dump()
	d.u.LoadEntities(&dump)
	d.slots = f.pool.slots // keeps the generations; the links Ark has its copy of
	dump.Entities, f.pool.slots, f.pool.mark = nil, nil, nil
	for i := range f.tables {
		if err := d.table(i); err != nil {
			return err
		}
	}
	if d.batch {
		d.registerTargets()
	}
	if err := d.resources(); err != nil {
		return err
	}
	return f.readFooter()
}

// How a stored type's data gets into the world.
const (
	modeNone     = iota // no data: zero-sized or transient, or dropped
	modeRaw             // raw column memory, copied as it is
	modeMsgpack         // msgpack values of format 1.0, decoded by msgpack's reflection
	modeValue           // msgpack values of format 2.0, decoded by the type's plan
	modeMigrate         // old values read by name and passed to a migration
	modeRelayout        // raw values of another host's layout, copied field by field (relayoutRuns)
)

// binding ties a stored type to the target world.
type binding struct {
	drop    bool // skipped by option, or unknown and ignored
	id      ecs.ID
	res     ecs.ResID
	typ     reflect.Type
	info    *typeInfo
	mode    int
	plan    *vplan // modeValue
	migrate migration
	runs    []copyRun // modeRelayout
	stored  uint32    // modeRelayout: the stored value's size
}

// bindTypes finds each stored type in the target world and decides how its data is read.
func bindTypes(world *ecs.World, types []fileType, o *options) ([]binding, error) {
	wt := newWorldTypes(world)
	skipped := skippedNames(o)
	binds := make([]binding, len(types))
	for i := range types {
		ft, b := &types[i], &binds[i]
		if ft.is(TypeConcrete) {
			b.drop = true // found by name when a value names it, see fileConcretes
			continue
		}
		isRes := ft.is(TypeResource)
		kind := "component"
		key := ft.name
		if isRes {
			kind = "resource"
			key += " (resource)"
		}
		if skipped[key] || isRes && o.noResources {
			b.drop = true
			continue
		}
		if !wt.find(ft, b, o) {
			if o.ignore {
				b.drop = true
				continue
			}
			return nil, fmt.Errorf("%w: type registry entry %d: %s %q is not registered in the target world; "+
				"register it (ecs.ComponentID[T] or ecs.AddResource), map its old name with archetype.Alias, or pass archetype.IgnoreUnknownTypes",
				ErrUnknownType, i, kind, ft.name)
		}
		if isRes {
			b.typ, _ = ecs.ResourceType(world, b.res)
		} else {
			ci, _ := ecs.ComponentInfo(world, b.id)
			b.typ = ci.Type
			if ci.IsRelation != ft.is(TypeRelation) {
				return nil, fmt.Errorf("%w: type registry entry %d: component %q is a relation in one of the file and the world but not in the other",
					ErrVersion, i, ft.name)
			}
		}
		b.info = infoOf(b.typ)
		if !isRes && !ft.hasData() {
			continue
		}
		if err := bindMode(ft, b, i, kind, o); err != nil {
			return nil, err
		}
	}
	return binds, nil
}

// worldTypes are the component and resource types of the target world, by name and by Go type.
type worldTypes struct {
	compByName map[string]ecs.ID
	compByType map[reflect.Type]ecs.ID
	resByName  map[string]ecs.ResID
	resByType  map[reflect.Type]ecs.ResID
}

func newWorldTypes(world *ecs.World) *worldTypes {
	wt := &worldTypes{
		compByName: map[string]ecs.ID{},
		compByType: map[reflect.Type]ecs.ID{},
		resByName:  map[string]ecs.ResID{},
		resByType:  map[reflect.Type]ecs.ResID{},
	}
	for _, id := range ecs.ComponentIDs(world) {
		ci, _ := ecs.ComponentInfo(world, id)
		wt.compByName[typeName(ci.Type)] = id
		wt.compByType[ci.Type] = id
	}
	for _, id := range ecs.ResourceIDs(world) {
		t, _ := ecs.ResourceType(world, id)
		wt.resByName[typeName(t)] = id
		wt.resByType[t] = id
	}
	return wt
}

// find sets b's component or resource id to the world's type for stored type ft: the alias's
// type when ft's name has one, else the type of the same name. It reports whether there is one.
func (wt *worldTypes) find(ft *fileType, b *binding, o *options) (found bool) {
	isRes := ft.is(TypeResource)
	if alias, ok := o.aliases[ft.name]; ok {
		if isRes {
			b.res, found = wt.resByType[alias]
		} else {
			b.id, found = wt.compByType[alias]
		}
		return found
	}
	if isRes {
		b.res, found = wt.resByName[ft.name]
	} else {
		b.id, found = wt.compByName[ft.name]
	}
	return found
}

// skippedNames are the names of the types the options leave out, resources with " (resource)".
func skippedNames(o *options) map[string]bool {
	skipped := map[string]bool{}
	for t := range o.skipComps {
		skipped[typeName(t)] = true
	}
	for t := range o.skipRes {
		skipped[typeName(t)+" (resource)"] = true
	}
	for n := range o.skipResNames {
		skipped[n+" (resource)"] = true
	}
	return skipped
}

// bindMode decides how the data of stored type ft (registry entry i) is read into b's type:
// migrated, copied raw, relaid out field by field, through msgpack (format 1.0), or value by
// value against its value schema; or it says why it cannot be.
func bindMode(ft *fileType, b *binding, i int, kind string, o *options) error {
	current := o.version(b.info)
	switch {
	case ft.version != current:
		m, ok := o.migrations[migrationKey{typ: b.typ, from: ft.version}]
		if !ok {
			return fmt.Errorf("%w: type registry entry %d: %s %q is stored with type version %d, the registered type has version %d; "+
				"register archetype.Migrate[%s](%d, ...)", ErrVersion, i, kind, ft.name, ft.version, current, b.typ, ft.version)
		}
		b.mode, b.migrate = modeMigrate, m
	case ft.is(TypeRaw) && b.info.raw && schemaEqual(b.info.schema, ft.schema):
		b.mode = modeRaw
	case ft.is(TypeRaw):
		local := localSchema(b)
		if ft.node != nil && local != nil {
			if runs, ok := relayoutRuns(ft.node, local); ok {
				b.mode, b.runs, b.stored = modeRelayout, runs, ft.size
				return nil
			}
		}
		return rawMismatch(i, kind, ft, b, local)
	case ft.vs == nil:
		b.mode = modeMsgpack // format 1.0
	default:
		p, terr := planOf(b.typ)
		if terr == nil {
			terr = ft.vs.compatible(0, p, map[compatKey]bool{})
		}
		if terr != nil {
			return fmt.Errorf("%w: type registry entry %d: %s %q: field %s; register a migration (archetype.TypeVersion and archetype.Migrate) or skip the type",
				ErrIncompatible, i, kind, ft.name, terr.describe(b.typ))
		}
		b.mode, b.plan = modeValue, p
	}
	return nil
}

// fileConcretes resolves the concrete types that values behind interfaces name, against the
// types the file lists: a name the file does not list is damage; one the program does not know,
// or knows with an incompatible type, is [ErrIncompatible].
type fileConcretes struct {
	stored map[string]*fileType
	cache  map[string]concreteResult
}

type concreteResult struct {
	typ  reflect.Type
	plan *vplan
	err  error
}

func newFileConcretes(types []fileType) *fileConcretes {
	c := &fileConcretes{stored: map[string]*fileType{}, cache: map[string]concreteResult{}}
	for i := range types {
		if types[i].is(TypeConcrete) {
			c.stored[types[i].name] = &types[i]
		}
	}
	return c
}

func (c *fileConcretes) concrete(name string) (reflect.Type, *vplan, error) {
	if r, ok := c.cache[name]; ok {
		return r.typ, r.plan, r.err
	}
	var r concreteResult
	if ft, ok := c.stored[name]; !ok {
		r.err = fmt.Errorf("%w: a value behind an interface has type %q, which the file does not list", ErrCorrupt, name)
	} else if r.typ, r.plan, r.err = resolveConcrete(name); r.err == nil {
		if terr := ft.vs.compatible(0, r.plan, map[compatKey]bool{}); terr != nil {
			r.err = fmt.Errorf("%w: a value behind an interface has type %q: %s", ErrIncompatible, name, terr.describe(r.typ))
		}
	}
	if len(c.cache) < 1<<16 {
		c.cache[name] = r
	}
	return r.typ, r.plan, r.err
}

// lookup returns the stored schema of a concrete type, for checking values without the Go types.
func (c *fileConcretes) lookup(name string) (*vschema, bool) {
	ft, ok := c.stored[name]
	if !ok {
		return nil, false
	}
	return ft.vs, true
}

// decoder fills a world from a fileReader.
type decoder struct {
	f     *fileReader
	world *ecs.World
	u     ecs.Unsafe
	binds []binding
	dec   *msgpack.Decoder // typed values
	loose *msgpack.Decoder // old values for migrations
	ids   []ecs.ID
	rels  []ecs.Relation
	arels []arkRelation
	batch bool   // create each table's entities with one arkNewEntities call
	slots []slot // the saved pool: generations of the alive ids
	conc  *fileConcretes
}

// checkTables makes sure no table gets a component twice, which happens when an alias maps a
// stored type onto another stored type.
func (d *decoder) checkTables() error {
	for i := range d.f.tables {
		var seen [256]bool
		for _, c := range d.f.tables[i].comps {
			b := &d.binds[c]
			if b.drop {
				continue
			}
			if seen[b.id.Index()] {
				return fmt.Errorf("archetype: archetype table entry %d: two stored types map to component %s (check the aliases)", i, b.typ)
			}
			seen[b.id.Index()] = true
		}
	}
	return nil
}

// create creates the entities of a table and returns the first. With batch creation, one call
// sizes the table once for all of them; otherwise the first entity is created with its
// components and relation targets and the others as copies of it (no table lookup), each
// notifying the world's observers.
func (d *decoder) create(e *tableEntry) (ecs.Entity, error) {
	d.components(e)
	// Ark hands out the ids of the crafted free list, with their generations; a different id
	// means Ark's pool works differently from what this package was written for.
	alive := d.f.pool.alive[e.first : e.first+uint64(e.count)]
	if d.batch {
		first, last := d.entity(alive[0]), d.entity(alive[len(alive)-1])
		arkNewEntities(d.world, len(alive), d.ids, d.arels, 0)
		// Before its creation an id sits in no table with components.
		if a, b := d.u.IDs(first), d.u.IDs(last); a.Len() != len(d.ids) || b.Len() != len(d.ids) {
			return first, fmt.Errorf("archetype: Ark did not create entities %d to %d as the file has them; this Ark version is not supported", first.ID(), last.ID())
		}
		return first, nil
	}
	first := d.u.NewEntityRel(d.ids, d.rels...)
	if first.ID() != alive[0] {
		return first, fmt.Errorf("archetype: Ark created entity %d where the file has %d; this Ark version is not supported", first.ID(), alive[0])
	}
	for _, id := range alive[1:] {
		if got := d.world.CopyEntity(first); got.ID() != id {
			return first, fmt.Errorf("archetype: Ark created entity %d where the file has %d; this Ark version is not supported", got.ID(), id)
		}
	}
	return first, nil
}

// components sets d.ids to the components of a table and d.rels and d.arels to its relation
// targets.
func (d *decoder) components(e *tableEntry) {
	d.ids, d.rels, d.arels = d.ids[:0], d.rels[:0], d.arels[:0]
	for _, c := range e.comps {
		if b := &d.binds[c]; !b.drop {
			d.ids = append(d.ids, b.id)
		}
	}
	for _, r := range e.rels {
		if b := &d.binds[r.comp]; !b.drop {
			d.rels = append(d.rels, ecs.RelID(b.id, entityOf(r.target)))
			d.arels = append(d.arels, arkRelation{target: entityOf(r.target), component: b.id})
		}
	}
}

// registerTargets tells Ark again, once every entity exists, which entities are relation
// targets. Batch creation marks the new entities as no target, which forgets the mark of a
// target created after a table that points to it; Ark needs the mark to clean up relations
// when a target is removed. A batch of no entities only registers the targets.
func (d *decoder) registerTargets() {
	for i := range d.f.tables {
		if len(d.f.tables[i].rels) == 0 {
			continue
		}
		d.components(&d.f.tables[i])
		if len(d.arels) > 0 {
			arkNewEntities(d.world, 0, d.ids, d.arels, 0)
		}
	}
}

// entity returns the saved entity with the given id.
func (d *decoder) entity(id uint32) ecs.Entity { return entityOf(slot{id: id, gen: d.slots[id].gen}) }

// table creates the entities of table i and fills their columns: the pool hands out the saved
// ids in order (see pool.dump), and each column is then overwritten as a whole.
func (d *decoder) table(i int) error {
	f := d.f
	e := &f.tables[i]
	if uint64(f.s.off) != e.offset {
		return fmt.Errorf("%w: archetype %d at offset %d: table says its data starts at %d", ErrCorrupt, i, f.s.off, e.offset)
	}
	first, err := d.create(e)
	if err != nil {
		return err
	}
	for j := range e.cols {
		c := &e.cols[j]
		b := &d.binds[c.comp]
		section := f.columnSection(i, c)
		if b.drop || b.mode == modeNone {
			if _, err := f.readBlob(section, c.raw, c.stored, nil); err != nil {
				return err
			}
			continue
		}
		base := d.u.Get(first, b.id)
		if b.mode == modeRelayout {
			data, err := f.readBlob(section, c.raw, c.stored, nil)
			if err != nil {
				return err
			}
			relayoutRows(data, b.stored, base, b.typ.Size(), int(e.count), b.runs)
			if hostBigEndian {
				swapColumn(unsafe.Slice((*byte)(base), uintptr(e.count)*b.typ.Size()), b.info.swaps, b.typ.Size())
			}
			continue
		}
		if b.mode == modeRaw {
			mem := unsafe.Slice((*byte)(base), c.raw)
			if _, err := f.readBlob(section, c.raw, c.stored, mem); err != nil {
				return err
			}
			if hostBigEndian {
				swapColumn(mem, b.info.swaps, b.typ.Size())
			}
			continue
		}
		data, err := f.readBlob(section, c.raw, c.stored, nil)
		if err != nil {
			return err
		}
		if err := d.values(section, &f.types[c.comp], b, data, base, int(e.count)); err != nil {
			return err
		}
	}
	return nil
}

// values decodes count stored values (msgpack, or raw for migrations) into consecutive values
// of the bound type starting at base.
func (d *decoder) values(section string, ft *fileType, b *binding, data []byte, base unsafe.Pointer, count int) (err error) {
	rd := bytes.NewReader(data)
	defer func() {
		// msgpack is third-party code fed with checked but possibly hostile bytes: a panic
		// there is reported as damage, not passed on.
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %s: undecodable value: %v", ErrCorrupt, section, p)
		}
	}()
	if b.mode == modeMsgpack || !ft.is(TypeRaw) {
		if d.dec == nil {
			d.dec = newMsgpackDecoder(false)
			d.loose = newMsgpackDecoder(true)
		}
		resetDecoder(d.dec, rd, false)
		resetDecoder(d.loose, rd, true)
	}
	size := b.typ.Size()
	if b.mode == modeValue {
		return d.planValues(section, b, data, base, count)
	}
	if !ft.is(TypeRaw) {
		if n, err := msgpackSize(data, count); err != nil || n != len(data) {
			return fmt.Errorf("%w: %s: not %d msgpack values of %d bytes", ErrCorrupt, section, count, len(data))
		}
	}
	for row := range count {
		dst := reflect.NewAt(b.typ, unsafe.Add(base, uintptr(row)*size)).Elem()
		if b.mode == modeMsgpack {
			if err := d.dec.DecodeValue(dst); err != nil {
				return fmt.Errorf("%w: %s row %d: %w", ErrCorrupt, section, row, err)
			}
			continue
		}
		v, err := d.migrated(section, ft, b, data, row, nil)
		if err != nil {
			return err
		}
		dst.Set(v)
	}
	if !ft.is(TypeRaw) && rd.Len() != 0 {
		return fmt.Errorf("%w: %s: %d bytes after the last value", ErrCorrupt, section, rd.Len())
	}
	return nil
}

// migrated reads the old value of row by name (from raw memory, or the next value of the loose
// decoder), lets mapOld change it if set, and returns what the type's migration makes of it.
func (d *decoder) migrated(section string, ft *fileType, b *binding, data []byte, row int, mapOld func(any) (any, error)) (reflect.Value, error) {
	var old any
	var err error
	if ft.is(TypeRaw) {
		old = ft.node.value(data[uint64(row)*uint64(ft.size):])
	} else if old, err = looseValue(d.loose); err != nil {
		return reflect.Value{}, fmt.Errorf("%w: %s row %d: %w", ErrCorrupt, section, row, err)
	}
	if mapOld != nil {
		if old, err = mapOld(old); err != nil {
			return reflect.Value{}, fmt.Errorf("%s row %d: %w", section, row, err)
		}
	}
	m, ok := old.(map[string]any)
	if !ok {
		m = map[string]any{"value": old}
	}
	return b.migrate(m)
}

// resources reads the resource section and overwrites the world's resources.
func (d *decoder) resources() error {
	f := d.f
	stored, err := f.readResources()
	if err != nil {
		return err
	}
	res := d.world.Resources()
	for i := range stored {
		r := &stored[i]
		b := &d.binds[r.typ]
		if b.drop {
			continue
		}
		data, err := f.resourceBytes(r)
		if err != nil {
			return err
		}
		if !res.Has(b.res) {
			res.Add(b.res, reflect.New(b.typ).Interface())
		}
		v := reflect.ValueOf(res.Get(b.res))
		if v.Kind() != reflect.Pointer || v.Type().Elem() != b.typ || v.IsNil() {
			return fmt.Errorf("archetype: resource %s is held as %s, not as a pointer to it", b.info.name, v.Type())
		}
		v.Elem().SetZero()
		section := fmt.Sprintf("resource %q", f.types[r.typ].name)
		if err := d.values(section, &f.types[r.typ], b, data, v.UnsafePointer(), 1); err != nil {
			return err
		}
	}
	return nil
}

// planValues decodes count values of format 2.0 by the bound type's plan.
func (d *decoder) planValues(section string, b *binding, data []byte, base unsafe.Pointer, count int) error {
	vd := &vdec{b: data, conc: d.conc}
	size := b.typ.Size()
	for row := range count {
		start := vd.pos
		if err := vd.value(b.plan, unsafe.Add(base, uintptr(row)*size)); err != nil {
			return valueError2(section, row, start, b.typ, err)
		}
	}
	if vd.pos != len(data) {
		return fmt.Errorf("%w: %s at value offset %d: %d bytes after the last value", ErrCorrupt, section, vd.pos, len(data)-vd.pos)
	}
	return nil
}

// valueError2 names the section, row, offset within the section's values and field of an error
// met while reading a value.
func valueError2(section string, row, off int, t reflect.Type, err error) error {
	return &pathError{
		msg: fmt.Sprintf("archetype: %s row %d at value offset %d, field %s: %s", section, row, off, pathOf(err, t), strings.TrimPrefix(err.Error(), "archetype: ")),
		err: err,
	}
}

// rawMismatch is the error for a type stored as raw memory that Decode cannot copy into the
// registered type at the same type version: [ErrIncompatible] naming the field when a field of
// the same name changed type (an int64 that became a string or an int32), else [ErrVersion]
// naming both layouts (fields added, dropped, renamed or moved).
func rawMismatch(i int, kind string, ft *fileType, b *binding, local *schemaNode) error {
	if ft.node != nil {
		if terr := rawFieldChange(ft.node, b.typ); terr != nil {
			return fmt.Errorf("%w: type registry entry %d: %s %q: field %s; the file holds its values as raw memory, which is copied "+
				"only into the same fields of the same types: give the field its stored type back, or raise the type version "+
				"(PECSVersion or archetype.TypeVersion) and convert the values in archetype.Migrate[%s](%d, ...)",
				ErrIncompatible, i, kind, ft.name, terr.describe(b.typ), b.typ, ft.version)
		}
	}
	here := "not plain-old-data"
	if b.info.raw {
		here = describeSchema(local)
	} else if _, terr := planOf(b.typ); terr != nil {
		here = "not plain-old-data, and it cannot be saved: field " + terr.describe(b.typ)
	}
	return fmt.Errorf("%w: type registry entry %d: the memory layout of %q differs from the stored one at the same type version %d "+
		"(stored: %d bytes, %s; here: %d bytes, %s); "+
		"raise the type version (PECSVersion or archetype.TypeVersion) and register a migration", ErrVersion, i, ft.name, ft.version,
		ft.size, describeSchema(ft.node), b.typ.Size(), here)
}

// localSchema returns the parsed layout of the bound Go type; nil when it is not plain-old-data.
func localSchema(b *binding) *schemaNode {
	if !b.info.raw {
		return nil
	}
	n, err := parseSchema(b.info.schema, uint32(b.typ.Size()))
	if err != nil {
		return nil
	}
	return n
}

// describeSchema is a short description of a layout for an error message.
func describeSchema(n *schemaNode) string {
	if n == nil {
		return "no layout"
	}
	return n.String()
}
