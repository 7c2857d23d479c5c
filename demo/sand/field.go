package sand

import (
	"github.com/arksave/arksave/components"
	"github.com/mlange-42/ark/ecs"
)

// wall is what lies beyond the loaded world: a solid that nothing moves into
// and nobody writes.
const wall = components.Pixel(Stone) | components.FlagPixelBody<<components.FlagsShift

// Field is the pixel world as the game's systems see it during one tick:
// pixels addressed by world coordinates across chunk borders. Writes through
// it mark a chunk dirty only when a pixel really changes, and wake the
// simulation tiles around the change.
//
// A system calls [Field.Begin] at the start of its Update and [Field.End] at
// its end, and makes no structural change to the world in between (component
// pointers are cached). Field is an ECS resource, shared by the tools, the
// body system and the sand system.
type Field struct {
	size   int
	world  *ecs.World
	index  ecs.Resource[components.ChunkIndex]
	chunks *ecs.Map3[components.ChunkPos, components.Chunk, components.ChunkState]
	tiles  *ecs.Map[Tiles]
	fresh  *ecs.Filter1[components.ChunkPos]

	ix     *components.ChunkIndex
	views  map[components.ChunkPos]*view
	open   []*view
	last   *view
	active bool
	adopt  []ecs.Entity
}

// view is one loaded chunk during a tick.
type view struct {
	pos     components.ChunkPos
	x0, y0  int // world coordinates of its top-left pixel
	chunk   *components.Chunk
	state   *components.ChunkState
	tiles   *Tiles
	pix     []components.Pixel // the chunk's pixels: read freely, write through write
	held    bool               // a save held tiles of the chunk at Begin
	changed bool               // a pixel changed since Begin
	nb      [9]*view
	nbDone  [9]bool
}

// NewField returns the field of world w, whose chunks are size pixels square.
//
// Panics if size is not a multiple of 64 between 64 and 2048.
func NewField(w *ecs.World, size int) *Field {
	NewTiles(size) // validates size
	return &Field{
		size:   size,
		world:  w,
		index:  ecs.NewResource[components.ChunkIndex](w),
		chunks: ecs.NewMap3[components.ChunkPos, components.Chunk, components.ChunkState](w),
		tiles:  ecs.NewMap[Tiles](w),
		fresh:  ecs.NewFilter1[components.ChunkPos](w).With(ecs.C[components.Chunk](), ecs.C[components.ChunkState]()).Without(ecs.C[Tiles]()).Register(),
		views:  make(map[components.ChunkPos]*view),
	}
}

// Size returns the chunk size in pixels.
func (f *Field) Size() int { return f.size }

// Begin starts a system's use of the field. Chunks loaded since the last
// Begin get their simulation state, fully awake, and the tiles of their
// neighbours along the shared borders wake too.
func (f *Field) Begin() {
	if f.active {
		panic("sand: Field.Begin without End")
	}
	f.active = true
	f.ix = f.index.Get()
	f.adopt = f.adopt[:0]
	q := f.fresh.Query()
	for q.Next() {
		f.adopt = append(f.adopt, q.Entity())
	}
	for _, e := range f.adopt {
		t := NewTiles(f.size)
		t.WakeAll()
		f.tiles.Add(e, &t)
	}
	for _, e := range f.adopt {
		pos, _, _ := f.chunks.Get(e)
		x0, y0 := int(pos.X)*f.size, int(pos.Y)*f.size
		f.Wake(x0-reachX, y0-reachY, x0+f.size+reachX-1, y0+f.size+reachY-1)
	}
}

// End finishes a system's use of the field: every chunk in which a pixel
// changed is marked dirty, once.
func (f *Field) End() {
	for _, v := range f.open {
		if v.changed {
			v.state.MarkDirty()
		}
	}
	f.open = f.open[:0]
	clear(f.views)
	f.last = nil
	f.active = false
}

