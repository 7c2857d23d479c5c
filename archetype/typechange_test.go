package archetype_test

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/arksave/arksave/archetype"
	"github.com/mlange-42/ark/ecs"
)

// Types of a game whose field types changed between save and load: each V1 is saved, then
// loaded as the V2 of the same name (archetype.Alias stands for the rename).
type (
	// Stored as msgpack: Name keeps them off the raw path.
	MeasureV1 struct {
		Name  string
		Value float64
		Phase complex128
		Trace []float64
	}
	MeasureV2 struct {
		Name  string
		Value float32
		Phase complex64
		Trace []float32
	}
)

// changeType saves one entity with value v1 and loads the file into a world that registers
// the component type of c in its place.
func changeType[V1 any](t *testing.T, v1 V1, c ecs.Comp) (*ecs.World, error) {
	t.Helper()
	w := ecs.NewWorld()
	ecs.NewMap1[V1](w).NewEntity(&v1)
	data := encode(t, w)
	got := ecs.NewWorld()
	ecs.TypeID(got, c.Type())
	old := ecs.C[V1]().Type()
	err := archetype.Decode(bytes.NewReader(data), got, archetype.Alias(old.PkgPath()+"."+old.Name(), c))
	return got, err
}

// A float64 field that became a float32 loads the values a float32 holds exactly (NaN,
// infinities and minus zero included) and refuses the others, as integers are refused when
// they do not fit: never 1e300 as +Inf or 0.1 rounded.
func TestNarrowedFloatLoadsOnlyExactValues(t *testing.T) {
	exact := []MeasureV1{
		{Value: 0.5, Phase: complex(-2, 0.25), Trace: []float64{1, -1.5, 65504}},
		{Value: math.Inf(1), Phase: complex(math.Inf(-1), 0)},
		{Value: math.Copysign(0, -1), Trace: []float64{math.MaxFloat32, math.SmallestNonzeroFloat32}},
		{Value: math.NaN(), Phase: complex(math.NaN(), 3)},
	}
	for _, v := range exact {
		got, err := changeType(t, v, ecs.C[MeasureV2]())
		if err != nil {
			t.Errorf("%v: want it loaded, got %v", v, err)
			continue
		}
		q := ecs.NewFilter1[MeasureV2](got).Query()
		for q.Next() {
			m := q.Get()
			if !sameFloat(float64(m.Value), v.Value) || !sameFloat(float64(real(m.Phase)), real(v.Phase)) ||
				!sameFloat(float64(imag(m.Phase)), imag(v.Phase)) || len(m.Trace) != len(v.Trace) {
				t.Errorf("loaded %v as %v", v, *m)
			}
			for i := range m.Trace {
				if !sameFloat(float64(m.Trace[i]), v.Trace[i]) {
					t.Errorf("Trace[%d]: loaded %v as %v", i, v.Trace[i], m.Trace[i])
				}
			}
		}
	}

	refused := []struct {
		v          MeasureV1
		path, text string
	}{
		{MeasureV1{Value: 1e300}, "MeasureV2.Value", "1e+300"},
		{MeasureV1{Value: 0.1}, "MeasureV2.Value", "0.1"},
		{MeasureV1{Value: -1e-300}, "MeasureV2.Value", "-1e-300"},
		{MeasureV1{Phase: complex(1, 0.1)}, "MeasureV2.Phase", "0.1"},
		{MeasureV1{Trace: []float64{1, 2, math.Pi}}, "MeasureV2.Trace[2]", "3.141592653589793"},
	}
	for _, tc := range refused {
		_, err := changeType(t, tc.v, ecs.C[MeasureV2]())
		if !errors.Is(err, archetype.ErrIncompatible) || errors.Is(err, archetype.ErrCorrupt) {
			t.Errorf("%v: want ErrIncompatible, got %v", tc.v, err)
			continue
		}
		for _, want := range []string{tc.path, tc.text, "float32"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%v: error lacks %q: %v", tc.v, want, err)
			}
		}
	}
}

// sameFloat reports whether two floats are the same number: NaN matches NaN, and minus zero
// only minus zero.
func sameFloat(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return a == b && math.Signbit(a) == math.Signbit(b)
}

// Plain-old-data types, stored as raw memory, whose fields changed type.
type (
	CounterV1 struct {
		N    int64
		Seen uint8
	}
	CounterV2 struct { // N became a string: no longer plain-old-data
		N    string
		Seen uint8
	}
	CounterV3 struct { // N became an int32: still plain-old-data
		N    int32
		Seen uint8
	}
	BodyV1 struct {
		Pos   struct{ X, Y float64 }
		Cells [4]uint16
	}
	BodyV2 struct {
		Pos   struct{ X, Y float32 }
		Cells [4]uint16
	}
	BodyV3 struct {
		Pos   struct{ X, Y float64 }
		Cells [4]int16
	}
	BodyV4 struct {
		Pos   struct{ X, Y float64 }
		Cells [5]uint16
	}
)

// A plain-old-data type whose field changed type is ErrIncompatible naming the type, the field
// and both types, whether the new type is still plain-old-data or not, as for types stored as
// msgpack; the world stays untouched.
func TestRawFieldTypeChangeNamesTheField(t *testing.T) {
	cases := []struct {
		load       func() (*ecs.World, error)
		path, kind string
	}{
		{func() (*ecs.World, error) { return changeType(t, CounterV1{N: 7}, ecs.C[CounterV2]()) }, "CounterV2.N", "string"},
		{func() (*ecs.World, error) { return changeType(t, CounterV1{N: 7}, ecs.C[CounterV3]()) }, "CounterV3.N", "int32"},
		{func() (*ecs.World, error) { return changeType(t, BodyV1{}, ecs.C[BodyV2]()) }, "BodyV2.Pos.X", "float32"},
		{func() (*ecs.World, error) { return changeType(t, BodyV1{}, ecs.C[BodyV3]()) }, "BodyV3.Cells[]", "int16"},
		{func() (*ecs.World, error) { return changeType(t, BodyV1{}, ecs.C[BodyV4]()) }, "BodyV4.Cells", "[5]uint16"},
	}
	for _, tc := range cases {
		got, err := tc.load()
		if !errors.Is(err, archetype.ErrIncompatible) || errors.Is(err, archetype.ErrVersion) || errors.Is(err, archetype.ErrCorrupt) {
			t.Errorf("%s: want ErrIncompatible alone, got %v", tc.path, err)
			continue
		}
		for _, want := range []string{tc.path + " (", tc.kind, "archetype.Migrate"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error lacks %q: %v", tc.path, want, err)
			}
		}
		expectEqual(t, 0, got.Stats().Entities.Total, tc.path+": entities after a refused load")
	}
}
