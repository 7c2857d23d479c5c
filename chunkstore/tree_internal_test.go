package chunkstore

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// treeKey returns a random key of n axes: mostly in [-spread, spread) on
// every axis, one axis in 16 at an end of int32.
func treeKey(rng *rand.Rand, n, spread int) ikey {
	k := Key{n: uint8(n)}
	for a := range n {
		k.c[a] = int32(rng.IntN(2*spread) - spread)
		if rng.IntN(16) == 0 {
			k.c[a] = []int32{math.MinInt32, math.MaxInt32, -1, 0}[rng.IntN(4)]
		}
	}
	return k.ik()
}

// treeBox returns a random box of n axes around [-spread, spread), now and
// then thin or reaching an end of int32.
func treeBox(rng *rand.Rand, n, spread int) Box {
	b := Box{Min: Key{n: uint8(n)}, Max: Key{n: uint8(n)}}
	for a := range n {
		lo, hi := int32(rng.IntN(3*spread)-3*spread/2), int32(rng.IntN(3*spread)-3*spread/2)
		b.Min.c[a], b.Max.c[a] = min(lo, hi), max(lo, hi)
		switch rng.IntN(8) {
		case 0:
			b.Max.c[a] = b.Min.c[a]
		case 1:
			b.Min.c[a] = math.MinInt32
		case 2:
			b.Max.c[a] = math.MaxInt32
		}
	}
	return b
}

// checkTree walks subtree n at depth d whose region starts at org and
// fails unless every node's count is its keys', every leaf holds at most
// treeLeafMax keys (or is a single key's region), every internal node
// more than treeLeafMax/2, and every key lies in its leaf's region. It
// returns the keys.
func checkTree(t *testing.T, tr *spatialTree, n int32, d int, org [MaxAxes]uint32, keys []ikey) []ikey {
	t.Helper()
	nd := tr.nodes[n]
	if nd.first < 0 {
		if int(nd.count) != len(nd.keys) || (len(nd.keys) > treeLeafMax && d < treeMaxDepth) {
			t.Fatalf("leaf %d at depth %d: count %d, %d keys", n, d, nd.count, len(nd.keys))
		}
		span := uint64(1)<<(treeMaxDepth-d) - 1
		for _, k := range nd.keys {
			u := ucoords(k)
			for a := range tr.axes {
				if u[a] < org[a] || uint64(u[a]) > uint64(org[a])+span {
					t.Fatalf("key %v outside its leaf at depth %d", keyOf(k, tr.axes), d)
				}
			}
		}
		return append(keys, nd.keys...)
	}
	if nd.count <= treeLeafMax/2 || nd.keys != nil {
		t.Fatalf("internal node %d at depth %d: count %d, %d keys", n, d, nd.count, len(nd.keys))
	}
	from := len(keys)
	half := uint32(1) << (treeMaxDepth - 1 - d)
	for c := range tr.fan {
		co := org
		for a := range tr.axes {
			co[a] += uint32(c>>a&1) * half
		}
		keys = checkTree(t, tr, nd.first+c, d+1, co, keys)
	}
	if len(keys)-from != int(nd.count) {
		t.Fatalf("internal node %d at depth %d: count %d, %d keys below", n, d, nd.count, len(keys)-from)
	}
	return keys
}

// meeting counts the nodes of subtree n whose region meets b and whose
// parent's region lies not inside b, plus every node under a region inside
// b: the nodes a query of b must read.
func meeting(tr *spatialTree, b Box, n int32, d int, org [MaxAxes]uint32) int {
	q := treeQuery{t: tr, axes: int32(tr.axes), fan: tr.fan}
	q.lo, q.hi = ucoords(b.Min.ik()), ucoords(b.Max.ik())
	span := uint64(1)<<(treeMaxDepth-d) - 1
	for a := range tr.axes {
		if uint64(org[a])+span < uint64(q.lo[a]) || org[a] > q.hi[a] {
			return 0
		}
	}
	nd := tr.nodes[n]
	if nd.first < 0 || nd.count == 0 {
		return 1
	}
	if q.inside(d, &org) {
		return subtreeNodes(tr, n)
	}
	count := 1
	half := uint32(1) << (treeMaxDepth - 1 - d)
	for c := range tr.fan {
		co := org
		for a := range tr.axes {
			co[a] += uint32(c>>a&1) * half
		}
		count += meeting(tr, b, nd.first+c, d+1, co)
	}
	return count
}

