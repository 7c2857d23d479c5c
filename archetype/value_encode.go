package archetype

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/mlange-42/ark/ecs"
	"github.com/vmihailenco/msgpack/v5"
)

// maxValueDepth bounds the nesting of saved values (structs, arrays, slices, maps, interfaces,
// pointers to values that can be nil): Encode refuses deeper values and Decode treats them as
// damage, so that neither recurses without bound. A linked list longer than this is refused;
// save it as a slice.
const maxValueDepth = 1000

// cycleCheckDepth is the nesting from which Encode remembers the pointers on its path, to tell a
// pointer cycle from a deep value (encoding/json does the same).
const cycleCheckDepth = 64

// valueError is an error met while encoding or decoding one value, with the path to the field.
type valueError struct {
	path []string // built from the inside out
	err  error
}

func (e *valueError) Error() string { return e.err.Error() }
func (e *valueError) Unwrap() error { return e.err }

// at adds a step to the path of err, making it a valueError if needed.
func at(err error, step string) error {
	ve, ok := err.(*valueError)
	if !ok {
		ve = &valueError{err: err}
	}
	ve.path = append(ve.path, step)
	return ve
}

// pathOf renders the path of err below a value of type root: "Enemy.AI.target[2]".
func pathOf(err error, root reflect.Type) string {
	var b strings.Builder
	b.WriteString(shortName(root))
	var ve *valueError
	if errors.As(err, &ve) {
		for i := len(ve.path) - 1; i >= 0; i-- {
			b.WriteString(ve.path[i])
		}
	}
	return b.String()
}

type seenKey struct {
	p unsafe.Pointer
	t reflect.Type
}

// venc appends wire forms to b.
type venc struct {
	b     []byte
	depth int
	seen  map[seenKey]bool          // pointers, slices and maps on the path, past cycleCheckDepth
	types map[string]*concreteEntry // concrete types met behind interfaces, by name
	mbuf  bytes.Buffer              // output of custom msgpack encoders
	menc  *msgpack.Encoder
	// mapEnt, when set, replaces every ecs.Entity value on its way out (an entity
	// section writes references instead of entities, see section.go).
	mapEnt func(ecs.Entity) ecs.Entity
}

// concreteEntry is a concrete type met behind an interface.
type concreteEntry struct {
	typ  reflect.Type
	plan *vplan
}

func newVenc() *venc { return &venc{types: map[string]*concreteEntry{}} }

// enter counts one level of nesting and, deep down, refuses a second visit of the same memory.
func (e *venc) enter(p unsafe.Pointer, t reflect.Type) error {
	e.depth++
	if e.depth <= cycleCheckDepth || p == nil {
		return nil
	}
	if e.depth > maxValueDepth {
		return fmt.Errorf("%w: the value nests deeper than %d levels (a long linked list? save it as a slice)", ErrUnsupportedType, maxValueDepth)
	}
	if e.seen == nil {
		e.seen = map[seenKey]bool{}
	}
	k := seenKey{p, t}
	if e.seen[k] {
		return fmt.Errorf("%w: a %v refers back to itself", ErrCycle, t)
	}
	e.seen[k] = true
	return nil
}

func (e *venc) leave(p unsafe.Pointer, t reflect.Type) {
	if e.depth > cycleCheckDepth && p != nil {
		delete(e.seen, seenKey{p, t})
	}
	e.depth--
}

