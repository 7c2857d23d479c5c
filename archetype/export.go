package archetype

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/mlange-42/ark/ecs"
)

// jsonFormat is the "format" of the JSON that [ExportJSON] writes and [ImportJSON] reads. Its
// number goes up when the JSON changes in a way an older ImportJSON would misread.
const jsonFormat = "pecs-json 1"

// ExportJSON reads a PECS file from r and writes the world it holds to w as JSON, without the
// Go types: raw columns are read through the layouts stored in the type registry, other values
// through their stored value schemas (jsonvalue.go has the JSON form of every kind). The output
// is one object, which [ImportJSON] turns back into the same file:
//
//	{"format": "pecs-json 1", "pecs": "2.0", "timestamp": "2023-11-14T22:13:20Z", "flags": ["lz4"],
//	 "types": [{"name", "version", "flags", "size", "encoding", "layout", "schema"}, ...],
//	 "pool": {"next", "available", "slots": [[id, gen], ...]},
//	 "tables": [{"archetype", "components": [...], "relations": {name: [id, gen]},
//	             "entities": [{"entity": [id, gen], name: value, ...}, ...]}, ...],
//	 "resources": {name: value, ...}}
//
// "pecs" is the file's format version, "timestamp" its header's (milliseconds). A type's
// "layout" describes it for people; "schema" is the same in the file's own form (base64), what
// ImportJSON reads. Entities are [id, generation] pairs, as Ark writes them; the pool lists
// every slot of Ark's entity pool, dead and recycled ones included; a table's "archetype" is
// the hash of its components (ImportJSON checks it). Struct fields keep their declaration
// order; zero-sized and transient components appear as null.
//
// Checksums are checked as the file is read, so output written before a damaged part is
// followed by an error ([ErrCorrupt]).
func ExportJSON(w io.Writer, r io.Reader) error {
	f := newFileReader(r, nil)
	if err := f.readHead(); err != nil {
		return err
	}
	if f.header.Flags&FlagSection != 0 {
		return errors.New("archetype: an entity section, not a world file; use ExportSectionJSON")
	}
	if err := f.readPool(); err != nil {
		return err
	}
	return export(w, f)
}

// ExportSectionJSON writes the entity section data (written by [AppendEntities]; a chunk's
// regional entities, a player's record) to w as JSON, without the Go types, in the form
// [ExportJSON] gives a world file, so that a tool shows a section's entities as it shows a
// world's:
//
//	{"format": "pecs-json 1", "pecs": "2.1", "timestamp": "1970-01-01T00:00:00Z", "flags": ["section"],
//	 "types": [...],
//	 "refs": [["local", 0], ["stable", 77], ["exact", [id, gen]], ...],
//	 "tables": [{"archetype", "components": [...], "relations": {name: [r, 0]},
//	             "entities": [{"entity": 0, name: value, ...}, ...]}, ...],
//	 "resources": {}}
//
// A section's entities have no ids of their own: "entity" is the entity's index in the section
// (table after table, row after row). An ecs.Entity value inside a component, and a relation
// target, is a reference as the section stores it, [r, 0]: entry r of "refs", counted from 1
// ([0, 0] is the zero entity). A reference is to an entity of the section ("local", its index),
// to an entity known by a stable id ("stable", the id), or to an entity as it is ("exact",
// [id, generation]). [ImportJSON] reads world files only.
//
// Damage is reported as by [DecodeEntities]: an error matching [ErrCorrupt], naming the section
// and offset, with the output written before it incomplete.
func ExportSectionJSON(w io.Writer, data []byte) error {
	f, err := exportSectionHead(data)
	if err != nil {
		return err
	}
	return export(w, f)
}

