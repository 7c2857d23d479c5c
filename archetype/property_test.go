package archetype_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/internal/pecs"
	"github.com/mlange-42/ark/ecs"
)

var (
	propertySeed  = flag.Uint64("property.seed", 1, "first seed of TestRandomTypesRoundTripOrAreRefused")
	propertyCount = flag.Int("property.count", 2000, "worlds built by TestRandomTypesRoundTripOrAreRefused")
)

// TestRandomTypesRoundTripOrAreRefused builds worlds of random component and resource types
// (reflect.StructOf over every kind: sized numbers, strings, arrays, slices, maps, pointers,
// nested and embedded structs, interfaces, unexported fields, recursive types with cyclic
// values, and kinds that cannot be saved) holding random values. For each world, either Check
// refuses a type and Encode writes nothing, or Encode refuses a value (a cycle, an unregistered
// type behind an interface) and writes nothing, or the world comes back deep-equal. Never a panic.
// A failure names the seed; rerun it with -property.seed=N -property.count=1.
//
// Under -race the test is skipped: Ark turns a component's reflect.Type into a pointer through a
// uintptr, which the race detector's pointer checks reject for types made by reflect.StructOf.
// make test runs it once more without -race.
func TestRandomTypesRoundTripOrAreRefused(t *testing.T) {
	if raceEnabled {
		t.Skip("Ark's rtypePtr trips -race's checkptr on types made by reflect.StructOf; make test runs this test without -race")
	}
	counts := map[string]int{}
	for i := range *propertyCount {
		seed := *propertySeed + uint64(i)
		outcome := func() (outcome string) {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("seed %d: panic: %v", seed, p)
				}
			}()
			return propertyWorld(t, seed)
		}()
		if t.Failed() {
			t.Fatalf("seed %d failed (rerun with -property.seed=%d -property.count=1)", seed, seed)
		}
		counts[outcome]++
	}
	t.Logf("outcomes: %v", counts)
	if *propertyCount >= 100 && (counts["round trip"] < *propertyCount/3 || counts["type refused"] == 0 || counts["value refused"] == 0) {
		t.Errorf("the generator covers too little: %v", counts)
	}
}

