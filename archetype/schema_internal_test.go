package archetype

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"unsafe"

	"github.com/mlange-42/ark/ecs"
)

type schemaProbe struct {
	A    int8
	B    [2]struct{ X, Y uint16 }
	E    ecs.Entity
	F    float32
	C    complex128
	Flag bool
	U    uint
	I    int
}

func TestSchemaRoundTrip(t *testing.T) {
	info := infoOf(reflect.TypeFor[schemaProbe]())
	if !info.raw {
		t.Fatal("schemaProbe is plain-old-data")
	}
	n, err := parseSchema(info.schema, info.size)
	if err != nil {
		t.Fatal(err)
	}
	v := schemaProbe{A: -3, B: [2]struct{ X, Y uint16 }{{1, 2}, {3, 4}}, E: entityOf(slot{5, 6}), F: 1.5, C: complex(2, -1), Flag: true, U: 7, I: -8}
	data := unsafe.Slice((*byte)(unsafe.Pointer(&v)), unsafe.Sizeof(v))
	got := n.value(data).(map[string]any)
	want := map[string]any{
		"A": int64(-3),
		"B": []any{map[string]any{"X": uint64(1), "Y": uint64(2)}, map[string]any{"X": uint64(3), "Y": uint64(4)}},
		"E": entityOf(slot{5, 6}), "F": 1.5, "C": complex(2, -1), "Flag": true, "U": uint64(7), "I": int64(-8),
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("value:\nwant %#v\n got %#v", want, got)
	}
	json := string(n.appendJSON(nil, data))
	wantJSON := `{"A":-3,"B":[{"X":1,"Y":2},{"X":3,"Y":4}],"E":[5,6],"F":1.5,"C":[2,-1],"Flag":true,"U":7,"I":-8}`
	if json != wantJSON {
		t.Errorf("JSON:\nwant %s\n got %s", wantJSON, json)
	}
	if s := n.String(); s == "" {
		t.Error("empty layout string")
	}
}

func TestSchemaNonFiniteFloats(t *testing.T) {
	type F struct{ A, B, C float64 }
	info := infoOf(reflect.TypeFor[F]())
	n, _ := parseSchema(info.schema, info.size)
	v := F{math.NaN(), math.Inf(1), math.Inf(-1)}
	got := string(n.appendJSON(nil, unsafe.Slice((*byte)(unsafe.Pointer(&v)), unsafe.Sizeof(v))))
	if want := `{"A":"NaN","B":"+Inf","C":"-Inf"}`; got != want {
		t.Errorf("want %s, got %s", want, got)
	}
}

func TestNotPlainOldData(t *testing.T) {
	for _, tp := range []reflect.Type{
		reflect.TypeFor[struct{ S string }](), reflect.TypeFor[struct{ P *int }](),
		reflect.TypeFor[struct{ M map[int]int }](), reflect.TypeFor[[2][]int](),
		reflect.TypeFor[struct{ I any }](), reflect.TypeFor[struct{ F func() }](),
		reflect.TypeFor[struct{ U unsafe.Pointer }](), reflect.TypeFor[struct{ C chan int }](),
	} {
		if infoOf(tp).raw {
			t.Errorf("%v is not plain-old-data", tp)
		}
	}
	if !infoOf(reflect.TypeFor[struct{}]()).zero {
		t.Error("struct{} is zero-sized")
	}
}

