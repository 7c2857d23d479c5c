package archetype

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ImportJSON reads the JSON that [ExportJSON] writes and writes the world it describes to w as a
// PECS file of the current format. For a file of this format, exporting and importing gives the
// same bytes: the JSON carries the type registry with every schema, the whole entity pool, the
// tables with their relation targets, every value in a form that reads back exactly, the
// resources, the header's timestamp and flags. Values may be edited by hand: they are written
// as their stored schemas say, in the form Encode would write them.
//
// ImportJSON reads all of r before it writes. JSON that is malformed, that misses a key or has
// one it does not know, that holds a value its type's schema cannot take, or that describes a
// world no PECS file can hold (an entity the pool does not have alive, a relation target that
// is not alive, a free list that does not add up) is [ErrBadJSON], naming the JSON path and the
// byte offset. JSON exported from a format 1.0 file whose values have no stored schema cannot
// be imported: load that file into the game and save it again first. The file written is
// checked as the check command checks a file before the first byte is written.
func ImportJSON(w io.Writer, r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("archetype: import: %w", err)
	}
	file, err := importJSON(data)
	if err != nil {
		return err
	}
	_, err = w.Write(file)
	return err
}

// importJSON turns the JSON into the bytes of a PECS file.
func importJSON(data []byte) ([]byte, error) {
	root, err := parseJSON(data)
	if err != nil {
		return nil, err
	}
	im := &importer{budget: 64*int64(len(data)) + 1<<20}
	top, err := im.fields(&root, "format", "pecs", "timestamp", "flags", "types", "pool", "tables", "resources")
	if err != nil {
		return nil, err
	}
	format, err := im.key("format").str(top[0])
	if err != nil {
		return nil, err
	}
	if format != jsonFormat {
		if strings.HasPrefix(format, "PECS ") {
			return nil, im.fail(top[0], "%q: this JSON was written by an older arksave export, which does not keep everything a file holds; export the file again", format)
		}
		return nil, im.fail(top[0], "format %q, this program reads %q", format, jsonFormat)
	}
	im.pop()
	v1, err := im.key("pecs").pecsVersion(top[1])
	if err != nil {
		return nil, err
	}
	im.pop()
	h := fileHeader{VersionMajor: VersionMajor, VersionMinor: worldMinor}
	if h.Timestamp, err = im.key("timestamp").timestamp(top[2]); err != nil {
		return nil, err
	}
	im.pop()
	if err := im.key("flags").flags(top[3], &h); err != nil {
		return nil, err
	}
	im.pop()
	if err := im.key("types").registry(top[4], v1); err != nil {
		return nil, err
	}
	im.pop()
	e := &plan{}
	if err := im.key("pool").pool(top[5], &e.pool); err != nil {
		return nil, err
	}
	e.pool.compact = h.Flags&FlagCompactPool != 0
	im.pop()
	if err := im.key("tables").tables(top[6], e); err != nil {
		return nil, err
	}
	im.pop()
	var res []savedResource
	if res, err = im.key("resources").resources(top[7]); err != nil {
		return nil, err
	}
	im.pop()

	e.registry = appendRegistry(im.types)
	e.resources = appendResources(res, im.index, im.lz4, &im.comp)
	h.Entities, h.Archetypes = uint64(len(e.pool.alive)), uint32(len(e.entries))
	h.Types, h.Resources = uint32(len(im.types)), uint32(len(res))
	e.header = h
	e.layout()
	if e.header.FileSize > math.MaxInt {
		return nil, fmt.Errorf("%w: a file of %d bytes is too large", ErrBadJSON, e.header.FileSize)
	}
	sw := newAppendWriter(nil, int(e.header.FileSize))
	if err := e.write(sw); err != nil {
		return nil, err
	}
	// Every check of a reader, over the whole file: what the JSON says must hold together as a
	// file does, whatever was edited by hand.
	if _, err := readInfo(bytes.NewReader(sw.b)); err != nil {
		return nil, fmt.Errorf("%w: the world it describes is not one a PECS file can hold: %v", ErrBadJSON, err)
	}
	return sw.b, nil
}