// propertyWorld builds, saves and loads one random world, and says what happened.
func propertyWorld(t *testing.T, seed uint64) string {
	g := &typeGen{r: rand.New(rand.NewPCG(seed, 0x5eed))}
	w := ecs.NewWorld()
	target := w.NewEntity()
	g.entity = target
	var comps []reflect.Type
	var ids []ecs.ID
	names := map[string]bool{}
	for range 1 + g.r.IntN(3) {
		ct := g.structType(0)
		if names[ct.String()] {
			continue // the same type twice: types are matched by name
		}
		names[ct.String()] = true
		comps = append(comps, ct)
		ids = append(ids, ecs.TypeID(w, ct))
	}
	rt := g.structType(0)
	if names[rt.String()] {
		rt = reflect.TypeFor[Square]()
	}
	u := w.Unsafe()
	for k := range 1 + g.r.IntN(4) {
		n := 1 + g.r.IntN(len(ids))
		if k == 0 {
			n = len(ids) // every type is in use, so that Encode meets it
		}
		e := u.NewEntity(ids[:n]...)
		for j := range n {
			g.fill(reflect.NewAt(comps[j], u.Get(e, ids[j])).Elem(), 0)
		}
	}
	g.refusedType = false
	for _, ct := range append(comps, rt) {
		g.refusedType = g.refusedType || cannotSave(ct, map[reflect.Type]bool{})
	}
	rv := reflect.New(rt)
	g.fill(rv.Elem(), 0)
	w.Resources().Add(ecs.ResourceTypeID(w, rt), rv.Interface())
	// Whether a value cannot be saved, from the values that ended up in the world (a map entry
	// may have been overwritten).
	g.refusedValue = cannotSaveValue(rv.Elem(), map[uintptr]bool{})
	q := ecs.NewUnsafeFilter(w).Query()
	for q.Next() {
		for j, id := range ids {
			if q.Has(id) {
				g.refusedValue = g.refusedValue || cannotSaveValue(reflect.NewAt(comps[j], q.Get(id)).Elem(), map[uintptr]bool{})
			}
		}
	}

	prepare := func() *ecs.World {
		l := ecs.NewWorld()
		for _, ct := range comps {
			ecs.TypeID(l, ct)
		}
		l.Resources().Add(ecs.ResourceTypeID(l, rt), reflect.New(rt).Interface())
		return l
	}
	var buf bytes.Buffer
	if err := archetype.Check(w); err != nil {
		if !errors.Is(err, archetype.ErrUnsupportedType) {
			t.Errorf("seed %d: Check: want ErrUnsupportedType, got %v", seed, err)
		}
		if !g.refusedType {
			t.Errorf("seed %d: Check refused types the generator thought savable: %v", seed, err)
		}
		if err := archetype.Encode(&buf, w); !errors.Is(err, archetype.ErrUnsupportedType) || buf.Len() != 0 {
			t.Errorf("seed %d: Encode of a refused type: %v, %d bytes written", seed, err, buf.Len())
		}
		return "type refused"
	}
	if g.refusedType {
		t.Errorf("seed %d: Check accepted a type that cannot be saved: %v", seed, comps)
	}
	if err := archetype.Encode(&buf, w, archetype.Timestamp(testTime)); err != nil {
		if !errors.Is(err, archetype.ErrUnsupportedType) || buf.Len() != 0 {
			t.Errorf("seed %d: Encode: want ErrUnsupportedType and nothing written, got %v, %d bytes", seed, err, buf.Len())
		}
		if !g.refusedValue {
			t.Errorf("seed %d: Encode refused values the generator thought savable: %v", seed, err)
		}
		return "value refused"
	}
	if g.refusedValue {
		t.Errorf("seed %d: Encode accepted a value that cannot be saved", seed)
	}
	data := buf.Bytes()
	if _, err := pecs.ReadInfo(bytes.NewReader(data)); err != nil {
		t.Errorf("seed %d: ReadInfo: %v", seed, err)
	}
	loaded := prepare()
	if err := archetype.Decode(bytes.NewReader(data), loaded); err != nil {
		t.Errorf("seed %d: Decode: %v", seed, err)
		return "error"
	}
	expectSameWorld(t, w, loaded)
	// The JSON export holds everything: importing it gives the file back, byte for byte.
	var js, imported bytes.Buffer
	if err := archetype.ExportJSON(&js, bytes.NewReader(data)); err != nil {
		t.Errorf("seed %d: ExportJSON: %v", seed, err)
	} else if err := archetype.ImportJSON(&imported, &js); err != nil || !bytes.Equal(imported.Bytes(), data) {
		t.Errorf("seed %d: export then import: %v, %d bytes, want the same %d bytes", seed, err, imported.Len(), len(data))
	}
	var again bytes.Buffer
	if err := archetype.Encode(&again, loaded, archetype.Timestamp(testTime)); err != nil || !bytes.Equal(again.Bytes(), data) {
		t.Errorf("seed %d: encoding the loaded world again: %v, %d bytes, want the same %d bytes", seed, err, again.Len(), len(data))
	}
	return "round trip"
}