func TestParseSchemaRejects(t *testing.T) {
	var b writeBuf
	cases := map[string][]byte{
		"empty":          {},
		"unknown kind":   {99},
		"trailing bytes": {kindInt32, 0},
		"field outside": func() []byte {
			b = nil
			b.u8(kindStruct)
			b.u32(4)
			b.u16(1)
			b.str16("X")
			b.u32(2)
			b.u8(kindInt32)
			return b
		}(),
		"huge field count": func() []byte {
			b = nil
			b.u8(kindStruct)
			b.u32(4)
			b.u16(65535)
			return b
		}(),
		"array too large": func() []byte {
			b = nil
			b.u8(kindArray)
			b.u32(math.MaxUint32)
			b.u8(kindInt64)
			return b
		}(),
		"many empty elements": func() []byte {
			b = nil
			b.u8(kindArray)
			b.u32(1 << 30)
			b.u8(kindStruct)
			b.u32(0)
			b.u16(0)
			return b
		}(),
		"nested empty arrays": func() []byte {
			b = nil
			b.u8(kindStruct)
			b.u32(4)
			b.u16(2)
			b.str16("A")
			b.u32(0)
			for range 3 {
				b.u8(kindArray)
				b.u32(1 << 16)
			}
			b.u8(kindStruct)
			b.u32(0)
			b.u16(0)
			b.str16("B")
			b.u32(0)
			b.u8(kindInt32)
			return b
		}(),
		"too deep": func() []byte {
			b = nil
			for range maxSchemaDepth + 2 {
				b.u8(kindArray)
				b.u32(1)
			}
			b.u8(kindInt8)
			return b
		}(),
	}
	for name, schema := range cases {
		if _, err := parseSchema(schema, 4); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := parseSchema([]byte{kindInt32}, 8); !errors.Is(err, errSchema) {
		t.Errorf("size mismatch: got %v", err)
	}
}

// relayoutRuns copies between layouts of the same fields and refuses any other difference:
// a kind, a name, a field more, an array's length.
func TestRelayoutRuns(t *testing.T) {
	node := func(typ reflect.Type) *schemaNode {
		t.Helper()
		b, ok := appendSchema(nil, typ, 0)
		n, err := parseSchema(b, uint32(typ.Size()))
		if !ok || err != nil {
			t.Fatalf("%v: schema %v, %v", typ, ok, err)
		}
		return n
	}
	type (
		wide struct {
			A int32
			_ [4]byte
			B float64
		}
		plain struct {
			A int32
			B float64
		}
		renamed struct {
			A int32
			C float64
		}
		narrow struct {
			A int32
			B float32
		}
		arr3 struct{ V [3]plain }
		arr2 struct{ V [2]plain }
	)
	same := []copyRun{{0, 0, 4}, {8, 8, 12}, {24, 24, 12}, {40, 40, 8}} // the fields without padding, adjacent ones merged
	if unsafe.Offsetof(plain{}.B) == 4 {
		same = []copyRun{{0, 0, 36}} // a 32-bit host's: no padding
	}
	if runs, ok := relayoutRuns(node(reflect.TypeFor[arr3]()), node(reflect.TypeFor[arr3]())); !ok || !reflect.DeepEqual(runs, same) {
		t.Errorf("the same layout: %v %v, want %v", runs, ok, same)
	}
	for _, c := range []struct{ a, b reflect.Type }{
		{reflect.TypeFor[wide](), reflect.TypeFor[plain]()},
		{reflect.TypeFor[plain](), reflect.TypeFor[renamed]()},
		{reflect.TypeFor[plain](), reflect.TypeFor[narrow]()},
		{reflect.TypeFor[arr3](), reflect.TypeFor[arr2]()},
	} {
		if runs, ok := relayoutRuns(node(c.a), node(c.b)); ok {
			t.Errorf("%v into %v: runs %v, want refused", c.a, c.b, runs)
		}
	}
	// A stored layout of a host that packs B right after A (at 4, as a 32-bit host does):
	// rows of 12 bytes.
	stored := &schemaNode{kind: kindStruct, size: 12, fields: []schemaField{
		{name: "A", offset: 0, node: &schemaNode{kind: kindInt32, size: 4}},
		{name: "B", offset: 4, node: &schemaNode{kind: kindFloat64, size: 8}},
	}}
	runs, ok := relayoutRuns(stored, node(reflect.TypeFor[plain]()))
	if !ok {
		t.Fatalf("packed layout refused")
	}
	data := []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0x40}
	got := make([]plain, 2)
	relayoutRows(data, 12, unsafe.Pointer(&got[0]), unsafe.Sizeof(plain{}), 2, runs)
	if got[0] != (plain{1, 1.5}) || got[1] != (plain{2, 2.5}) {
		t.Errorf("relaid rows: %+v", got)
	}
}