// pecsVersion reads "2.0" and reports whether it is format 1.
func (im *importer) pecsVersion(v *jval) (bool, error) {
	s, err := im.str(v)
	if err != nil {
		return false, err
	}
	major, minor, ok := strings.Cut(s, ".")
	ma, err1 := strconv.ParseUint(major, 10, 16)
	mi, err2 := strconv.ParseUint(minor, 10, 16)
	if !ok || err1 != nil || err2 != nil {
		return false, im.fail(v, "%q is not a format version (such as \"2.0\")", s)
	}
	if ma < oldestMajor || ma > VersionMajor || ma == VersionMajor && mi > VersionMinor {
		return false, im.fail(v, "a file of format %s, this program writes %d.%d and reads back to %d.0", s, VersionMajor, VersionMinor, oldestMajor)
	}
	return ma == 1, nil
}

// timestamp reads an RFC 3339 time, or milliseconds since 1970.
func (im *importer) timestamp(v *jval) (int64, error) {
	if v.kind == jNumber {
		n, err := im.integer(v, math.MinInt64, math.MaxInt64)
		return int64(n), err
	}
	s, err := im.str(v)
	if err != nil {
		return 0, err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, im.fail(v, "not an RFC 3339 time: %v", err)
	}
	return t.UnixMilli(), nil
}

func (im *importer) flags(v *jval, h *fileHeader) error {
	if err := im.want(v, jArray); err != nil {
		return err
	}
	for i := range v.kids {
		s, err := im.at(i).str(&v.kids[i])
		if err != nil {
			return err
		}
		switch s {
		case "lz4":
			h.Flags |= FlagLZ4
			im.lz4 = true
		case "compact-pool":
			// The pool is written compactly (format 2.1), as the plugin's world files are.
			h.Flags |= FlagCompactPool
			h.VersionMinor = VersionMinor
		default:
			return im.fail(&v.kids[i], "unknown flag %q (flags: lz4, compact-pool)", s)
		}
		im.pop()
	}
	return nil
}

// registry reads the types and sorts them into registry order.
func (im *importer) registry(v *jval, v1 bool) error {
	if err := im.want(v, jArray); err != nil {
		return err
	}
	if len(v.kids) > 1<<16 {
		return im.fail(v, "%d types, a file holds at most %d", len(v.kids), 1<<16)
	}
	seen := map[string]bool{}
	im.comps, im.res, im.conc = map[string]*fileType{}, map[string]*fileType{}, map[string]*fileType{}
	for i := range v.kids {
		t, err := im.at(i).fileType(&v.kids[i], v1, seen)
		if err != nil {
			return err
		}
		im.pop()
		im.types = append(im.types, t)
		switch {
		case t.is(TypeResource):
			im.res[t.name] = t
		case t.is(TypeConcrete):
			im.conc[t.name] = t
		default:
			im.comps[t.name] = t
		}
	}
	im.index, im.ids = indexTypes(im.types)
	return nil
}

func (im *importer) fileType(v *jval, v1 bool, seen map[string]bool) (*fileType, error) {
	f, err := im.fields(v, "name", "version", "flags", "size", "schema", "encoding?", "layout?")
	if err != nil {
		return nil, err
	}
	t := &fileType{}
	if t.name, err = im.key("name").str(f[0]); err != nil {
		return nil, err
	}
	im.pop()
	t.id = typeID(t.name)
	if t.version, err = im.key("version").u32(f[1]); err != nil {
		return nil, err
	}
	im.pop()
	im.key("flags")
	if err := im.want(f[2], jArray); err != nil {
		return nil, err
	}
	for j := range f[2].kids {
		name, err := im.at(j).str(&f[2].kids[j])
		if err != nil {
			return nil, err
		}
		known := false
		for _, tf := range typeFlags {
			if tf.name == name {
				t.flags |= tf.flag
				known = true
			}
		}
		if !known {
			return nil, im.fail(&f[2].kids[j], "unknown type flag %q", name)
		}
		im.pop()
	}
	im.pop()
	if t.size, err = im.key("size").u32(f[3]); err != nil {
		return nil, err
	}
	im.pop()
	if t.schema, err = im.key("schema").base64(f[4]); err != nil {
		return nil, err
	}
	im.pop()
	for _, k := range []int{5, 6} {
		if f[k] != nil && f[k].kind != jString {
			return nil, im.fail(f[k], "a string expected, found %s", f[k].kind)
		}
	}
	if v1 && len(t.schema) == 0 && t.needsValueSchema() {
		return nil, im.fail(v, "type %q was stored by format 1.0 without a value schema, which the import needs: "+
			"load the file into the game and save it again (that writes the current format), then export it", t.name)
	}
	if msg := t.check(false, seen); msg != "" {
		return nil, im.fail(v, "type %q: %s", t.name, msg)
	}
	return t, nil
}

