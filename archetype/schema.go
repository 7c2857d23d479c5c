package archetype

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"unsafe"
)

// A schema describes the memory layout of a plain-old-data type, so that a raw column can be
// read without the Go type: by the export command, and by migrations that read old layouts by
// field name. Encoding (little-endian, part of the file format):
//
//	scalar:  kind u8                       (size implied by the kind)
//	entity:  kind u8                       (ecs.Entity: id u32, generation u32)
//	array:   kind u8, length u32, element  (size = length * element size)
//	struct:  kind u8, size u32, fields u16, then per field: name (u16 length, bytes), offset u32, node
const (
	kindBool       = 1
	kindInt8       = 2
	kindInt16      = 3
	kindInt32      = 4
	kindInt64      = 5
	kindUint8      = 6
	kindUint16     = 7
	kindUint32     = 8
	kindUint64     = 9
	kindFloat32    = 10
	kindFloat64    = 11
	kindComplex64  = 12
	kindComplex128 = 13
	kindArray      = 14
	kindStruct     = 15
	kindEntity     = 16

	maxSchemaDepth = 32
)

// maxSchemaCost bounds the work of reading one value through a schema of the given size: the
// number of nodes visited. Plain Go types stay far below it; a schema that exceeds it (arrays of
// zero-sized elements nested deep) is refused, so that reading a value stays proportional to its
// bytes.
func maxSchemaCost(size uint32) uint64 { return 8*uint64(size) + 1024 }

var scalarSizes = [...]uint32{
	kindBool: 1, kindInt8: 1, kindInt16: 2, kindInt32: 4, kindInt64: 8,
	kindUint8: 1, kindUint16: 2, kindUint32: 4, kindUint64: 8,
	kindFloat32: 4, kindFloat64: 8, kindComplex64: 8, kindComplex128: 16,
	kindEntity: 8,
}

// scalarKind maps a Go kind of the given size to a schema kind; 0 if it has none.
func scalarKind(t reflect.Type) uint8 {
	signed := [...]uint8{1: kindInt8, 2: kindInt16, 4: kindInt32, 8: kindInt64}
	unsigned := [...]uint8{1: kindUint8, 2: kindUint16, 4: kindUint32, 8: kindUint64}
	switch t.Kind() {
	case reflect.Bool:
		return kindBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return signed[t.Size()]
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return unsigned[t.Size()]
	case reflect.Float32:
		return kindFloat32
	case reflect.Float64:
		return kindFloat64
	case reflect.Complex64:
		return kindComplex64
	case reflect.Complex128:
		return kindComplex128
	}
	return 0
}

// appendSchema appends the schema of the plain-old-data type t to b.
func appendSchema(b []byte, t reflect.Type, depth int) ([]byte, bool) {
	if depth > maxSchemaDepth || t.Size() > math.MaxUint32 {
		return b, false
	}
	w := (*writeBuf)(&b)
	if t == entityType {
		w.u8(kindEntity)
		return b, true
	}
	if k := scalarKind(t); k != 0 {
		w.u8(k)
		return b, true
	}
	switch t.Kind() {
	case reflect.Array:
		if uint64(t.Len()) > math.MaxUint32 {
			return b, false
		}
		w.u8(kindArray)
		w.u32(uint32(t.Len()))
		return appendSchema(b, t.Elem(), depth+1)
	case reflect.Struct:
		if t.NumField() > math.MaxUint16 {
			return b, false
		}
		w.u8(kindStruct)
		w.u32(uint32(t.Size()))
		w.u16(uint16(t.NumField()))
		for i := range t.NumField() {
			f := t.Field(i)
			if len(f.Name) > math.MaxUint16 {
				return b, false
			}
			w.str16(f.Name)
			w.u32(uint32(f.Offset))
			var ok bool
			if b, ok = appendSchema(b, f.Type, depth+1); !ok {
				return b, false
			}
			w = (*writeBuf)(&b)
		}
		return b, true
	}
	return b, false
}

// schemaNode is a parsed schema.
type schemaNode struct {
	kind   uint8
	size   uint32
	cost   uint64        // nodes visited to read one value
	length uint32        // arrays
	elem   *schemaNode   // arrays
	fields []schemaField // structs
}

type schemaField struct {
	name   string
	offset uint32
	node   *schemaNode
}

var errSchema = errors.New("bad schema")

// parseSchema parses and validates a schema: every field lies inside its struct, arrays have
// the size their elements say, and the whole describes exactly size bytes.
func parseSchema(b []byte, size uint32) (*schemaNode, error) {
	r := &readBuf{b: b, section: "schema"}
	n := parseNode(r, 0)
	if r.err != nil {
		return nil, r.err
	}
	if n == nil || r.remaining() != 0 || n.size != size || n.cost > maxSchemaCost(size) {
		return nil, errSchema
	}
	return n, nil
}