// subtreeNodes counts the nodes of subtree n, empty children of internal
// nodes included but not what lies under an empty node.
func subtreeNodes(tr *spatialTree, n int32) int {
	nd := tr.nodes[n]
	if nd.first < 0 || nd.count == 0 {
		return 1
	}
	count := 1
	for c := range tr.fan {
		count += subtreeNodes(tr, nd.first+c)
	}
	return count
}

// The spatial tree follows adds and removals (repeated adds, removals of
// keys it lacks, keys at the ends of int32) with its bounds kept: a leaf
// holds at most treeLeafMax keys, an internal node more than half that,
// each node counts its keys; a query finds exactly the keys in its box
// and reads exactly the nodes whose region meets the box.
func TestSpatialTreeFollowsChanges(t *testing.T) {
	for _, n := range []int{2, 3, 4} {
		t.Run(fmt.Sprint(n, " axes"), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(n), 9))
			const spread = 12
			model := map[ikey]bool{}
			var start []ikey
			for range 300 {
				k := treeKey(rng, n, spread)
				if !model[k] {
					model[k] = true
					start = append(start, k)
				}
			}
			tr := newSpatialTree(n, start)
			splits, merges := 0, 0
			for round := range 60 {
				adding := round%20 < 12 // grow, then shrink, then grow again
				change := func(k ikey, add bool) {
					nodes, free := len(tr.nodes)-len(tr.free)*int(tr.fan), len(tr.free)
					if add {
						tr.add(k)
						model[k] = true
					} else {
						tr.remove(k)
						delete(model, k)
					}
					if len(tr.nodes)-len(tr.free)*int(tr.fan) > nodes {
						splits++
					}
					if len(tr.free) > free {
						merges++
					}
				}
				for range 150 {
					change(treeKey(rng, n, spread), rng.IntN(3) > 0 == adding) // often removing a key not stored
				}
				if !adding { // and some that are
					stored := slices.SortedFunc(maps.Keys(model), func(a, b ikey) int { return compareKeys(keyOf(a, n), keyOf(b, n)) })
					for range min(150, len(stored)) {
						i := rng.IntN(len(stored))
						change(stored[i], false)
						stored = slices.Delete(stored, i, i+1)
					}
				}
				got := checkTree(t, tr, 0, 0, [MaxAxes]uint32{}, nil)
				if len(got) != len(model) {
					t.Fatalf("round %d: tree holds %d keys, %d stored", round, len(got), len(model))
				}
				for _, k := range got {
					if !model[k] {
						t.Fatalf("round %d: tree holds %v, not stored", round, keyOf(k, n))
					}
				}
				for range 20 {
					b := treeBox(rng, n, spread)
					var found []ikey
					st := tr.query(b, func(k ikey) { found = append(found, k) })
					var want []ikey
					for k := range model {
						if b.Contains(keyOf(k, n)) {
							want = append(want, k)
						}
					}
					less := func(a, b ikey) int { return compareKeys(keyOf(a, n), keyOf(b, n)) }
					slices.SortFunc(found, less)
					slices.SortFunc(want, less)
					if !slices.Equal(found, want) {
						t.Fatalf("round %d: box %v: %d keys, %d stored in it", round, b, len(found), len(want))
					}
					if m := meeting(tr, b, 0, 0, [MaxAxes]uint32{}); st.nodes != m {
						t.Fatalf("round %d: box %v: read %d nodes, %d meet it", round, b, st.nodes, m)
					}
				}
			}
			if splits == 0 || merges == 0 {
				t.Fatalf("%d changes split leaves, %d merged them: the test missed a path", splits, merges)
			}
		})
	}
}