// pool reads the entity pool; its alive list comes from the tables.
func (im *importer) pool(v *jval, p *pool) error {
	f, err := im.fields(v, "next", "available", "slots")
	if err != nil {
		return err
	}
	if p.next, err = im.key("next").u32(f[0]); err != nil {
		return err
	}
	im.pop()
	if p.available, err = im.key("available").u32(f[1]); err != nil {
		return err
	}
	im.availableAt = f[1].off
	im.pop()
	im.key("slots")
	if err := im.want(f[2], jArray); err != nil {
		return err
	}
	if len(f[2].kids) < reservedEntities || uint64(len(f[2].kids)) > math.MaxUint32 {
		return im.fail(f[2], "%d slots; Ark's pool has its %d reserved slots and at most 2^32", len(f[2].kids), reservedEntities)
	}
	p.slots = make([]slot, len(f[2].kids))
	for i := range f[2].kids {
		if p.slots[i], err = im.at(i).pair(&f[2].kids[i]); err != nil {
			return err
		}
		im.pop()
	}
	im.pop()
	return nil
}

// column is a column on its way into the file.
type column struct {
	t   *fileType
	buf []byte
}

// tables reads the tables, their entities and values, and sets the pool's alive list.
func (im *importer) tables(v *jval, e *plan) error {
	if err := im.want(v, jArray); err != nil {
		return err
	}
	p := &e.pool
	alive := make([]bool, len(p.slots))
	for i := range v.kids {
		entry, blobs, err := im.at(i).table(&v.kids[i], p, alive)
		if err != nil {
			return err
		}
		im.pop()
		if entry.count > 0 {
			e.entries = append(e.entries, entry)
			e.blobs = append(e.blobs, blobs)
			im.tableAt = append(im.tableAt, i)
		}
	}
	if uint64(len(p.alive))+uint64(p.available) != uint64(len(p.slots))-reservedEntities {
		return fmt.Errorf("%w: pool.available at offset %d: %d entities in the tables and %d free slots do not add up to the pool's %d slots after Ark's %d reserved ones",
			ErrBadJSON, im.availableAt, len(p.alive), p.available, len(p.slots), reservedEntities)
	}
	if msg := p.check(); msg != "" {
		return fmt.Errorf("%w: pool: the entity pool does not hold together with the tables' entities: %s", ErrBadJSON, msg)
	}
	for i := range e.entries {
		for _, r := range e.entries[i].rels {
			if r.target != (slot{}) && !p.isAlive(r.target) {
				return fmt.Errorf("%w: tables[%d].relations[%q]: target [%d,%d] is not an alive entity",
					ErrBadJSON, im.tableAt[i], im.types[r.comp].name, r.target.id, r.target.gen)
			}
		}
	}
	return nil
}

// table reads one table.
func (im *importer) table(v *jval, p *pool, alive []bool) (tableEntry, []blob, error) {
	var entry tableEntry
	f, err := im.fields(v, "archetype?", "components", "relations", "entities")
	if err != nil {
		return entry, nil, err
	}
	pos, err := im.tableComponents(&entry, f[0], f[1])
	if err != nil {
		return entry, nil, err
	}
	if err := im.tableRelations(&entry, f[2], pos); err != nil {
		return entry, nil, err
	}
	cols, err := im.tableRows(&entry, f[3], p, alive)
	if err != nil {
		return entry, nil, err
	}
	return entry, im.tableBlobs(&entry, cols), nil
}

