package archetype

import (
	"encoding"
	"encoding/binary"
	"math"
	"reflect"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"
)

// A flat struct has only exported fields of the built-in types string, bool, intN, uintN and
// floatN, without struct tags. Such types (names, labels, small records) are common among the
// components that are not plain-old-data, and msgpack spends most of its time per value on
// reflection for them. flatCodec writes exactly the bytes msgpack writes for them (a map from
// field name to value, numbers with their sized codes, int and uint compact), and reads that
// canonical form back; anything else it leaves to msgpack.

type flatField struct {
	key    []byte // the field name, msgpack-encoded
	offset uintptr
	kind   reflect.Kind
}

type flatCodec struct {
	header []byte // msgpack map header
	fields []flatField
}

var marshalerTypes = []reflect.Type{
	reflect.TypeFor[msgpack.CustomEncoder](), reflect.TypeFor[msgpack.CustomDecoder](),
	reflect.TypeFor[msgpack.Marshaler](), reflect.TypeFor[msgpack.Unmarshaler](),
	reflect.TypeFor[encoding.BinaryMarshaler](), reflect.TypeFor[encoding.BinaryUnmarshaler](),
	reflect.TypeFor[encoding.TextMarshaler](), reflect.TypeFor[encoding.TextUnmarshaler](),
}

// flatCodecOf returns the codec of a flat struct type, or nil.
func flatCodecOf(t reflect.Type) *flatCodec {
	if t.Kind() != reflect.Struct || t.NumField() == 0 || t.NumField() > math.MaxUint16 {
		return nil
	}
	for _, m := range marshalerTypes {
		if t.Implements(m) || reflect.PointerTo(t).Implements(m) {
			return nil
		}
	}
	c := &flatCodec{header: appendMapLen(nil, t.NumField())}
	for i := range t.NumField() {
		f := t.Field(i)
		ft := f.Type
		if !f.IsExported() || f.Anonymous || f.Tag.Get("msgpack") != "" || f.Tag.Get(structTag) != "" ||
			ft.PkgPath() != "" || ft.Name() != ft.Kind().String() {
			return nil
		}
		switch ft.Kind() {
		case reflect.Int, reflect.Uint:
			if ft.Size() != 8 {
				return nil // msgpack checks for overflow on hosts with 32-bit int
			}
		case reflect.String, reflect.Bool, reflect.Float32, reflect.Float64,
			reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		default:
			return nil
		}
		c.fields = append(c.fields, flatField{key: appendStr(nil, f.Name), offset: f.Offset, kind: ft.Kind()})
	}
	return c
}

func appendMapLen(b []byte, n int) []byte {
	if n < 16 {
		return append(b, 0x80|byte(n))
	}
	return binary.BigEndian.AppendUint16(append(b, 0xde), uint16(n))
}

func appendStr(b []byte, s string) []byte {
	switch n := len(s); {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n < 256:
		b = append(b, 0xd9, byte(n))
	case n <= math.MaxUint16:
		b = binary.BigEndian.AppendUint16(append(b, 0xda), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(n))
	}
	return append(b, s...)
}

// appendUint and appendInt write msgpack's compact forms (EncodeUint, EncodeInt).
func appendUint(b []byte, n uint64) []byte {
	switch {
	case n <= math.MaxInt8:
		return append(b, byte(n))
	case n <= math.MaxUint8:
		return append(b, 0xcc, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xcf), n)
}

func appendInt(b []byte, n int64) []byte {
	switch {
	case n >= 0:
		return appendUint(b, uint64(n))
	case n >= -32:
		return append(b, byte(n))
	case n >= math.MinInt8:
		return append(b, 0xd0, byte(n))
	case n >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(n))
	case n >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(n))
}

