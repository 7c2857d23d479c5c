package archetype

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The JSON form of stored values, written by [ExportJSON] (vschema.appendJSON, and
// schemaNode.appendJSON for raw memory) and read back by [ImportJSON] (importer.value and
// importer.raw). Both walk a value by the schema the file stores for its type, so that the JSON
// says everything the file does and [ImportJSON] writes the same bytes again:
//
//	bool                      true / false
//	integers                  numbers, exact (64-bit ones too)
//	floats                    numbers in the shortest form that reads back to the same bits
//	                          (float32 as float32); "NaN", "+Inf", "-Inf"; any other NaN than
//	                          the one math.NaN gives (float32: its conversion) "NaN:0x" and its bits
//	complex numbers           [real, imaginary]
//	string                    a JSON string; one that is not UTF-8: {"base64": "..."}
//	[]byte, [N]byte           base64 (standard, padded); a nil slice null. Raw [N]byte: numbers
//	array, slice              an array; a nil slice null
//	map                       an object when the keys are strings (UTF-8), else an array of
//	                          [key, value] pairs; a nil map null
//	pointer                   null, or the value; a pointer to a kind that can itself be nil
//	                          (pointer, slice, map, interface, msgpack methods) as [value]
//	struct                    an object, every field, in declaration order
//	interface                 null, or {"type": "the concrete type's name", "value": ...}
//	ecs.Entity                [id, generation]
//	time.Time                 {"utc": RFC 3339 with nanoseconds, "kind": "utc", "local" or
//	                          "other", "location": name, "zone": abbreviation, "offset": seconds
//	                          east of UTC}; outside the years 0-9999 "unix" seconds and "nanos"
//	                          replace "utc"
//	BinaryMarshaler           base64 of its bytes
//	msgpack methods           base64 of the msgpack value they write
//
// Zero-sized and transient components are null. Format 1.0 files hold values without a schema:
// they are exported as msgpack reads them without their types, which [ImportJSON] cannot
// bring back.

// Bits of the NaNs written "NaN": what math.NaN returns, and its conversion to float32.
const (
	nan64Bits = 0x7FF8000000000001
	nan32Bits = 0x7FC00000
)

// appendFloatBits appends the JSON form of a float given by its bits.
func appendFloatBits(dst []byte, bits uint64, single bool) []byte {
	f := math.Float64frombits(bits)
	size := 64
	if single {
		f, size = float64(math.Float32frombits(uint32(bits))), 32
	}
	switch {
	case math.IsNaN(f):
		if single && bits == nan32Bits || !single && bits == nan64Bits {
			return append(dst, `"NaN"`...)
		}
		return fmt.Appendf(dst, `"NaN:0x%0*x"`, size/4, bits)
	case math.IsInf(f, 1):
		return append(dst, `"+Inf"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Inf"`...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, size)
}

// appendStringJSON appends a Go string's JSON form: a JSON string, or {"base64": ...} when
// it is not UTF-8.
func appendStringJSON(dst []byte, s []byte) []byte {
	if utf8.Valid(s) {
		return appendJSONString(dst, string(s))
	}
	dst = append(dst, `{"base64":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, s)
	return append(dst, `"}`...)
}

// appendKeyJSON appends a name (a type or field name) as a JSON string, replacing what is not
// UTF-8, which no Go name holds.
func appendKeyJSON(dst []byte, name string) []byte {
	return appendJSONString(dst, strings.ToValidUTF8(name, "\uFFFD"))
}

func appendBase64JSON(dst []byte, b []byte) []byte {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}

// floatBits reads a stored float as the bits of the kind's width, converting between widths
// as Decode does.
func (d *vdec) floatBits(single bool) (uint64, error) {
	c, err := d.peek()
	if err == nil && c == 0xca {
		p, err := d.take(5)
		if err != nil {
			return 0, err
		}
		b := binary.BigEndian.Uint32(p[1:])
		if single {
			return uint64(b), nil
		}
		return math.Float64bits(float64(math.Float32frombits(b))), nil
	}
	f, err := d.float()
	if single {
		return uint64(math.Float32bits(float32(f))), err
	}
	return math.Float64bits(f), err
}

// timeParts is the wire form of a time.Time.
type timeParts struct {
	sec       int64
	nsec      uint64
	kind      uint64
	loc, zone []byte
	offset    int64
}

// timeParts reads the six parts of a stored time.Time and checks them as Decode does.
func (d *vdec) timeParts() (timeParts, error) {
	var t timeParts
	if n, err := d.arrayLen(); err != nil || n != 6 {
		return t, errOr(err, d.corrupt("time: array of %d", n))
	}
	sec, neg, err := d.integer()
	if err != nil {
		return t, err
	}
	if !neg && sec > math.MaxInt64 {
		return t, d.corrupt("time: seconds out of range")
	}
	t.sec = int64(sec)
	var nneg, kneg, oneg bool
	var off uint64
	if t.nsec, nneg, err = d.integer(); err != nil {
		return t, err
	}
	if t.kind, kneg, err = d.integer(); err != nil {
		return t, err
	}
	if t.loc, err = d.strBytes(); err != nil {
		return t, err
	}
	if t.zone, err = d.strBytes(); err != nil {
		return t, err
	}
	if off, oneg, err = d.integer(); err != nil {
		return t, err
	}
	t.offset = int64(off)
	if nneg || t.nsec >= 1e9 || kneg || t.kind > locOther || !oneg && off > 1<<20 || oneg && t.offset < -(1<<20) {
		return t, d.corrupt("time: nanoseconds %d, location kind %d, offset %d", t.nsec, t.kind, t.offset)
	}
	return t, nil
}

var locKindNames = [...]string{locUTC: "utc", locLocal: "local", locOther: "other"}

func appendTimeJSON(dst []byte, t timeParts) []byte {
	if u := time.Unix(t.sec, int64(t.nsec)).UTC(); u.Year() >= 0 && u.Year() <= 9999 {
		dst = append(dst, `{"utc":`...)
		dst = appendJSONString(dst, u.Format(time.RFC3339Nano))
	} else {
		dst = fmt.Appendf(dst, `{"unix":%d,"nanos":%d`, t.sec, t.nsec)
	}
	dst = append(dst, `,"kind":"`...)
	dst = append(dst, locKindNames[t.kind]...)
	dst = append(dst, `","location":`...)
	dst = appendStringJSON(dst, t.loc)
	dst = append(dst, `,"zone":`...)
	dst = appendStringJSON(dst, t.zone)
	return fmt.Appendf(dst, `,"offset":%d}`, t.offset)
}

// appendJSON appends the JSON form of one stored value of node i, read from d as checkValue
// reads it: a value Decode would refuse on the file's own terms is an error here too.
func (s *vschema) appendJSON(dst []byte, d *vdec, i uint16, concrete func(name string) (*vschema, bool)) ([]byte, error) {
	nd := &s.nodes[i]
	if out, ok, err := appendLeafJSON(dst, d, nd); ok {
		return out, err
	}
	if err := d.enter(); err != nil {
		return dst, err
	}
	defer func() { d.depth-- }()
	switch nd.kind {
	case vArray, vSlice:
		return s.appendSeqJSON(dst, d, nd, concrete)
	case vPointer:
		return s.appendPointerJSON(dst, d, nd, concrete)
	case vMap:
		return s.appendMapJSON(dst, d, nd, concrete)
	case vStruct:
		return s.appendStructJSON(dst, d, nd, concrete)
	case vInterface:
		return s.appendInterfaceJSON(dst, d, concrete)
	}
	return dst, d.corrupt("no JSON form for kind %v", nd.kind)
}

// appendLeafJSON appends a value of a kind that holds no other value; ok is false for the
// kinds that do (arrays, slices, pointers, maps, structs, interfaces).
func appendLeafJSON(dst []byte, d *vdec, nd *vnode) (out []byte, ok bool, err error) {
	switch nd.kind {
	case vBool:
		b, err := d.boolean()
		return strconv.AppendBool(dst, b), true, err
	case vInt8, vInt16, vInt32, vInt64, vInt, vUint8, vUint16, vUint32, vUint64, vUint:
		u, neg, err := d.integer()
		if neg {
			return strconv.AppendInt(dst, int64(u), 10), true, err
		}
		return strconv.AppendUint(dst, u, 10), true, err
	case vFloat32, vFloat64:
		b, err := d.floatBits(nd.kind == vFloat32)
		return appendFloatBits(dst, b, nd.kind == vFloat32), true, err
	case vComplex64, vComplex128:
		out, err = appendComplexJSON(dst, d, nd.kind == vComplex64)
	case vString:
		b, err := d.strBytes()
		return appendStringJSON(dst, b), true, err
	case vBytes, vByteArray, vBinary:
		out, err = appendBytesValueJSON(dst, d, nd)
	case vEntity:
		out, err = appendEntityJSON(dst, d)
	case vTime:
		t, err := d.timeParts()
		if err != nil {
			return dst, true, err
		}
		return appendTimeJSON(dst, t), true, nil
	case vMsgpack, vMsgpackRaw:
		n, err := msgpackSize(d.b[d.pos:], 1)
		if err != nil {
			return dst, true, d.corrupt("malformed msgpack value of %s", nd.name)
		}
		d.pos += n
		return appendBase64JSON(dst, d.b[d.pos-n:d.pos]), true, nil
	default:
		return dst, false, nil
	}
	return out, true, err
}

// appendComplexJSON appends a complex number, stored as an array of its two parts.
func appendComplexJSON(dst []byte, d *vdec, single bool) ([]byte, error) {
	if n, err := d.arrayLen(); err != nil || n != 2 {
		return dst, errOr(err, d.corrupt("complex number: array of %d", n))
	}
	re, err := d.floatBits(single)
	if err != nil {
		return dst, err
	}
	im, err := d.floatBits(single)
	dst = appendFloatBits(append(dst, '['), re, single)
	dst = appendFloatBits(append(dst, ','), im, single)
	return append(dst, ']'), err
}

// appendBytesValueJSON appends a byte slice, byte array or binary value as base64.
func appendBytesValueJSON(dst []byte, d *vdec, nd *vnode) ([]byte, error) {
	if nd.kind == vBytes && d.isNil() {
		return append(dst, "null"...), nil
	}
	b, err := d.binBytes()
	if err == nil && nd.kind == vByteArray && uint64(len(b)) != uint64(nd.length) {
		err = d.corrupt("%d bytes for an array of %d", len(b), nd.length)
	}
	return appendBase64JSON(dst, b), err
}

// appendEntityJSON appends an ecs.Entity as [id,generation].
func appendEntityJSON(dst []byte, d *vdec) ([]byte, error) {
	h, err := d.take(10)
	if err != nil {
		return dst, err
	}
	if h[0] != 0xd7 || h[1] != byte(entityExtID) {
		return dst, d.corrupt("entity expected, found msgpack code %#02x", h[0])
	}
	le := binary.LittleEndian
	return fmt.Appendf(dst, "[%d,%d]", le.Uint32(h[2:]), le.Uint32(h[6:])), nil
}

// appendSeqJSON appends an array or a slice.
func (s *vschema) appendSeqJSON(dst []byte, d *vdec, nd *vnode, concrete func(string) (*vschema, bool)) ([]byte, error) {
	if nd.kind == vSlice && d.isNil() {
		return append(dst, "null"...), nil
	}
	n, err := d.arrayLen()
	if err != nil {
		return dst, err
	}
	if nd.kind == vArray && uint64(n) != uint64(nd.length) {
		return dst, d.corrupt("array of %d, the schema says %d", n, nd.length)
	}
	dst = append(dst, '[')
	for j := range n {
		if j > 0 {
			dst = append(dst, ',')
		}
		if dst, err = s.appendJSON(dst, d, nd.elem, concrete); err != nil {
			return dst, at(err, fmt.Sprintf("[%d]", j))
		}
	}
	return append(dst, ']'), nil
}

// appendPointerJSON appends a pointer: null, its value, or, when that value can be nil itself,
// its value in an array of one.
func (s *vschema) appendPointerJSON(dst []byte, d *vdec, nd *vnode, concrete func(string) (*vschema, bool)) ([]byte, error) {
	if d.isNil() {
		return append(dst, "null"...), nil
	}
	if !s.nodes[nd.elem].kind.nilable() {
		return s.appendJSON(dst, d, nd.elem, concrete)
	}
	if n, err := d.arrayLen(); err != nil || n != 1 {
		return dst, errOr(err, d.corrupt("pointer: array of %d", n))
	}
	dst, err := s.appendJSON(append(dst, '['), d, nd.elem, concrete)
	return append(dst, ']'), err
}

// appendStructJSON appends a struct: an object of its fields in the schema's order.
func (s *vschema) appendStructJSON(dst []byte, d *vdec, nd *vnode, concrete func(string) (*vschema, bool)) ([]byte, error) {
	n, err := d.mapLen()
	if err != nil {
		return dst, err
	}
	if n != len(nd.fields) {
		return dst, d.corrupt("%d fields, the schema has %d", n, len(nd.fields))
	}
	dst = append(dst, '{')
	for j, f := range nd.fields {
		key, err := d.strBytes()
		if err != nil {
			return dst, err
		}
		if string(key) != f.name {
			return dst, d.corrupt("field %q where the schema has %q", key, f.name)
		}
		if j > 0 {
			dst = append(dst, ',')
		}
		dst = append(appendKeyJSON(dst, f.name), ':')
		if dst, err = s.appendJSON(dst, d, f.node, concrete); err != nil {
			return dst, at(err, "."+f.name)
		}
	}
	return append(dst, '}'), nil
}

// appendInterfaceJSON appends a value behind an interface: null, or {"type": name, "value": v}.
func (s *vschema) appendInterfaceJSON(dst []byte, d *vdec, concrete func(string) (*vschema, bool)) ([]byte, error) {
	if d.isNil() {
		return append(dst, "null"...), nil
	}
	if n, err := d.arrayLen(); err != nil || n != 2 {
		return dst, errOr(err, d.corrupt("interface value: array of %d", n))
	}
	name, err := d.strBytes()
	if err != nil {
		return dst, err
	}
	cs, ok := concrete(string(name))
	if !ok {
		return dst, d.corrupt("a value behind an interface has type %q, which the file does not describe", name)
	}
	dst = appendKeyJSON(append(dst, `{"type":`...), string(name))
	dst, err = cs.appendJSON(append(dst, `,"value":`...), d, 0, concrete)
	return append(dst, '}'), err
}

// appendMapJSON appends a stored map: an object when its keys are UTF-8 strings, else an array of
// [key, value] pairs.
func (s *vschema) appendMapJSON(dst []byte, d *vdec, nd *vnode, concrete func(string) (*vschema, bool)) ([]byte, error) {
	if d.isNil() {
		return append(dst, "null"...), nil
	}
	startPos := d.pos
	n, err := d.mapLen()
	if err != nil {
		return dst, err
	}
	if s.nodes[nd.key].kind == vString {
		start := len(dst)
		out, ok, err := s.appendObjectJSON(dst, d, nd, n, concrete)
		if ok || err != nil {
			return out, err
		}
		dst, d.pos = out[:start], startPos // a key is not UTF-8: pairs, then
		if _, err := d.mapLen(); err != nil {
			return dst, err
		}
	}
	dst = append(dst, '[')
	for j := range n {
		if j > 0 {
			dst = append(dst, ',')
		}
		if dst, err = s.appendJSON(append(dst, '['), d, nd.key, concrete); err != nil {
			return dst, at(err, "[key]")
		}
		if dst, err = s.appendJSON(append(dst, ','), d, nd.elem, concrete); err != nil {
			return dst, at(err, "[value]")
		}
		dst = append(dst, ']')
	}
	return append(dst, ']'), nil
}

// appendObjectJSON appends the n entries of a map with string keys as an object; ok is false,
// with nothing wrong, when a key is not UTF-8.
func (s *vschema) appendObjectJSON(dst []byte, d *vdec, nd *vnode, n int, concrete func(string) (*vschema, bool)) (_ []byte, ok bool, err error) {
	dst = append(dst, '{')
	for j := range n {
		if j > 0 {
			dst = append(dst, ',')
		}
		key, err := d.strBytes()
		if err != nil {
			return dst, false, at(err, "[key]")
		}
		if !utf8.Valid(key) {
			return dst, false, nil
		}
		dst = append(appendJSONString(dst, string(key)), ':')
		if dst, err = s.appendJSON(dst, d, nd.elem, concrete); err != nil {
			return dst, false, at(err, "[value]")
		}
	}
	return append(dst, '}'), true, nil
}

// Integer ranges of the raw and value kinds.
var (
	rawIntRange = [...]struct {
		lo int64
		hi uint64
	}{
		kindInt8: {math.MinInt8, math.MaxInt8}, kindInt16: {math.MinInt16, math.MaxInt16}, kindInt32: {math.MinInt32, math.MaxInt32},
		kindInt64: {math.MinInt64, math.MaxInt64}, kindUint8: {0, math.MaxUint8}, kindUint16: {0, math.MaxUint16},
		kindUint32: {0, math.MaxUint32}, kindUint64: {0, math.MaxUint64},
	}
	valueIntRange = [...]struct {
		lo int64
		hi uint64
	}{
		vInt8: {math.MinInt8, math.MaxInt8}, vInt16: {math.MinInt16, math.MaxInt16}, vInt32: {math.MinInt32, math.MaxInt32},
		vInt64: {math.MinInt64, math.MaxInt64}, vInt: {math.MinInt64, math.MaxInt64}, vUint8: {0, math.MaxUint8},
		vUint16: {0, math.MaxUint16}, vUint32: {0, math.MaxUint32}, vUint64: {0, math.MaxUint64}, vUint: {0, math.MaxUint64},
	}
)

// raw writes one value laid out as n into dst (len >= n.size), little-endian.
func (im *importer) raw(n *schemaNode, v *jval, dst []byte) error {
	le := binary.LittleEndian
	switch n.kind {
	case kindBool:
		if err := im.want(v, jBool); err != nil {
			return err
		}
		dst[0] = 0
		if v.s == "true" {
			dst[0] = 1
		}
	case kindInt8, kindInt16, kindInt32, kindInt64, kindUint8, kindUint16, kindUint32, kindUint64:
		r := rawIntRange[n.kind]
		u, err := im.integer(v, r.lo, r.hi)
		if err != nil {
			return err
		}
		putLE(dst, u, n.size)
	case kindFloat32, kindFloat64:
		b, err := im.floatBits(v, n.kind == kindFloat32)
		if err != nil {
			return err
		}
		putLE(dst, b, n.size)
	case kindComplex64, kindComplex128:
		if err := im.want(v, jArray); err != nil {
			return err
		}
		if len(v.kids) != 2 {
			return im.fail(v, "[real, imaginary] expected, found an array of %d", len(v.kids))
		}
		half := n.size / 2
		for k := range 2 {
			b, err := im.floatBits(&v.kids[k], n.kind == kindComplex64)
			if err != nil {
				return err
			}
			putLE(dst[uint32(k)*half:], b, half)
		}
	case kindEntity:
		e, err := im.pair(v)
		if err != nil {
			return err
		}
		le.PutUint32(dst, e.id)
		le.PutUint32(dst[4:], e.gen)
	case kindArray:
		if err := im.want(v, jArray); err != nil {
			return err
		}
		if uint64(len(v.kids)) != uint64(n.length) {
			return im.fail(v, "an array of %d expected, found one of %d", n.length, len(v.kids))
		}
		for i := range v.kids {
			if err := im.at(i).raw(n.elem, &v.kids[i], dst[uint32(i)*n.elem.size:]); err != nil {
				return err
			}
			im.pop()
		}
	default:
		order, err := im.structFields(v, len(n.fields), n, n.fieldKey)
		if err != nil {
			return err
		}
		for i, kid := range order {
			f := &n.fields[i]
			if err := im.key(n.fieldKey(i)).raw(f.node, &v.kids[kid], dst[f.offset:]); err != nil {
				return err
			}
			im.pop()
		}
	}
	return nil
}

// fieldKey is the JSON key of field i of a raw struct.
func (n *schemaNode) fieldKey(i int) string { return rawFieldKey(n.fields[i].name, i) }

// fieldKey is the JSON key of field i of a stored struct.
func (nd *vnode) fieldKey(i int) string { return nd.fields[i].name }

// structFields matches the keys of object v with the n fields of a struct and returns, per
// field, the index in v.kids of its value. key names field i; the keys are looked up once per
// struct (node).
func (im *importer) structFields(v *jval, n int, node any, key func(i int) string) ([]int, error) {
	if err := im.want(v, jObject); err != nil {
		return nil, err
	}
	if len(v.kids)/2 != n {
		return nil, im.fail(v, "%d fields expected, found %d", n, len(v.kids)/2)
	}
	byKey := im.keys[node]
	if byKey == nil {
		byKey = make(map[string]int, n)
		for i := range n {
			k := key(i)
			if _, dup := byKey[k]; dup {
				return nil, im.fail(v, "the type's schema has field %q twice", k)
			}
			byKey[k] = i
		}
		if im.keys == nil {
			im.keys = map[any]map[string]int{}
		}
		im.keys[node] = byKey
	}
	order := make([]int, n)
	for j := 0; j+1 < len(v.kids); j += 2 {
		i, ok := byKey[v.kids[j].s]
		if !ok {
			var names []string
			for i := range n {
				names = append(names, key(i))
			}
			return nil, im.fail(&v.kids[j], "the type has no field %q (fields: %s)", v.kids[j].s, strings.Join(names, ", "))
		}
		order[i] = j + 1 // keys are unique, and as many as the fields: each field is found once
	}
	return order, nil
}

// putLE writes the low size bytes of u, little-endian.
func putLE(dst []byte, u uint64, size uint32) {
	for i := range size {
		dst[i] = byte(u >> (8 * i))
	}
}

// value appends the msgpack of one value of node i of s, in the form Encode writes it.
func (im *importer) value(s *vschema, i uint16, v *jval) error {
	nd := &s.nodes[i]
	switch k := nd.kind; k {
	case vBool:
		if err := im.want(v, jBool); err != nil {
			return err
		}
		if v.s == "true" {
			im.b = append(im.b, 0xc3)
		} else {
			im.b = append(im.b, 0xc2)
		}
	case vInt8, vInt16, vInt32, vInt64, vInt, vUint8, vUint16, vUint32, vUint64, vUint:
		return im.integerValue(k, v)
	case vFloat32, vFloat64:
		return im.float(v, k == vFloat32)
	case vComplex64, vComplex128:
		return im.complexValue(v, k == vComplex64)
	case vString:
		s, err := im.goString(v)
		if err != nil {
			return err
		}
		im.b = appendStr(im.b, string(s))
	case vBytes, vByteArray, vBinary:
		return im.bytesValue(nd, v)
	case vMsgpack, vMsgpackRaw:
		b, err := im.base64(v)
		if err != nil {
			return err
		}
		if n, err := msgpackSize(b, 1); err != nil || n != len(b) {
			return im.fail(v, "the %d bytes are not one msgpack value (of %s)", len(b), nd.name)
		}
		im.b = append(im.b, b...)
	case vEntity:
		e, err := im.pair(v)
		if err != nil {
			return err
		}
		im.b = binary.LittleEndian.AppendUint32(append(im.b, 0xd7, byte(entityExtID)), e.id)
		im.b = binary.LittleEndian.AppendUint32(im.b, e.gen)
	case vTime:
		return im.time(v)
	default:
		if im.depth++; im.depth > maxValueDepth {
			return im.fail(v, "values nest deeper than %d levels", maxValueDepth)
		}
		if err := im.composite(s, nd, v); err != nil {
			return err
		}
		im.depth--
	}
	return nil
}

// integerValue appends an integer of kind k in the width Encode writes it with.
func (im *importer) integerValue(k vkind, v *jval) error {
	r := valueIntRange[k]
	u, err := im.integer(v, r.lo, r.hi)
	if err != nil {
		return err
	}
	be := binary.BigEndian
	switch k {
	case vInt:
		im.b = appendInt(im.b, int64(u))
	case vUint:
		im.b = appendUint(im.b, u)
	case vInt8, vUint8:
		im.b = append(im.b, sizedCode(k), byte(u))
	case vInt16, vUint16:
		im.b = be.AppendUint16(append(im.b, sizedCode(k)), uint16(u))
	case vInt32, vUint32:
		im.b = be.AppendUint32(append(im.b, sizedCode(k)), uint32(u))
	default:
		im.b = be.AppendUint64(append(im.b, sizedCode(k)), u)
	}
	return nil
}

// complexValue appends a complex number given as [real, imaginary].
func (im *importer) complexValue(v *jval, single bool) error {
	if err := im.want(v, jArray); err != nil {
		return err
	}
	if len(v.kids) != 2 {
		return im.fail(v, "[real, imaginary] expected, found an array of %d", len(v.kids))
	}
	im.b = append(im.b, 0x92)
	for j := range 2 {
		if err := im.float(&v.kids[j], single); err != nil {
			return err
		}
	}
	return nil
}

// bytesValue appends a byte slice, byte array or binary value given in base64.
func (im *importer) bytesValue(nd *vnode, v *jval) error {
	if nd.kind == vBytes && im.null(v) {
		return nil
	}
	b, err := im.base64(v)
	if err != nil {
		return err
	}
	if nd.kind == vByteArray && uint64(len(b)) != uint64(nd.length) {
		return im.fail(v, "%d bytes for an array of %d", len(b), nd.length)
	}
	im.b = appendBin(im.b, b)
	return nil
}

// null appends msgpack's nil and reports true when v is null.
func (im *importer) null(v *jval) bool {
	if v.kind == jNull {
		im.b = append(im.b, 0xc0)
		return true
	}
	return false
}

// sizedCode is the msgpack code of a sized integer kind.
func sizedCode(k vkind) byte {
	if k >= vUint8 {
		return 0xcc + byte(k-vUint8)
	}
	return 0xd0 + byte(k-vInt8)
}

// float appends a float of the given width.
func (im *importer) float(v *jval, single bool) error {
	b, err := im.floatBits(v, single)
	if err != nil {
		return err
	}
	if single {
		im.b = binary.BigEndian.AppendUint32(append(im.b, 0xca), uint32(b))
	} else {
		im.b = binary.BigEndian.AppendUint64(append(im.b, 0xcb), b)
	}
	return nil
}

// time appends a time.Time from its JSON object (see jsonvalue.go).
func (im *importer) time(v *jval) error {
	f, err := im.fields(v, "utc?", "unix?", "nanos?", "kind", "location", "zone", "offset")
	if err != nil {
		return err
	}
	var t timeParts
	switch {
	case f[0] != nil && f[1] == nil && f[2] == nil:
		s, err := im.key("utc").str(f[0])
		if err != nil {
			return err
		}
		u, perr := time.Parse(time.RFC3339Nano, s)
		if perr != nil {
			return im.fail(f[0], "not an RFC 3339 time: %v", perr)
		}
		im.pop()
		t.sec, t.nsec = u.Unix(), uint64(u.Nanosecond())
	case f[0] == nil && f[1] != nil && f[2] != nil:
		sec, err := im.key("unix").integer(f[1], math.MinInt64, math.MaxInt64)
		if err != nil {
			return err
		}
		im.pop()
		if t.nsec, err = im.key("nanos").integer(f[2], 0, 999_999_999); err != nil {
			return err
		}
		im.pop()
		t.sec = int64(sec)
	default:
		return im.fail(v, `a time has either "utc" or "unix" and "nanos"`)
	}
	kind, err := im.key("kind").str(f[3])
	if err != nil {
		return err
	}
	switch kind {
	case "utc":
		t.kind = locUTC
	case "local":
		t.kind = locLocal
	case "other":
		t.kind = locOther
	default:
		return im.fail(f[3], `%q is not a location kind ("utc", "local" or "other")`, kind)
	}
	im.pop()
	if t.loc, err = im.key("location").goString(f[4]); err != nil {
		return err
	}
	im.pop()
	if t.zone, err = im.key("zone").goString(f[5]); err != nil {
		return err
	}
	im.pop()
	off, err := im.key("offset").integer(f[6], -(1 << 20), 1<<20)
	if err != nil {
		return err
	}
	im.pop()
	im.b = appendInt(append(im.b, 0x96), t.sec)
	im.b = append(appendUint(im.b, t.nsec), byte(t.kind))
	im.b = appendStr(appendStr(im.b, string(t.loc)), string(t.zone))
	im.b = appendInt(im.b, int64(off))
	return nil
}

// composite appends a value that holds other values.
func (im *importer) composite(s *vschema, nd *vnode, v *jval) error {
	switch nd.kind {
	case vArray, vSlice:
		if nd.kind == vSlice && im.null(v) {
			return nil
		}
		if err := im.want(v, jArray); err != nil {
			return err
		}
		if nd.kind == vArray && uint64(len(v.kids)) != uint64(nd.length) {
			return im.fail(v, "an array of %d expected, found one of %d", nd.length, len(v.kids))
		}
		im.b = appendArrayLen(im.b, len(v.kids))
		for j := range v.kids {
			if err := im.at(j).value(s, nd.elem, &v.kids[j]); err != nil {
				return err
			}
			im.pop()
		}
	case vPointer:
		if im.null(v) {
			return nil
		}
		if !s.nodes[nd.elem].kind.nilable() {
			return im.value(s, nd.elem, v)
		}
		if err := im.want(v, jArray); err != nil {
			return err
		}
		if len(v.kids) != 1 {
			return im.fail(v, "a pointer to a %s is null or [value], found an array of %d", s.nodes[nd.elem].kind, len(v.kids))
		}
		im.b = append(im.b, 0x91)
		if err := im.at(0).value(s, nd.elem, &v.kids[0]); err != nil {
			return err
		}
		im.pop()
	case vMap:
		return im.mapValue(s, nd, v)
	case vStruct:
		order, err := im.structFields(v, len(nd.fields), nd, nd.fieldKey)
		if err != nil {
			return err
		}
		im.b = appendMapLen(im.b, len(nd.fields))
		for j, kid := range order {
			f := &nd.fields[j]
			im.b = appendStr(im.b, f.name)
			if err := im.key(f.name).value(s, f.node, &v.kids[kid]); err != nil {
				return err
			}
			im.pop()
		}
	case vInterface:
		if im.null(v) {
			return nil
		}
		f, err := im.fields(v, "type", "value")
		if err != nil {
			return err
		}
		name, err := im.key("type").str(f[0])
		if err != nil {
			return err
		}
		ct := im.conc[name]
		if ct == nil {
			return im.fail(f[0], "type %q is not listed in types as a concrete type", name)
		}
		im.pop()
		im.b = appendStr(append(im.b, 0x92), name)
		if err := im.key("value").value(ct.vs, 0, f[1]); err != nil {
			return err
		}
		im.pop()
	default:
		return im.fail(v, "no JSON form for kind %v", nd.kind)
	}
	return nil
}

// mapValue appends a map from an object or an array of [key, value] pairs, entries sorted by
// their encoded keys as Encode writes them.
func (im *importer) mapValue(s *vschema, nd *vnode, v *jval) error {
	if im.null(v) {
		return nil
	}
	type entry struct{ start, mid, end int }
	var entries []entry
	mark := len(im.b)
	switch v.kind {
	case jObject:
		if s.nodes[nd.key].kind != vString {
			return im.fail(v, "a map with %s keys is an array of [key, value] pairs", s.nodes[nd.key].kind)
		}
		for j := 0; j+1 < len(v.kids); j += 2 {
			start := len(im.b)
			im.b = appendStr(im.b, v.kids[j].s)
			mid := len(im.b)
			if err := im.key(v.kids[j].s).value(s, nd.elem, &v.kids[j+1]); err != nil {
				return err
			}
			im.pop()
			entries = append(entries, entry{start - mark, mid - mark, len(im.b) - mark})
		}
	case jArray:
		for j := range v.kids {
			p := &v.kids[j]
			im.at(j)
			if err := im.want(p, jArray); err != nil {
				return err
			}
			if len(p.kids) != 2 {
				return im.fail(p, "[key, value] expected, found an array of %d", len(p.kids))
			}
			start := len(im.b)
			if err := im.at(0).value(s, nd.key, &p.kids[0]); err != nil {
				return err
			}
			im.pop()
			mid := len(im.b)
			if err := im.at(1).value(s, nd.elem, &p.kids[1]); err != nil {
				return err
			}
			im.pop()
			im.pop()
			entries = append(entries, entry{start - mark, mid - mark, len(im.b) - mark})
		}
	default:
		return im.fail(v, "a map expected (an object, an array of [key, value] pairs or null), found %s", v.kind)
	}
	body := bytes.Clone(im.b[mark:])
	key := func(e entry) []byte { return body[e.start:e.mid] }
	sort.SliceStable(entries, func(a, b int) bool { return bytes.Compare(key(entries[a]), key(entries[b])) < 0 })
	for j := 1; j < len(entries); j++ {
		if bytes.Equal(key(entries[j-1]), key(entries[j])) && !s.canBeNaN(nd.key, map[uint16]bool{}) {
			return im.fail(v, "a key appears twice")
		}
	}
	im.b = appendMapLen(im.b[:mark], len(entries))
	for _, e := range entries {
		im.b = append(im.b, body[e.start:e.end]...)
	}
	return nil
}

// canBeNaN reports whether values of node i can be NaN, which a Go map may hold as a key twice.
func (s *vschema) canBeNaN(i uint16, seen map[uint16]bool) bool {
	if seen[i] {
		return false
	}
	seen[i] = true
	nd := &s.nodes[i]
	switch nd.kind {
	case vFloat32, vFloat64, vComplex64, vComplex128, vInterface, vMsgpack, vMsgpackRaw, vBinary:
		return true
	case vArray:
		return s.canBeNaN(nd.elem, seen)
	case vStruct:
		for _, f := range nd.fields {
			if s.canBeNaN(f.node, seen) {
				return true
			}
		}
	}
	return false
}