// exportSectionHead reads an entity section up to its first table, as the export does: the
// head, checked to be a section of the size it says, and the reference table.
func exportSectionHead(data []byte) (*fileReader, error) {
	f := newFileReader(sectionBuffer(data), nil)
	if err := f.readHead(); err != nil {
		return nil, err
	}
	if f.header.Flags&FlagSection == 0 {
		return nil, errors.New("archetype: a world file, not an entity section; use ExportJSON")
	}
	if f.header.FileSize != uint64(len(data)) {
		return nil, fmt.Errorf("%w: header at offset 40: file size %d, the section has %d bytes", ErrCorrupt, f.header.FileSize, len(data))
	}
	return f, f.readRefs()
}

// export writes the JSON of a file whose head and entities (pool or references) f has read.
func export(w io.Writer, f *fileReader) error {
	out := bufio.NewWriterSize(w, 64<<10)
	x := exporter{f: f, out: out, conc: newFileConcretes(f.types)}
	x.head()
	for i := range f.tables {
		if err := x.table(i); err != nil {
			return err
		}
	}
	if err := x.resources(); err != nil {
		return err
	}
	if err := f.readFooter(); err != nil {
		return err
	}
	if x.err != nil {
		return x.err
	}
	return out.Flush()
}

type exporter struct {
	f    *fileReader
	out  *bufio.Writer
	conc *fileConcretes
	err  error
	tmp  []byte
}

// raw writes bytes as they are.
func (x *exporter) raw(s string) {
	if x.err == nil {
		_, x.err = x.out.WriteString(s)
	}
}

func (x *exporter) bytes(b []byte) {
	if x.err == nil {
		_, x.err = x.out.Write(b)
	}
}

func (x *exporter) head() {
	h := &x.f.header
	b := fmt.Appendf(x.tmp[:0], "{\n\"format\": %q,\n\"pecs\": \"%d.%d\",\n\"timestamp\": ", jsonFormat, h.VersionMajor, h.VersionMinor)
	if t := time.UnixMilli(h.Timestamp).UTC(); t.Year() >= 0 && t.Year() <= 9999 {
		b = appendJSONString(b, t.Format(time.RFC3339Nano))
	} else {
		b = strconv.AppendInt(b, h.Timestamp, 10)
	}
	b = append(b, ",\n\"flags\": ["...)
	for i, name := range flagNames(h.Flags, fileFlags) {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendJSONString(b, name)
	}
	b = append(b, "],\n\"types\": ["...)
	for i := range x.f.types {
		t := &x.f.types[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = appendKeyJSON(append(b, "\n  {\"name\": "...), t.name)
		b = fmt.Appendf(b, `, "version": %d, "flags": [`, t.version)
		for j, name := range flagNames(t.flags, typeFlags) {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, name)
		}
		b = fmt.Appendf(b, `], "size": %d, "encoding": %q, "layout": `, t.size, t.encoding())
		b = appendKeyJSON(b, describeType(t).Layout)
		b = append(b, `, "schema": "`...)
		b = base64.StdEncoding.AppendEncode(b, t.schema)
		b = append(b, `"}`...)
		x.bytes(b)
		b = b[:0]
	}
	if h.Flags&FlagSection != 0 {
		b = append(b, "\n],\n\"refs\": ["...)
		for i, r := range x.f.refs {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendRefJSON(b, r)
			if len(b) > 32<<10 {
				x.bytes(b)
				b = b[:0]
			}
		}
		x.bytes(append(b, "],\n\"tables\": ["...))
		x.tmp = b[:0]
		return
	}
	p := x.f.pool
	b = fmt.Appendf(b, "\n],\n\"pool\": {\"next\": %d, \"available\": %d, \"slots\": [", p.next, p.available)
	for i, s := range p.slots {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, "[%d,%d]", s.id, s.gen)
		if len(b) > 32<<10 {
			x.bytes(b)
			b = b[:0]
		}
	}
	x.bytes(append(b, "]},\n\"tables\": ["...))
	x.tmp = b[:0]
}

