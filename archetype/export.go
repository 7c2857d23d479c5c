package archetype

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/mlange-42/ark/ecs"
)

// ExportJSON reads a PECS file from r and writes the world it holds to w as JSON, without the
// Go types: raw columns are read through the schemas stored in the type registry, msgpack
// columns and resources as self-describing values. The output is one object:
//
//	{"format": "PECS 1.0", "timestamp": "...", "flags": [...],
//	 "types": [{"name", "version", "encoding", "size", "flags", "layout"}, ...],
//	 "pool": {"next", "available", "slots": [[id, gen], ...]},
//	 "tables": [{"archetype", "components": [...], "relations": {name: [id, gen]},
//	             "entities": [{"entity": [id, gen], name: value, ...}, ...]}, ...],
//	 "resources": {name: value, ...}}
//
// Entities are [id, generation] pairs, as Ark writes them; struct fields keep their declaration
// order for raw types and are sorted for msgpack ones; zero-sized and transient components
// appear as null; non-finite floats as "NaN", "+Inf", "-Inf". Checksums are checked as the file
// is read, so output written before a damaged part is followed by an error ([ErrCorrupt]).
func ExportJSON(w io.Writer, r io.Reader) error {
	f := newFileReader(r)
	out := bufio.NewWriterSize(w, 64<<10)
	if err := f.readHead(); err != nil {
		return err
	}
	if f.header.Flags&FlagSection != 0 {
		return errors.New("archetype: ExportJSON exports world files, not entity sections")
	}
	if err := f.readPool(); err != nil {
		return err
	}
	x := exporter{f: f, out: out}
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
	f   *fileReader
	out *bufio.Writer
	err error
	tmp []byte
}

// raw writes bytes as they are.
func (x *exporter) raw(s string) {
	if x.err == nil {
		_, x.err = x.out.WriteString(s)
	}
}

// value writes v as JSON.
func (x *exporter) value(v any) {
	b, err := json.Marshal(jsonSafe(v))
	if err != nil && x.err == nil {
		x.err = fmt.Errorf("archetype: export: %w", err)
	}
	x.raw(string(b))
}

func (x *exporter) head() {
	h := &x.f.header
	x.raw(fmt.Sprintf("{\n\"format\": \"PECS %d.%d\",\n\"timestamp\": ", h.VersionMajor, h.VersionMinor))
	x.value(time.UnixMilli(h.Timestamp).UTC().Format(time.RFC3339Nano))
	flags := []string{}
	if h.Flags&FlagLZ4 != 0 {
		flags = append(flags, "lz4")
	}
	x.raw(",\n\"flags\": ")
	x.value(flags)
	x.raw(",\n\"types\": [")
	for i := range x.f.types {
		t := &x.f.types[i]
		if i > 0 {
			x.raw(",")
		}
		x.raw("\n  ")
		x.value(map[string]any{
			"name": t.name, "version": t.version, "encoding": t.encoding(), "size": t.size,
			"flags": typeFlagNames(t.flags), "layout": describeType(t).Layout,
		})
	}
	p := x.f.pool
	x.raw(fmt.Sprintf("\n],\n\"pool\": {\"next\": %d, \"available\": %d, \"slots\": [", p.next, p.available))
	for i, s := range p.slots {
		if i > 0 {
			x.raw(",")
		}
		x.raw(fmt.Sprintf("[%d,%d]", s.id, s.gen))
	}
	x.raw("]},\n\"tables\": [")
}

// typeFlagNames lists the names of the set type flags.
func typeFlagNames(flags uint32) []string {
	names := []string{}
	for _, f := range []struct {
		flag uint32
		name string
	}{{TypeTransient, "transient"}, {TypeResource, "resource"}, {TypeZeroSized, "zero-sized"}, {TypeRaw, "raw"}, {TypeRelation, "relation"}, {TypeConcrete, "concrete"}} {
		if flags&f.flag != 0 {
			names = append(names, f.name)
		}
	}
	return names
}

// table writes one table, entity by entity. All its columns are read first: they follow each
// other in the file.
func (x *exporter) table(i int) error {
	f := x.f
	e := &f.tables[i]
	type column struct {
		name   string
		node   *schemaNode // raw columns
		size   uint32
		data   []byte
		values []any // msgpack columns
	}
	cols := make([]column, 0, len(e.comps))
	for j := range e.cols {
		c := &e.cols[j]
		t := &f.types[c.comp]
		section := f.columnSection(i, c)
		data, err := f.readBlob(section, c.raw, c.stored, nil)
		if err != nil {
			return err
		}
		col := column{name: t.name, node: t.node, size: t.size}
		if t.is(TypeRaw) {
			col.data = append([]byte(nil), data...)
		} else if col.values, err = x.decodeValues(section, data, int(e.count)); err != nil {
			return err
		}
		cols = append(cols, col)
	}
	if i > 0 {
		x.raw(",")
	}
	x.raw(fmt.Sprintf("\n  {\"archetype\": \"%#016x\", \"components\": ", e.archID))
	names := []string{}
	for _, c := range e.comps {
		names = append(names, f.types[c].name)
	}
	x.value(names)
	x.raw(", \"relations\": {")
	for j, r := range e.rels {
		if j > 0 {
			x.raw(", ")
		}
		x.value(f.types[r.comp].name)
		x.raw(fmt.Sprintf(": [%d,%d]", r.target.id, r.target.gen))
	}
	x.raw("},\n   \"entities\": [")
	for row := range int(e.count) {
		id := f.pool.alive[e.first+uint64(row)]
		if row > 0 {
			x.raw(",")
		}
		x.raw(fmt.Sprintf("\n    {\"entity\": [%d,%d]", id, f.pool.slots[id].gen))
		k := 0
		for _, c := range e.comps {
			t := &f.types[c]
			x.raw(", ")
			x.value(t.name)
			x.raw(": ")
			if !t.hasData() {
				x.raw("null")
				continue
			}
			col := &cols[k]
			k++
			if col.node != nil {
				x.tmp = col.node.appendJSON(x.tmp[:0], col.data[uint64(row)*uint64(col.size):])
				x.raw(string(x.tmp))
			} else {
				x.value(col.values[row])
			}
		}
		x.raw("}")
	}
	x.raw("]}")
	return nil
}

// decodeValues reads count msgpack values without their Go type.
func (x *exporter) decodeValues(section string, data []byte, count int) (_ []any, err error) {
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
	x.raw("\n],\n\"resources\": {")
	for i := range res {
		r := &res[i]
		data, err := f.resourceBytes(r)
		if err != nil {
			return err
		}
		name := f.types[r.typ].name
		values, err := x.decodeValues(fmt.Sprintf("resource %q", name), data, 1)
		if err != nil {
			return err
		}
		if i > 0 {
			x.raw(",")
		}
		x.raw("\n  ")
		x.value(name)
		x.raw(": ")
		x.value(values[0])
	}
	x.raw("\n}\n}\n")
	return nil
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
