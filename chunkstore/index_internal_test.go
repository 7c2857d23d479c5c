package chunkstore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// The index must behave exactly like a map through inserts, updates and
// deletions (backward shift included) and growth.
func TestIndexMatchesMap(t *testing.T) {
	for _, n := range []int{2, 3, 4} {
		t.Run(fmt.Sprint(n, " axes"), func(t *testing.T) { testIndexMatchesMap(t, n) })
	}
}

func testIndexMatchesMap(t *testing.T, axes int) {
	rng := rand.New(rand.NewPCG(1, uint64(axes)))
	ix := newIndexAxes(0, axes)
	ref := map[ikey]ival{}
	keys := make([]ikey, 3000)
	for i := range keys {
		// Clustered positions, as a world has, plus some far away; keys
		// that differ only in z or w must stay apart.
		var c [MaxAxes]int32
		for a := range axes {
			c[a] = int32(rng.IntN(12) - 6)
			if i%10 == 0 {
				c[a] = rng.Int32()
			}
		}
		keys[i] = Key{c: c, n: uint8(axes)}.ik()
	}
	for step := range 200000 {
		k := keys[rng.IntN(len(keys))]
		switch rng.IntN(3) {
		case 0, 1:
			v := ival{h: handle{Offset: int64(step) + dataStart, Length: uint32(step)}, typ: StorageType(step % 3)}
			old, had := ix.set(k, v)
			rold, rhad := ref[k]
			if had != rhad || old != rold {
				t.Fatalf("step %d: set returned %v %v, map had %v %v", step, old, had, rold, rhad)
			}
			ref[k] = v
		case 2:
			old, had := ix.del(k)
			rold, rhad := ref[k]
			if had != rhad || old != rold {
				t.Fatalf("step %d: del returned %v %v, map had %v %v", step, old, had, rold, rhad)
			}
			delete(ref, k)
		}
		if ix.Len() != len(ref) {
			t.Fatalf("step %d: %d entries, map %d", step, ix.Len(), len(ref))
		}
		if step%5000 == 0 {
			for _, k := range keys {
				v, ok := ix.get(k)
				rv, rok := ref[k]
				if ok != rok || v != rv {
					t.Fatalf("step %d: get %x = %v %v, map %v %v", step, k, v, ok, rv, rok)
				}
			}
		}
	}
	n := 0
	ix.each(func(k ikey, v ival) bool {
		n++
		if ref[k] != v {
			t.Fatalf("each: %x = %v, map %v", k, v, ref[k])
		}
		return true
	})
	if n != len(ref) {
		t.Fatalf("each saw %d of %d", n, len(ref))
	}
}

func TestIndexSlotsFor(t *testing.T) {
	for _, n := range []int{0, 1, 12, 13, 1000, 1 << 20} {
		s := slotsFor(n)
		if s&(s-1) != 0 || s*3 < n*4 || s < minIndexSlots {
			t.Fatalf("slotsFor(%d) = %d", n, s)
		}
	}
}

// radixSort sorts like slices.Sort, whatever bits the values use.
func TestRadixSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, n := range []int{0, 1, 255, 10_000, radixMin, 100_000} {
		for _, bits := range []uint{8, 40, 63, 64} {
			v := make([]uint64, n)
			for i := range v {
				v[i] = rng.Uint64() >> (64 - bits)
				if i%7 == 0 && i > 0 {
					v[i] = v[i-1] // duplicates
				}
			}
			want := slices.Clone(v)
			slices.Sort(want)
			if got := radixSort(v); !slices.Equal(got, want) {
				t.Fatalf("n %d, %d bits: not sorted", n, bits)
			}
		}
	}
}

// radixSortFrom sorts by the high bits only, stably.
func TestRadixSortFromIsStable(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, n := range []int{100, 100_000} {
		v := make([]uint64, n)
		for i := range v {
			v[i] = uint64(rng.IntN(50))<<32 | uint64(i)
		}
		got := radixSortFrom(v, 32)
		for i := 1; i < n; i++ {
			a, b := got[i-1], got[i]
			if a>>32 > b>>32 || a>>32 == b>>32 && uint32(a) > uint32(b) {
				t.Fatalf("n %d: %x before %x", n, a, b)
			}
		}
	}
}
