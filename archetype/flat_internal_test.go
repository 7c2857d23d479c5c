package archetype

import (
	"bytes"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"
)

type flatProbe struct {
	S   string
	B   bool
	F32 float32
	F64 float64
	I   int
	I8  int8
	I16 int16
	I32 int32
	I64 int64
	U   uint
	U8  uint8
	U16 uint16
	U32 uint32
	U64 uint64
}

// randomProbe draws values near every boundary of msgpack's encodings.
func randomProbe(r *rand.Rand) flatProbe {
	ints := []int64{0, 1, 31, 32, 127, 128, 255, 256, 65535, 65536, math.MaxUint32, math.MaxUint32 + 1, math.MaxInt64,
		-1, -32, -33, -128, -129, -32768, -32769, math.MinInt32, math.MinInt32 - 1, math.MinInt64}
	pick := func() int64 { return ints[r.IntN(len(ints))] + int64(r.IntN(3)) - 1 }
	lens := []int{0, 1, 31, 32, 255, 256, 65535, 65536}
	s := bytes.Repeat([]byte{'x'}, lens[r.IntN(len(lens))])
	return flatProbe{
		S: string(s), B: r.IntN(2) == 1, F32: float32(r.NormFloat64()), F64: r.NormFloat64(),
		I: int(pick()), I8: int8(pick()), I16: int16(pick()), I32: int32(pick()), I64: pick(),
		U: uint(pick()), U8: uint8(pick()), U16: uint16(pick()), U32: uint32(pick()), U64: uint64(pick()),
	}
}

// The flat codec writes exactly what msgpack writes and reads it back.
func TestFlatCodecMatchesMsgpack(t *testing.T) {
	c := flatCodecOf(reflect.TypeFor[flatProbe]())
	if c == nil {
		t.Fatal("flatProbe is flat")
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		v := randomProbe(r)
		var want bytes.Buffer
		if err := newMsgpackEncoder(&want).Encode(&v); err != nil {
			t.Fatal(err)
		}
		got := c.append(nil, unsafe.Pointer(&v))
		if !bytes.Equal(want.Bytes(), got) {
			t.Fatalf("%+v:\nmsgpack % x\n   flat % x", v, want.Bytes()[:min(64, want.Len())], got[:min(64, len(got))])
		}
		var back flatProbe
		n, ok := c.decode(got, unsafe.Pointer(&back))
		if !ok || n != len(got) || back != v {
			t.Fatalf("decode %+v: got %+v (%d bytes, ok %v)", v, back, n, ok)
		}
	}
}

// Other forms of the same value are left to msgpack, and nothing is written.
func TestFlatCodecRefusesOtherForms(t *testing.T) {
	type Two struct {
		A string
		B int32
	}
	c := flatCodecOf(reflect.TypeFor[Two]())
	forms := map[string]func(e *msgpack.Encoder){
		"swapped fields": func(e *msgpack.Encoder) {
			_ = e.EncodeMapLen(2)
			_ = e.EncodeString("B")
			_ = e.EncodeInt32(1)
			_ = e.EncodeString("A")
			_ = e.EncodeString("x")
		},
		"extra field": func(e *msgpack.Encoder) {
			_ = e.EncodeMapLen(3)
			_ = e.EncodeString("A")
			_ = e.EncodeString("x")
			_ = e.EncodeString("B")
			_ = e.EncodeInt32(1)
			_ = e.EncodeString("C")
			_ = e.EncodeInt32(1)
		},
		"compact int": func(e *msgpack.Encoder) {
			_ = e.EncodeMapLen(2)
			_ = e.EncodeString("A")
			_ = e.EncodeString("x")
			_ = e.EncodeString("B")
			_ = e.EncodeInt(1)
		},
		"as array": func(e *msgpack.Encoder) { _ = e.Encode([]any{"x", int32(1)}) },
		"nil":      func(e *msgpack.Encoder) { _ = e.EncodeNil() },
	}
	for name, write := range forms {
		var buf bytes.Buffer
		write(msgpack.NewEncoder(&buf))
		var v Two
		if _, ok := c.decode(buf.Bytes(), unsafe.Pointer(&v)); ok || v != (Two{}) {
			t.Errorf("%s: accepted (%+v)", name, v)
		}
	}

	// Decode falls back to msgpack for such rows.
	var data bytes.Buffer
	canonical := Two{A: "first", B: 5}
	data.Write(c.append(nil, unsafe.Pointer(&canonical)))
	forms["swapped fields"](msgpack.NewEncoder(&data))
	forms["compact int"](msgpack.NewEncoder(&data))
	rows := make([]Two, 3)
	d := &decoder{dec: newMsgpackDecoder(false), loose: newMsgpackDecoder(true)}
	if err := d.flatValues("test", infoOf(reflect.TypeFor[Two]()), data.Bytes(), unsafe.Pointer(&rows[0]), 3); err != nil {
		t.Fatal(err)
	}
	if want := []Two{canonical, {"x", 1}, {"x", 1}}; !reflect.DeepEqual(want, rows) {
		t.Errorf("fallback rows: want %+v, got %+v", want, rows)
	}
	for n := range 12 { // truncated canonical input
		v := Two{A: "hello", B: 7}
		full := c.append(nil, unsafe.Pointer(&v))
		var got Two
		if _, ok := c.decode(full[:n], unsafe.Pointer(&got)); ok {
			t.Errorf("truncated to %d bytes: accepted", n)
		}
	}
}

func TestFlatCodecEligibility(t *testing.T) {
	type (
		Named   string
		WithTag struct {
			A string `msgpack:"a"`
		}
		Hidden   struct{ a string }
		Nested   struct{ A struct{ B int8 } }
		WithNamd struct{ A Named }
		Embedded struct{ flatProbe }
		Timed    struct{ T time.Time }
		Slice    struct{ A []int }
	)
	for _, tp := range []reflect.Type{
		reflect.TypeFor[WithTag](), reflect.TypeFor[Hidden](), reflect.TypeFor[Nested](), reflect.TypeFor[WithNamd](),
		reflect.TypeFor[Embedded](), reflect.TypeFor[Timed](), reflect.TypeFor[Slice](), reflect.TypeFor[struct{}](),
		reflect.TypeFor[time.Time](), reflect.TypeFor[string](),
	} {
		if flatCodecOf(tp) != nil {
			t.Errorf("%v is not flat", tp)
		}
	}
}