// append writes the value at p.
func (c *flatCodec) append(b []byte, p unsafe.Pointer) []byte {
	be := binary.BigEndian
	b = append(b, c.header...)
	for i := range c.fields {
		f := &c.fields[i]
		b = append(b, f.key...)
		q := unsafe.Add(p, f.offset)
		switch f.kind {
		case reflect.String:
			b = appendStr(b, *(*string)(q))
		case reflect.Bool:
			if *(*bool)(q) {
				b = append(b, 0xc3)
			} else {
				b = append(b, 0xc2)
			}
		case reflect.Float32:
			b = be.AppendUint32(append(b, 0xca), math.Float32bits(*(*float32)(q)))
		case reflect.Float64:
			b = be.AppendUint64(append(b, 0xcb), math.Float64bits(*(*float64)(q)))
		case reflect.Int:
			b = appendInt(b, int64(*(*int)(q)))
		case reflect.Int8:
			b = append(b, 0xd0, byte(*(*int8)(q)))
		case reflect.Int16:
			b = be.AppendUint16(append(b, 0xd1), uint16(*(*int16)(q)))
		case reflect.Int32:
			b = be.AppendUint32(append(b, 0xd2), uint32(*(*int32)(q)))
		case reflect.Int64:
			b = be.AppendUint64(append(b, 0xd3), uint64(*(*int64)(q)))
		case reflect.Uint:
			b = appendUint(b, uint64(*(*uint)(q)))
		case reflect.Uint8:
			b = append(b, 0xcc, *(*uint8)(q))
		case reflect.Uint16:
			b = be.AppendUint16(append(b, 0xcd), *(*uint16)(q))
		case reflect.Uint32:
			b = be.AppendUint32(append(b, 0xce), *(*uint32)(q))
		case reflect.Uint64:
			b = be.AppendUint64(append(b, 0xcf), *(*uint64)(q))
		}
	}
	return b
}

// decode reads one value in the canonical form append writes into the zero value at p and
// returns the bytes it used; ok is false (and p untouched) for any other form.
func (c *flatCodec) decode(src []byte, p unsafe.Pointer) (n int, ok bool) {
	r := flatReader{b: src}
	if !r.expect(c.header) {
		return 0, false
	}
	// First pass: check the form and find the strings, so that p is written only when the
	// whole value is canonical.
	for i := range c.fields {
		f := &c.fields[i]
		if !r.expect(f.key) || !r.skipValue(f.kind) {
			return 0, false
		}
	}
	n = r.pos
	r.pos = len(c.header)
	for i := range c.fields {
		f := &c.fields[i]
		r.pos += len(f.key)
		r.readInto(f.kind, unsafe.Add(p, f.offset))
	}
	return n, true
}

type flatReader struct {
	b   []byte
	pos int
}

func (r *flatReader) expect(want []byte) bool {
	if len(r.b)-r.pos < len(want) || string(r.b[r.pos:r.pos+len(want)]) != string(want) {
		return false
	}
	r.pos += len(want)
	return true
}

// valueSize returns the size of the canonical encoding of a value of kind k starting at pos,
// or -1.
func (r *flatReader) valueSize(k reflect.Kind) int {
	if r.pos >= len(r.b) {
		return -1
	}
	c := r.b[r.pos]
	fixed := func(code byte, size int) int {
		if c != code {
			return -1
		}
		return 1 + size
	}
	switch k {
	case reflect.String:
		var n, head int
		switch {
		case c&0xe0 == 0xa0:
			n, head = int(c&0x1f), 1
		case c == 0xd9 && r.pos+2 <= len(r.b):
			n, head = int(r.b[r.pos+1]), 2
		case c == 0xda && r.pos+3 <= len(r.b):
			n, head = int(binary.BigEndian.Uint16(r.b[r.pos+1:])), 3
		case c == 0xdb && r.pos+5 <= len(r.b):
			n, head = int(binary.BigEndian.Uint32(r.b[r.pos+1:])), 5
		default:
			return -1
		}
		return head + n
	case reflect.Bool:
		if c == 0xc2 || c == 0xc3 {
			return 1
		}
		return -1
	case reflect.Float32:
		return fixed(0xca, 4)
	case reflect.Float64:
		return fixed(0xcb, 8)
	case reflect.Int8:
		return fixed(0xd0, 1)
	case reflect.Int16:
		return fixed(0xd1, 2)
	case reflect.Int32:
		return fixed(0xd2, 4)
	case reflect.Int64:
		return fixed(0xd3, 8)
	case reflect.Uint8:
		return fixed(0xcc, 1)
	case reflect.Uint16:
		return fixed(0xcd, 2)
	case reflect.Uint32:
		return fixed(0xce, 4)
	case reflect.Uint64:
		return fixed(0xcf, 8)
	case reflect.Int, reflect.Uint:
		switch {
		case c <= 0x7f || k == reflect.Int && c >= 0xe0:
			return 1
		case c == 0xcc:
			return 2
		case c == 0xcd:
			return 3
		case c == 0xce:
			return 5
		case c == 0xcf:
			return 9
		case k == reflect.Int && c >= 0xd0 && c <= 0xd3:
			return 1 + 1<<(c-0xd0)
		}
	}
	return -1
}