func parseNode(r *readBuf, depth int) *schemaNode {
	if depth > maxSchemaDepth {
		return nil
	}
	n := &schemaNode{kind: r.u8()}
	switch {
	case r.err != nil:
		return nil
	case n.kind >= kindBool && n.kind <= kindComplex128 || n.kind == kindEntity:
		n.size = scalarSizes[n.kind]
		n.cost = 1
	case n.kind == kindArray:
		n.length = r.u32()
		n.elem = parseNode(r, depth+1)
		if n.elem == nil {
			return nil
		}
		total := uint64(n.length) * uint64(n.elem.size)
		if total > math.MaxUint32 || n.elem.size == 0 && n.length > 1<<16 {
			return nil
		}
		n.size = uint32(total)
		n.cost = 1 + uint64(n.length)*n.elem.cost
		if n.cost > 1<<40 {
			return nil
		}
	case n.kind == kindStruct:
		n.size = r.u32()
		count := int(r.u16())
		if count > r.remaining() { // every field takes at least one byte
			return nil
		}
		n.fields = make([]schemaField, 0, count)
		n.cost = 1
		for range count {
			f := schemaField{name: r.str16(), offset: r.u32()}
			f.node = parseNode(r, depth+1)
			if f.node == nil || uint64(f.offset)+uint64(f.node.size) > uint64(n.size) {
				return nil
			}
			n.fields = append(n.fields, f)
			n.cost += f.node.cost
			if n.cost > 1<<40 {
				return nil
			}
		}
	default:
		return nil
	}
	if r.err != nil {
		return nil
	}
	return n
}

// equal reports whether two schemas describe the same layout with the same field names.
func schemaEqual(a, b []byte) bool { return string(a) == string(b) }

// value reads one value laid out as n from data (len(data) >= n.size): structs become
// map[string]any, arrays []any, signed integers int64, unsigned uint64, floats float64,
// complex numbers complex128, entities ecs.Entity.
func (n *schemaNode) value(data []byte) any {
	le := binary.LittleEndian
	switch n.kind {
	case kindBool:
		return data[0] != 0
	case kindInt8:
		return int64(int8(data[0]))
	case kindInt16:
		return int64(int16(le.Uint16(data)))
	case kindInt32:
		return int64(int32(le.Uint32(data)))
	case kindInt64:
		return int64(le.Uint64(data))
	case kindUint8:
		return uint64(data[0])
	case kindUint16:
		return uint64(le.Uint16(data))
	case kindUint32:
		return uint64(le.Uint32(data))
	case kindUint64:
		return le.Uint64(data)
	case kindFloat32:
		return float64(math.Float32frombits(le.Uint32(data)))
	case kindFloat64:
		return math.Float64frombits(le.Uint64(data))
	case kindComplex64:
		return complex128(complex(math.Float32frombits(le.Uint32(data)), math.Float32frombits(le.Uint32(data[4:]))))
	case kindComplex128:
		return complex(math.Float64frombits(le.Uint64(data)), math.Float64frombits(le.Uint64(data[8:])))
	case kindEntity:
		return entityOf(slot{id: le.Uint32(data), gen: le.Uint32(data[4:])})
	case kindArray:
		out := make([]any, n.length)
		for i := range out {
			off := uint32(i) * n.elem.size
			out[i] = n.elem.value(data[off:])
		}
		return out
	default:
		out := make(map[string]any, len(n.fields))
		for _, f := range n.fields {
			out[f.name] = f.node.value(data[f.offset:])
		}
		return out
	}
}

// appendJSON appends the JSON form of one value laid out as n (see jsonvalue.go). Structs become
// objects with fields in declaration order, arrays arrays, entities [id, generation], complex
// numbers [real, imaginary], floats the shortest form of their bits.
func (n *schemaNode) appendJSON(dst []byte, data []byte) []byte {
	le := binary.LittleEndian
	switch n.kind {
	case kindFloat32:
		return appendFloatBits(dst, uint64(le.Uint32(data)), true)
	case kindFloat64:
		return appendFloatBits(dst, le.Uint64(data), false)
	case kindComplex64:
		dst = appendFloatBits(append(dst, '['), uint64(le.Uint32(data)), true)
		dst = appendFloatBits(append(dst, ','), uint64(le.Uint32(data[4:])), true)
		return append(dst, ']')
	case kindComplex128:
		dst = appendFloatBits(append(dst, '['), le.Uint64(data), false)
		dst = appendFloatBits(append(dst, ','), le.Uint64(data[8:]), false)
		return append(dst, ']')
	case kindEntity:
		return fmt.Appendf(dst, "[%d,%d]", le.Uint32(data), le.Uint32(data[4:]))
	case kindArray:
		dst = append(dst, '[')
		for i := range n.length {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = n.elem.appendJSON(dst, data[i*n.elem.size:])
		}
		return append(dst, ']')
	case kindStruct:
		dst = append(dst, '{')
		for i, f := range n.fields {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(appendKeyJSON(dst, rawFieldKey(f.name, i)), ':')
			dst = f.node.appendJSON(dst, data[f.offset:])
		}
		return append(dst, '}')
	default:
		return fmt.Append(dst, n.value(data))
	}
}

