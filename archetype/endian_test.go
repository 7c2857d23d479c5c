package archetype_test

import (
	"bytes"
	"reflect"
	"slices"
	"testing"

	"github.com/arksave/arksave/archetype"
	"github.com/mlange-42/ark/ecs"
)

// AllKinds is plain-old-data with a field of every scalar kind, nested arrays and structs,
// entities, and padding between fields and inside array elements.
type AllKinds struct {
	B    bool
	I8   int8
	I16  int16
	I32  int32
	I64  int64
	I    int
	U8   uint8
	U16  uint16
	U32  uint32
	U64  uint64
	U    uint
	P    uintptr
	F32  float32
	F64  float64
	C64  complex64
	C128 complex128
	E    ecs.Entity
	Arr  [3]struct {
		A int8
		B uint32
	}
	Mat [2][2]int16
	In  Target
}

// Values wider than 32 bits for int and uint fields: a 32-bit host keeps their low bits.
var wideI, wideU = int64(-5 << 33), uint64(1 << 60)

// swapWorld is the rich world plus entities of every plain-old-data kind.
func swapWorld() *ecs.World {
	w := richWorld()
	ecs.ComponentID[AllKinds](w)
	m := ecs.NewMap2[AllKinds, Position](w)
	parent := m.NewEntity(&AllKinds{}, &Position{})
	for i := range 9 {
		k := AllKinds{
			B: i%2 == 1, I8: -int8(i), I16: -300 * int16(i), I32: -70000 * int32(i), I64: -1 << (40 + i), I: int(wideI),
			U8: uint8(200 + i), U16: 0xBEEF, U32: 0xDEADBEEF - uint32(i), U64: 0x0123456789ABCDEF, U: uint(wideU), P: 0xABCD,
			F32: 1.5 + float32(i), F64: -2.25e100, C64: complex(3, -float32(i)), C128: complex(1e-300, 7),
			E: parent, Mat: [2][2]int16{{1, -2}, {0x1234, int16(i)}}, In: Target{E: parent, W: 0.125},
		}
		for j := range k.Arr {
			k.Arr[j].A, k.Arr[j].B = int8(j), 0x01020304*uint32(j+1)
		}
		m.NewEntity(&k, &Position{float64(i), 1e-9})
	}
	return w
}

func decodeSwapWorld(t *testing.T, data []byte) *ecs.World {
	t.Helper()
	w := ecs.NewWorld()
	registerAll(w)
	ecs.ComponentID[AllKinds](w)
	expectNoError(t, archetype.Decode(bytes.NewReader(data), w), "Decode")
	return w
}

// The same save opens on any machine: a big-endian host's path (swap on Encode, swap on Decode),
// run on this machine through the test hook, gives back the same world, every kind of component,
// the entity pool with dead and recycled slots, relations and resources included.
func TestByteSwapPathRoundTrip(t *testing.T) {
	for name, opts := range map[string][]archetype.Option{"plain": nil, "lz4": {archetype.LZ4()}} {
		t.Run(name, func(t *testing.T) {
			archetype.ForceByteSwap(t)
			for _, want := range []*ecs.World{swapWorld(), valueWorld()} {
				got := decodeSwapWorld(t, encode(t, want, opts...))
				expectSameWorld(t, want, got)
			}
		})
	}
}

