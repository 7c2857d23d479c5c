package systems

import (
	"reflect"
	"sync"
	"unsafe"

	"github.com/mlange-42/ark/ecs"
)

var entityType = reflect.TypeFor[ecs.Entity]()

// patchRefs replaces every ecs.Entity value old inside the components of
// holder by new: a reference that a load could not resolve, now that its
// target is loaded. It reaches fields, nested structs, arrays, slices,
// pointers, interface values and map values; map keys and types with their
// own encoding keep what they hold (Resolve turns such a handle into the
// entity).
func (r *runner) patchRefs(holder, old, new ecs.Entity) {
	u := r.world.Unsafe()
	ids := u.IDs(holder)
	for i := range ids.Len() {
		id := ids.Get(i)
		info, ok := ecs.ComponentInfo(r.world, id)
		if !ok || !holdsEntities(info.Type) {
			continue
		}
		v := reflect.NewAt(info.Type, u.Get(holder, id)).Elem()
		replaceEntity(v, old, new, 0)
	}
}

var holdsCache sync.Map // reflect.Type -> bool

// holdsEntities reports whether values of t can hold an ecs.Entity.
func holdsEntities(t reflect.Type) bool {
	if v, ok := holdsCache.Load(t); ok {
		return v.(bool)
	}
	ok := holds(t, map[reflect.Type]bool{})
	holdsCache.Store(t, ok)
	return ok
}

func holds(t reflect.Type, seen map[reflect.Type]bool) bool {
	if t == entityType {
		return true
	}
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			if holds(t.Field(i).Type, seen) {
				return true
			}
		}
	case reflect.Array, reflect.Slice, reflect.Pointer:
		return holds(t.Elem(), seen)
	case reflect.Map:
		return holds(t.Elem(), seen)
	case reflect.Interface:
		return true
	}
	return false
}

// maxPatchDepth bounds the walk (a value the codec saved nests less deeply).
const maxPatchDepth = 1000

// writable returns v as a value that can be set, unexported fields
// included; v must be addressable.
func writable(v reflect.Value) reflect.Value {
	if v.CanSet() {
		return v
	}
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

// replaceEntity replaces old by new inside v (addressable) and reports
// whether it changed anything.
func replaceEntity(v reflect.Value, old, new ecs.Entity, depth int) bool {
	if depth > maxPatchDepth {
		return false
	}
	t := v.Type()
	if t == entityType {
		if *(*ecs.Entity)(unsafe.Pointer(v.UnsafeAddr())) == old {
			*(*ecs.Entity)(unsafe.Pointer(v.UnsafeAddr())) = new
			return true
		}
		return false
	}
	changed := false
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsEntities(t.Field(i).Type) {
				changed = replaceEntity(v.Field(i), old, new, depth+1) || changed
			}
		}
	case reflect.Array:
		if holdsEntities(t.Elem()) {
			for i := range v.Len() {
				changed = replaceEntity(v.Index(i), old, new, depth+1) || changed
			}
		}
	case reflect.Slice:
		if holdsEntities(t.Elem()) {
			for i := range v.Len() {
				changed = replaceEntity(v.Index(i), old, new, depth+1) || changed
			}
		}
	case reflect.Pointer:
		if !v.IsNil() && holdsEntities(t.Elem()) {
			changed = replaceEntity(v.Elem(), old, new, depth+1)
		}
	case reflect.Interface:
		if v.IsNil() || !holdsEntities(v.Elem().Type()) {
			return false
		}
		c := reflect.New(v.Elem().Type()).Elem()
		c.Set(v.Elem())
		if replaceEntity(c, old, new, depth+1) {
			writable(v).Set(c)
			changed = true
		}
	case reflect.Map:
		if v.IsNil() || !holdsEntities(t.Elem()) {
			return false
		}
		w := writable(v)
		val := reflect.New(t.Elem()).Elem()
		for it := v.MapRange(); it.Next(); {
			val.Set(it.Value())
			if replaceEntity(val, old, new, depth+1) {
				w.SetMapIndex(it.Key(), val)
				changed = true
			}
		}
	}
	return changed
}
