package archetype

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unsafe"

	"github.com/mlange-42/ark/ecs"
)

// A value schema describes a type saved as msgpack (format 2.0): the registry entry of every
// such component, resource and concrete type behind an interface carries one, so that a file's
// values can be checked without the Go types (arksave check) and an intact file whose types no
// longer match the program's is told apart from a damaged one ([ErrIncompatible]). It is a
// graph, so that recursive types have one (little-endian, part of the file format):
//
//	schema: nodes u16, then the nodes; node 0 is the type itself
//	node:   kind u8 (a vkind), then by kind:
//	        byte array:                       length u32
//	        array:                            length u32, element node u16
//	        slice, pointer:                   element node u16
//	        map:                              key node u16, value node u16
//	        struct:                           fields u16, per field: name (u16 length, bytes), node u16
//	        BinaryMarshaler, msgpack methods: Go type name (u16 length, bytes)
//	        every other kind:                 nothing
//
// Decode checks the stored schema against the program's type before the world changes: fields
// are matched by name; a field only the file has is skipped, one only the program has stays
// zero; matched fields must have the same kind, where any integer kind takes any other (each
// value is checked to fit), either float either float, and either complex either complex (a
// float32 takes a stored float64 only when the value converts exactly: NaN and the infinities
// do, 0.1 and 1e300 do not).

type vschema struct {
	nodes []vnode
}

type vnode struct {
	kind   vkind
	length uint32
	elem   uint16
	key    uint16
	fields []vsfield
	name   string
}

type vsfield struct {
	name string
	node uint16
}

// maxValueSchemaLen bounds a value schema in a file; Encode refuses types that need more.
const maxValueSchemaLen = 1 << 20

// appendValueSchema appends the schema of plan p.
func appendValueSchema(b []byte, p *vplan) ([]byte, bool) {
	index := map[*vplan]int{}
	var order []*vplan
	var visit func(*vplan)
	visit = func(q *vplan) {
		if _, ok := index[q]; ok {
			return
		}
		index[q] = len(order)
		order = append(order, q)
		for _, c := range []*vplan{q.elem, q.key} {
			if c != nil && q.kind != vByteArray && q.kind != vBytes {
				visit(c)
			}
		}
		for i := range q.fields {
			visit(q.fields[i].plan)
		}
	}
	visit(p)
	if len(order) > math.MaxUint16 {
		return b, false
	}
	w := (*writeBuf)(&b)
	w.u16(uint16(len(order)))
	for _, q := range order {
		w.u8(uint8(q.kind))
		switch q.kind {
		case vByteArray:
			w.u32(uint32(q.length))
		case vArray:
			w.u32(uint32(q.length))
			w.u16(uint16(index[q.elem]))
		case vSlice, vPointer:
			w.u16(uint16(index[q.elem]))
		case vMap:
			w.u16(uint16(index[q.key]))
			w.u16(uint16(index[q.elem]))
		case vStruct:
			w.u16(uint16(len(q.fields)))
			for i := range q.fields {
				w.str16(q.fields[i].name)
				w.u16(uint16(index[q.fields[i].plan]))
			}
		case vBinary, vMsgpack, vMsgpackRaw:
			name := typeName(q.typ)
			if len(name) > maxNameLen {
				name = name[:maxNameLen]
			}
			w.str16(name)
		}
	}
	return b, len(b) <= maxValueSchemaLen
}

var errValueSchema = fmt.Errorf("bad value schema")

// parseValueSchema parses and validates a value schema: known kinds, node indices in range,
// distinct field names, nothing left over.
func parseValueSchema(b []byte) (*vschema, error) {
	r := &readBuf{b: b, section: "value schema"}
	n := int(r.u16())
	if r.err != nil || n == 0 || n > r.remaining() {
		return nil, errValueSchema
	}
	s := &vschema{nodes: make([]vnode, n)}
	ref := func() uint16 {
		i := r.u16()
		if int(i) >= n {
			r.fail("node %d of %d", i, n)
		}
		return i
	}
	for i := range s.nodes {
		nd := &s.nodes[i]
		nd.kind = vkind(r.u8())
		switch nd.kind {
		case vByteArray:
			nd.length = r.u32()
		case vArray:
			nd.length = r.u32()
			nd.elem = ref()
		case vSlice, vPointer:
			nd.elem = ref()
		case vMap:
			nd.key = ref()
			nd.elem = ref()
		case vStruct:
			count := int(r.u16())
			if count > r.remaining() {
				return nil, errValueSchema
			}
			nd.fields = make([]vsfield, count)
			names := make(map[string]bool, count)
			for j := range nd.fields {
				nd.fields[j] = vsfield{name: r.str16(), node: ref()}
				if names[nd.fields[j].name] {
					return nil, errValueSchema
				}
				names[nd.fields[j].name] = true
			}
		case vBinary, vMsgpack, vMsgpackRaw:
			nd.name = r.str16()
		default:
			if nd.kind < 1 || nd.kind > vKinds {
				return nil, errValueSchema
			}
		}
		if r.err != nil {
			return nil, errValueSchema
		}
	}
	if r.remaining() != 0 {
		return nil, errValueSchema
	}
	return s, nil
}

