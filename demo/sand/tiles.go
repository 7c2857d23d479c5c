package sand

import "math/bits"

// TileSize is the edge of a simulation tile in pixels. Only awake tiles are
// simulated; a tile wakes when a pixel within reach of it changes.
const TileSize = 32

const (
	tileShift = 5
	// spread is how many pixels a liquid moves sideways in one tick.
	spread = 6
	// seek is how far a liquid looks sideways along its row for a place to
	// fall; it levels to within a pixel over that distance.
	seek = 32
	// fallMax is how many pixels of air a falling pixel crosses in a tick.
	fallMax = 4
	// reachX and reachY are how far one pixel's update looks: a change wakes
	// every tile within that many pixels of it.
	reachX = seek + 1
	reachY = fallMax + 1
)

// Tiles is the simulation state of one chunk: which tiles are awake and
// which pixels already moved this tick. The sand system adds it to every
// chunk entity it finds without one (all tiles awake, so a chunk loaded from
// a save with pixels in mid-air settles); it is rebuilt on load and never
// needs saving.
type Tiles struct {
	side  int      // tiles per chunk edge
	cur   []uint64 // awake this tick: one word per tile row, bit tx
	next  []uint64 // awake next tick
	moved []uint64 // one bit per pixel, row-major; meaningful in awake tiles
}

// NewTiles returns the state of a chunk of size pixels, all tiles asleep.
//
// Panics if size is not a multiple of 64 between 64 and 4096.
func NewTiles(size int) Tiles {
	if size%64 != 0 || size < 64 || size > 64*TileSize {
		panic("sand: chunk size must be a multiple of 64 between 64 and 2048")
	}
	side := size / TileSize
	return Tiles{side: side, cur: make([]uint64, side), next: make([]uint64, side), moved: make([]uint64, size*size/64)}
}

func (t *Tiles) rowMask() uint64 { return ^uint64(0) >> (64 - t.side) }

// WakeAll wakes every tile for the next tick.
func (t *Tiles) WakeAll() {
	for i := range t.next {
		t.next[i] = t.rowMask()
	}
}

// Awake returns how many tiles will simulate next tick.
func (t *Tiles) Awake() int {
	n := 0
	for _, m := range t.next {
		n += bits.OnesCount64(m)
	}
	return n
}

// AwakeAt reports whether tile (tx, ty) will simulate next tick.
func (t *Tiles) AwakeAt(tx, ty int) bool {
	if tx < 0 || ty < 0 || tx >= t.side || ty >= t.side {
		return false
	}
	return t.next[ty]>>tx&1 != 0
}

// wake marks tiles tx0..tx1 x ty0..ty1 awake next tick; the range must lie
// in the chunk.
func (t *Tiles) wake(tx0, ty0, tx1, ty1 int) {
	m := (uint64(1)<<(tx1+1) - 1) &^ (uint64(1)<<tx0 - 1)
	for ty := ty0; ty <= ty1; ty++ {
		t.next[ty] |= m
	}
}

// advance starts a tick: next becomes cur, and the moved bits of the awake
// tiles are cleared. It reports whether any tile is awake.
func (t *Tiles) advance(size int) bool {
	t.cur, t.next = t.next, t.cur
	clear(t.next)
	any := false
	words := size / 64
	for ty, mask := range t.cur {
		if mask == 0 {
			continue
		}
		any = true
		for y := ty * TileSize; y < (ty+1)*TileSize; y++ {
			row := t.moved[y*words : (y+1)*words]
			for k := range row {
				switch mask >> (2 * k) & 3 {
				case 1:
					row[k] &^= 0xffffffff
				case 2:
					row[k] &= 0xffffffff
				case 3:
					row[k] = 0
				}
			}
		}
	}
	return any
}

func (t *Tiles) pending() bool {
	for _, m := range t.next {
		if m != 0 {
			return true
		}
	}
	return false
}
