package chunkstore

import "math/bits"

// The spatial tree behind range queries (seed 001's fixed 16-way split).
// Every node covers a region of key space that is a power of two on each
// axis; an internal node splits its region in two at the midpoint of every
// axis, so a node of a 4-axis store has 16 children, one of 3 axes 8 and
// one of 2 axes 4: child i takes the upper half of axis a when bit a of i
// is set. A leaf holds at most treeLeafMax keys; one more splits it. The
// root covers all of int32 on every axis (coordinates are biased by 2^31 so
// that unsigned order is signed order), so a node at depth d spans
// 2^(32-d) keys on each axis and a node at depth 32 is a single key.
//
// A query descends only into the children whose region meets its box and
// hands over a child's keys without looking at them when its region lies
// inside the box: it reads the nodes along the box's faces and the keys of
// the leaves those faces cut, not the empty space a flat grid of cells
// would probe nor the whole of a cell the box barely touches.

// treeLeafMax is the most keys a leaf holds.
const treeLeafMax = 64

// treeMaxDepth is the depth of a node that covers a single key.
const treeMaxDepth = 32

// tnode is a node of a spatialTree. A leaf has first -1 and its keys; an
// internal node has its children at nodes[first : first+fan] and no keys.
type tnode struct {
	keys  []ikey
	first int32
	count int32 // keys in the subtree
}

// spatialTree is a 2^axes-way tree over the keys of a store that have a
// chunk or a body block. It is not safe for concurrent use; rangeIndex
// guards it.
type spatialTree struct {
	axes  int
	fan   int32
	nodes []tnode // nodes[0] is the root; children come in blocks of fan
	free  []int32 // first indexes of child blocks a merge released
}

// treeStats counts the work of a query: nodes read and stored keys looked
// at.
type treeStats struct{ nodes, keys int }

// ucoords returns the biased coordinates of the key ik packs; axes a key
// does not have read as 2^31.
func ucoords(ik ikey) [MaxAxes]uint32 {
	const bias = 1 << 31
	return [MaxAxes]uint32{uint32(ik.lo>>32) ^ bias, uint32(ik.lo) ^ bias, uint32(ik.hi>>32) ^ bias, uint32(ik.hi) ^ bias}
}

// child returns which child of a node at depth d holds u: bit a of the
// child is bit 31-d of axis a; bits of axes the tree does not have are
// masked off.
func (t *spatialTree) child(u *[MaxAxes]uint32, d int) int32 {
	shift := treeMaxDepth - 1 - d
	i := u[0]>>shift&1 | (u[1]>>shift&1)<<1 | (u[2]>>shift&1)<<2 | (u[3]>>shift&1)<<3
	return int32(i) & (t.fan - 1)
}

// newSpatialTree returns the tree of keys, which it takes over and
// reorders: leaves share its array until they grow.
func newSpatialTree(axes int, keys []ikey) *spatialTree {
	t := &spatialTree{axes: axes, fan: 1 << axes}
	t.nodes = make([]tnode, 1, 1+len(keys)/8)
	t.build(0, 0, keys)
	return t
}

// build makes node n, at depth d, the subtree of keys: a leaf when they are
// few enough, else their children after sorting keys in place by child
// (an American flag sort). Levels where every key falls in the same child
// (the keys of a world near its origin share the high bits of every axis)
// are laid down without a pass over the keys.
func (t *spatialTree) build(n int32, d int, keys []ikey) {
	if len(keys) <= treeLeafMax || d == treeMaxDepth {
		t.nodes[n].keys, t.nodes[n].first, t.nodes[n].count = keys[:len(keys):len(keys)], -1, int32(len(keys))
		return
	}
	count := t.count(d, keys)
	if u := ucoords(keys[0]); count[t.child(&u, d)] == len(keys) {
		n, d = t.chain(n, d, keys)
		if d == treeMaxDepth { // keys repeat: they share one leaf
			t.build(n, d, keys)
			return
		}
		count = t.count(d, keys)
	}
	t.split(n, d, keys, &count)
}

