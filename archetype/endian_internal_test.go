package archetype

import (
	"bytes"
	"reflect"
	"testing"
	"unsafe"

	"github.com/mlange-42/ark/ecs"
)

// The swap layout comes from reflect's offsets and sizes: adjacent scalars of one width merge,
// single bytes and padding are left out, complex numbers are two floats, entities two uint32.
func TestSwapLayout(t *testing.T) {
	type padded struct {
		A int8
		B int64
		C [2]uint16
		D bool
		E ecs.Entity
		Z complex64
	}
	type vec struct{ X, Y, Z float64 }
	var p padded
	at := func(off uintptr) uint32 { return uint32(off) }
	cases := []struct {
		typ  reflect.Type
		want []swapRun
	}{
		// B sits at 8 on 64-bit hosts, at 4 on 32-bit ones.
		{reflect.TypeFor[padded](), []swapRun{{at(unsafe.Offsetof(p.B)), 8, 1}, {at(unsafe.Offsetof(p.C)), 2, 2}, {at(unsafe.Offsetof(p.E)), 4, 4}}},
		{reflect.TypeFor[vec](), []swapRun{{0, 8, 3}}},
		{reflect.TypeFor[[4]vec](), []swapRun{{0, 8, 12}}},
		{reflect.TypeFor[[2]struct {
			A uint8
			B uint16
		}](), []swapRun{{2, 2, 1}, {6, 2, 1}}},
		{reflect.TypeFor[[16]uint8](), nil},
		{reflect.TypeFor[struct{ B [0]int64 }](), nil},
	}
	for _, c := range cases {
		if got := swapLayout(c.typ); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v: got %v, want %v", c.typ, got, c.want)
		}
	}
}

// swapColumn reverses each scalar of each row and never touches padding.
func TestSwapColumnLeavesPadding(t *testing.T) {
	type row struct {
		A int8
		B uint32
		C uint16
	} // A @0, padding 1..3, B @4, C @8, padding 10..11
	runs := swapLayout(reflect.TypeFor[row]())
	col := bytes.Repeat([]byte{0x01, 0xAA, 0xAA, 0xAA, 0x10, 0x11, 0x12, 0x13, 0x20, 0x21, 0xAA, 0xAA}, 3)
	swapColumn(col, runs, 12)
	want := bytes.Repeat([]byte{0x01, 0xAA, 0xAA, 0xAA, 0x13, 0x12, 0x11, 0x10, 0x21, 0x20, 0xAA, 0xAA}, 3)
	if !bytes.Equal(col, want) {
		t.Errorf("got  % x\nwant % x", col, want)
	}
	swapColumn(col, runs, 12)
	if !bytes.Equal(col, bytes.Repeat([]byte{0x01, 0xAA, 0xAA, 0xAA, 0x10, 0x11, 0x12, 0x13, 0x20, 0x21, 0xAA, 0xAA}, 3)) {
		t.Errorf("swapping twice does not give the column back: % x", col)
	}
}