// view returns the view of the chunk at pos, or nil if it is not loaded.
func (f *Field) view(pos components.ChunkPos) *view {
	if v, ok := f.views[pos]; ok {
		return v
	}
	if !f.active {
		panic("sand: Field used outside Begin/End")
	}
	e, ok := f.ix.Get(pos)
	if !ok {
		f.views[pos] = nil
		return nil
	}
	_, chunk, state := f.chunks.Get(e)
	v := &view{
		pos: pos, x0: int(pos.X) * f.size, y0: int(pos.Y) * f.size,
		chunk: chunk, state: state, pix: chunk.Pixels(), held: chunk.Held(),
	}
	if f.tiles.Has(e) {
		v.tiles = f.tiles.Get(e)
	}
	f.views[pos] = v
	f.open = append(f.open, v)
	return v
}

// locate returns the view holding world pixel (x, y) and the pixel's index
// in it, or nil if that chunk is not loaded.
func (f *Field) locate(x, y int) (*view, int) {
	if v := f.last; v != nil && uint(x-v.x0) < uint(f.size) && uint(y-v.y0) < uint(f.size) {
		return v, (y-v.y0)*f.size + x - v.x0
	}
	pos := components.ChunkPos{X: int32(floorDiv(x, f.size)), Y: int32(floorDiv(y, f.size))}
	v := f.view(pos)
	if v == nil {
		return nil, 0
	}
	f.last = v
	return v, (y-v.y0)*f.size + x - v.x0
}

// At returns the pixel at world (x, y) and whether its chunk is loaded.
func (f *Field) At(x, y int) (components.Pixel, bool) {
	v, i := f.locate(x, y)
	if v == nil {
		return wall, false
	}
	return v.pix[i], true
}

// Set writes p at world (x, y) and reports whether the pixel changed. A
// change marks the chunk dirty (at End) and wakes the tiles around it;
// writing the value a pixel already has, or into a chunk that is not loaded,
// does nothing.
func (f *Field) Set(x, y int, p components.Pixel) bool {
	v, i := f.locate(x, y)
	if v == nil || v.pix[i] == p {
		return false
	}
	v.write(i, p)
	f.wakeNear(v, x-v.x0, y-v.y0)
	return true
}

// Wake wakes the tiles that hold any pixel of the world rectangle
// [x0, x1] x [y0, y1] for the next tick.
func (f *Field) Wake(x0, y0, x1, y1 int) {
	s := f.size
	for cy := floorDiv(y0, s); cy <= floorDiv(y1, s); cy++ {
		for cx := floorDiv(x0, s); cx <= floorDiv(x1, s); cx++ {
			v := f.view(components.ChunkPos{X: int32(cx), Y: int32(cy)})
			if v == nil || v.tiles == nil {
				continue
			}
			lx0, ly0 := max(x0-v.x0, 0), max(y0-v.y0, 0)
			lx1, ly1 := min(x1-v.x0, s-1), min(y1-v.y0, s-1)
			v.tiles.wake(lx0>>tileShift, ly0>>tileShift, lx1>>tileShift, ly1>>tileShift)
		}
	}
}

// AwakeNear reports whether any tile within reach of the world rectangle
// [x0, x1] x [y0, y1] will simulate next tick: whether anything changed near
// it lately. Bodies at rest use it to decide whether to look again.
func (f *Field) AwakeNear(x0, y0, x1, y1 int) bool {
	s := f.size
	x0, y0, x1, y1 = x0-reachX, y0-reachY, x1+reachX, y1+reachY
	for cy := floorDiv(y0, s); cy <= floorDiv(y1, s); cy++ {
		for cx := floorDiv(x0, s); cx <= floorDiv(x1, s); cx++ {
			v := f.view(components.ChunkPos{X: int32(cx), Y: int32(cy)})
			if v == nil || v.tiles == nil {
				continue
			}
			lx0, ly0 := max(x0-v.x0, 0)>>tileShift, max(y0-v.y0, 0)>>tileShift
			lx1, ly1 := min(x1-v.x0, s-1)>>tileShift, min(y1-v.y0, s-1)>>tileShift
			for ty := ly0; ty <= ly1; ty++ {
				for tx := lx0; tx <= lx1; tx++ {
					if v.tiles.AwakeAt(tx, ty) {
						return true
					}
				}
			}
		}
	}
	return false
}