// tableComponents reads a table's components (and checks its archetype id, when given) into
// entry, in registry order, and returns each name's JSON position plus one.
func (im *importer) tableComponents(entry *tableEntry, arch, comps *jval) (map[string]int, error) {
	im.key("components")
	if err := im.want(comps, jArray); err != nil {
		return nil, err
	}
	pos := map[string]int{} // component name -> JSON position
	for j := range comps.kids {
		name, err := im.at(j).str(&comps.kids[j])
		if err != nil {
			return nil, err
		}
		t := im.comps[name]
		switch {
		case t == nil:
			return nil, im.fail(&comps.kids[j], "%q is not a component type in types", name)
		case pos[name] != 0:
			return nil, im.fail(&comps.kids[j], "component %q twice", name)
		}
		pos[name] = j + 1
		entry.comps = append(entry.comps, im.index[t])
		im.pop()
	}
	im.pop()
	if len(entry.comps) > 1<<15 {
		return nil, im.fail(comps, "%d components", len(entry.comps))
	}
	sort.Slice(entry.comps, func(a, b int) bool { return entry.comps[a] < entry.comps[b] })
	entry.archID = archetypeID(im.ids, entry.comps)
	if arch != nil {
		s, err := im.key("archetype").str(arch)
		if err != nil {
			return nil, err
		}
		if s != fmt.Sprintf("%#016x", entry.archID) {
			return nil, im.fail(arch, "archetype %s, its components hash to %#016x (the field may be left out)", s, entry.archID)
		}
		im.pop()
	}
	return pos, nil
}

// tableRelations reads the targets of a table's relation components: one for each.
func (im *importer) tableRelations(entry *tableEntry, rels *jval, pos map[string]int) error {
	im.key("relations")
	if err := im.want(rels, jObject); err != nil {
		return err
	}
	for j := 0; j+1 < len(rels.kids); j += 2 {
		name := rels.kids[j].s
		t := im.comps[name]
		if t == nil || pos[name] == 0 || !t.is(TypeRelation) {
			return im.fail(&rels.kids[j], "%q is not a relation component of the table", name)
		}
		target, err := im.key(name).pair(&rels.kids[j+1])
		if err != nil {
			return err
		}
		im.pop()
		entry.rels = append(entry.rels, relEntry{comp: im.index[t], target: target})
	}
	sort.Slice(entry.rels, func(a, b int) bool { return entry.rels[a].comp < entry.rels[b].comp })
	for _, c := range entry.comps {
		if im.types[c].is(TypeRelation) && !slices.ContainsFunc(entry.rels, func(r relEntry) bool { return r.comp == c }) {
			return im.fail(rels, "relation component %q has no target", im.types[c].name)
		}
	}
	im.pop()
	return nil
}

// tableRows reads a table's entities, row by row, into one column per component (by position
// in entry.comps).
func (im *importer) tableRows(entry *tableEntry, ents *jval, p *pool, alive []bool) ([]column, error) {
	im.key("entities")
	if err := im.want(ents, jArray); err != nil {
		return nil, err
	}
	if uint64(len(ents.kids)) > math.MaxUint32 {
		return nil, im.fail(ents, "%d entities in one table", len(ents.kids))
	}
	entry.count = uint32(len(ents.kids))
	entry.first = uint64(len(p.alive))
	cols := make([]column, len(entry.comps))
	for k, c := range entry.comps {
		t := im.types[c]
		cols[k].t = t
		if t.is(TypeRaw) {
			size := int64(entry.count) * int64(t.size)
			if im.budget -= size; im.budget < 0 {
				return nil, im.fail(ents, "%d entities of %q take %d bytes, more than this JSON can describe", entry.count, t.name, size)
			}
			cols[k].buf = make([]byte, size)
		}
	}
	slotOfComp := map[string]int{}
	for k, c := range entry.comps {
		slotOfComp[im.types[c].name] = k
	}
	for row := range ents.kids {
		if err := im.tableRow(entry, &ents.kids[row], row, cols, slotOfComp, p, alive); err != nil {
			return nil, err
		}
	}
	im.pop()
	return cols, nil
}

