package archetype

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"time"
	"unsafe"

	"github.com/mlange-42/ark/ecs"
	"github.com/vmihailenco/msgpack/v5"
)

// concreteSource turns the type name before a value behind an interface into its Go type and
// plan: [Decode] resolves only names the file lists (and checks them against the stored schema).
type concreteSource interface {
	concrete(name string) (reflect.Type, *vplan, error)
}

// vdec reads wire forms from b into Go values of a plan. The destination is always the zero value.
type vdec struct {
	b     []byte
	pos   int
	depth int
	conc  concreteSource
	locs  map[string]*time.Location
	mdec  *msgpack.Decoder
	// mapEnt, when set, turns every ecs.Entity value read into the entity it stands for
	// (an entity section stores references, see section.go).
	mapEnt func(ecs.Entity) (ecs.Entity, error)
}

var errShort = errors.New("value ends early")

func (d *vdec) corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

func (d *vdec) remaining() int { return len(d.b) - d.pos }

// take returns the next n bytes.
func (d *vdec) take(n int) ([]byte, error) {
	if n < 0 || n > d.remaining() {
		return nil, d.corrupt("%d bytes needed, %d left", n, d.remaining())
	}
	p := d.b[d.pos : d.pos+n]
	d.pos += n
	return p, nil
}

func (d *vdec) peek() (byte, error) {
	if d.pos >= len(d.b) {
		return 0, d.corrupt("%v", errShort)
	}
	return d.b[d.pos], nil
}

// isNil consumes a nil and reports whether there was one.
func (d *vdec) isNil() bool {
	if d.pos < len(d.b) && d.b[d.pos] == 0xc0 {
		d.pos++
		return true
	}
	return false
}

// length reads a string, binary, array or map head of the given family and returns the length.
func (d *vdec) length(fix, fixMask, fixLen byte, c8, c16, c32 byte, what string) (int, error) {
	c, err := d.peek()
	if err != nil {
		return 0, err
	}
	d.pos++
	var n uint64
	switch {
	case fixMask != 0 && c&fixMask == fix:
		n = uint64(c & fixLen)
	case c8 != 0 && c == c8:
		p, err := d.take(1)
		if err != nil {
			return 0, err
		}
		n = uint64(p[0])
	case c == c16:
		p, err := d.take(2)
		if err != nil {
			return 0, err
		}
		n = uint64(binary.BigEndian.Uint16(p))
	case c == c32:
		p, err := d.take(4)
		if err != nil {
			return 0, err
		}
		n = uint64(binary.BigEndian.Uint32(p))
	default:
		d.pos--
		return 0, d.corrupt("%s expected, found msgpack code %#02x", what, c)
	}
	if n > uint64(d.remaining()) {
		return 0, d.corrupt("%s of %d claimed, %d bytes left", what, n, d.remaining())
	}
	return int(n), nil
}

func (d *vdec) strBytes() ([]byte, error) {
	n, err := d.length(0xa0, 0xe0, 0x1f, 0xd9, 0xda, 0xdb, "string")
	if err != nil {
		return nil, err
	}
	return d.take(n)
}

func (d *vdec) binBytes() ([]byte, error) {
	n, err := d.length(0, 0, 0, 0xc4, 0xc5, 0xc6, "binary")
	if err != nil {
		return nil, err
	}
	return d.take(n)
}

func (d *vdec) arrayLen() (int, error) { return d.length(0x90, 0xf0, 0x0f, 0, 0xdc, 0xdd, "array") }
func (d *vdec) mapLen() (int, error)   { return d.length(0x80, 0xf0, 0x0f, 0, 0xde, 0xdf, "map") }

