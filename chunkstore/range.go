package chunkstore

import (
	"fmt"
	"slices"
	"sync"
)

// Range queries. The runtime index is a hash table, which answers "is
// this chunk stored" in one probe but has no order; "every stored chunk in
// this box" would have to visit every entry. So the first range query
// builds a second, coarse index beside it: the occupied cells of a grid
// whose cells are 2^cellShift chunks on each axis (8x8 chunks for 2 axes,
// 4x4x4 for 3, 4x4x4x4 for 4), each with the keys stored in it. A query
// visits only the cells that meet its box and only the keys they hold;
// commits keep the cells up to date from then on. A store that never
// answers a range query never pays for them.

// cellShift returns the cell size (as a power of two on each axis) for
// keys of n axes.
func cellShift(n int) uint8 {
	if n == 2 {
		return 3
	}
	return 2
}

// cellIndex maps each occupied cell to the keys in it that have a chunk or
// a body block.
type cellIndex struct {
	axes  int
	shift uint8
	cells map[ikey][]ikey
}

// rangeIndex holds the cell index of a store, built on first use.
type rangeIndex struct {
	mu sync.Mutex
	ix *cellIndex // nil until a range query builds it
}

func (c *cellIndex) cellOf(k Key) ikey {
	for i := range c.axes {
		k.c[i] >>= c.shift
	}
	return k.ik()
}

// add records that k is stored, once.
func (c *cellIndex) add(k Key) {
	cell, ik := c.cellOf(k), k.ik()
	if !slices.Contains(c.cells[cell], ik) {
		c.cells[cell] = append(c.cells[cell], ik)
	}
}

// remove records that k is no longer stored.
func (c *cellIndex) remove(k Key) {
	cell, ik := c.cellOf(k), k.ik()
	ks := c.cells[cell]
	if i := slices.Index(ks, ik); i >= 0 {
		ks[i] = ks[len(ks)-1]
		if ks = ks[:len(ks)-1]; len(ks) == 0 {
			delete(c.cells, cell)
		} else {
			c.cells[cell] = ks
		}
	}
}

// buildCells makes the cell index of the store's current entries. The
// caller holds s.mu (shared at least).
func (s *Store) buildCells() *cellIndex {
	c := &cellIndex{axes: s.axes, shift: cellShift(s.axes), cells: map[ikey][]ikey{}}
	s.chunks.each(func(k ikey, _ ival) bool {
		key := keyOf(k, s.axes)
		cell := c.cellOf(key)
		c.cells[cell] = append(c.cells[cell], k)
		return true
	})
	s.bodies.each(func(k ikey, _ ival) bool {
		if _, ok := s.chunks.get(k); !ok {
			key := keyOf(k, s.axes)
			cell := c.cellOf(key)
			c.cells[cell] = append(c.cells[cell], k)
		}
		return true
	})
	return c
}

// updateCells brings a built cell index up to date with the index changes
// of a commit. The caller holds s.mu exclusively.
func (s *Store) updateCells(muts []mutation) {
	s.cells.mu.Lock()
	defer s.cells.mu.Unlock()
	c := s.cells.ix
	if c == nil {
		return
	}
	for _, m := range muts {
		k := keyOf(m.key, s.axes)
		_, chunk := s.chunks.get(m.key)
		_, body := s.bodies.get(m.key)
		if chunk || body {
			c.add(k)
		} else {
			c.remove(k)
		}
	}
}

// EntriesIn returns every index entry whose key lies in b, chunks and
// body blocks, in page-table order (as [Store.Entries] gives them). It
// visits only the entries of the cells of a coarse grid that meet b, not
// the whole index (see the package documentation); the first call builds
// that grid, in time linear in the entries. b's corners must have the
// store's axes (ErrAxes); a box whose Min exceeds its Max on some axis is
// empty.
func (s *Store) EntriesIn(b Box) ([]Entry, error) {
	es, _, err := s.entriesInBox(b)
	return es, err
}

// entriesInBox is EntriesIn that also returns how many stored keys it
// visited.
func (s *Store) entriesInBox(b Box) ([]Entry, int, error) {
	if err := checkAxes(b.Min, s.axes, "entries in box"); err != nil {
		return nil, 0, err
	}
	if err := checkAxes(b.Max, s.axes, "entries in box"); err != nil {
		return nil, 0, err
	}
	for i := range s.axes {
		if b.Min.c[i] > b.Max.c[i] {
			return nil, 0, nil
		}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, 0, ErrClosed
	}
	s.cells.mu.Lock()
	if s.cells.ix == nil {
		s.cells.ix = s.buildCells()
	}
	var keys []ikey
	visited := s.cells.ix.query(b, func(k ikey) { keys = append(keys, k) })
	s.cells.mu.Unlock()
	var es []Entry
	for _, ik := range keys {
		k := keyOf(ik, s.axes)
		if v, ok := s.chunks.get(ik); ok {
			es = append(es, Entry{Pos: k.Pos(), Key: k, Type: v.typ})
		}
		if v, ok := s.bodies.get(ik); ok {
			es = append(es, Entry{Pos: k.Pos(), Key: k, Type: v.typ})
		}
	}
	slices.SortFunc(es, func(a, b Entry) int {
		return compareEntries(tableEntry{pos: a.Key, typ: a.Type}, tableEntry{pos: b.Key, typ: b.Type})
	})
	return es, visited, nil
}

// query calls fn for every stored key in b and returns how many stored
// keys it looked at. It walks the cells b covers when they are fewer than
// the occupied cells, else the occupied cells.
func (c *cellIndex) query(b Box, fn func(ikey)) int {
	var lo, hi [MaxAxes]int32
	boxCells := uint64(1)
	for i := range c.axes {
		lo[i], hi[i] = b.Min.c[i]>>c.shift, b.Max.c[i]>>c.shift
		boxCells *= uint64(int64(hi[i]) - int64(lo[i]) + 1)
		if boxCells > uint64(len(c.cells)) {
			boxCells = uint64(len(c.cells)) + 1 // more than the occupied cells: stop counting
		}
	}
	visited := 0
	visit := func(ks []ikey) {
		for _, ik := range ks {
			visited++
			if b.Contains(keyOf(ik, c.axes)) {
				fn(ik)
			}
		}
	}
	if boxCells <= uint64(len(c.cells)) {
		cur := lo
		for {
			if ks, ok := c.cells[Key{c: cur, n: uint8(c.axes)}.ik()]; ok {
				visit(ks)
			}
			i := 0
			for ; i < c.axes; i++ {
				if cur[i] < hi[i] {
					cur[i]++
					break
				}
				cur[i] = lo[i]
			}
			if i == c.axes {
				return visited
			}
		}
	}
	for cell, ks := range c.cells {
		ck := keyOf(cell, c.axes)
		in := true
		for i := range c.axes {
			in = in && ck.c[i] >= lo[i] && ck.c[i] <= hi[i]
		}
		if in {
			visit(ks)
		}
	}
	return visited
}

// String describes the box.
func (b Box) String() string { return fmt.Sprintf("%v..%v", b.Min, b.Max) }