// rawFieldKey is the JSON key of field i of a raw struct: its name, or for a blank field ("_",
// of which a struct may have several) "_" and its index, as the value schema names them.
func rawFieldKey(name string, i int) string {
	if name == "_" {
		return "_" + strconv.Itoa(i)
	}
	return name
}

// A copyRun copies n bytes of one value from offset src in the stored layout to offset dst in
// the host's.
type copyRun struct{ src, dst, n uint32 }

// relayoutRuns returns how to copy a value stored as s into a value laid out as l, when both
// have the same fields (names and order), scalar kinds and array lengths and only offsets,
// padding and sizes differ: a file written on a host of other alignment, such as a 64-bit
// host's file read on a 32-bit host, where a float64 after an int32 sits at offset 4, not 8.
// It reports false when the two differ in more. Adjacent bytes that stay adjacent merge into
// one run.
func relayoutRuns(s, l *schemaNode) ([]copyRun, bool) {
	var runs []copyRun
	if !relayoutNode(s, l, 0, 0, &runs) {
		return nil, false
	}
	return runs, true
}

func relayoutNode(s, l *schemaNode, so, lo uint32, runs *[]copyRun) bool {
	if s.kind != l.kind {
		return false
	}
	switch s.kind {
	case kindArray:
		if s.length != l.length || s.length == 0 {
			return s.length == l.length
		}
		// The runs of one element, apart: merged into the run before it, they would be
		// lost for the others.
		var elem []copyRun
		if !relayoutNode(s.elem, l.elem, so, lo, &elem) {
			return false
		}
		for i := range s.length {
			for _, r := range elem {
				addRun(runs, copyRun{r.src + i*s.elem.size, r.dst + i*l.elem.size, r.n})
			}
		}
	case kindStruct:
		if len(s.fields) != len(l.fields) {
			return false
		}
		for i, sf := range s.fields {
			lf := l.fields[i]
			if sf.name != lf.name || !relayoutNode(sf.node, lf.node, so+sf.offset, lo+lf.offset, runs) {
				return false
			}
		}
	default:
		addRun(runs, copyRun{so, lo, s.size})
	}
	return true
}

// rawFieldChange finds a field that the stored layout s and the Go type t both have, by name,
// with different types: a scalar of another kind (an int64 that became an int32 or a string), an
// array of another length, a struct that became something else. The error names the path below
// t and both types; nil when every field both have has the same type.
func rawFieldChange(s *schemaNode, t reflect.Type) *typeError {
	differ := func() *typeError {
		return &typeError{typ: t, why: fmt.Sprintf("stored as %s, the program's type is %v", describeSchema(s), t)}
	}
	switch {
	case s.kind == kindEntity || t == entityType:
		if s.kind != kindEntity || t != entityType {
			return differ()
		}
	case s.kind == kindStruct:
		if t.Kind() != reflect.Struct {
			return differ()
		}
		return rawStructChange(s, t)
	case s.kind == kindArray:
		if t.Kind() != reflect.Array || uint64(t.Len()) != uint64(s.length) {
			return differ()
		}
		if terr := rawFieldChange(s.elem, t.Elem()); terr != nil {
			return terr.at("[]")
		}
	case scalarKind(t) != s.kind:
		return differ()
	}
	return nil
}

// rawStructChange is rawFieldChange for the fields of a struct; blank fields are not compared.
func rawStructChange(s *schemaNode, t reflect.Type) *typeError {
	for _, f := range s.fields {
		if f.name == "_" {
			continue
		}
		for i := range t.NumField() {
			if lf := t.Field(i); lf.Name == f.name {
				if terr := rawFieldChange(f.node, lf.Type); terr != nil {
					return terr.at("." + f.name)
				}
				break
			}
		}
	}
	return nil
}

// addRun appends r to runs, or extends the last run when r continues it on both sides.
func addRun(runs *[]copyRun, r copyRun) {
	if r.n == 0 {
		return
	}
	if k := len(*runs) - 1; k >= 0 {
		if last := &(*runs)[k]; last.src+last.n == r.src && last.dst+last.n == r.dst {
			last.n += r.n
			return
		}
	}
	*runs = append(*runs, r)
}

// relayoutRows copies count values stored back to back in data (stored bytes each) into
// consecutive values of local bytes each starting at base, through runs.
func relayoutRows(data []byte, stored uint32, base unsafe.Pointer, local uintptr, count int, runs []copyRun) {
	for row := range count {
		src := data[uint64(row)*uint64(stored):]
		dst := unsafe.Slice((*byte)(unsafe.Add(base, uintptr(row)*local)), local)
		for _, r := range runs {
			copy(dst[r.dst:r.dst+r.n], src[r.src:r.src+r.n])
		}
	}
}