// integer reads any msgpack integer: u is the value when neg is false, int64(u) when it is true.
func (d *vdec) integer() (u uint64, neg bool, err error) {
	c, err := d.peek()
	if err != nil {
		return 0, false, err
	}
	be := binary.BigEndian
	switch {
	case c <= 0x7f:
		d.pos++
		return uint64(c), false, nil
	case c >= 0xe0:
		d.pos++
		return uint64(int64(int8(c))), true, nil
	case c >= 0xcc && c <= 0xcf:
		p, err := d.take(1 + 1<<(c-0xcc))
		if err != nil {
			return 0, false, err
		}
		switch c {
		case 0xcc:
			return uint64(p[1]), false, nil
		case 0xcd:
			return uint64(be.Uint16(p[1:])), false, nil
		case 0xce:
			return uint64(be.Uint32(p[1:])), false, nil
		}
		return be.Uint64(p[1:]), false, nil
	case c >= 0xd0 && c <= 0xd3:
		p, err := d.take(1 + 1<<(c-0xd0))
		if err != nil {
			return 0, false, err
		}
		var v int64
		switch c {
		case 0xd0:
			v = int64(int8(p[1]))
		case 0xd1:
			v = int64(int16(be.Uint16(p[1:])))
		case 0xd2:
			v = int64(int32(be.Uint32(p[1:])))
		default:
			v = int64(be.Uint64(p[1:]))
		}
		return uint64(v), v < 0, nil
	}
	return 0, false, d.corrupt("integer expected, found msgpack code %#02x", c)
}

func (d *vdec) float() (float64, error) {
	c, err := d.peek()
	if err != nil {
		return 0, err
	}
	switch c {
	case 0xca:
		p, err := d.take(5)
		if err != nil {
			return 0, err
		}
		return float64(math.Float32frombits(binary.BigEndian.Uint32(p[1:]))), nil
	case 0xcb:
		p, err := d.take(9)
		if err != nil {
			return 0, err
		}
		return math.Float64frombits(binary.BigEndian.Uint64(p[1:])), nil
	}
	return 0, d.corrupt("float expected, found msgpack code %#02x", c)
}

// float32At reads a float into a float32 of a value of type t, keeping the bits of a stored
// float 32. A stored float 64 must convert exactly (NaN stays NaN, infinities stay infinite):
// 1e300 would become +Inf and 0.1 another number, so they are [ErrIncompatible], as an
// integer too large for its field is.
func (d *vdec) float32At(ptr unsafe.Pointer, t reflect.Type) error {
	if c, _ := d.peek(); c == 0xca {
		p, err := d.take(5)
		if err != nil {
			return err
		}
		*(*uint32)(ptr) = binary.BigEndian.Uint32(p[1:])
		return nil
	}
	f, err := d.float()
	if err != nil {
		return err
	}
	if f32 := float32(f); float64(f32) == f || math.IsNaN(f) {
		*(*float32)(ptr) = f32
		return nil
	}
	return fmt.Errorf("%w: stored value %s does not fit in %v: a float32 cannot hold it exactly; %s",
		ErrIncompatible, strconv.FormatFloat(f, 'g', -1, 64), t, narrowedWayOut)
}

// narrowedWayOut ends the error for a stored number that a narrowed field cannot hold.
const narrowedWayOut = "give the field its wider type back, or raise the type version (PECSVersion or archetype.TypeVersion) " +
	"and convert the value in an archetype.Migrate function"

// boolean reads a bool.
func (d *vdec) boolean() (bool, error) {
	c, err := d.peek()
	if err != nil {
		return false, err
	}
	if c != 0xc2 && c != 0xc3 {
		return false, d.corrupt("bool expected, found msgpack code %#02x", c)
	}
	d.pos++
	return c == 0xc3, nil
}

// intRange is the range of each integer kind.
var intRange = [...]struct{ min, max int64 }{
	vInt8: {math.MinInt8, math.MaxInt8}, vInt16: {math.MinInt16, math.MaxInt16},
	vInt32: {math.MinInt32, math.MaxInt32}, vInt64: {math.MinInt64, math.MaxInt64},
	vUint8: {0, math.MaxUint8}, vUint16: {0, math.MaxUint16}, vUint32: {0, math.MaxUint32},
}