// A file written on the swap path is the byte-swapped image of the little-endian file: every
// multi-byte scalar of the raw columns and of the entity pool reversed, as a reference swap
// written here independently (reflect, field by field) says, and everything else the same.
func TestByteSwapPathWritesTheSwappedImage(t *testing.T) {
	w := swapWorld()
	types := map[string]reflect.Type{}
	for _, id := range ecs.ComponentIDs(w) {
		info, _ := ecs.ComponentInfo(w, id)
		types[info.Type.PkgPath()+"."+info.Type.Name()] = info.Type
	}
	for name, opts := range map[string][]archetype.Option{"plain": nil, "lz4": {archetype.LZ4()}} {
		t.Run(name, func(t *testing.T) {
			little := encode(t, w, opts...)
			slotsLE, aliveLE, colsLE := archetype.StoredSections(t, little, false)

			archetype.ForceByteSwap(t)
			swapped := encode(t, w, opts...)
			slotsBE, aliveBE, colsBE := archetype.StoredSections(t, swapped, true)

			expectBytes(t, refSwapWords(slotsLE, 4), slotsBE, "pool slots")
			expectBytes(t, refSwapWords(aliveLE, 4), aliveBE, "pool alive ids")
			expectEqual(t, len(colsLE), len(colsBE), "columns")
			raw := 0
			for i := range min(len(colsLE), len(colsBE)) {
				le, be := colsLE[i], colsBE[i]
				what := "table " + string(rune('0'+le.Table)) + " column " + le.Type
				if !le.Raw {
					expectBytes(t, le.Data, be.Data, what+" (msgpack)")
					continue
				}
				typ := types[le.Type]
				if typ == nil {
					t.Fatalf("%s: no Go type", what)
				}
				raw++
				expectBytes(t, refSwapColumn(le.Data, typ), be.Data, what)
				if typ == reflect.TypeFor[AllKinds]() && bytes.Equal(le.Data, be.Data) {
					t.Errorf("%s: nothing was swapped", what)
				}
			}
			if raw < 5 {
				t.Errorf("only %d raw columns compared", raw)
			}
		})
	}
}

// refSwapColumn reverses the bytes of every multi-byte scalar of each value of type t in a copy
// of data, walking the type with reflect: the reference the codec's swap is checked against.
func refSwapColumn(data []byte, t reflect.Type) []byte {
	out := bytes.Clone(data)
	size := int(t.Size())
	for off := 0; off+size <= len(out); off += size {
		refSwapValue(out[off:off+size], t)
	}
	return out
}

func refSwapValue(b []byte, t reflect.Type) {
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			refSwapValue(b[f.Offset:f.Offset+f.Type.Size()], f.Type)
		}
	case reflect.Array:
		es := t.Elem().Size()
		for i := range uintptr(t.Len()) {
			refSwapValue(b[i*es:(i+1)*es], t.Elem())
		}
	case reflect.Complex64, reflect.Complex128:
		half := t.Size() / 2
		slices.Reverse(b[:half])
		slices.Reverse(b[half : 2*half])
	default:
		slices.Reverse(b[:t.Size()])
	}
}

func refSwapWords(data []byte, width int) []byte {
	out := bytes.Clone(data)
	for i := 0; i+width <= len(out); i += width {
		slices.Reverse(out[i : i+width])
	}
	return out
}

// Entity sections and compact pools take the big-endian host's path too: written and read on
// the swap path they give back what the little-endian path gives, and their raw columns and
// pool words are stored swapped (the file differs from the little-endian one).
func TestByteSwapPathSectionsAndCompactPool(t *testing.T) {
	fx := newSectionFixture()
	little := appendSection(t, fx)
	w := swapWorld()
	compactLE := encode(t, w, archetype.CompactPool())
	t.Run("section", func(t *testing.T) {
		archetype.ForceByteSwap(t)
		swapped := appendSection(t, fx)
		if bytes.Equal(little, swapped) {
			t.Fatal("the swap path wrote the little-endian bytes")
		}
		read := func(data []byte) []ecs.Entity {
			dst := ecs.NewWorld()
			registerAll(dst)
			got, err := archetype.DecodeEntities(data, dst)
			expectNoError(t, err, "DecodeEntities")
			return got
		}
		got := read(swapped)
		expectEqual(t, len(fx.chosen), len(got), "entities created")
	})
	t.Run("section values", func(t *testing.T) {
		// Read back the little-endian way and the swapped way: every raw column the same.
		want := decodeSectionWorld(t, little)
		archetype.ForceByteSwap(t)
		got := decodeSectionWorld(t, appendSection(t, fx))
		expectSameWorld(t, want, got)
	})
	t.Run("compact pool", func(t *testing.T) {
		archetype.ForceByteSwap(t)
		compactBE := encode(t, w, archetype.CompactPool())
		if bytes.Equal(compactLE, compactBE) {
			t.Fatal("the swap path wrote the little-endian bytes")
		}
		expectSameWorld(t, w, decodeSwapWorld(t, compactBE))
	})
}

// decodeSectionWorld reads a section of the section fixture into a world of its own.
func decodeSectionWorld(t *testing.T, data []byte) *ecs.World {
	t.Helper()
	dst := ecs.NewWorld()
	registerAll(dst)
	_, err := archetype.DecodeEntities(data, dst)
	expectNoError(t, err, "DecodeEntities")
	return dst
}
