package archetype

import (
	"fmt"
	"io"
	"strings"

	"github.com/mlange-42/ark/ecs"
)

// Info describes a PECS file without decoding it into a world: what `arksave inspect` prints.
type Info struct {
	Header    Header
	Types     []TypeInfo
	Tables    []TableInfo
	Resources []ResourceInfo
	Pool      PoolInfo
	Checksum  ChecksumInfo
}

// TypeInfo is one entry of the type registry.
type TypeInfo struct {
	ID       [16]byte // FNV-1a 128 of Name
	Name     string   // full name: package path and type name
	Version  uint32   // type version, see [Versioned]
	Flags    uint32   // [TypeTransient], [TypeResource], [TypeZeroSized], [TypeRaw], [TypeRelation]
	Size     uint32   // memory size of the Go type when saved
	Encoding string   // "raw", "msgpack", "zero-sized" or "transient"
	Layout   string   // fields, kinds and offsets of raw types, e.g. "{X float64 @0, Y float64 @8}"
}

// TableInfo is one entry of the archetype table: an Ark table.
type TableInfo struct {
	ArchetypeID uint64         // hash of the component type ids
	Entities    uint32         // entities in the table
	Components  []string       // component type names
	Relations   []RelationInfo // relation targets
	DataOffset  uint64         // file offset of the table's columns
	DataSize    uint64         // bytes of the table's columns in the file, CRCs included
	RawSize     uint64         // bytes of the columns before compression
}

// RelationInfo is the target of one relation component of a table.
type RelationInfo struct {
	Component string
	Target    ecs.Entity
}

// ResourceInfo is one saved resource.
type ResourceInfo struct {
	Name       string
	RawSize    uint64 // msgpack bytes
	StoredSize uint64 // bytes in the file
}

// PoolInfo summarises the entity pool.
type PoolInfo struct {
	Slots uint32 // slots in the pool, Ark's two reserved ones included
	Alive uint32 // alive entities
	Free  uint32 // free slots waiting to be recycled
}

// ChecksumInfo is the verdict on the file's checksums.
type ChecksumInfo struct {
	Type     uint32 // [ChecksumCRC32C]
	Stored   uint64 // checksum in the footer
	Computed uint64 // checksum of the bytes read
	OK       bool   // every section, column and the footer checked out
}

// ReadInfo reads a whole PECS file from r and describes it, checking every section's, column's
// and the footer's checksum on the way. On damage it returns what it could read so far together
// with an error as [Decode] would return it ([ErrCorrupt], [ErrVersion]).
func ReadInfo(r io.Reader) (*Info, error) {
	info := &Info{}
	f := newFileReader(r)
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
	if err := f.readPool(); err != nil {
		return info, err
	}
	info.Pool = PoolInfo{Slots: uint32(len(f.pool.slots)), Alive: uint32(len(f.pool.alive)), Free: f.pool.available}
	for i := range f.tables {
		e := &f.tables[i]
		for j := range e.cols {
			c := &e.cols[j]
			if _, err := f.readBlob(f.columnSection(i, c), c.raw, c.stored, nil); err != nil {
				return info, err
			}
		}
	}
	res, err := f.readResources()
	if err != nil {
		return info, err
	}
	for i := range res {
		info.Resources = append(info.Resources, ResourceInfo{Name: f.types[res[i].typ].name, RawSize: res[i].raw, StoredSize: uint64(len(res[i].stored))})
		if _, err := f.resourceBytes(&res[i]); err != nil {
			return info, err
		}
	}
	info.Checksum = ChecksumInfo{Type: ChecksumCRC32C, Computed: uint64(f.s.fileCRC())}
	err = f.readFooter()
	info.Checksum.Stored = f.footer.checksum
	info.Checksum.OK = err == nil
	return info, err
}

func describeType(t *fileType) TypeInfo {
	ti := TypeInfo{ID: t.id, Name: t.name, Version: t.version, Flags: t.flags, Size: t.size, Encoding: t.encoding()}
	if t.node != nil {
		ti.Layout = t.node.String()
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

func (f *fileReader) describeTable(i int) TableInfo {
	e := &f.tables[i]
	ti := TableInfo{ArchetypeID: e.archID, Entities: e.count, DataOffset: e.offset, DataSize: e.size}
	for _, c := range e.comps {
		ti.Components = append(ti.Components, f.types[c].name)
	}
	for _, r := range e.rels {
		ti.Relations = append(ti.Relations, RelationInfo{Component: f.types[r.comp].name, Target: entityOf(r.target)})
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