// appendRefJSON appends an entry of a section's reference table, as "refs" lists it.
func appendRefJSON(b []byte, r ref) []byte {
	switch r.kind {
	case refLocal:
		return fmt.Appendf(b, "[\"local\",%d]", r.value)
	case refStable:
		return fmt.Appendf(b, "[\"stable\",%d]", r.value)
	}
	return fmt.Appendf(b, "[\"exact\",[%d,%d]]", uint32(r.value), uint32(r.value>>32))
}

// flagName names a flag in JSON.
type flagName struct {
	flag uint32
	name string
}

// flagNames lists the names of the set flags, in the order of names.
func flagNames(flags uint32, names []flagName) []string {
	out := []string{}
	for _, f := range names {
		if flags&f.flag != 0 {
			out = append(out, f.name)
		}
	}
	return out
}

// fileFlags and typeFlags name the header flags and the type flags in JSON.
var (
	fileFlags = []flagName{{FlagLZ4, "lz4"}, {FlagCompactPool, "compact-pool"}, {FlagSection, "section"}}
	typeFlags = []flagName{{TypeTransient, "transient"}, {TypeResource, "resource"}, {TypeZeroSized, "zero-sized"},
		{TypeRaw, "raw"}, {TypeRelation, "relation"}, {TypeConcrete, "concrete"}}
)

// jsonColumn is one column of a table, its rows in JSON.
type jsonColumn struct {
	json []byte
	ends []int // end of each row's JSON
}

func (c *jsonColumn) row(i int) []byte {
	start := 0
	if i > 0 {
		start = c.ends[i-1]
	}
	return c.json[start:c.ends[i]:c.ends[i]]
}

// table writes one table, entity by entity. All its columns are read first: they follow each
// other in the file.
func (x *exporter) table(i int) error {
	f := x.f
	e := &f.tables[i]
	cols, err := x.tableColumns(i)
	if err != nil {
		return err
	}
	b := x.tmp[:0]
	if i > 0 {
		b = append(b, ',')
	}
	b = fmt.Appendf(b, "\n  {\"archetype\": \"%#016x\", \"components\": [", e.archID)
	for j, c := range e.comps {
		if j > 0 {
			b = append(b, ", "...)
		}
		b = appendKeyJSON(b, f.types[c].name)
	}
	b = append(b, "], \"relations\": {"...)
	for j, r := range e.rels {
		if j > 0 {
			b = append(b, ", "...)
		}
		b = appendKeyJSON(b, f.types[r.comp].name)
		b = fmt.Appendf(b, ": [%d,%d]", r.target.id, r.target.gen)
	}
	b = append(b, "},\n   \"entities\": ["...)
	for row := range int(e.count) {
		if row > 0 {
			b = append(b, ',')
		}
		if f.header.Flags&FlagSection != 0 {
			b = fmt.Appendf(b, "\n    {\"entity\": %d", e.first+uint64(row))
		} else {
			id := f.pool.alive[e.first+uint64(row)]
			b = fmt.Appendf(b, "\n    {\"entity\": [%d,%d]", id, f.pool.slots[id].gen)
		}
		k := 0
		for _, c := range e.comps {
			t := &f.types[c]
			b = append(appendKeyJSON(append(b, ", "...), t.name), ": "...)
			if !t.hasData() {
				b = append(b, "null"...)
				continue
			}
			b = append(b, cols[k].row(row)...)
			k++
		}
		b = append(b, '}')
		if len(b) > 32<<10 {
			x.bytes(b)
			b = b[:0]
		}
	}
	x.bytes(append(b, "]}"...))
	x.tmp = b[:0]
	return x.err
}

// tableColumns reads the columns of table i, the rows of each in JSON: one column per stored
// component (zero-sized and transient ones have none).
func (x *exporter) tableColumns(i int) ([]jsonColumn, error) {
	f := x.f
	e := &f.tables[i]
	cols := make([]jsonColumn, 0, len(e.cols))
	for j := range e.cols {
		c := &e.cols[j]
		section := f.columnSection(i, c)
		data, err := f.readBlob(section, c.raw, c.stored, nil)
		if err != nil {
			return nil, err
		}
		col, err := x.columnJSON(section, &f.types[c.comp], data, int(e.count))
		if err != nil {
			return nil, err
		}
		cols = append(cols, col)
	}
	return cols, nil
}