// tableRow reads one entity of a table: its id and a value for every component.
func (im *importer) tableRow(entry *tableEntry, ev *jval, row int, cols []column, slotOfComp map[string]int, p *pool, alive []bool) error {
	im.at(row)
	if err := im.want(ev, jObject); err != nil {
		return err
	}
	seenEntity := false
	seen := make([]bool, len(entry.comps))
	for j := 0; j+1 < len(ev.kids); j += 2 {
		key, val := ev.kids[j].s, &ev.kids[j+1]
		im.key(key)
		if key == "entity" {
			if err := im.tableEntity(val, p, alive); err != nil {
				return err
			}
			seenEntity = true
			im.pop()
			continue
		}
		k, ok := slotOfComp[key]
		if !ok {
			return im.fail(&ev.kids[j], "%q is not a component of the table", key)
		}
		seen[k] = true
		if err := im.component(&cols[k], val, row); err != nil {
			return err
		}
		im.pop()
	}
	if !seenEntity {
		return im.fail(ev, "key \"entity\" missing")
	}
	for k, ok := range seen {
		if !ok {
			return im.fail(ev, "component %q missing (zero-sized and transient ones are null)", im.types[entry.comps[k]].name)
		}
	}
	im.pop()
	return nil
}

// tableEntity reads an entity's id, which must be an alive slot of the pool, listed once.
func (im *importer) tableEntity(val *jval, p *pool, alive []bool) error {
	e, err := im.pair(val)
	if err != nil {
		return err
	}
	if e.id < reservedEntities || e.id >= uint32(len(p.slots)) || p.slots[e.id] != e || alive[e.id] {
		return im.fail(val, "entity [%d,%d] is not an alive slot of the pool (pool.slots holds [id, generation] of alive entities), or appears twice", e.id, e.gen)
	}
	alive[e.id] = true
	p.alive = append(p.alive, e.id)
	return nil
}

// tableBlobs turns the columns with data into blobs, compressed when the file is.
func (im *importer) tableBlobs(entry *tableEntry, cols []column) []blob {
	var blobs []blob
	for k := range cols {
		if !cols[k].t.hasData() {
			continue
		}
		b := blob{raw: cols[k].buf, stored: cols[k].buf}
		if im.lz4 {
			im.comp.compress(&b)
		}
		entry.cols = append(entry.cols, colEntry{comp: entry.comps[k], raw: uint64(len(b.raw)), stored: uint64(len(b.stored))})
		b.raw = nil
		blobs = append(blobs, b)
	}
	return blobs
}

// component writes one entity's value of a column.
func (im *importer) component(c *column, v *jval, row int) error {
	t := c.t
	switch {
	case !t.hasData():
		if v.kind != jNull {
			return im.fail(v, "null expected: %q is %s, its data is not saved", t.name, t.encoding())
		}
		return nil
	case t.is(TypeRaw):
		return im.raw(t.node, v, c.buf[uint64(row)*uint64(t.size):])
	}
	im.b = c.buf
	err := im.value(t.vs, 0, v)
	c.buf, im.b = im.b, nil
	im.depth = 0
	return err
}

// resources reads the resources: every resource type of the registry needs its value.
func (im *importer) resources(v *jval) ([]savedResource, error) {
	if err := im.want(v, jObject); err != nil {
		return nil, err
	}
	var out []savedResource
	for j := 0; j+1 < len(v.kids); j += 2 {
		name := v.kids[j].s
		t := im.res[name]
		if t == nil {
			return nil, im.fail(&v.kids[j], "%q is not a resource type in types", name)
		}
		im.key(name)
		im.b, im.depth = nil, 0
		if err := im.value(t.vs, 0, &v.kids[j+1]); err != nil {
			return nil, err
		}
		im.pop()
		out = append(out, savedResource{file: t, blob: blob{raw: im.b}})
		im.b = nil
	}
	if len(out) != len(im.res) {
		for name := range im.res {
			if v.field(name) == nil {
				return nil, im.fail(v, "no value for resource type %q", name)
			}
		}
	}
	return out, nil
}