// intAt reads an integer into the integer kind of p, checking that it fits.
func (d *vdec) intAt(p *vplan, ptr unsafe.Pointer) error {
	u, neg, err := d.integer()
	if err != nil {
		return err
	}
	kind := p.kind
	if kind == vInt {
		kind = vInt64
		if p.size == 4 {
			kind = vInt32
		}
	}
	if kind == vUint {
		kind = vUint64
		if p.size == 4 {
			kind = vUint32
		}
	}
	overflow := func() error {
		v := strconv.FormatUint(u, 10)
		if neg {
			v = strconv.FormatInt(int64(u), 10)
		}
		return fmt.Errorf("%w: stored value %s does not fit in %v; %s", ErrIncompatible, v, p.typ, narrowedWayOut)
	}
	if kind == vUint64 {
		if neg {
			return overflow()
		}
		*(*uint64)(ptr) = u
		return nil
	}
	r := intRange[kind]
	if !neg && u > uint64(r.max) || neg && int64(u) < r.min {
		return overflow()
	}
	switch kind {
	case vInt8, vUint8:
		*(*uint8)(ptr) = uint8(u)
	case vInt16, vUint16:
		*(*uint16)(ptr) = uint16(u)
	case vInt32, vUint32:
		*(*uint32)(ptr) = uint32(u)
	default:
		*(*uint64)(ptr) = u
	}
	return nil
}

// value reads one value of plan p into the zero value at ptr.
func (d *vdec) value(p *vplan, ptr unsafe.Pointer) error {
	switch p.kind {
	case vBool:
		b, err := d.boolean()
		*(*bool)(ptr) = b
		return err
	case vInt8, vInt16, vInt32, vInt64, vInt, vUint8, vUint16, vUint32, vUint64, vUint:
		return d.intAt(p, ptr)
	case vFloat32:
		return d.float32At(ptr, p.typ)
	case vFloat64:
		f, err := d.float()
		*(*float64)(ptr) = f
		return err
	case vComplex64, vComplex128:
		if n, err := d.arrayLen(); err != nil || n != 2 {
			return errOr(err, d.corrupt("complex number: array of %d", n))
		}
		if p.kind == vComplex64 {
			if err := d.float32At(ptr, p.typ); err != nil {
				return err
			}
			return d.float32At(unsafe.Add(ptr, 4), p.typ)
		}
		re, err := d.float()
		if err != nil {
			return err
		}
		im, err := d.float()
		*(*complex128)(ptr) = complex(re, im)
		return err
	case vString:
		s, err := d.strBytes()
		if err != nil {
			return err
		}
		*(*string)(ptr) = string(s)
	case vBytes:
		if d.isNil() {
			return nil
		}
		s, err := d.binBytes()
		if err != nil {
			return err
		}
		*(*[]byte)(ptr) = append(make([]byte, 0, len(s)), s...)
	case vByteArray:
		s, err := d.binBytes()
		if err != nil {
			return err
		}
		if len(s) != p.length {
			return d.corrupt("%d bytes for a %v", len(s), p.typ)
		}
		copy(unsafe.Slice((*byte)(ptr), p.length), s)
	case vEntity:
		h, err := d.take(2)
		if err != nil {
			return err
		}
		if h[0] != 0xd7 || h[1] != byte(entityExtID) {
			return d.corrupt("entity expected, found msgpack code %#02x", h[0])
		}
		data, err := d.take(8)
		if err != nil {
			return err
		}
		*(*slot)(ptr) = slot{id: binary.LittleEndian.Uint32(data), gen: binary.LittleEndian.Uint32(data[4:])}
		if d.mapEnt != nil {
			ent, err := d.mapEnt(*(*ecs.Entity)(ptr))
			if err != nil {
				return err
			}
			*(*ecs.Entity)(ptr) = ent
		}
	case vTime:
		return d.timeAt(ptr)
	default:
		return d.composite(p, ptr)
	}
	return nil
}

func errOr(err, alt error) error {
	if err != nil {
		return err
	}
	return alt
}

func (d *vdec) enter() error {
	if d.depth++; d.depth > maxValueDepth {
		return d.corrupt("value nests deeper than %d levels", maxValueDepth)
	}
	return nil
}

