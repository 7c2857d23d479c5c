package chunkstore

import "math/bits"

// index is the runtime page table: an open-addressing hash table with
// linear probing and backward-shift deletion, keyed by Pos.key. A slot is
// 24 bytes and the table is at most 3/4 full, so it costs 32 to 64 bytes per
// stored chunk; a lookup hashes with one multiplication and usually touches
// one cache line.
//
// index is not safe for concurrent use; Store guards it.
type index struct {
	slots []islot
	mask  uint64
	shift uint8 // 64 - log2(len(slots))
	count int
}

// ival is what the index holds for a position.
type ival struct {
	h   Handle
	typ StorageType
}

type islot struct {
	key uint64
	off int64
	n   uint32
	typ uint8 // StorageType + 1; 0 marks a free slot
}

const minIndexSlots = 16

func newIndex(hint int) *index {
	ix := &index{}
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
	ix.mask = uint64(n - 1)
	ix.shift = uint8(64 - bits.TrailingZeros(uint(n)))
}

func (ix *index) home(key uint64) uint64 {
	return (key * 0x9E3779B97F4A7C15) >> ix.shift
}

// Len returns the number of entries.
func (ix *index) Len() int { return ix.count }

func (ix *index) get(key uint64) (ival, bool) {
	for i := ix.home(key); ; i = (i + 1) & ix.mask {
		s := &ix.slots[i]
		if s.typ == 0 {
			return ival{}, false
		}
		if s.key == key {
			return ival{h: Handle{Offset: s.off, Length: s.n}, typ: StorageType(s.typ - 1)}, true
		}
	}
}

// set stores v for key and returns the value it replaced, if any.
func (ix *index) set(key uint64, v ival) (ival, bool) {
	if (ix.count+1)*4 > len(ix.slots)*3 {
		ix.resize(len(ix.slots) * 2)
	}
	for i := ix.home(key); ; i = (i + 1) & ix.mask {
		s := &ix.slots[i]
		if s.typ == 0 {
			*s = islot{key: key, off: v.h.Offset, n: v.h.Length, typ: uint8(v.typ) + 1}
			ix.count++
			return ival{}, false
		}
		if s.key == key {
			old := ival{h: Handle{Offset: s.off, Length: s.n}, typ: StorageType(s.typ - 1)}
			s.off, s.n, s.typ = v.h.Offset, v.h.Length, uint8(v.typ)+1
			return old, true
		}
	}
}

// del removes key and returns the value it held, if any.
func (ix *index) del(key uint64) (ival, bool) {
	i := ix.home(key)
	for ; ; i = (i + 1) & ix.mask {
		s := &ix.slots[i]
		if s.typ == 0 {
			return ival{}, false
		}
		if s.key == key {
			break
		}
	}
	s := ix.slots[i]
	old := ival{h: Handle{Offset: s.off, Length: s.n}, typ: StorageType(s.typ - 1)}
	// Backward shift: pull later entries of the run into the hole when the
	// hole lies on their probe path.
	for j := (i + 1) & ix.mask; ix.slots[j].typ != 0; j = (j + 1) & ix.mask {
		h := ix.home(ix.slots[j].key)
		if (j-h)&ix.mask >= (j-i)&ix.mask {
			ix.slots[i] = ix.slots[j]
			i = j
		}
	}
	ix.slots[i] = islot{}
	ix.count--
	return old, true
}

func (ix *index) resize(n int) {
	old := ix.slots
	ix.alloc(n)
	for _, s := range old {
		if s.typ == 0 {
			continue
		}
		i := ix.home(s.key)
		for ix.slots[i].typ != 0 {
			i = (i + 1) & ix.mask
		}
		ix.slots[i] = s
	}
}

// each calls fn for every entry, in no particular order, until fn returns
// false.
func (ix *index) each(fn func(key uint64, v ival) bool) {
	for _, s := range ix.slots {
		if s.typ != 0 && !fn(s.key, ival{h: Handle{Offset: s.off, Length: s.n}, typ: StorageType(s.typ - 1)}) {
			return
		}
	}
}
