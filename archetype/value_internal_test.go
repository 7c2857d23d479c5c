package archetype

import (
	"errors"
	"reflect"
	"testing"
)

// A value behind an interface names its type: a name the file does not list is damage, a listed
// one the program has not registered is ErrIncompatible (the file is fine, the program is not
// ready for it), a registered one resolves.
func TestConcreteTypesOfAFile(t *testing.T) {
	schema, ok := appendValueSchema(nil, mustPlan(t, fzSquare{}))
	if !ok {
		t.Fatal("no schema")
	}
	vs, err := parseValueSchema(schema)
	if err != nil {
		t.Fatal(err)
	}
	square, _ := concreteName(typeOf(fzSquare{}))
	c := newFileConcretes([]fileType{
		{name: "example.com/gone.Ghost", flags: TypeConcrete, vs: vs},
		{name: square, flags: TypeConcrete, vs: vs},
	})
	if _, _, err := c.concrete("example.com/other.Type"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("a name the file does not list: want ErrCorrupt, got %v", err)
	}
	if _, _, err := c.concrete("example.com/gone.Ghost"); !errors.Is(err, ErrIncompatible) || errors.Is(err, ErrCorrupt) {
		t.Errorf("an unregistered type: want ErrIncompatible, got %v", err)
	}
	if typ, p, err := c.concrete(square); err != nil || typ != typeOf(fzSquare{}) || p == nil {
		t.Errorf("a registered type: %v, %v", typ, err)
	}
}

func typeOf(v any) reflect.Type { return reflect.TypeOf(v) }

func mustPlan(t *testing.T, v any) *vplan {
	t.Helper()
	p, err := planOf(typeOf(v))
	if err != nil {
		t.Fatal(err.why)
	}
	return p
}