func (d *vdec) composite(p *vplan, ptr unsafe.Pointer) error {
	switch p.kind {
	case vArray:
		n, err := d.arrayLen()
		if err != nil {
			return err
		}
		if n != p.length {
			return d.corrupt("array of %d for a %v", n, p.typ)
		}
		if err := d.enter(); err != nil {
			return err
		}
		if err := d.elements(p.elem, ptr, n); err != nil {
			return err
		}
		d.depth--
	case vSlice:
		if d.isNil() {
			return nil
		}
		n, err := d.arrayLen()
		if err != nil {
			return err
		}
		if uint64(n)*uint64(p.elem.minSize) > uint64(d.remaining()) {
			return d.corrupt("%d elements of %v cannot fit in %d bytes", n, p.elem.typ, d.remaining())
		}
		if err := d.enter(); err != nil {
			return err
		}
		s := reflect.MakeSlice(p.typ, n, n)
		reflect.NewAt(p.typ, ptr).Elem().Set(s)
		if err := d.elements(p.elem, s.UnsafePointer(), n); err != nil {
			return err
		}
		d.depth--
	case vStruct:
		return d.structAt(p, ptr)
	case vPointer:
		if d.isNil() {
			return nil
		}
		if err := d.enter(); err != nil {
			return err
		}
		if p.elem.kind.nilable() {
			if n, err := d.arrayLen(); err != nil || n != 1 {
				return errOr(err, d.corrupt("pointer to a %v: array of %d", p.elem.typ, n))
			}
		}
		v := reflect.New(p.elem.typ)
		if err := d.value(p.elem, v.UnsafePointer()); err != nil {
			return err
		}
		*(*unsafe.Pointer)(ptr) = v.UnsafePointer()
		d.depth--
	case vMap:
		return d.mapAt(p, ptr)
	case vInterface:
		if d.isNil() {
			return nil
		}
		v, err := d.iface(p)
		if err != nil {
			return err
		}
		reflect.NewAt(p.typ, ptr).Elem().Set(v)
	case vBinary:
		data, err := d.binBytes()
		if err != nil {
			return err
		}
		u := reflect.NewAt(p.typ, ptr).Interface().(encoding.BinaryUnmarshaler)
		if err := u.UnmarshalBinary(bytes.Clone(data)); err != nil {
			return fmt.Errorf("%w: UnmarshalBinary of %v: %w", ErrIncompatible, p.typ, err)
		}
	case vMsgpack, vMsgpackRaw:
		return d.msgpackAt(p, ptr)
	default:
		return d.corrupt("no plan for kind %v", p.kind)
	}
	return nil
}

func (d *vdec) elements(elem *vplan, base unsafe.Pointer, n int) error {
	for i := range n {
		if err := d.value(elem, unsafe.Add(base, uintptr(i)*elem.size)); err != nil {
			return at(err, "["+strconv.Itoa(i)+"]")
		}
	}
	return nil
}

// structAt reads a map from field name to value. Fields the file has and the type has not are
// skipped; fields the type has and the file has not stay zero.
func (d *vdec) structAt(p *vplan, ptr unsafe.Pointer) error {
	if p.flat && d.flatStruct(p, ptr) {
		return nil
	}
	n, err := d.mapLen()
	if err != nil {
		return err
	}
	if err := d.enter(); err != nil {
		return err
	}
	var seen uint64 // fields read, the first 64
	var seenMore []bool
	for i := range n {
		var f *vfield
		fi := -1
		if i < len(p.fields) && bytes.HasPrefix(d.b[d.pos:], p.fields[i].key) {
			fi, f = i, &p.fields[i]
			d.pos += len(f.key)
		} else {
			key, err := d.strBytes()
			if err != nil {
				return err
			}
			j, ok := p.byName[string(key)]
			if !ok {
				m, err := msgpackSize(d.b[d.pos:], 1)
				if err != nil {
					return d.corrupt("field %q: malformed msgpack", key)
				}
				d.pos += m
				continue
			}
			fi, f = j, &p.fields[j]
		}
		twice := false
		if fi < 64 {
			twice = seen&(1<<fi) != 0
			seen |= 1 << fi
		} else {
			if seenMore == nil {
				seenMore = make([]bool, len(p.fields))
			}
			twice = seenMore[fi]
			seenMore[fi] = true
		}
		if twice {
			return d.corrupt("field %q twice", f.name)
		}
		if err := d.value(f.plan, unsafe.Add(ptr, f.offset)); err != nil {
			return at(err, "."+f.name)
		}
	}
	d.depth--
	return nil
}