// count returns how many of keys fall in each child of a node at depth d.
func (t *spatialTree) count(d int, keys []ikey) [16]int {
	var count [16]int
	for i := range keys {
		u := ucoords(keys[i])
		count[t.child(&u, d)]++
	}
	return count
}

// chain makes node n, at depth d, and its descendants internal nodes down
// to the depth where keys first fall in different children, and returns
// the node and depth there.
func (t *spatialTree) chain(n int32, d int, keys []ikey) (int32, int) {
	u0 := ucoords(keys[0])
	var diff [MaxAxes]uint32
	for i := 1; i < len(keys); i++ {
		u := ucoords(keys[i])
		for a := range t.axes {
			diff[a] |= u[a] ^ u0[a]
		}
	}
	split := treeMaxDepth
	for a := range t.axes {
		split = min(split, bits.LeadingZeros32(diff[a]))
	}
	for ; d < split; d++ {
		first := t.block()
		t.nodes[n].keys, t.nodes[n].first, t.nodes[n].count = nil, first, int32(len(keys))
		n = first + t.child(&u0, d)
	}
	return n, d
}

// split makes node n, at depth d, the parent of fan subtrees of keys, count
// of them in each child.
func (t *spatialTree) split(n int32, d int, keys []ikey, count *[16]int) {
	var next [16]int
	for c, at := int32(1), 0; c < t.fan; c++ {
		at += count[c-1]
		next[c] = at
	}
	for c, end := int32(0), 0; c < t.fan; c++ {
		end += count[c]
		for next[c] < end {
			u := ucoords(keys[next[c]])
			if to := t.child(&u, d); to != c {
				keys[next[c]], keys[next[to]] = keys[next[to]], keys[next[c]]
				next[to]++
			} else {
				next[c]++
			}
		}
	}
	first := t.block()
	t.nodes[n].keys, t.nodes[n].first, t.nodes[n].count = nil, first, int32(len(keys))
	from := 0
	for c := range t.fan {
		t.build(first+c, d+1, keys[from:from+count[c]])
		from += count[c]
	}
}

// block returns the first index of fan new empty leaves.
func (t *spatialTree) block() int32 {
	if k := len(t.free); k > 0 {
		first := t.free[k-1]
		t.free = t.free[:k-1]
		return first
	}
	first := int32(len(t.nodes))
	for range t.fan {
		t.nodes = append(t.nodes, tnode{first: -1})
	}
	return first
}

// path returns the nodes from the root to the leaf that holds or would hold
// ik, and the depth of that leaf.
func (t *spatialTree) path(ik ikey, p *[treeMaxDepth + 1]int32) int {
	u := ucoords(ik)
	n, d := int32(0), 0
	p[0] = 0
	for t.nodes[n].first >= 0 {
		n = t.nodes[n].first + t.child(&u, d)
		d++
		p[d] = n
	}
	return d
}

// add records that ik is stored, once.
func (t *spatialTree) add(ik ikey) {
	var p [treeMaxDepth + 1]int32
	d := t.path(ik, &p)
	leaf := &t.nodes[p[d]]
	for _, k := range leaf.keys {
		if k == ik {
			return
		}
	}
	leaf.keys = append(leaf.keys, ik)
	for _, n := range p[:d+1] {
		t.nodes[n].count++
	}
	if len(leaf.keys) > treeLeafMax && d < treeMaxDepth {
		keys := leaf.keys
		t.build(p[d], d, keys)
	}
}

// remove records that ik is no longer stored. A subtree left with at most
// treeLeafMax/2 keys becomes one leaf again.
func (t *spatialTree) remove(ik ikey) {
	var p [treeMaxDepth + 1]int32
	d := t.path(ik, &p)
	leaf := &t.nodes[p[d]]
	i := -1
	for j, k := range leaf.keys {
		if k == ik {
			i = j
			break
		}
	}
	if i < 0 {
		return
	}
	last := len(leaf.keys) - 1
	leaf.keys[i] = leaf.keys[last]
	leaf.keys = leaf.keys[:last]
	for _, n := range p[:d+1] {
		t.nodes[n].count--
	}
	for _, n := range p[:d] {
		if t.nodes[n].count <= treeLeafMax/2 {
			t.merge(n)
			return
		}
	}
}