// value appends the wire form of the value of plan p at ptr.
func (e *venc) value(p *vplan, ptr unsafe.Pointer) error {
	be := binary.BigEndian
	b := e.b
	switch p.kind {
	case vBool:
		if *(*bool)(ptr) {
			b = append(b, 0xc3)
		} else {
			b = append(b, 0xc2)
		}
	case vInt8:
		b = append(b, 0xd0, *(*uint8)(ptr))
	case vInt16:
		b = be.AppendUint16(append(b, 0xd1), *(*uint16)(ptr))
	case vInt32:
		b = be.AppendUint32(append(b, 0xd2), *(*uint32)(ptr))
	case vInt64:
		b = be.AppendUint64(append(b, 0xd3), *(*uint64)(ptr))
	case vInt:
		b = appendInt(b, readInt(ptr, p.size))
	case vUint8:
		b = append(b, 0xcc, *(*uint8)(ptr))
	case vUint16:
		b = be.AppendUint16(append(b, 0xcd), *(*uint16)(ptr))
	case vUint32:
		b = be.AppendUint32(append(b, 0xce), *(*uint32)(ptr))
	case vUint64:
		b = be.AppendUint64(append(b, 0xcf), *(*uint64)(ptr))
	case vUint:
		b = appendUint(b, readUint(ptr, p.size))
	case vFloat32:
		b = be.AppendUint32(append(b, 0xca), *(*uint32)(ptr))
	case vFloat64:
		b = be.AppendUint64(append(b, 0xcb), *(*uint64)(ptr))
	case vComplex64:
		b = be.AppendUint32(append(b, 0x92, 0xca), *(*uint32)(ptr))
		b = be.AppendUint32(append(b, 0xca), *(*uint32)(unsafe.Add(ptr, 4)))
	case vComplex128:
		b = be.AppendUint64(append(b, 0x92, 0xcb), *(*uint64)(ptr))
		b = be.AppendUint64(append(b, 0xcb), *(*uint64)(unsafe.Add(ptr, 8)))
	case vString:
		b = appendStr(b, *(*string)(ptr))
	case vBytes:
		s := *(*[]byte)(ptr)
		if s == nil {
			b = append(b, 0xc0)
		} else {
			b = appendBin(b, s)
		}
	case vByteArray:
		b = appendBin(b, unsafe.Slice((*byte)(ptr), p.length))
	case vEntity:
		if e.mapEnt != nil {
			ent := e.mapEnt(*(*ecs.Entity)(ptr))
			ptr = unsafe.Pointer(&ent)
		}
		s := (*slot)(ptr) // id, generation: little-endian on every host
		b = binary.LittleEndian.AppendUint32(append(b, 0xd7, byte(entityExtID)), s.id)
		b = binary.LittleEndian.AppendUint32(b, s.gen)
	case vTime:
		b = appendTime(b, *(*time.Time)(ptr))
	default:
		e.b = b
		return e.composite(p, ptr)
	}
	e.b = b
	return nil
}

// composite appends values that contain other values or call methods.
func (e *venc) composite(p *vplan, ptr unsafe.Pointer) error {
	switch p.kind {
	case vArray:
		if err := e.enter(nil, p.typ); err != nil {
			return err
		}
		e.b = appendArrayLen(e.b, p.length)
		if err := e.elements(p.elem, ptr, p.length); err != nil {
			return err
		}
		e.leave(nil, p.typ)
	case vSlice:
		hdr := (*sliceHeader)(ptr)
		if hdr.data == nil {
			e.b = append(e.b, 0xc0)
			return nil
		}
		if err := e.enter(hdr.data, p.typ); err != nil {
			return err
		}
		e.b = appendArrayLen(e.b, hdr.len)
		if err := e.elements(p.elem, hdr.data, hdr.len); err != nil {
			return err
		}
		e.leave(hdr.data, p.typ)
	case vStruct:
		if p.flat {
			e.flatStruct(p, ptr)
			return nil
		}
		if err := e.enter(nil, p.typ); err != nil {
			return err
		}
		e.b = append(e.b, p.header...)
		for i := range p.fields {
			f := &p.fields[i]
			e.b = append(e.b, f.key...)
			if err := e.value(f.plan, unsafe.Add(ptr, f.offset)); err != nil {
				return at(err, "."+f.name)
			}
		}
		e.leave(nil, p.typ)
	case vPointer:
		q := *(*unsafe.Pointer)(ptr)
		if q == nil {
			e.b = append(e.b, 0xc0)
			return nil
		}
		if err := e.enter(q, p.typ); err != nil {
			return err
		}
		if p.elem.kind.nilable() {
			e.b = append(e.b, 0x91)
		}
		if err := e.value(p.elem, q); err != nil {
			return err
		}
		e.leave(q, p.typ)
	case vMap:
		return e.mapValue(p, reflect.NewAt(p.typ, ptr).Elem())
	case vInterface:
		return e.iface(p, reflect.NewAt(p.typ, ptr).Elem(), false)
	case vBinary:
		data, err := reflect.NewAt(p.typ, ptr).Interface().(encoding.BinaryMarshaler).MarshalBinary()
		if err != nil {
			return fmt.Errorf("MarshalBinary of %v: %w", p.typ, err)
		}
		e.b = appendBin(e.b, data)
	case vMsgpack, vMsgpackRaw:
		return e.msgpackValue(p, ptr)
	}
	return nil
}

