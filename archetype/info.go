package archetype

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/arksave/arksave/internal/pecs"
)

func init() { pecs.Register(pecs.Readers{Info: readInfo, Header: readHeader, Decrypt: openFile}) }

// readInfo reads a whole PECS file from r and describes it (pecs.ReadInfo), checking every
// section's, column's and the footer's checksum on the way. On damage it returns what it could
// read so far together with an error as [Decode] would return it ([ErrCorrupt], [ErrVersion]).
func readInfo(r io.Reader) (*pecs.Info, error) {
	info := &pecs.Info{}
	f := newFileReader(r, nil)
	err := f.readHead()
	info.Header = f.header
	if f.types == nil && err != nil {
		return info, err
	}
	for i := range f.types {
		info.Types = append(info.Types, describeType(&f.types[i]))
	}
	if err != nil {
		return info, err
	}
	for i := range f.tables {
		info.Tables = append(info.Tables, f.describeTable(i))
	}
	if err := f.readEntities(); err != nil {
		return info, err
	}
	if f.pool != nil {
		info.Pool = pecs.PoolInfo{Slots: uint32(len(f.pool.slots)), Alive: uint32(len(f.pool.alive)), Free: f.pool.available}
	} else {
		info.Section = describeRefs(f.refs)
	}
	conc := newFileConcretes(f.types)
	for i := range f.tables {
		e := &f.tables[i]
		for j := range e.cols {
			c := &e.cols[j]
			section := f.columnSection(i, c)
			data, err := f.readBlob(section, c.raw, c.stored, nil)
			if err != nil {
				return info, err
			}
			if err := checkValues(section, &f.types[c.comp], data, int(e.count), conc); err != nil {
				return info, err
			}
		}
	}
	res, err := f.readResources()
	if err != nil {
		return info, err
	}
	for i := range res {
		info.Resources = append(info.Resources, pecs.ResourceInfo{Name: f.types[res[i].typ].name, RawSize: res[i].raw, StoredSize: uint64(len(res[i].stored))})
		data, err := f.resourceBytes(&res[i])
		if err != nil {
			return info, err
		}
		ft := &f.types[res[i].typ]
		if err := checkValues(fmt.Sprintf("resource %q", ft.name), ft, data, 1, conc); err != nil {
			return info, err
		}
	}
	info.Checksum = pecs.ChecksumInfo{Type: ChecksumCRC32C, Computed: uint64(f.s.fileCRC())}
	err = f.readFooter()
	info.Checksum.Stored = f.footer.checksum
	info.Checksum.OK = err == nil
	return info, err
}

// checkValues reads count stored values of a type that is not raw memory the way Decode would
// with the types the file records: against the value schema in format 2.0, as well-formed
// msgpack in format 1.0. A value that does not read is [ErrCorrupt], naming the row and field.
func checkValues(section string, t *fileType, data []byte, count int, conc *fileConcretes) error {
	switch {
	case t.is(TypeRaw):
		return nil
	case t.vs == nil:
		if n, err := msgpackSize(data, count); err != nil || n != len(data) {
			return fmt.Errorf("%w: %s: not %d msgpack values of %d bytes", ErrCorrupt, section, count, len(data))
		}
		return nil
	}
	vd := &vdec{b: data}
	for row := range count {
		start := vd.pos
		if err := t.vs.checkValue(vd, 0, conc.lookup); err != nil {
			return storedValueError(section, t, row, start, err)
		}
	}
	return valuesEnd(section, vd)
}

// storedValueError names the section, row, offset and field of a stored value that does not
// read as its stored type says.
func storedValueError(section string, t *fileType, row, start int, err error) error {
	ve := &valueError{}
	path := t.name
	if errors.As(err, &ve) {
		path = shortTypeName(t.name)
		for k := len(ve.path) - 1; k >= 0; k-- {
			path += ve.path[k]
		}
	}
	return &pathError{
		msg: fmt.Sprintf("archetype: %s row %d at value offset %d, field %s: the value does not match the type the file records: %s",
			section, row, start, path, strings.TrimPrefix(err.Error(), "archetype: ")),
		err: err,
	}
}

// valuesEnd checks that the values of a column or resource took all its bytes.
func valuesEnd(section string, vd *vdec) error {
	if vd.pos != len(vd.b) {
		return fmt.Errorf("%w: %s at value offset %d: %d bytes after the last value", ErrCorrupt, section, vd.pos, len(vd.b)-vd.pos)
	}
	return nil
}

// shortTypeName drops the package path of a full type name.
func shortTypeName(name string) string {
	if i := strings.LastIndexAny(name, "/."); i >= 0 && !strings.ContainsAny(name, "[]*") {
		return name[i+1:]
	}
	return name
}

func describeType(t *fileType) pecs.TypeInfo {
	ti := pecs.TypeInfo{ID: t.id, Name: t.name, Version: t.version, Flags: t.flags, Size: t.size, Encoding: t.encoding()}
	switch {
	case t.node != nil:
		ti.Layout = t.node.String()
	case t.vs != nil:
		ti.Layout = t.vs.String()
	}
	return ti
}

// encoding names how the type's data is stored.
func (t *fileType) encoding() string {
	switch {
	case t.is(TypeZeroSized):
		return "zero-sized"
	case t.is(TypeTransient):
		return "transient"
	case t.is(TypeRaw):
		return "raw"
	}
	return "msgpack"
}

func (f *fileReader) describeTable(i int) pecs.TableInfo {
	e := &f.tables[i]
	ti := pecs.TableInfo{ArchetypeID: e.archID, Entities: e.count, DataOffset: e.offset, DataSize: e.size}
	for _, c := range e.comps {
		ti.Components = append(ti.Components, f.types[c].name)
	}
	for _, r := range e.rels {
		ti.Relations = append(ti.Relations, pecs.RelationInfo{Component: f.types[r.comp].name, Target: entityOf(r.target)})
	}
	for _, c := range e.cols {
		ti.RawSize += c.raw
	}
	return ti
}

var kindNames = [...]string{
	kindBool: "bool", kindInt8: "int8", kindInt16: "int16", kindInt32: "int32", kindInt64: "int64",
	kindUint8: "uint8", kindUint16: "uint16", kindUint32: "uint32", kindUint64: "uint64",
	kindFloat32: "float32", kindFloat64: "float64", kindComplex64: "complex64", kindComplex128: "complex128",
	kindEntity: "ecs.Entity",
}

// String renders the layout: "{X float64 @0, Cells [3][2]uint8 @16, ...}".
func (n *schemaNode) String() string {
	var b strings.Builder
	n.format(&b)
	return b.String()
}

func (n *schemaNode) format(b *strings.Builder) {
	switch n.kind {
	case kindArray:
		fmt.Fprintf(b, "[%d]", n.length)
		n.elem.format(b)
	case kindStruct:
		b.WriteByte('{')
		for i, f := range n.fields {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(b, "%s ", f.name)
			f.node.format(b)
			fmt.Fprintf(b, " @%d", f.offset)
		}
		b.WriteByte('}')
	default:
		b.WriteString(kindNames[n.kind])
	}
}
