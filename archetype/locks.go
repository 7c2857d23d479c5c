package archetype

import (
	"fmt"
	"reflect"
)

// Values that must not be copied (go vet's copylocks) are refused, not saved: a sync.Mutex
// held while saving would load held, a sync.WaitGroup with a pending Add would load pending,
// and the loaded game would deadlock. Refused are the types of package sync (Mutex, RWMutex,
// WaitGroup, Once, Cond, Map, Pool), any other type whose pointer has Lock and Unlock methods
// (a game's own lock), and structs that hold a zero-sized such type as a "noCopy" marker, wherever
// they sit: in a field, embedded, behind a pointer, in an array, slice or map. The types of
// sync/atomic are plain data, read and written whole, and are saved with their values.

// copyLock says why a value of type t must not be saved, or "" when it may be. It looks at t
// alone; the plan compiler and holdsLock walk the types inside.
func copyLock(t reflect.Type) string {
	if t.Size() == 0 || t.PkgPath() == "sync/atomic" || t.Kind() == reflect.Interface || t.Kind() == reflect.Pointer {
		return ""
	}
	const keep = "; keep it outside the components and resources that are saved (in a system, or in a resource left out " +
		"with archetype.SkipResources), or hold a lock only inside a function"
	switch {
	case t.PkgPath() == "sync":
		return fmt.Sprintf("a %v must not be copied: saved while in use, it would load in use (a lock held, a WaitGroup "+
			"waiting) and the loaded game would deadlock%s", t, keep)
	case isLocker(t) && !promotesLock(t):
		return fmt.Sprintf("a lock (%v has Lock and Unlock methods) must not be copied: saved while held, it would load held%s", t, keep)
	case t.Kind() == reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.Type.Size() == 0 && f.Type.PkgPath() != "sync/atomic" && isLocker(f.Type) {
				return fmt.Sprintf("its field %s (%v) marks it as a value that must not be copied%s", f.Name, f.Type, keep)
			}
		}
	}
	return ""
}

// isLocker reports whether *t has the methods Lock() and Unlock(), as go vet's copylocks asks.
func isLocker(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	for _, name := range [...]string{"Lock", "Unlock"} {
		m, ok := pt.MethodByName(name)
		if !ok || m.Type.NumIn() != 1 || m.Type.NumOut() != 0 {
			return false
		}
	}
	return true
}

// promotesLock reports whether the struct t has its Lock method from an embedded field, which is
// then refused itself, under its own name.
func promotesLock(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	for i := range t.NumField() {
		f := t.Field(i)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && isLocker(ft) {
			return true
		}
	}
	return false
}

// holdsLock reports whether a plain-old-data type holds a value that must not be copied
// anywhere inside. Such a type is not copied as raw memory, so that its plan refuses it with
// the path to the field.
func holdsLock(t reflect.Type) bool {
	if copyLock(t) != "" {
		return true
	}
	switch t.Kind() {
	case reflect.Array:
		return holdsLock(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsLock(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}