// flatStruct appends a struct of scalars, the common component shape, without the general
// path's bookkeeping (no nesting, nothing that can fail).
func (e *venc) flatStruct(p *vplan, ptr unsafe.Pointer) {
	e.b = e.appendFlat(e.b, p, ptr)
}

func (e *venc) appendFlat(b []byte, p *vplan, ptr unsafe.Pointer) []byte {
	b = append(b, p.header...)
	for i := range p.fields {
		f := &p.fields[i]
		b = append(b, f.key...)
		q := unsafe.Add(ptr, f.offset)
		switch f.plan.kind {
		case vString:
			b = appendStr(b, *(*string)(q))
		case vFloat64:
			b = binary.BigEndian.AppendUint64(append(b, 0xcb), *(*uint64)(q))
		case vInt:
			b = appendInt(b, readInt(q, f.plan.size))
		default:
			e.b = b
			_ = e.value(f.plan, q) // scalars cannot fail
			b = e.b
		}
	}
	return b
}

func (e *venc) elements(elem *vplan, base unsafe.Pointer, n int) error {
	for i := range n {
		if err := e.value(elem, unsafe.Add(base, uintptr(i)*elem.size)); err != nil {
			return at(err, "["+strconv.Itoa(i)+"]")
		}
	}
	return nil
}

// mapValue appends a map with its entries in ascending order of their encoded keys.
func (e *venc) mapValue(p *vplan, m reflect.Value) error {
	if m.IsNil() {
		e.b = append(e.b, 0xc0)
		return nil
	}
	id := m.UnsafePointer()
	if err := e.enter(id, p.typ); err != nil {
		return err
	}
	type entry struct {
		start, end int
		val        reflect.Value
	}
	// Keys are encoded after the output, then moved into place in order.
	mark := len(e.b)
	entries := make([]entry, 0, m.Len())
	key := reflect.New(p.typ.Key())
	for it := m.MapRange(); it.Next(); {
		key.Elem().SetIterKey(it)
		start := len(e.b)
		var err error
		if p.key.kind == vInterface {
			err = e.iface(p.key, key.Elem(), true)
		} else {
			err = e.value(p.key, key.UnsafePointer())
		}
		if err != nil {
			return at(err, "[key]")
		}
		entries = append(entries, entry{start: start - mark, end: len(e.b) - mark, val: it.Value()})
	}
	keys := bytes.Clone(e.b[mark:])
	e.b = e.b[:mark]
	sort.Slice(entries, func(i, j int) bool {
		return bytes.Compare(keys[entries[i].start:entries[i].end], keys[entries[j].start:entries[j].end]) < 0
	})
	e.b = appendMapLen(e.b, len(entries))
	val := reflect.New(p.typ.Elem())
	for _, en := range entries {
		e.b = append(e.b, keys[en.start:en.end]...)
		val.Elem().Set(en.val)
		if err := e.value(p.elem, val.UnsafePointer()); err != nil {
			return at(err, "[value]")
		}
	}
	e.leave(id, p.typ)
	return nil
}