// merge makes internal node n a leaf of its subtree's keys and releases
// its child blocks.
func (t *spatialTree) merge(n int32) {
	keys := make([]ikey, 0, t.nodes[n].count)
	keys = t.collect(n, keys)
	t.nodes[n].keys, t.nodes[n].first = keys, -1
}

// collect appends the keys of subtree n to keys, releasing its child
// blocks.
func (t *spatialTree) collect(n int32, keys []ikey) []ikey {
	nd := &t.nodes[n]
	if nd.first < 0 {
		return append(keys, nd.keys...)
	}
	first := nd.first
	for c := range t.fan {
		keys = t.collect(first+c, keys)
		t.nodes[first+c] = tnode{first: -1}
	}
	t.free = append(t.free, first)
	return keys
}

// treeQuery is the state of one query.
type treeQuery struct {
	t         *spatialTree
	lo, hi    [MaxAxes]uint32 // the box, biased
	fn        func(ikey)
	st        treeStats
	axes, fan int32
}

// query calls fn for every stored key in b, whose Min does not exceed its
// Max on any axis, and returns the work it did.
func (t *spatialTree) query(b Box, fn func(ikey)) treeStats {
	q := treeQuery{t: t, fn: fn, axes: int32(t.axes), fan: t.fan}
	q.lo, q.hi = ucoords(b.Min.ik()), ucoords(b.Max.ik())
	q.visit(0, 0, [MaxAxes]uint32{})
	return q.st
}

// visit queries node n at depth d whose region starts at org.
func (q *treeQuery) visit(n int32, d int, org [MaxAxes]uint32) {
	q.st.nodes++
	nd := &q.t.nodes[n]
	if nd.count == 0 {
		return
	}
	if q.inside(d, &org) {
		q.all(n)
		return
	}
	if nd.first < 0 {
		for _, k := range nd.keys {
			q.st.keys++
			if q.contains(k) {
				q.fn(k)
			}
		}
		return
	}
	// Per axis, which halves of the node meet the box: bit 0 the lower,
	// bit 1 the upper.
	half := uint32(1) << (treeMaxDepth - 1 - d)
	var sides [MaxAxes]uint8
	for a := range q.axes {
		mid := org[a] + half
		if q.lo[a] < mid {
			sides[a] |= 1
		}
		if q.hi[a] >= mid {
			sides[a] |= 2
		}
	}
	first := nd.first
	for c := range q.fan {
		co := org
		ok := true
		for a := range q.axes {
			up := c >> a & 1
			if sides[a]>>up&1 == 0 {
				ok = false
				break
			}
			co[a] += uint32(up) * half
		}
		if ok {
			q.visit(first+c, d+1, co)
		}
	}
}

// inside reports whether the region at depth d starting at org lies in the
// box.
func (q *treeQuery) inside(d int, org *[MaxAxes]uint32) bool {
	span := uint64(1)<<(treeMaxDepth-d) - 1
	for a := range q.axes {
		if org[a] < q.lo[a] || uint64(org[a])+span > uint64(q.hi[a]) {
			return false
		}
	}
	return true
}

// contains reports whether ik lies in the box.
func (q *treeQuery) contains(ik ikey) bool {
	u := ucoords(ik)
	for a := range q.axes {
		if u[a] < q.lo[a] || u[a] > q.hi[a] {
			return false
		}
	}
	return true
}

// all hands over every key of subtree n, whose node the caller has read.
func (q *treeQuery) all(n int32) {
	nd := &q.t.nodes[n]
	if nd.first < 0 {
		q.st.keys += len(nd.keys)
		for _, k := range nd.keys {
			q.fn(k)
		}
		return
	}
	for c := range q.fan {
		q.st.nodes++
		if q.t.nodes[nd.first+c].count > 0 {
			q.all(nd.first + c)
		}
	}
}
