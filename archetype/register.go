package archetype

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Values behind interfaces (fields of type any, rand.Source, a game's own Shape, ...) are saved
// with the name of their concrete type, then the value itself. Decode turns the name back into
// the type, which must be known to the program: registered with [Register] or [RegisterName],
// one of the built-in types below, or a slice, array, map or pointer type built from such types.
//
// Built in, without registration: bool, int, int8-int64, uint, uint8-uint64, uintptr, float32,
// float64, complex64, complex128, string, any, time.Time, time.Duration, ecs.Entity, and
// math/rand/v2's PCG and ChaCha8 (so a rand.Source holding *rand.PCG or *rand.ChaCha8 is saved).
// []byte is "[]uint8", []any "[]interface {}", map[string]int "map[string]int".

var registry = struct {
	sync.RWMutex
	byName map[string]reflect.Type
	byType map[reflect.Type]string
}{byName: map[string]reflect.Type{}, byType: map[reflect.Type]string{}}

var builtinTypes = func() map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for _, t := range []reflect.Type{
		reflect.TypeFor[bool](), reflect.TypeFor[int](), reflect.TypeFor[int8](), reflect.TypeFor[int16](),
		reflect.TypeFor[int32](), reflect.TypeFor[int64](), reflect.TypeFor[uint](), reflect.TypeFor[uint8](),
		reflect.TypeFor[uint16](), reflect.TypeFor[uint32](), reflect.TypeFor[uint64](), reflect.TypeFor[uintptr](),
		reflect.TypeFor[float32](), reflect.TypeFor[float64](), reflect.TypeFor[complex64](), reflect.TypeFor[complex128](),
		reflect.TypeFor[string](), reflect.TypeFor[any](), timeType, reflect.TypeFor[time.Duration](), entityType,
		reflect.TypeFor[rand.PCG](), reflect.TypeFor[rand.ChaCha8](),
	} {
		m[typeName(t)] = t
	}
	return m
}()

// Register makes values of type T behind interfaces savable: Encode writes T's full name
// (package path and type name) before such a value, and Decode finds T by it. Call it once per
// type at start-up, before the first Encode or Decode that meets the type, for example in an
// init function. Slices, arrays, maps and pointers of registered types need no registration of
// their own.
//
// Panics if T's name is registered for another type (two types declared inside functions of one
// package can share a name): register one of them with [RegisterName].
func Register[T any]() { RegisterName[T](canonicalName(reflect.TypeFor[T]())) }

// RegisterName is [Register] with a name of the caller's choosing, for a type that was renamed or
// moved to another package since the saves were written (register the old name), or whose full
// name is not unique.
//
// Panics if the name is empty, or registered for another type, or T is registered under another
// name.
func RegisterName[T any](name string) {
	t := reflect.TypeFor[T]()
	if name == "" {
		panic("archetype: RegisterName with an empty name")
	}
	registry.Lock()
	defer registry.Unlock()
	if old, ok := registry.byName[name]; ok && old != t {
		panic(fmt.Sprintf("archetype: name %q is registered for %v, cannot register it for %v", name, old, t))
	}
	if old, ok := registry.byType[t]; ok && old != name {
		panic(fmt.Sprintf("archetype: type %v is registered as %q, cannot register it as %q", t, old, name))
	}
	registry.byName[name] = t
	registry.byType[t] = name
}

// canonicalName is the name of t in a file: the full name of named types, and for unnamed
// slices, arrays, maps and pointers one built from the names of their parts.
func canonicalName(t reflect.Type) string {
	if t.Name() != "" {
		return typeName(t)
	}
	switch t.Kind() {
	case reflect.Slice:
		return "[]" + concreteNameOr(t.Elem())
	case reflect.Array:
		return "[" + strconv.Itoa(t.Len()) + "]" + concreteNameOr(t.Elem())
	case reflect.Map:
		return "map[" + concreteNameOr(t.Key()) + "]" + concreteNameOr(t.Elem())
	case reflect.Pointer:
		return "*" + concreteNameOr(t.Elem())
	}
	return t.String()
}

func concreteNameOr(t reflect.Type) string {
	if n, ok := concreteName(t); ok {
		return n
	}
	return canonicalName(t)
}

// concreteName returns the name under which a value of type t behind an interface is saved, and
// false when Decode could not find t by any name.
func concreteName(t reflect.Type) (string, bool) {
	registry.RLock()
	n, ok := registry.byType[t]
	registry.RUnlock()
	if ok {
		return n, true
	}
	if t.Name() != "" {
		n := typeName(t)
		return n, builtinTypes[n] == t
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Pointer:
		if _, ok := concreteName(t.Elem()); !ok {
			return "", false
		}
	case reflect.Map:
		_, okk := concreteName(t.Key())
		_, oke := concreteName(t.Elem())
		if !okk || !oke {
			return "", false
		}
	case reflect.Interface:
		return t.String(), t == builtinTypes["interface {}"]
	default:
		return "", false
	}
	return canonicalName(t), true
}

// maxTypeNameDepth bounds the nesting of composite type names read from a file.
const maxTypeNameDepth = 32

// resolveName finds the type a name stands for: registered, built in, or composite.
func resolveName(name string) (reflect.Type, bool) {
	return resolveNameDepth(name, 0)
}

func resolveNameDepth(name string, depth int) (reflect.Type, bool) {
	if depth > maxTypeNameDepth || name == "" {
		return nil, false
	}
	registry.RLock()
	t, ok := registry.byName[name]
	registry.RUnlock()
	if ok {
		return t, true
	}
	if t, ok := builtinTypes[name]; ok {
		return t, true
	}
	switch {
	case strings.HasPrefix(name, "[]"):
		if e, ok := resolveNameDepth(name[2:], depth+1); ok {
			return reflect.SliceOf(e), true
		}
	case strings.HasPrefix(name, "*"):
		if e, ok := resolveNameDepth(name[1:], depth+1); ok {
			return reflect.PointerTo(e), true
		}
	case strings.HasPrefix(name, "["):
		end := strings.IndexByte(name, ']')
		n, err := strconv.Atoi(name[1:max(end, 1)])
		if end < 0 || err != nil || n < 0 || n > 1<<24 || strconv.Itoa(n) != name[1:end] {
			return nil, false
		}
		e, ok := resolveNameDepth(name[end+1:], depth+1)
		if !ok || e.Size() != 0 && uint64(n) > (1<<32)/uint64(e.Size()) {
			return nil, false
		}
		return reflect.ArrayOf(n, e), true
	case strings.HasPrefix(name, "map["):
		level, end := 1, -1
		for i := 4; i < len(name) && end < 0; i++ {
			switch name[i] {
			case '[':
				level++
			case ']':
				if level--; level == 0 {
					end = i
				}
			}
		}
		if end < 0 {
			return nil, false
		}
		k, okk := resolveNameDepth(name[4:end], depth+1)
		v, okv := resolveNameDepth(name[end+1:], depth+1)
		if !okk || !okv || !k.Comparable() {
			return nil, false
		}
		return reflect.MapOf(k, v), true
	}
	return nil, false
}