// flatStruct reads a struct of scalars written in the encoder's form (every field, in order)
// and reports whether it could; otherwise nothing is consumed and the general path reads it.
func (d *vdec) flatStruct(p *vplan, ptr unsafe.Pointer) bool {
	start := d.pos
	if !bytes.HasPrefix(d.b[d.pos:], p.header) {
		return false
	}
	d.pos += len(p.header)
	for i := range p.fields {
		f := &p.fields[i]
		if !bytes.HasPrefix(d.b[d.pos:], f.key) {
			d.pos = start
			return false
		}
		d.pos += len(f.key)
		q := unsafe.Add(ptr, f.offset)
		if f.plan.kind == vString && d.pos < len(d.b) && d.b[d.pos]&0xe0 == 0xa0 {
			n := int(d.b[d.pos] & 0x1f)
			if n < len(d.b)-d.pos {
				*(*string)(q) = string(d.b[d.pos+1 : d.pos+1+n])
				d.pos += 1 + n
				continue
			}
		}
		if d.value(f.plan, q) != nil {
			d.pos = start
			return false
		}
	}
	return true
}

func (d *vdec) mapAt(p *vplan, ptr unsafe.Pointer) error {
	if d.isNil() {
		return nil
	}
	n, err := d.mapLen()
	if err != nil {
		return err
	}
	if uint64(n)*uint64(p.key.minSize+p.elem.minSize) > uint64(d.remaining()) {
		return d.corrupt("%d map entries cannot fit in %d bytes", n, d.remaining())
	}
	if err := d.enter(); err != nil {
		return err
	}
	m := reflect.MakeMapWithSize(p.typ, n)
	key := reflect.New(p.typ.Key()).Elem()
	val := reflect.New(p.typ.Elem()).Elem()
	for range n {
		key.SetZero()
		val.SetZero()
		if err := d.value(p.key, key.Addr().UnsafePointer()); err != nil {
			return at(err, "[key]")
		}
		if err := d.value(p.elem, val.Addr().UnsafePointer()); err != nil {
			return at(err, "[value]")
		}
		m.SetMapIndex(key, val)
	}
	if m.Len() != n && !p.key.hasNaN() {
		return d.corrupt("%d map entries, %d distinct keys", n, m.Len())
	}
	reflect.NewAt(p.typ, ptr).Elem().Set(m)
	d.depth--
	return nil
}

// hasNaN reports whether keys of this plan can be NaN, which never equals itself.
func (p *vplan) hasNaN() bool {
	switch p.kind {
	case vFloat32, vFloat64, vComplex64, vComplex128, vInterface, vMsgpack, vMsgpackRaw, vBinary:
		return true
	case vArray:
		return p.elem.hasNaN()
	case vStruct:
		for i := range p.fields {
			if p.fields[i].plan.hasNaN() {
				return true
			}
		}
	}
	return false
}

// iface reads a concrete type's name and its value.
func (d *vdec) iface(p *vplan) (reflect.Value, error) {
	if n, err := d.arrayLen(); err != nil || n != 2 {
		return reflect.Value{}, errOr(err, d.corrupt("interface value: array of %d", n))
	}
	name, err := d.strBytes()
	if err != nil {
		return reflect.Value{}, err
	}
	var t reflect.Type
	var cp *vplan
	if d.conc != nil {
		t, cp, err = d.conc.concrete(string(name))
	} else {
		t, cp, err = resolveConcrete(string(name))
	}
	if err != nil {
		return reflect.Value{}, err
	}
	if !t.Implements(p.typ) {
		return reflect.Value{}, fmt.Errorf("%w: stored value of type %v does not implement %v", ErrIncompatible, t, p.typ)
	}
	if err := d.enter(); err != nil {
		return reflect.Value{}, err
	}
	v := reflect.New(t)
	if err := d.value(cp, v.UnsafePointer()); err != nil {
		return reflect.Value{}, err
	}
	d.depth--
	return v.Elem(), nil
}