type compatKey struct {
	node uint16
	plan *vplan
}

// compatible checks that values stored with node i of s can be read into plan p; the error
// names the path below p's type.
func (s *vschema) compatible(i uint16, p *vplan, seen map[compatKey]bool) *typeError {
	k := compatKey{i, p}
	if seen[k] {
		return nil
	}
	seen[k] = true
	nd := &s.nodes[i]
	if nd.kind.class() != p.kind.class() {
		return &typeError{typ: p.typ, why: fmt.Sprintf("stored as %s, the program's type is a %s", s.describe(i), p.kind)}
	}
	switch nd.kind {
	case vByteArray, vArray:
		if int64(nd.length) != int64(p.length) {
			return &typeError{typ: p.typ, why: fmt.Sprintf("stored as an array of %d, the program's has %d", nd.length, p.length)}
		}
		if nd.kind == vArray {
			if err := s.compatible(nd.elem, p.elem, seen); err != nil {
				return err.at("[]")
			}
		}
	case vSlice, vPointer:
		if err := s.compatible(nd.elem, p.elem, seen); err != nil {
			return err.at("[]")
		}
	case vMap:
		if err := s.compatible(nd.key, p.key, seen); err != nil {
			return err.at("[key]")
		}
		if err := s.compatible(nd.elem, p.elem, seen); err != nil {
			return err.at("[value]")
		}
	case vStruct:
		for _, f := range nd.fields {
			if j, ok := p.byName[f.name]; ok {
				if err := s.compatible(f.node, p.fields[j].plan, seen); err != nil {
					return err.at("." + f.name)
				}
			}
		}
	}
	return nil
}

// describe names a stored node's type for messages.
func (s *vschema) describe(i uint16) string {
	var b strings.Builder
	s.format(&b, i, map[uint16]bool{}, 2)
	return b.String()
}

// String renders the whole type: "{Name string, Tags []string, Next *{…}}".
func (s *vschema) String() string {
	var b strings.Builder
	s.format(&b, 0, map[uint16]bool{}, 64)
	return b.String()
}

func (s *vschema) format(b *strings.Builder, i uint16, path map[uint16]bool, depth int) {
	nd := &s.nodes[i]
	if path[i] || depth <= 0 || b.Len() > 4096 {
		b.WriteString("…")
		return
	}
	path[i] = true
	defer delete(path, i)
	switch nd.kind {
	case vByteArray:
		fmt.Fprintf(b, "[%d]byte", nd.length)
	case vArray:
		fmt.Fprintf(b, "[%d]", nd.length)
		s.format(b, nd.elem, path, depth-1)
	case vSlice:
		b.WriteString("[]")
		s.format(b, nd.elem, path, depth-1)
	case vPointer:
		b.WriteString("*")
		s.format(b, nd.elem, path, depth-1)
	case vMap:
		b.WriteString("map[")
		s.format(b, nd.key, path, depth-1)
		b.WriteString("]")
		s.format(b, nd.elem, path, depth-1)
	case vStruct:
		b.WriteString("{")
		for j, f := range nd.fields {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(f.name)
			b.WriteString(" ")
			s.format(b, f.node, path, depth-1)
		}
		b.WriteString("}")
	case vBinary, vMsgpack, vMsgpackRaw:
		fmt.Fprintf(b, "%s (%s)", nd.name, nd.kind)
	default:
		b.WriteString(nd.kind.String())
	}
}

// checkValue walks one stored value against node i without the Go types, as arksave check does:
// it reads every byte the way Decode would with types equal to the stored ones, and fails where
// Decode would fail on the file's own terms. Values behind interfaces are checked against the
// schema of their concrete type, which the file must list (concrete).
func (s *vschema) checkValue(d *vdec, i uint16, concrete func(name string) (*vschema, bool)) error {
	nd := &s.nodes[i]
	if ok, err := checkLeaf(d, nd); ok {
		return err
	}
	if err := d.enter(); err != nil {
		return err
	}
	defer func() { d.depth-- }()
	switch nd.kind {
	case vArray, vSlice:
		return s.checkSeq(d, nd, concrete)
	case vPointer:
		return s.checkPointer(d, nd, concrete)
	case vMap:
		return s.checkMap(d, nd, concrete)
	case vStruct:
		return s.checkStruct(d, nd, concrete)
	case vInterface:
		return checkInterface(d, concrete)
	}
	return nil
}

