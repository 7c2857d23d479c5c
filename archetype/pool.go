package archetype

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/mlange-42/ark/ecs"
)

// pool is Ark's entity pool as the file stores it: every slot (id or free-list link, and
// generation), the head of the free list and its length, and the ids of the alive entities in
// the order of the archetype table, table by table, row by row.
type pool struct {
	slots     []slot
	next      uint32
	available uint32
	alive     []uint32
	mark      []uint8 // per slot: markAlive, markFree; filled by check
	compact   bool    // written as a compact pool (FlagCompactPool)
}

const (
	markAlive = 1
	markFree  = 2
)

// recycle frees the slot of an alive entity the way Ark removes an entity: the generation is
// bumped and the slot becomes the head of the free list.
func (p *pool) recycle(id uint32) {
	s := &p.slots[id]
	s.gen++
	s.id = p.next
	p.next = id
	p.available++
}

func (p *pool) sectionSize() int64 {
	if p.compact {
		return compactPoolSize(uint64(len(p.slots)), uint64(len(p.alive)))
	}
	return sectionHeadSize + poolFixedSize + int64(len(p.slots))*poolSlotSize + int64(len(p.alive))*poolAliveSize + crcSize
}

// compactPoolSize is the size of a compact pool section of n slots, alive of them alive.
func compactPoolSize(n, alive uint64) int64 {
	return int64(sectionHeadSize + compactFixed + (n+7)/8 + alive*(poolAliveSize+4) + crcSize)
}

// freeGeneration returns the generation a compact pool gives every free slot: no handle to a dead
// entity can come alive again with it. Ark raises a slot's generation when it frees the slot, so
// a free slot's own generation is already above every handle it gave out; the free generation is
// the highest of those, and above every alive generation. A pool read from a compact section
// gives back the same free generation, so a world read and written again keeps its bytes.
func (p *pool) freeGeneration() uint32 {
	alive := make([]bool, len(p.slots))
	for _, id := range p.alive {
		alive[id] = true
	}
	var g uint32
	for id := min(reservedEntities, len(p.slots)); id < len(p.slots); id++ {
		s := p.slots[id]
		switch {
		case !alive[id]:
			g = max(g, s.gen)
		case s.gen < math.MaxUint32:
			g = max(g, s.gen+1)
		}
	}
	return g
}

// writeCompact streams the entity pool section in its compact form: slot count, section size,
// free generation, alive count, a bitmap of the alive slots (bit i of byte i/8), the alive ids
// in table order, their generations.
func (p *pool) writeCompact(w *streamWriter) {
	n := uint64(len(p.slots))
	var b writeBuf = make([]byte, 0, p.sectionSize())
	b.u32(uint32(n))
	b.u64(uint64(p.sectionSize()))
	b.u32(p.freeGeneration())
	b.u32(uint32(len(p.alive)))
	bits := make([]byte, (n+7)/8)
	gens := make([]uint32, len(p.alive))
	for i, id := range p.alive {
		bits[id/8] |= 1 << (id % 8)
		gens[i] = p.slots[id].gen
	}
	b.bytes(bits)
	aliveBytes, genBytes := bytesOf(p.alive), bytesOf(gens)
	if hostBigEndian {
		aliveBytes = swappedCopy(aliveBytes, 4)
		swapWords(genBytes, 4) // gens is this function's own
	}
	b.bytes(aliveBytes)
	b.bytes(genBytes)
	w.write(finishSectionNoHead(b))
}

// write streams the entity pool section. The slots and ids are written as the host holds them,
// a big-endian host through copies with every uint32 swapped.
func (p *pool) write(w *streamWriter) {
	if p.compact {
		p.writeCompact(w)
		return
	}
	var b writeBuf = make([]byte, 0, sectionHeadSize+poolFixedSize)
	b.u32(uint32(len(p.slots)))
	b.u64(uint64(p.sectionSize()))
	b.u32(p.next)
	b.u32(p.available)
	b.u32(uint32(len(p.alive)))
	crc := crcOf(b)
	w.writeKnown(b, crc)
	for _, part := range [][]byte{bytesOf(p.slots), bytesOf(p.alive)} {
		if hostBigEndian {
			part = swappedCopy(part, 4)
		}
		crc = crcCombine(crc, w.writeSum(part), int64(len(part)))
	}
	w.writeCRC(crc)
}