// resolveConcrete finds the type and plan of a concrete type name, without a file's schema.
func resolveConcrete(name string) (reflect.Type, *vplan, error) {
	t, ok := resolveName(name)
	if !ok {
		return nil, nil, fmt.Errorf("%w: a value behind an interface has type %q, which this program has not registered; call archetype.Register for it",
			ErrIncompatible, name)
	}
	cp, terr := planOf(t)
	if terr != nil {
		return nil, nil, fmt.Errorf("%w: a value behind an interface has type %v, which cannot be saved: %s", ErrIncompatible, t, terr.describe(t))
	}
	return t, cp, nil
}

func (d *vdec) msgpackAt(p *vplan, ptr unsafe.Pointer) error {
	n, err := msgpackSize(d.b[d.pos:], 1)
	if err != nil {
		return d.corrupt("malformed msgpack value of %v", p.typ)
	}
	data := d.b[d.pos : d.pos+n]
	d.pos += n
	v := reflect.NewAt(p.typ, ptr).Interface()
	if p.kind == vMsgpackRaw {
		if err := v.(msgpack.Unmarshaler).UnmarshalMsgpack(bytes.Clone(data)); err != nil {
			return fmt.Errorf("%w: UnmarshalMsgpack of %v: %w", ErrIncompatible, p.typ, err)
		}
		return nil
	}
	rd := bytes.NewReader(data)
	if d.mdec == nil {
		d.mdec = msgpack.NewDecoder(rd)
	} else {
		d.mdec.Reset(rd)
	}
	if err := v.(msgpack.CustomDecoder).DecodeMsgpack(d.mdec); err != nil {
		return fmt.Errorf("%w: DecodeMsgpack of %v: %w", ErrIncompatible, p.typ, err)
	}
	if rd.Len() != 0 {
		return fmt.Errorf("%w: DecodeMsgpack of %v left %d of its %d bytes unread", ErrIncompatible, p.typ, rd.Len(), n)
	}
	return nil
}

// timeAt reads a time.Time: the same instant, in the same location when this program has it (UTC,
// Local, or a location time.LoadLocation finds with the same zone at that instant), else in a
// fixed zone with the saved abbreviation and offset.
func (d *vdec) timeAt(ptr unsafe.Pointer) error {
	if n, err := d.arrayLen(); err != nil || n != 6 {
		return errOr(err, d.corrupt("time: array of %d", n))
	}
	sec, neg, err := d.integer()
	if err != nil {
		return err
	}
	if !neg && sec > math.MaxInt64 {
		return d.corrupt("time: seconds out of range")
	}
	nsec, nneg, err := d.integer()
	if err != nil {
		return err
	}
	kind, kneg, err := d.integer()
	if err != nil {
		return err
	}
	locName, err := d.strBytes()
	if err != nil {
		return err
	}
	zone, err := d.strBytes()
	if err != nil {
		return err
	}
	off, oneg, err := d.integer()
	if err != nil {
		return err
	}
	offset := int64(off)
	if nneg || nsec >= 1e9 || kneg || kind > locOther || !oneg && off > 1<<20 || oneg && offset < -(1<<20) {
		return d.corrupt("time: nanoseconds %d, location kind %d, offset %d", nsec, kind, offset)
	}
	t := time.Unix(int64(sec), int64(nsec))
	switch kind {
	case locUTC:
		t = t.UTC()
	case locLocal:
		t = t.Local()
	default:
		t = t.In(d.location(string(locName), string(zone), int(offset), t))
	}
	*(*time.Time)(ptr) = t
	return nil
}

// location returns the location a time was saved in, as this program can have it.
func (d *vdec) location(name, zone string, offset int, t time.Time) *time.Location {
	key := name + "\x00" + zone + "\x00" + strconv.Itoa(offset)
	if loc, ok := d.locs[key]; ok {
		return loc
	}
	var loc *time.Location
	if name != "" && name != "UTC" && name != "Local" && name != zone {
		if l, err := time.LoadLocation(name); err == nil {
			if z, o := t.In(l).Zone(); z == zone && o == offset {
				loc = l
			}
		}
	}
	if loc == nil {
		loc = time.FixedZone(zone, offset)
	}
	if d.locs == nil {
		d.locs = map[string]*time.Location{}
	}
	d.locs[key] = loc
	return loc
}