// Loaded reports whether the chunk holding world pixel (x, y) is loaded.
func (f *Field) Loaded(x, y int) bool {
	v, _ := f.locate(x, y)
	return v != nil
}

// write stores p at index i. While a save holds tiles of the chunk that it
// has not read, the pixel's tile is made writable first (the chunk copies
// it for the save, once); otherwise a write is a store. A share cannot
// start while a system uses the field, so held, taken at Begin, can only
// be stale towards true, which costs a check, not a wrong write.
func (v *view) write(i int, p components.Pixel) {
	if v.held {
		v.writable(i)
	}
	v.pix[i] = p
	v.changed = true
}

// writable makes the tile of pixel i writable; apart from write, so that
// write stays small enough to be inlined in the automaton's loops.
func (v *view) writable(i int) {
	n := v.chunk.Size
	x, y := i%n, i/n
	v.chunk.MutRect(x, y, x+1, y+1)
}

func (v *view) setMoved(i int) {
	if v.tiles != nil {
		v.tiles.moved[i>>6] |= 1 << (i & 63)
	}
}

// wakeNear wakes the tiles within reach of chunk-local pixel (x, y).
func (f *Field) wakeNear(v *view, x, y int) {
	n := f.size
	x0, y0, x1, y1 := x-reachX, y-reachY, x+reachX, y+reachY
	if v.tiles != nil {
		v.tiles.wake(max(x0, 0)>>tileShift, max(y0, 0)>>tileShift, min(x1, n-1)>>tileShift, min(y1, n-1)>>tileShift)
	}
	if x0 >= 0 && y0 >= 0 && x1 < n && y1 < n {
		return
	}
	for dy := -1; dy <= 1; dy++ {
		for dx := -1; dx <= 1; dx++ {
			// the rectangle in the neighbour's coordinates
			nx0, ny0, nx1, ny1 := max(x0-dx*n, 0), max(y0-dy*n, 0), min(x1-dx*n, n-1), min(y1-dy*n, n-1)
			if (dx == 0 && dy == 0) || nx0 > nx1 || ny0 > ny1 {
				continue
			}
			if nv := f.neighbour(v, dx, dy); nv != nil && nv.tiles != nil {
				nv.tiles.wake(nx0>>tileShift, ny0>>tileShift, nx1>>tileShift, ny1>>tileShift)
			}
		}
	}
}

// neighbour returns the view of the chunk dx, dy chunks from v, or nil.
func (f *Field) neighbour(v *view, dx, dy int) *view {
	k := (dy+1)*3 + dx + 1
	if !v.nbDone[k] {
		v.nb[k] = f.view(components.ChunkPos{X: v.pos.X + int32(dx), Y: v.pos.Y + int32(dy)})
		v.nbDone[k] = true
	}
	return v.nb[k]
}

// rel resolves chunk-local coordinates relative to v that may lie in a
// neighbouring chunk (at most one chunk away). It returns nil if that chunk
// is not loaded.
func (f *Field) rel(v *view, x, y int) (*view, int, int) {
	if uint(x) < uint(f.size) && uint(y) < uint(f.size) {
		return v, x, y
	}
	return f.relSlow(v, x, y)
}

func (f *Field) relSlow(v *view, x, y int) (*view, int, int) {
	n := f.size
	dx, dy := 0, 0
	switch {
	case x < 0:
		dx, x = -1, x+n
	case x >= n:
		dx, x = 1, x-n
	}
	switch {
	case y < 0:
		dy, y = -1, y+n
	case y >= n:
		dy, y = 1, y-n
	}
	return f.neighbour(v, dx, dy), x, y
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}
