package chunkstore

import (
	"math/bits"
	"unsafe"
)

// index is the runtime page table: an open-addressing hash table with
// linear probing and backward-shift deletion, keyed by ikey. A slot is
// 24 bytes and the table is at most 3/4 full, so it costs 32 to 64 bytes per
// stored chunk; a lookup hashes with one multiplication and usually touches
// one cache line. A store of 3 or 4 axes keeps the second half of every
// key (ikey.hi) in a parallel array, 8 bytes a slot more; one of 2 axes
// has none.
//
// index is not safe for concurrent use; Store guards it.
type index struct {
	slots []islot
	hi    []uint64 // ikey.hi per slot; nil in an index of 2-axis keys
	mask  uint64
	shift uint8 // 64 - log2(len(slots))
	count int
}

// ival is what the index holds for a position.
type ival struct {
	h   handle
	typ StorageType
}

type islot struct {
	key uint64 // ikey.lo
	off int64
	n   uint32
	typ uint8 // StorageType + 1; 0 marks a free slot
}

const minIndexSlots = 16

func newIndex(hint int) *index { return newIndexAxes(hint, 2) }

// newIndexAxes returns an index for keys of n axes sized for hint entries.
func newIndexAxes(hint, n int) *index {
	ix := &index{}
	if n > 2 {
		ix.hi = []uint64{}
	}
	ix.alloc(slotsFor(hint))
	return ix
}

// slotsFor returns the power-of-two slot count that holds n entries at most
// 3/4 full.
func slotsFor(n int) int {
	want := max(minIndexSlots, n+n/3+1)
	return 1 << bits.Len(uint(want-1))
}

func (ix *index) alloc(n int) {
	ix.slots = make([]islot, n)
	if ix.hi != nil {
		ix.hi = make([]uint64, n)
	}
	ix.mask = uint64(n - 1)
	ix.shift = uint8(64 - bits.TrailingZeros(uint(n)))
}

func (ix *index) home(key ikey) uint64 {
	return ((key.lo ^ key.hi*0xC2B2AE3D27D4EB4F) * 0x9E3779B97F4A7C15) >> ix.shift
}

// at reports whether slot i holds key.
func (ix *index) at(i uint64, key ikey) bool {
	return ix.slots[i].key == key.lo && (ix.hi == nil || ix.hi[i] == key.hi)
}

// keyAt returns the key in slot i.
func (ix *index) keyAt(i uint64) ikey {
	k := ikey{lo: ix.slots[i].key}
	if ix.hi != nil {
		k.hi = ix.hi[i]
	}
	return k
}

// move copies slot j to slot i.
func (ix *index) move(i, j uint64) {
	ix.slots[i] = ix.slots[j]
	if ix.hi != nil {
		ix.hi[i] = ix.hi[j]
	}
}

// Len returns the number of entries.
func (ix *index) Len() int { return ix.count }

func (ix *index) get(key ikey) (ival, bool) {
	for i := ix.home(key); ; i = (i + 1) & ix.mask {
		s := &ix.slots[i]
		if s.typ == 0 {
			return ival{}, false
		}
		if ix.at(i, key) {
			return ival{h: handle{Offset: s.off, Length: s.n}, typ: StorageType(s.typ - 1)}, true
		}
	}
}

// set stores v for key and returns the value it replaced, if any.
func (ix *index) set(key ikey, v ival) (ival, bool) {
	if (ix.count+1)*4 > len(ix.slots)*3 {
		ix.resize(len(ix.slots) * 2)
	}
	for i := ix.home(key); ; i = (i + 1) & ix.mask {
		s := &ix.slots[i]
		if s.typ == 0 {
			*s = islot{key: key.lo, off: v.h.Offset, n: v.h.Length, typ: uint8(v.typ) + 1}
			if ix.hi != nil {
				ix.hi[i] = key.hi
			}
			ix.count++
			return ival{}, false
		}
		if ix.at(i, key) {
			old := ival{h: handle{Offset: s.off, Length: s.n}, typ: StorageType(s.typ - 1)}
			s.off, s.n, s.typ = v.h.Offset, v.h.Length, uint8(v.typ)+1
			return old, true
		}
	}
}

// del removes key and returns the value it held, if any.
func (ix *index) del(key ikey) (ival, bool) {
	i := ix.home(key)
	for ; ; i = (i + 1) & ix.mask {
		s := &ix.slots[i]
		if s.typ == 0 {
			return ival{}, false
		}
		if ix.at(i, key) {
			break
		}
	}
	s := ix.slots[i]
	old := ival{h: handle{Offset: s.off, Length: s.n}, typ: StorageType(s.typ - 1)}
	// Backward shift: pull later entries of the run into the hole when the
	// hole lies on their probe path.
	for j := (i + 1) & ix.mask; ix.slots[j].typ != 0; j = (j + 1) & ix.mask {
		h := ix.home(ix.keyAt(j))
		if (j-h)&ix.mask >= (j-i)&ix.mask {
			ix.move(i, j)
			i = j
		}
	}
	ix.slots[i] = islot{}
	ix.count--
	return old, true
}

func (ix *index) resize(n int) {
	old, oldHi := ix.slots, ix.hi
	ix.alloc(n)
	for j, s := range old {
		if s.typ == 0 {
			continue
		}
		k := ikey{lo: s.key}
		if oldHi != nil {
			k.hi = oldHi[j]
		}
		i := ix.home(k)
		for ix.slots[i].typ != 0 {
			i = (i + 1) & ix.mask
		}
		ix.slots[i] = s
		if ix.hi != nil {
			ix.hi[i] = k.hi
		}
	}
}

// bytes returns the memory the index holds.
func (ix *index) bytes() int { return len(ix.slots)*int(unsafe.Sizeof(islot{})) + 8*len(ix.hi) }

// each calls fn for every entry, in no particular order, until fn returns
// false.
func (ix *index) each(fn func(key ikey, v ival) bool) {
	for i, s := range ix.slots {
		if s.typ != 0 && !fn(ix.keyAt(uint64(i)), ival{h: handle{Offset: s.off, Length: s.n}, typ: StorageType(s.typ - 1)}) {
			return
		}
	}
}
