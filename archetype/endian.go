package archetype

import (
	"encoding/binary"
	"reflect"
)

// Byte order.
//
// The file is little-endian throughout. Raw columns and the entity pool are copies of Go memory,
// which on a little-endian host already is the file's byte order: they go in and out as whole
// blocks. On a big-endian host every multi-byte scalar inside them is swapped on its way out
// (Encode copies the column, then swaps the copy) and on its way in (Decode reads the column
// into the world's memory, then swaps it there), field by field after the Go type's layout:
// reflect's offsets and sizes. Padding and single bytes are left as they are. Values stored as
// msgpack do not depend on the host: the value codec reads and writes each scalar by its type.

// hostBigEndian is true on big-endian hosts: raw memory then needs swapping. A variable, so that
// tests run the swap path on a little-endian machine.
var hostBigEndian = binary.NativeEndian.Uint16([]byte{0, 1}) == 1

// swapRun is count words of width bytes each (2, 4 or 8), back to back from offset off of a
// value: the multi-byte scalars of a type, in memory order.
type swapRun struct {
	off, width, count uint32
}

// swapLayout lists the multi-byte scalars of one value of the plain-old-data type t as runs:
// adjacent scalars of the same width merge into one run, so that a struct of float64 fields is
// a single run, and an array of such structs too.
func swapLayout(t reflect.Type) []swapRun {
	return appendSwaps(nil, t, 0)
}

func appendSwaps(runs []swapRun, t reflect.Type, off uint32) []swapRun {
	switch t.Kind() {
	case reflect.Array:
		n, es := uint32(t.Len()), uint32(t.Elem().Size())
		elem := appendSwaps(nil, t.Elem(), 0)
		if n == 0 || len(elem) == 0 {
			return runs
		}
		if len(elem) == 1 && elem[0].off == 0 && elem[0].width*elem[0].count == es {
			return addSwap(runs, swapRun{off: off, width: elem[0].width, count: elem[0].count * n})
		}
		for i := range n {
			for _, r := range elem {
				r.off += off + i*es
				runs = addSwap(runs, r)
			}
		}
		return runs
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			runs = appendSwaps(runs, f.Type, off+uint32(f.Offset))
		}
		return runs
	case reflect.Complex64, reflect.Complex128:
		return addSwap(runs, swapRun{off: off, width: uint32(t.Size() / 2), count: 2})
	}
	if size := uint32(t.Size()); size > 1 {
		return addSwap(runs, swapRun{off: off, width: size, count: 1})
	}
	return runs
}

// addSwap appends r, merged into the last run when it continues it.
func addSwap(runs []swapRun, r swapRun) []swapRun {
	if n := len(runs); n > 0 {
		last := &runs[n-1]
		if last.width == r.width && last.off+last.width*last.count == r.off {
			last.count += r.count
			return runs
		}
	}
	return append(runs, r)
}

// swapColumn reverses, in place, the bytes of every multi-byte scalar of the values of size bytes
// laid out back to back in b, as runs describes one value. Padding stays untouched.
func swapColumn(b []byte, runs []swapRun, size uintptr) {
	if len(runs) == 0 || size == 0 {
		return
	}
	if r := runs[0]; len(runs) == 1 && r.off == 0 && uintptr(r.width*r.count) == size {
		swapWords(b, r.width) // the whole column is one run
		return
	}
	for base := uintptr(0); base+size <= uintptr(len(b)); base += size {
		v := b[base : base+size]
		for _, r := range runs {
			swapWords(v[r.off:r.off+r.width*r.count], r.width)
		}
	}
}

// swapWords reverses the bytes of each word of width bytes in b.
func swapWords(b []byte, width uint32) {
	le, be := binary.LittleEndian, binary.BigEndian
	switch width {
	case 2:
		for ; len(b) >= 2; b = b[2:] {
			le.PutUint16(b, be.Uint16(b))
		}
	case 4:
		for ; len(b) >= 4; b = b[4:] {
			le.PutUint32(b, be.Uint32(b))
		}
	case 8:
		for ; len(b) >= 8; b = b[8:] {
			le.PutUint64(b, be.Uint64(b))
		}
	}
}

// swappedCopy returns a copy of b with each word of width bytes reversed: memory of a
// big-endian host on its way into the file.
func swappedCopy(b []byte, width uint32) []byte {
	c := append([]byte(nil), b...)
	swapWords(c, width)
	return c
}
