package archetype

import (
	"encoding"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// Components that are not plain-old-data, resources, and values behind interfaces are saved as
// msgpack values, walked by a plan compiled once per Go type (see planOf). The plan is also the
// type check: a type whose values cannot all come back exactly has no plan, and the error says
// which field is to blame and why.
//
// Wire form of each kind (msgpack; part of the file format since version 2.0):
//
//	bool                       true / false
//	int8..int64, uint8..uint64 the sized msgpack integer (0xd0-0xd3, 0xcc-0xcf)
//	int, uint, uintptr         the shortest msgpack integer
//	float32, float64           float 32 / float 64
//	complex64, complex128      array of 2 floats: real, imaginary
//	string                     str
//	[]byte, [N]byte            bin (nil slice: nil)
//	array, slice               array of the elements (nil slice: nil)
//	map                        map, entries in ascending order of their encoded keys (nil map: nil)
//	pointer                    nil, or the value; a pointer to a kind that can itself be nil
//	                           (pointer, slice, map, interface, custom msgpack) wraps the value in
//	                           an array of 1, so that a pointer to nil stays one
//	struct                     map from field name to value, every field, exported or not, in
//	                           declaration order (blank fields "_" are named "_" and their index)
//	interface                  nil, or array of 2: the concrete type's name (see Register), value
//	ecs.Entity                 extension entityExtID: id u32, generation u32, little-endian
//	time.Time                  array of 6: Unix seconds, nanoseconds, location kind (0 UTC,
//	                           1 Local, 2 other), location name, zone abbreviation, zone offset in
//	                           seconds
//	encoding.BinaryMarshaler   bin of MarshalBinary's bytes
//	msgpack.CustomEncoder      what EncodeMsgpack writes: exactly one value
//	msgpack.Marshaler          what MarshalMsgpack returns: exactly one value

// vkind is the kind of a plan node and of a value-schema node (part of the file format).
type vkind uint8

const (
	vBool vkind = iota + 1
	vInt8
	vInt16
	vInt32
	vInt64
	vInt // int: shortest form
	vUint8
	vUint16
	vUint32
	vUint64
	vUint // uint, uintptr: shortest form
	vFloat32
	vFloat64
	vComplex64
	vComplex128
	vString
	vBytes     // slice of a byte kind
	vByteArray // array of a byte kind
	vArray
	vSlice
	vMap
	vPointer
	vStruct
	vInterface
	vEntity
	vTime
	vBinary     // encoding.BinaryMarshaler and BinaryUnmarshaler
	vMsgpack    // msgpack.CustomEncoder and CustomDecoder
	vMsgpackRaw // msgpack.Marshaler and Unmarshaler

	vKinds = vMsgpackRaw
)

var vkindNames = [...]string{
	vBool: "bool", vInt8: "int8", vInt16: "int16", vInt32: "int32", vInt64: "int64", vInt: "int",
	vUint8: "uint8", vUint16: "uint16", vUint32: "uint32", vUint64: "uint64", vUint: "uint",
	vFloat32: "float32", vFloat64: "float64", vComplex64: "complex64", vComplex128: "complex128",
	vString: "string", vBytes: "[]byte", vByteArray: "byte array", vArray: "array", vSlice: "slice",
	vMap: "map", vPointer: "pointer", vStruct: "struct", vInterface: "interface", vEntity: "ecs.Entity",
	vTime: "time.Time", vBinary: "BinaryMarshaler", vMsgpack: "msgpack.CustomEncoder", vMsgpackRaw: "msgpack.Marshaler",
}

func (k vkind) String() string {
	if k >= 1 && k <= vKinds {
		return vkindNames[k]
	}
	return "kind " + strconv.Itoa(int(k))
}

// class groups the kinds whose values convert into each other on Decode: any integer into any
// integer that holds the value, either float into either float, either complex into either.
func (k vkind) class() vkind {
	switch {
	case k >= vInt8 && k <= vUint:
		return vInt64
	case k == vFloat32 || k == vFloat64:
		return vFloat64
	case k == vComplex64 || k == vComplex128:
		return vComplex128
	}
	return k
}

// scalar reports whether the kind holds no other value: numbers, bools, strings, entities.
func (k vkind) scalar() bool { return k >= vBool && k <= vString || k == vEntity }

// nilable reports whether the wire form of the kind can be nil.
func (k vkind) nilable() bool {
	switch k {
	case vPointer, vSlice, vBytes, vMap, vInterface, vMsgpack, vMsgpackRaw:
		return true
	}
	return false
}

// vplan says how values of one Go type are encoded and decoded.
type vplan struct {
	kind    vkind
	typ     reflect.Type
	size    uintptr
	elem    *vplan // array, slice, pointer: element; map: value
	key     *vplan // map key
	length  int    // arrays
	fields  []vfield
	byName  map[string]int // field index by key, structs
	minSize int            // fewest bytes the wire form of a value takes (bounds allocations on Decode)
	flat    bool           // a struct of numbers, bools, strings and entities only: fast paths
	header  []byte         // structs: the msgpack map head of the wire form
	keyOK   bool           // a map key of this type comes back equal (no pointers inside); interfaces: checked per value
}

type vfield struct {
	name   string // key in the wire form
	key    []byte // name, msgpack-encoded
	offset uintptr
	plan   *vplan
}

var (
	timeType              = reflect.TypeFor[time.Time]()
	customEncoderType     = reflect.TypeFor[msgpack.CustomEncoder]()
	customDecoderType     = reflect.TypeFor[msgpack.CustomDecoder]()
	msgpackMarshalerType  = reflect.TypeFor[msgpack.Marshaler]()
	msgpackUnmarshalType  = reflect.TypeFor[msgpack.Unmarshaler]()
	binaryMarshalerType   = reflect.TypeFor[encoding.BinaryMarshaler]()
	binaryUnmarshalerType = reflect.TypeFor[encoding.BinaryUnmarshaler]()
)

// typeError is why a type cannot be saved, with the path to the field to blame.
type typeError struct {
	path []string // innermost last once complete; built from the inside out
	typ  reflect.Type
	why  string
}

func (e *typeError) at(step string) *typeError {
	e.path = append(e.path, step)
	return e
}

// describe renders "field Enemy.AI.target (chan int): why" for the root type root.
func (e *typeError) describe(root reflect.Type) string {
	var b strings.Builder
	b.WriteString(shortName(root))
	for i := len(e.path) - 1; i >= 0; i-- {
		b.WriteString(e.path[i])
	}
	return fmt.Sprintf("%s (%v): %s", b.String(), e.typ, e.why)
}

// shortName is the type's name without its package path, for field paths.
func shortName(t reflect.Type) string {
	if t.Name() != "" {
		return t.Name()
	}
	return t.String()
}

type planEntry struct {
	plan *vplan
	err  *typeError
}

var plans sync.Map // reflect.Type -> *planEntry

// planOf returns the plan of t, or why t cannot be saved. Compiled once per type.
func planOf(t reflect.Type) (*vplan, *typeError) {
	if v, ok := plans.Load(t); ok {
		e := v.(*planEntry)
		return e.plan, e.err
	}
	c := planCompiler{seen: map[reflect.Type]*vplan{}}
	p, err := c.compile(t)
	if err == nil {
		setMinSizes(p, map[*vplan]bool{})
	} else {
		p = nil
	}
	v, _ := plans.LoadOrStore(t, &planEntry{plan: p, err: err})
	e := v.(*planEntry)
	return e.plan, e.err
}

type planCompiler struct {
	seen map[reflect.Type]*vplan
}

// ownEncoding returns the kind of a type that encodes itself, or 0. A method promoted from an
// embedded field does not count: it would save the embedded value alone.
func ownEncoding(t reflect.Type) vkind {
	if t.Kind() == reflect.Interface || t.Kind() == reflect.Pointer {
		return 0
	}
	pt := reflect.PointerTo(t)
	has := func(enc, dec reflect.Type) bool {
		if !(t.Implements(enc) || pt.Implements(enc)) || !pt.Implements(dec) {
			return false
		}
		if t.Kind() == reflect.Struct {
			for i := range t.NumField() {
				f := t.Field(i)
				if f.Anonymous && (f.Type.Implements(enc) || f.Type.Implements(dec) ||
					f.Type.Kind() != reflect.Pointer && reflect.PointerTo(f.Type).Implements(dec)) {
					return false
				}
			}
		}
		return true
	}
	switch {
	case has(customEncoderType, customDecoderType):
		return vMsgpack
	case has(msgpackMarshalerType, msgpackUnmarshalType):
		return vMsgpackRaw
	case has(binaryMarshalerType, binaryUnmarshalerType):
		return vBinary
	}
	return 0
}

func (c *planCompiler) compile(t reflect.Type) (*vplan, *typeError) {
	if p := c.seen[t]; p != nil {
		return p, nil
	}
	p := &vplan{typ: t, size: t.Size(), keyOK: true}
	c.seen[t] = p
	if compileOwn(p) {
		return p, nil
	}
	if why := copyLock(t); why != "" {
		return nil, &typeError{typ: t, why: why}
	}
	if k := t.Kind(); int(k) < len(leafKinds) && leafKinds[k] != 0 {
		p.kind = leafKinds[k] // an interface's keyOK is checked per value
		return p, nil
	}
	var err *typeError
	switch t.Kind() {
	case reflect.Array, reflect.Slice:
		err = c.compileSeq(p)
	case reflect.Map:
		err = c.compileMap(p)
	case reflect.Pointer:
		var elem *vplan
		if elem, err = c.compile(t.Elem()); err != nil {
			return nil, err.at("")
		}
		p.kind, p.elem, p.keyOK = vPointer, elem, false
	case reflect.Struct:
		if t.NumField() > 1<<15 {
			return nil, &typeError{typ: t, why: "more than 32768 fields"}
		}
		err = c.compileStruct(p)
	default:
		return nil, &typeError{typ: t, why: kindRefusal(t.Kind())}
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// leafKinds are the plan kinds of the Go kinds compile takes as they are (0: not one of them).
var leafKinds = [...]vkind{
	reflect.Bool: vBool,
	reflect.Int8: vInt8, reflect.Int16: vInt16, reflect.Int32: vInt32, reflect.Int64: vInt64, reflect.Int: vInt,
	reflect.Uint8: vUint8, reflect.Uint16: vUint16, reflect.Uint32: vUint32, reflect.Uint64: vUint64,
	reflect.Uint: vUint, reflect.Uintptr: vUint,
	reflect.Float32: vFloat32, reflect.Float64: vFloat64, reflect.Complex64: vComplex64, reflect.Complex128: vComplex128,
	reflect.String: vString, reflect.Interface: vInterface,
}

// kindRefusal says why a value of a Go kind that compile has no plan for cannot be saved.
func kindRefusal(k reflect.Kind) string {
	switch k {
	case reflect.Chan:
		return "a channel cannot be saved"
	case reflect.Func:
		return "a function cannot be saved"
	case reflect.UnsafePointer:
		return "an unsafe.Pointer cannot be saved"
	}
	return "its kind cannot be saved"
}

// compileOwn sets the kind of p when its type has a wire form of its own: ecs.Entity,
// time.Time, or an encoding of the type's own methods.
func compileOwn(p *vplan) bool {
	t := p.typ
	switch {
	case t == entityType:
		p.kind = vEntity
	case t == timeType:
		p.kind, p.keyOK = vTime, false // its *time.Location would differ after loading
	default:
		k := ownEncoding(t)
		if k == 0 {
			return false
		}
		p.kind, p.keyOK = k, !hasPointers(t) && t.Comparable()
	}
	return true
}

// compileSeq compiles the array or slice plan p.
func (c *planCompiler) compileSeq(p *vplan) *typeError {
	t := p.typ
	if t.Kind() == reflect.Array && t.Len() == 0 {
		// Nothing to save, whatever the element type.
		p.kind, p.elem = vArray, &vplan{kind: vStruct, typ: t.Elem(), byName: map[string]int{}, keyOK: true}
		return nil
	}
	elem, err := c.compile(t.Elem())
	if err != nil {
		return err.at("[]")
	}
	p.elem = elem
	byteElem := elem.kind == vUint8
	switch {
	case t.Kind() == reflect.Slice && byteElem:
		p.kind = vBytes
	case t.Kind() == reflect.Slice:
		p.kind = vSlice
	case byteElem:
		p.kind, p.length = vByteArray, t.Len()
	default:
		p.kind, p.length = vArray, t.Len()
	}
	p.keyOK = t.Kind() == reflect.Array && elem.keyOK
	return nil
}

// compileMap compiles the map plan p: its key must come back equal after loading.
func (c *planCompiler) compileMap(p *vplan) *typeError {
	t := p.typ
	key, err := c.compile(t.Key())
	if err != nil {
		return err.at("[key]")
	}
	if !key.keyOK {
		return (&typeError{typ: t.Key(), why: "a map key that holds a pointer (a string or slice inside is fine, a pointer, " +
			"time.Time or interface value holding a pointer is not) would not find its entry after loading"}).at("[key]")
	}
	elem, err := c.compile(t.Elem())
	if err != nil {
		return err.at("[value]")
	}
	p.kind, p.key, p.elem = vMap, key, elem
	return nil
}

// compileStruct compiles the fields of the struct plan p, every field, exported or not; blank
// fields are named "_" and their index.
func (c *planCompiler) compileStruct(p *vplan) *typeError {
	t := p.typ
	p.kind = vStruct
	p.byName = make(map[string]int, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		fp, err := c.compile(f.Type)
		if err != nil {
			return err.at("." + f.Name)
		}
		name := f.Name
		if name == "_" {
			name = "_" + strconv.Itoa(i)
		}
		p.fields = append(p.fields, vfield{name: name, key: appendStr(nil, name), offset: f.Offset, plan: fp})
		p.byName[name] = i
		p.keyOK = p.keyOK && fp.keyOK
	}
	p.header = appendMapLen(nil, len(p.fields))
	p.flat = true
	for i := range p.fields {
		p.flat = p.flat && p.fields[i].plan.kind.scalar()
	}
	return nil
}

// hasPointers reports whether a value of type t holds any kind of pointer.
func hasPointers(t reflect.Type) bool { return !isPOD(t) }

// setMinSizes computes the fewest bytes the wire form of each plan's values takes. Kinds that
// can be nil take one byte and end the recursion of recursive types.
func setMinSizes(p *vplan, done map[*vplan]bool) int {
	if done[p] {
		return p.minSize
	}
	done[p] = true
	p.minSize = 1
	switch p.kind {
	case vInt8, vUint8:
		p.minSize = 2
	case vInt16, vUint16:
		p.minSize = 3
	case vInt32, vUint32, vFloat32:
		p.minSize = 5
	case vInt64, vUint64, vFloat64:
		p.minSize = 9
	case vComplex64:
		p.minSize = 11
	case vComplex128:
		p.minSize = 19
	case vEntity:
		p.minSize = 10
	case vTime:
		p.minSize = 7
	case vByteArray:
		p.minSize = 2 + p.length
	case vArray:
		p.minSize = 1 + min(p.length, 1<<30)*min(setMinSizes(p.elem, done), 1<<20)
	case vStruct:
		for i := range p.fields {
			p.minSize += len(p.fields[i].key) + setMinSizes(p.fields[i].plan, done)
		}
	case vPointer, vSlice, vMap:
		for _, q := range []*vplan{p.elem, p.key} {
			if q != nil {
				setMinSizes(q, done)
			}
		}
	}
	return p.minSize
}