func (r *flatReader) skipValue(k reflect.Kind) bool {
	n := r.valueSize(k)
	if n < 0 || n > len(r.b)-r.pos {
		return false
	}
	if k == reflect.Int && r.b[r.pos] == 0xcf && binary.BigEndian.Uint64(r.b[r.pos+1:]) > math.MaxInt64 {
		return false // msgpack would not write this for an int; leave the overflow to it
	}
	r.pos += n
	return true
}

// readInto reads a value that skipValue accepted into q.
func (r *flatReader) readInto(k reflect.Kind, q unsafe.Pointer) {
	be := binary.BigEndian
	n := r.valueSize(k)
	v := r.b[r.pos : r.pos+n]
	r.pos += n
	switch k {
	case reflect.String:
		head := 1
		switch v[0] {
		case 0xd9:
			head = 2
		case 0xda:
			head = 3
		case 0xdb:
			head = 5
		}
		*(*string)(q) = string(v[head:])
	case reflect.Bool:
		*(*bool)(q) = v[0] == 0xc3
	case reflect.Float32:
		*(*float32)(q) = math.Float32frombits(be.Uint32(v[1:]))
	case reflect.Float64:
		*(*float64)(q) = math.Float64frombits(be.Uint64(v[1:]))
	case reflect.Int8:
		*(*int8)(q) = int8(v[1])
	case reflect.Int16:
		*(*int16)(q) = int16(be.Uint16(v[1:]))
	case reflect.Int32:
		*(*int32)(q) = int32(be.Uint32(v[1:]))
	case reflect.Int64:
		*(*int64)(q) = int64(be.Uint64(v[1:]))
	case reflect.Uint8:
		*(*uint8)(q) = v[1]
	case reflect.Uint16:
		*(*uint16)(q) = be.Uint16(v[1:])
	case reflect.Uint32:
		*(*uint32)(q) = be.Uint32(v[1:])
	case reflect.Uint64:
		*(*uint64)(q) = be.Uint64(v[1:])
	case reflect.Int:
		*(*int)(q) = int(compactInt(v))
	case reflect.Uint:
		*(*uint)(q) = uint(compactInt(v))
	}
}

// compactInt reads msgpack's compact integer forms.
func compactInt(v []byte) int64 {
	be := binary.BigEndian
	switch c := v[0]; {
	case c <= 0x7f || c >= 0xe0:
		return int64(int8(c))
	case c == 0xcc:
		return int64(v[1])
	case c == 0xcd:
		return int64(be.Uint16(v[1:]))
	case c == 0xce:
		return int64(be.Uint32(v[1:]))
	case c == 0xcf:
		return int64(be.Uint64(v[1:]))
	case c == 0xd0:
		return int64(int8(v[1]))
	case c == 0xd1:
		return int64(int16(be.Uint16(v[1:])))
	case c == 0xd2:
		return int64(int32(be.Uint32(v[1:])))
	default:
		return int64(be.Uint64(v[1:]))
	}
}
