package chunkstore

import (
	"cmp"
	"fmt"
	"strings"
)

// Key is a chunk position of 2, 3 or 4 axes. The zero Key has no axes and
// is refused by every store. Keys are comparable and may be map keys.
// A 2-axis Key is what a [Pos] means: [Pos.Key] and [Key.Pos] convert.
type Key struct {
	c [MaxAxes]int32
	n uint8
}

// Key2 returns the key (x, y).
func Key2(x, y int32) Key { return Key{c: [MaxAxes]int32{x, y}, n: 2} }

// Key3 returns the key (x, y, z).
func Key3(x, y, z int32) Key { return Key{c: [MaxAxes]int32{x, y, z}, n: 3} }

// Key4 returns the key (x, y, z, w).
func Key4(x, y, z, w int32) Key { return Key{c: [MaxAxes]int32{x, y, z, w}, n: 4} }

// Axes returns the number of axes of k: 2, 3 or 4, or 0 for the zero Key.
func (k Key) Axes() int { return int(k.n) }

// Axis returns axis i of k (0 is x, 1 y, 2 z, 3 w); axes k does not have
// read as 0.
func (k Key) Axis(i int) int32 {
	if i < 0 || i >= int(k.n) {
		return 0
	}
	return k.c[i]
}

// Pos returns the first two axes of k.
func (k Key) Pos() Pos { return Pos{X: k.c[0], Y: k.c[1]} }

// String formats k as "(x, y)", "(x, y, z)" or "(x, y, z, w)".
func (k Key) String() string {
	var b strings.Builder
	b.WriteByte('(')
	for i := range int(k.n) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, k.c[i])
	}
	b.WriteByte(')')
	return b.String()
}

// Key returns p as a 2-axis Key.
func (p Pos) Key() Key { return Key2(p.X, p.Y) }

// ikey packs a key for the runtime index: lo holds x (high half) and y, hi
// z (high half) and w; a key of two axes has hi 0.
type ikey struct{ lo, hi uint64 }

func pack2(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

func (k Key) ik() ikey { return ikey{lo: pack2(k.c[0], k.c[1]), hi: pack2(k.c[2], k.c[3])} }

// keyOf returns the key of n axes that ik packs.
func keyOf(ik ikey, n int) Key {
	k := Key{n: uint8(n)}
	k.c[0], k.c[1] = int32(uint32(ik.lo>>32)), int32(uint32(ik.lo))
	if n > 2 {
		k.c[2], k.c[3] = int32(uint32(ik.hi>>32)), int32(uint32(ik.hi))
	}
	return k
}

// compareKeys orders keys as the page table does: by the last axis first,
// then the one before, down to x: (y, x) for two axes, (w, z, y, x) for four.
func compareKeys(a, b Key) int {
	for i := MaxAxes - 1; i >= 0; i-- {
		if c := cmp.Compare(a.c[i], b.c[i]); c != 0 {
			return c
		}
	}
	return 0
}

// recordKey is the key field of a chunk or body record: x then y,
// little-endian; axes beyond two follow the record's payload (see
// keyExtSize).
func (k Key) recordKey() uint64 { return uint64(uint32(k.c[0])) | uint64(uint32(k.c[1]))<<32 }

// keyExtSize is the number of key bytes a record of a store of n axes
// carries after its payload: 4 per axis beyond two.
func keyExtSize(n int) int { return 4 * (n - 2) }

// checkAxes returns an error unless k has the n axes of the store.
func checkAxes(k Key, n int, op string) error {
	if int(k.n) != n {
		return fmt.Errorf("%w: %s: key %v has %d axes, the store has %d", ErrAxes, op, k, k.n, n)
	}
	return nil
}

// Box is the set of chunk keys whose every axis i lies in [Min.Axis(i),
// Max.Axis(i)], both ends included; Min and Max have the store's axes.
type Box struct{ Min, Max Key }

// Contains reports whether k lies in b (keys of other axes never do).
func (b Box) Contains(k Key) bool {
	if k.n != b.Min.n || k.n != b.Max.n {
		return false
	}
	for i := range int(k.n) {
		if k.c[i] < b.Min.c[i] || k.c[i] > b.Max.c[i] {
			return false
		}
	}
	return true
}