// checkLeaf checks a value of a kind that holds no other value; ok is false for the kinds
// that do (arrays, slices, pointers, maps, structs, interfaces).
func checkLeaf(d *vdec, nd *vnode) (ok bool, err error) {
	switch nd.kind {
	case vBool:
		_, err = d.boolean()
	case vInt8, vInt16, vInt32, vInt64, vInt, vUint8, vUint16, vUint32, vUint64, vUint:
		_, _, err = d.integer()
	case vFloat32, vFloat64:
		_, err = d.float()
	case vComplex64, vComplex128:
		err = checkComplex(d)
	case vString:
		_, err = d.strBytes()
	case vBytes:
		if !d.isNil() {
			_, err = d.binBytes()
		}
	case vByteArray:
		var b []byte
		b, err = d.binBytes()
		if err == nil && uint64(len(b)) != uint64(nd.length) {
			err = d.corrupt("%d bytes for an array of %d", len(b), nd.length)
		}
	case vEntity:
		var e ecs.Entity
		err = d.value(&vplan{kind: vEntity}, unsafe.Pointer(&e))
	case vTime:
		var t time.Time
		err = d.timeAt(unsafe.Pointer(&t))
	case vBinary:
		_, err = d.binBytes()
	case vMsgpack, vMsgpackRaw:
		n, serr := msgpackSize(d.b[d.pos:], 1)
		if serr != nil {
			return true, d.corrupt("malformed msgpack value of %s", nd.name)
		}
		d.pos += n
	default:
		return false, nil
	}
	return true, err
}

// checkComplex checks a complex number: an array of its two parts.
func checkComplex(d *vdec) error {
	if n, err := d.arrayLen(); err != nil || n != 2 {
		return errOr(err, d.corrupt("complex number: array of %d", n))
	}
	if _, err := d.float(); err != nil {
		return err
	}
	_, err := d.float()
	return err
}

// checkSeq checks an array or a slice, element by element.
func (s *vschema) checkSeq(d *vdec, nd *vnode, concrete func(string) (*vschema, bool)) error {
	if nd.kind == vSlice && d.isNil() {
		return nil
	}
	n, err := d.arrayLen()
	if err != nil {
		return err
	}
	if nd.kind == vArray && uint64(n) != uint64(nd.length) {
		return d.corrupt("array of %d, the schema says %d", n, nd.length)
	}
	for j := range n {
		if err := s.checkValue(d, nd.elem, concrete); err != nil {
			return at(err, fmt.Sprintf("[%d]", j))
		}
	}
	return nil
}

// checkPointer checks a pointer: nil, or its value (in an array of one when the value can be
// nil itself).
func (s *vschema) checkPointer(d *vdec, nd *vnode, concrete func(string) (*vschema, bool)) error {
	if d.isNil() {
		return nil
	}
	if s.nodes[nd.elem].kind.nilable() {
		if n, err := d.arrayLen(); err != nil || n != 1 {
			return errOr(err, d.corrupt("pointer: array of %d", n))
		}
	}
	return s.checkValue(d, nd.elem, concrete)
}

// checkMap checks a map, key and value after key and value.
func (s *vschema) checkMap(d *vdec, nd *vnode, concrete func(string) (*vschema, bool)) error {
	if d.isNil() {
		return nil
	}
	n, err := d.mapLen()
	if err != nil {
		return err
	}
	for range n {
		if err := s.checkValue(d, nd.key, concrete); err != nil {
			return at(err, "[key]")
		}
		if err := s.checkValue(d, nd.elem, concrete); err != nil {
			return at(err, "[value]")
		}
	}
	return nil
}

// checkStruct checks a struct: every field of the schema, by name, in its order.
func (s *vschema) checkStruct(d *vdec, nd *vnode, concrete func(string) (*vschema, bool)) error {
	n, err := d.mapLen()
	if err != nil {
		return err
	}
	if n != len(nd.fields) {
		return d.corrupt("%d fields, the schema has %d", n, len(nd.fields))
	}
	for _, f := range nd.fields {
		key, err := d.strBytes()
		if err != nil {
			return err
		}
		if string(key) != f.name {
			return d.corrupt("field %q where the schema has %q", key, f.name)
		}
		if err := s.checkValue(d, f.node, concrete); err != nil {
			return at(err, "."+f.name)
		}
	}
	return nil
}

// checkInterface checks a value behind an interface against its concrete type's schema.
func checkInterface(d *vdec, concrete func(string) (*vschema, bool)) error {
	if d.isNil() {
		return nil
	}
	if n, err := d.arrayLen(); err != nil || n != 2 {
		return errOr(err, d.corrupt("interface value: array of %d", n))
	}
	name, err := d.strBytes()
	if err != nil {
		return err
	}
	cs, ok := concrete(string(name))
	if !ok {
		return d.corrupt("a value behind an interface has type %q, which the file does not describe", name)
	}
	return cs.checkValue(d, 0, concrete)
}
