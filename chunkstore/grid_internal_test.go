package chunkstore

// The flat cell grid that answered range queries before the spatial tree,
// kept as the baseline the tree is measured against: the occupied cells of
// a grid whose cells are 2^gridShift chunks on each axis (8x8 chunks for 2
// axes, 4x4x4 for 3, 4x4x4x4 for 4), each with the keys stored in it.

// gridShift returns the cell size (as a power of two on each axis) for
// keys of n axes.
func gridShift(n int) uint8 {
	if n == 2 {
		return 3
	}
	return 2
}

// cellGrid maps each occupied cell to the keys in it.
type cellGrid struct {
	axes  int
	shift uint8
	cells map[ikey][]ikey
}

// newCellGrid returns the grid of keys of n axes.
func newCellGrid(n int, keys []ikey) *cellGrid {
	g := &cellGrid{axes: n, shift: gridShift(n), cells: map[ikey][]ikey{}}
	for _, k := range keys {
		cell := g.cellOf(keyOf(k, n))
		g.cells[cell] = append(g.cells[cell], k)
	}
	return g
}

func (g *cellGrid) cellOf(k Key) ikey {
	for i := range g.axes {
		k.c[i] >>= g.shift
	}
	return k.ik()
}

// query calls fn for every stored key in b and returns the work it did:
// cells probed (as nodes) and stored keys looked at. It walks the cells b
// covers when they are fewer than the occupied cells, else the occupied
// cells.
func (g *cellGrid) query(b Box, fn func(ikey)) treeStats {
	var lo, hi [MaxAxes]int32
	boxCells := uint64(1)
	for i := range g.axes {
		lo[i], hi[i] = b.Min.c[i]>>g.shift, b.Max.c[i]>>g.shift
		boxCells *= uint64(int64(hi[i]) - int64(lo[i]) + 1)
		if boxCells > uint64(len(g.cells)) {
			boxCells = uint64(len(g.cells)) + 1 // more than the occupied cells: stop counting
		}
	}
	var st treeStats
	visit := func(ks []ikey) {
		for _, ik := range ks {
			st.keys++
			if b.Contains(keyOf(ik, g.axes)) {
				fn(ik)
			}
		}
	}
	if boxCells <= uint64(len(g.cells)) {
		cur := lo
		for {
			st.nodes++
			if ks, ok := g.cells[Key{c: cur, n: uint8(g.axes)}.ik()]; ok {
				visit(ks)
			}
			i := 0
			for ; i < g.axes; i++ {
				if cur[i] < hi[i] {
					cur[i]++
					break
				}
				cur[i] = lo[i]
			}
			if i == g.axes {
				return st
			}
		}
	}
	for cell, ks := range g.cells {
		st.nodes++
		ck := keyOf(cell, g.axes)
		in := true
		for i := range g.axes {
			in = in && ck.c[i] >= lo[i] && ck.c[i] <= hi[i]
		}
		if in {
			visit(ks)
		}
	}
	return st
}
