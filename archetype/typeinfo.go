package archetype

import (
	"hash/fnv"
	"math"
	"reflect"
	"sync"

	"github.com/mlange-42/ark/ecs"
)

// Versioned is implemented by component and resource types that carry a type version.
// The version is stored in the type registry; when a file's version differs from the
// registered type's, [Decode] needs a [Migrate] function. Types without the method have
// version 0 unless [TypeVersion] says otherwise. The method is called on a zero value.
type Versioned interface {
	PECSVersion() uint32
}

var (
	versionedType = reflect.TypeFor[Versioned]()
	entityType    = reflect.TypeFor[ecs.Entity]()
)

// typeInfo is what the codec knows about a Go type, computed once per type.
type typeInfo struct {
	typ     reflect.Type
	name    string           // full name: package path and type name
	id      [typeIDSize]byte // FNV-1a 128 of name
	size    uint32           // memory size in bytes
	raw     bool             // plain-old-data: columns are copied as raw memory
	zero    bool             // zero-sized
	schema  []byte           // layout of raw types
	swaps   []swapRun        // raw types: the multi-byte scalars a big-endian host swaps
	version uint32           // from PECSVersion, 0 without it
}

var typeCache sync.Map // reflect.Type -> *typeInfo

// infoOf returns the cached description of t.
func infoOf(t reflect.Type) *typeInfo {
	if v, ok := typeCache.Load(t); ok {
		return v.(*typeInfo)
	}
	info := &typeInfo{
		typ:  t,
		name: typeName(t),
		zero: t.Size() == 0,
	}
	info.id = typeID(info.name)
	if t.Size() <= math.MaxUint32 {
		info.size = uint32(t.Size())
		if !info.zero && isPOD(t) && !holdsLock(t) {
			// A type whose schema a reader would refuse is written through msgpack.
			if schema, ok := appendSchema(nil, t, 0); ok && len(schema) <= maxSchemaLen {
				if _, err := parseSchema(schema, info.size); err == nil {
					info.raw = true
					info.schema = schema
					info.swaps = swapLayout(t)
				}
			}
		}
	}
	if reflect.PointerTo(t).Implements(versionedType) {
		info.version = reflect.New(t).Interface().(Versioned).PECSVersion()
	}
	v, _ := typeCache.LoadOrStore(t, info)
	return v.(*typeInfo)
}

// typeName returns the full name that identifies a type in a file: package path and name
// for named types (generic instantiations included), the type literal for others.
func typeName(t reflect.Type) string {
	if t.Name() != "" && t.PkgPath() != "" {
		return t.PkgPath() + "." + t.Name()
	}
	return t.String()
}

// typeID hashes a full type name with FNV-1a 128.
func typeID(name string) [typeIDSize]byte {
	h := fnv.New128a()
	_, _ = h.Write([]byte(name))
	var id [typeIDSize]byte
	h.Sum(id[:0])
	return id
}

// isPOD reports whether t holds no pointers of any kind (pointers, strings, slices, maps,
// interfaces, channels, functions), so that its memory can be copied as bytes.
func isPOD(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	case reflect.Array:
		return isPOD(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !isPOD(t.Field(i).Type) {
				return false
			}
		}
		return true
	default:
		return false
	}
}