// iface appends an interface value: nil, or its concrete type's name and its value.
func (e *venc) iface(p *vplan, v reflect.Value, asKey bool) error {
	if v.IsNil() {
		e.b = append(e.b, 0xc0)
		return nil
	}
	c := v.Elem()
	t := c.Type()
	name, ok := concreteName(t)
	if !ok {
		return fmt.Errorf("%w: holds a %v, a type Decode could not find by name; call archetype.Register[%v]() at start-up",
			ErrUnsupportedType, t, t)
	}
	ce := e.types[name]
	if ce == nil {
		cp, terr := planOf(t)
		if terr != nil {
			return fmt.Errorf("%w: holds a %v, which cannot be saved: %s", ErrUnsupportedType, t, terr.describe(t))
		}
		ce = &concreteEntry{typ: t, plan: cp}
		e.types[name] = ce
	} else if ce.typ != t {
		return fmt.Errorf("%w: holds a %v and elsewhere a %v, both named %q; register one with archetype.RegisterName",
			ErrUnsupportedType, t, ce.typ, name)
	}
	if asKey && !ce.plan.keyOK {
		return fmt.Errorf("%w: a map key holding a %v, which holds a pointer, would not find its entry after loading", ErrUnsupportedType, t)
	}
	if err := e.enter(nil, p.typ); err != nil {
		return err
	}
	e.b = appendStr(append(e.b, 0x92), name)
	tmp := reflect.New(t)
	tmp.Elem().Set(c)
	if err := e.value(ce.plan, tmp.UnsafePointer()); err != nil {
		return err
	}
	e.leave(nil, p.typ)
	return nil
}

// msgpackValue appends what a type's own msgpack methods write, which must be one value.
func (e *venc) msgpackValue(p *vplan, ptr unsafe.Pointer) error {
	v := reflect.NewAt(p.typ, ptr).Interface()
	var data []byte
	if p.kind == vMsgpack {
		if e.menc == nil {
			e.menc = msgpack.NewEncoder(&e.mbuf)
			e.menc.SetSortMapKeys(true)
		}
		e.mbuf.Reset()
		if err := v.(msgpack.CustomEncoder).EncodeMsgpack(e.menc); err != nil {
			return fmt.Errorf("EncodeMsgpack of %v: %w", p.typ, err)
		}
		data = e.mbuf.Bytes()
	} else {
		var err error
		if data, err = v.(msgpack.Marshaler).MarshalMsgpack(); err != nil {
			return fmt.Errorf("MarshalMsgpack of %v: %w", p.typ, err)
		}
	}
	if n, err := msgpackSize(data, 1); err != nil || n != len(data) {
		return fmt.Errorf("%w: the msgpack method of %v wrote %d bytes that are not exactly one msgpack value", ErrUnsupportedType, p.typ, len(data))
	}
	e.b = append(e.b, data...)
	return nil
}

type sliceHeader struct {
	data unsafe.Pointer
	len  int
	cap  int
}

func readInt(ptr unsafe.Pointer, size uintptr) int64 {
	if size == 4 {
		return int64(*(*int32)(ptr))
	}
	return *(*int64)(ptr)
}

func readUint(ptr unsafe.Pointer, size uintptr) uint64 {
	if size == 4 {
		return uint64(*(*uint32)(ptr))
	}
	return *(*uint64)(ptr)
}

func appendArrayLen(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xdc), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, 0xdd), uint32(n))
}

func appendBin(b []byte, s []byte) []byte {
	switch n := len(s); {
	case n < 256:
		b = append(b, 0xc4, byte(n))
	case n <= math.MaxUint16:
		b = binary.BigEndian.AppendUint16(append(b, 0xc5), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xc6), uint32(n))
	}
	return append(b, s...)
}

// Location kinds of the time.Time wire form.
const (
	locUTC   = 0
	locLocal = 1
	locOther = 2
)

// appendTime writes the instant, the location and the zone in effect; the monotonic clock
// reading is not saved (as encoding/gob does not save it).
func appendTime(b []byte, t time.Time) []byte {
	b = append(b, 0x96)
	b = appendInt(b, t.Unix())
	b = appendUint(b, uint64(t.Nanosecond()))
	loc := t.Location()
	switch loc {
	case time.UTC:
		b = append(b, locUTC)
	case time.Local:
		b = append(b, locLocal)
	default:
		b = append(b, locOther)
	}
	b = appendStr(b, loc.String())
	zone, offset := t.Zone()
	b = appendStr(b, zone)
	return appendInt(b, int64(offset))
}

func appendMapLen(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x80|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xde), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, 0xdf), uint32(n))
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