// cannotSave is the test's own account of the types that cannot be saved: a channel, function or
// unsafe.Pointer anywhere inside, or a map key with a pointer.
func cannotSave(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return true
	case reflect.Map:
		return t.Key().Kind() == reflect.Pointer || cannotSave(t.Key(), seen) || cannotSave(t.Elem(), seen)
	case reflect.Array, reflect.Slice, reflect.Pointer:
		return (t.Kind() != reflect.Array || t.Len() > 0) && cannotSave(t.Elem(), seen)
	case reflect.Struct:
		if t == reflect.TypeFor[time.Time]() {
			return false
		}
		for i := range t.NumField() {
			if cannotSave(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}

// cannotSaveValue is the test's own account of the values that cannot be saved: a pointer cycle,
// or a type behind an interface that nobody registered.
func cannotSaveValue(v reflect.Value, path map[uintptr]bool) bool {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return false
		}
		if path[v.Pointer()] {
			return true
		}
		path[v.Pointer()] = true
		defer delete(path, v.Pointer())
		return cannotSaveValue(v.Elem(), path)
	case reflect.Interface:
		if v.IsNil() {
			return false
		}
		if v.Elem().Type() == reflect.TypeFor[struct{ Unregistered int }]() {
			return true
		}
		return cannotSaveValue(v.Elem(), path)
	case reflect.Array, reflect.Slice:
		for i := range v.Len() {
			if cannotSaveValue(v.Index(i), path) {
				return true
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			if cannotSaveValue(it.Key(), path) || cannotSaveValue(it.Value(), path) {
				return true
			}
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			return false
		}
		for i := range v.NumField() {
			if cannotSaveValue(v.Field(i), path) {
				return true
			}
		}
	}
	return false
}

// Named types the generator uses among the unnamed ones.
type (
	PropLink struct {
		V    int16
		Next *PropLink
	}
	PropPair struct {
		A int32
		//lint:ignore U1000 an unexported field the codec keeps through reflection
		b string
	}
)

type typeGen struct {
	r            *rand.Rand
	entity       ecs.Entity
	refusedType  bool // a generated type cannot be saved
	refusedValue bool // a generated value cannot be saved
	fields       int
}

var (
	leafTypes = []reflect.Type{
		reflect.TypeFor[bool](), reflect.TypeFor[int](), reflect.TypeFor[int8](), reflect.TypeFor[int16](),
		reflect.TypeFor[int32](), reflect.TypeFor[int64](), reflect.TypeFor[uint](), reflect.TypeFor[uint8](),
		reflect.TypeFor[uint16](), reflect.TypeFor[uint32](), reflect.TypeFor[uint64](), reflect.TypeFor[uintptr](),
		reflect.TypeFor[float32](), reflect.TypeFor[float64](), reflect.TypeFor[complex64](), reflect.TypeFor[complex128](),
		reflect.TypeFor[string](), reflect.TypeFor[[]byte](), reflect.TypeFor[[3]byte](), reflect.TypeFor[time.Time](),
		reflect.TypeFor[time.Duration](), reflect.TypeFor[ecs.Entity](), reflect.TypeFor[any](), reflect.TypeFor[Shape](),
		reflect.TypeFor[rand.Source](), reflect.TypeFor[*PropLink](), reflect.TypeFor[PropPair](), reflect.TypeFor[Position](),
	}
	keyTypes = []reflect.Type{
		reflect.TypeFor[int](), reflect.TypeFor[string](), reflect.TypeFor[uint8](), reflect.TypeFor[[2]int16](),
		reflect.TypeFor[PropPair](), reflect.TypeFor[float64](), reflect.TypeFor[bool](),
	}
	refusedTypes = []reflect.Type{
		reflect.TypeFor[chan int](), reflect.TypeFor[func()](), reflect.TypeFor[unsafe.Pointer](), reflect.TypeFor[map[*int]int](),
	}
)

func (g *typeGen) typ(depth int) reflect.Type {
	r := g.r
	if g.r.IntN(60) == 0 {
		return refusedTypes[r.IntN(len(refusedTypes))]
	}
	if depth >= 3 || r.IntN(3) > 0 {
		return leafTypes[r.IntN(len(leafTypes))]
	}
	switch r.IntN(5) {
	case 0:
		return reflect.ArrayOf(r.IntN(4), g.typ(depth+1))
	case 1:
		return reflect.SliceOf(g.typ(depth + 1))
	case 2:
		return reflect.MapOf(keyTypes[r.IntN(len(keyTypes))], g.typ(depth+1))
	case 3:
		return reflect.PointerTo(g.typ(depth + 1))
	}
	return g.structType(depth + 1)
}

// structType builds a struct with exported, unexported and embedded fields.
func (g *typeGen) structType(depth int) reflect.Type {
	r := g.r
	var fields []reflect.StructField
	for i := range 1 + r.IntN(4) {
		g.fields++
		var f reflect.StructField
		switch r.IntN(4) {
		case 0:
			f = reflect.StructField{Name: fmt.Sprintf("f%d", g.fields), PkgPath: "example.com/game", Type: g.typ(depth)}
		case 1:
			if i == 0 && depth < 2 {
				emb := []reflect.Type{reflect.TypeFor[Position](), reflect.TypeFor[PropPair](), reflect.TypeFor[*Velocity]()}[r.IntN(3)]
				f = reflect.StructField{Name: emb.Name(), Type: emb, Anonymous: true}
				if emb.Kind() == reflect.Pointer {
					f.Name = emb.Elem().Name()
				}
				break
			}
			fallthrough
		default:
			f = reflect.StructField{Name: fmt.Sprintf("F%d", g.fields), Type: g.typ(depth)}
		}
		fields = append(fields, f)
	}
	return reflect.StructOf(fields)
}

// fill sets v (addressable, possibly unexported) to a random value.
func (g *typeGen) fill(v reflect.Value, depth int) {
	r := g.r
	v = reflect.NewAt(v.Type(), v.Addr().UnsafePointer()).Elem() // writable even when unexported
	t := v.Type()
	switch t {
	case reflect.TypeFor[time.Time]():
		zones := []*time.Location{time.UTC, time.FixedZone("ABC", 3600*r.IntN(12)), time.FixedZone("", -5400)}
		v.Set(reflect.ValueOf(time.Unix(r.Int64N(1<<35)-1<<34, r.Int64N(1e9)).In(zones[r.IntN(len(zones))])))
		return
	case reflect.TypeFor[ecs.Entity]():
		if r.IntN(2) == 0 {
			v.Set(reflect.ValueOf(g.entity))
		}
		return
	case reflect.TypeFor[*PropLink]():
		var head *PropLink
		for i := range r.IntN(4) {
			head = &PropLink{V: int16(i), Next: head}
		}
		if head != nil && r.IntN(8) == 0 {
			head.Next = head
		}
		v.Set(reflect.ValueOf(head))
		return
	}
	switch t.Kind() {
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(r.Uint64()) >> (64 - 8*t.Size()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		v.SetUint(r.Uint64() >> (64 - 8*t.Size()))
	case reflect.Float32, reflect.Float64:
		v.SetFloat([]float64{0, math.Copysign(0, -1), r.NormFloat64() * 1e6, math.Inf(1), math.MaxFloat32}[r.IntN(5)])
	case reflect.Complex64, reflect.Complex128:
		v.SetComplex(complex(r.NormFloat64(), r.NormFloat64()))
	case reflect.String:
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		v.SetString(string(b))
	case reflect.Array:
		for i := range v.Len() {
			g.fill(v.Index(i), depth+1)
		}
	case reflect.Slice:
		if r.IntN(5) == 0 {
			return // nil
		}
		s := reflect.MakeSlice(t, r.IntN(4), r.IntN(4)+4)
		for i := range s.Len() {
			g.fill(s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Map:
		if t.Key().Kind() == reflect.Pointer {
			v.Set(reflect.MakeMap(t))
			return
		}
		if r.IntN(5) == 0 {
			return
		}
		m := reflect.MakeMap(t)
		for range r.IntN(4) {
			k, e := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
			g.fill(k, depth+1)
			g.fill(e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Pointer:
		if r.IntN(4) == 0 {
			return
		}
		p := reflect.New(t.Elem())
		g.fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			g.fill(v.Field(i), depth+1)
		}
	case reflect.Interface:
		if r.IntN(5) == 0 {
			return
		}
		var choices []any
		switch t {
		case reflect.TypeFor[Shape]():
			choices = []any{Square{Side: r.Float64()}, &Circle{R: 2, label: "c"}, (*Circle)(nil)}
		case reflect.TypeFor[rand.Source]():
			choices = []any{rand.NewPCG(r.Uint64(), 3), rand.NewChaCha8([32]byte{byte(r.UintN(256))})}
		default:
			choices = []any{r.IntN(100), "s", []int{1, 2}, map[string]float64{"k": 1}, Square{Side: 1}, int8(-1),
				[]any{nil, uint32(3)}, time.Minute, struct{ Unregistered int }{1}}
		}
		c := choices[r.IntN(len(choices))]
		v.Set(reflect.ValueOf(c))
	case reflect.Chan, reflect.Func, reflect.UnsafePointer:
		// left nil: the type is refused anyway
	}
}