// bytesOf views a slice of fixed-size values as its memory.
func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// readSlice reads n fixed-size values, growing the slice only as their bytes arrive.
func readSlice[T any](s *streamReader, n int, section string) ([]T, error) {
	var zero T
	size := int(unsafe.Sizeof(zero))
	step := (1 << 20) / size
	out := make([]T, 0, min(n, step))
	for len(out) < n {
		start := len(out)
		chunk := min(n-start, max(start, step))
		if start+chunk > cap(out) {
			grown := make([]T, start, max(start+chunk, 2*cap(out)))
			copy(grown, out)
			out = grown
		}
		out = out[:start+chunk]
		if err := s.full(bytesOf(out[start:]), section); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readPool reads the entity pool section and checks that it is a pool Ark could have had.
func readPool(s *streamReader, h *fileHeader) (*pool, error) {
	const name = "entity pool"
	start := s.off
	s.beginCRC()
	var head [sectionHeadSize + poolFixedSize]byte
	if err := s.full(head[:], name); err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	n := uint64(le.Uint32(head[0:]))
	size := le.Uint64(head[4:])
	p := &pool{next: le.Uint32(head[12:]), available: le.Uint32(head[16:])}
	aliveCount := uint64(le.Uint32(head[20:]))
	want := uint64(sectionHeadSize+poolFixedSize+crcSize) + n*poolSlotSize + aliveCount*poolAliveSize
	switch {
	case n < reservedEntities:
		return nil, fmt.Errorf("%w: %s at offset %d: %d slots, Ark reserves %d", ErrCorrupt, name, start, n, reservedEntities)
	case aliveCount != h.Entities:
		return nil, fmt.Errorf("%w: %s at offset %d: %d alive entities, header says %d", ErrCorrupt, name, start+20, aliveCount, h.Entities)
	case aliveCount+uint64(p.available) != n-reservedEntities:
		return nil, fmt.Errorf("%w: %s at offset %d: %d alive and %d free entities in %d slots", ErrCorrupt, name, start+16, aliveCount, p.available, n-reservedEntities)
	case size != want:
		return nil, fmt.Errorf("%w: %s at offset %d: section size %d, %d slots need %d", ErrCorrupt, name, start+4, size, n, want)
	}
	if err := s.check(int64(size)-int64(len(head)), name); err != nil {
		return nil, err
	}
	var err error
	if p.slots, err = readSlice[slot](s, int(n), name); err != nil {
		return nil, err
	}
	if p.alive, err = readSlice[uint32](s, int(aliveCount), name); err != nil {
		return nil, err
	}
	if hostBigEndian {
		swapWords(bytesOf(p.slots), 4)
		swapWords(bytesOf(p.alive), 4)
	}
	if err := s.endCRC(name); err != nil {
		return nil, err
	}
	if msg := p.check(); msg != "" {
		return nil, fmt.Errorf("%w: %s at offset %d: %s", ErrCorrupt, name, start, msg)
	}
	return p, nil
}

// readCompactPool reads a compact entity pool section and turns it into the full pool: the
// free slots, in ascending order, form the free list with the free generation. The bitmap
// (a bit per slot) is what justifies the slots allocated: n slots take n/8 bytes of the file.
func readCompactPool(s *streamReader, h *fileHeader) (*pool, error) {
	const name = "entity pool"
	start := s.off
	s.beginCRC()
	var head [sectionHeadSize + compactFixed]byte
	if err := s.full(head[:], name); err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	n := uint64(le.Uint32(head[0:]))
	size := le.Uint64(head[4:])
	free := le.Uint32(head[12:])
	aliveCount := uint64(le.Uint32(head[16:]))
	switch {
	case n < reservedEntities:
		return nil, fmt.Errorf("%w: %s at offset %d: %d slots, Ark reserves %d", ErrCorrupt, name, start, n, reservedEntities)
	case aliveCount != h.Entities:
		return nil, fmt.Errorf("%w: %s at offset %d: %d alive entities, header says %d", ErrCorrupt, name, start+16, aliveCount, h.Entities)
	case aliveCount > n-reservedEntities:
		return nil, fmt.Errorf("%w: %s at offset %d: %d alive entities in %d slots", ErrCorrupt, name, start+16, aliveCount, n)
	case int64(size) != compactPoolSize(n, aliveCount):
		return nil, fmt.Errorf("%w: %s at offset %d: section size %d, %d slots need %d", ErrCorrupt, name, start+4, size, n, compactPoolSize(n, aliveCount))
	}
	if err := s.check(int64(size)-int64(len(head)), name); err != nil {
		return nil, err
	}
	bits, err := readSlice[byte](s, int((n+7)/8), name)
	if err != nil {
		return nil, err
	}
	p := &pool{compact: true}
	if p.alive, err = readSlice[uint32](s, int(aliveCount), name); err != nil {
		return nil, err
	}
	gens, err := readSlice[uint32](s, int(aliveCount), name)
	if err != nil {
		return nil, err
	}
	if hostBigEndian {
		swapWords(bytesOf(p.alive), 4)
		swapWords(bytesOf(gens), 4)
	}
	if err := s.endCRC(name); err != nil {
		return nil, err
	}
	bit := func(i uint64) bool { return bits[i/8]>>(i%8)&1 != 0 }
	set := uint64(0)
	for i := range n {
		if bit(i) {
			set++
		}
	}
	if set != aliveCount || bit(0) || bit(1) || n%8 != 0 && bits[len(bits)-1]>>(n%8) != 0 {
		return nil, fmt.Errorf("%w: %s at offset %d: the bitmap marks %d slots alive, %d are listed", ErrCorrupt, name, start+20, set, aliveCount)
	}
	p.slots = make([]slot, n)
	p.slots[0] = slot{id: 0, gen: math.MaxUint32}
	p.slots[1] = slot{id: 1, gen: math.MaxUint32}
	for k, id := range p.alive {
		if uint64(id) >= n || !bit(uint64(id)) {
			return nil, fmt.Errorf("%w: %s at offset %d: alive entity %d has id %d", ErrCorrupt, name, start, k, id)
		}
		p.slots[id] = slot{id: id, gen: gens[k]}
	}
	last := uint32(0)
	for i := n; i > reservedEntities; i-- {
		id := uint32(i - 1)
		if bit(uint64(id)) {
			continue
		}
		p.slots[id] = slot{id: last, gen: free}
		last = id
		p.available++
	}
	p.next = last
	if msg := p.check(); msg != "" {
		return nil, fmt.Errorf("%w: %s at offset %d: %s", ErrCorrupt, name, start, msg)
	}
	return p, nil
}

// check verifies the pool's invariants: reserved slots as Ark makes them, alive ids unique and
// in range with their own id in the slot, a free list that visits every other slot exactly once.
// It returns what is wrong, or "".
func (p *pool) check() string {
	n := uint32(len(p.slots))
	for i := range uint32(reservedEntities) {
		if p.slots[i] != (slot{id: i, gen: math.MaxUint32}) {
			return fmt.Sprintf("reserved slot %d is %v", i, p.slots[i])
		}
	}
	mark := make([]uint8, n)
	p.mark = mark
	for k, id := range p.alive {
		if id < reservedEntities || id >= n || mark[id] != 0 || p.slots[id].id != id {
			return fmt.Sprintf("alive entity %d has id %d", k, id)
		}
		mark[id] = markAlive
	}
	cur := p.next
	for k := range p.available {
		if cur < reservedEntities || cur >= n || mark[cur] != 0 {
			return fmt.Sprintf("free list entry %d points to slot %d", k, cur)
		}
		mark[cur] = markFree
		cur = p.slots[cur].id
	}
	return ""
}

// isAlive reports whether e is one of the saved alive entities (after check).
func (p *pool) isAlive(e slot) bool {
	return e.id < uint32(len(p.mark)) && p.mark[e.id] == markAlive && p.slots[e.id].gen == e.gen
}

// dump turns the pool into the state Ark's LoadEntities should start from so that creating the
// entities table by table, row by row, hands out exactly the saved ids: every slot is free, the
// free list runs through the alive ids in file order and then continues with the saved free
// list. Once all entities exist, the pool's next, available and every link equal the saved ones.
// It reuses (and changes) the slots.
func (p *pool) dump() ecs.EntityDump {
	next := p.next
	if len(p.alive) > 0 {
		for k := 0; k < len(p.alive)-1; k++ {
			p.slots[p.alive[k]].id = p.alive[k+1]
		}
		p.slots[p.alive[len(p.alive)-1]].id = p.next
		next = p.alive[0]
	}
	return ecs.EntityDump{
		Entities:  entitiesOf(p.slots),
		Next:      next,
		Available: p.available + uint32(len(p.alive)),
	}
}