// columnJSON turns count stored values of a type into JSON, row by row.
func (x *exporter) columnJSON(section string, t *fileType, data []byte, count int) (jsonColumn, error) {
	col := jsonColumn{ends: make([]int, 0, count)}
	switch {
	case t.is(TypeRaw):
		for row := range count {
			col.json = t.node.appendJSON(col.json, data[uint64(row)*uint64(t.size):])
			col.ends = append(col.ends, len(col.json))
		}
	case t.vs != nil:
		vd := &vdec{b: data}
		for row := range count {
			start := vd.pos
			var err error
			if col.json, err = t.vs.appendJSON(col.json, vd, 0, x.conc.lookup); err != nil {
				return col, storedValueError(section, t, row, start, err)
			}
			col.ends = append(col.ends, len(col.json))
		}
		return col, valuesEnd(section, vd)
	default: // format 1.0: no schema
		values, err := decodeLoose(section, data, count)
		if err != nil {
			return col, err
		}
		for _, v := range values {
			b, err := json.Marshal(jsonSafe(v))
			if err != nil {
				return col, fmt.Errorf("archetype: export: %s: %w", section, err)
			}
			col.json = append(col.json, b...)
			col.ends = append(col.ends, len(col.json))
		}
	}
	return col, nil
}

// decodeLoose reads count msgpack values without their Go type.
func decodeLoose(section string, data []byte, count int) (_ []any, err error) {
	defer func() {
		// As in Decode: a panic in msgpack on checked but hostile bytes is damage.
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %s: undecodable value: %v", ErrCorrupt, section, p)
		}
	}()
	if n, err := msgpackSize(data, count); err != nil || n != len(data) {
		return nil, fmt.Errorf("%w: %s: not %d msgpack values of %d bytes", ErrCorrupt, section, count, len(data))
	}
	rd := bytes.NewReader(data)
	dec := newMsgpackDecoder(true)
	resetDecoder(dec, rd, true)
	values := make([]any, count)
	for row := range values {
		v, err := looseValue(dec)
		if err != nil {
			return nil, fmt.Errorf("%w: %s row %d: %w", ErrCorrupt, section, row, err)
		}
		values[row] = v
	}
	if rd.Len() != 0 {
		return nil, fmt.Errorf("%w: %s: %d bytes after the last value", ErrCorrupt, section, rd.Len())
	}
	return values, nil
}

func (x *exporter) resources() error {
	f := x.f
	res, err := f.readResources()
	if err != nil {
		return err
	}
	if f.header.Flags&FlagSection != 0 && len(res) != 0 {
		return fmt.Errorf("%w: resources: a section holds %d resources", ErrCorrupt, len(res))
	}
	x.raw("\n],\n\"resources\": {")
	for i := range res {
		r := &res[i]
		data, err := f.resourceBytes(r)
		if err != nil {
			return err
		}
		t := &f.types[r.typ]
		col, err := x.columnJSON(fmt.Sprintf("resource %q", t.name), t, data, 1)
		if err != nil {
			return err
		}
		b := x.tmp[:0]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendKeyJSON(append(b, "\n  "...), t.name), ": "...)
		x.bytes(append(b, col.json...))
		x.tmp = b[:0]
	}
	x.raw("\n}\n}\n")
	return x.err
}

// jsonSafe makes a loosely decoded value marshalable: non-finite floats become strings.
func jsonSafe(v any) any {
	switch v := v.(type) {
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return strconv.FormatFloat(v, 'g', -1, 64)
		}
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = jsonSafe(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = jsonSafe(e)
		}
		return out
	case ecs.Entity:
		return [2]uint32{v.ID(), v.Gen()}
	}
	return v
}
