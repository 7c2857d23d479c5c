package chunkstore

import (
	"fmt"
	"slices"
	"sync"
)

// Range queries. The runtime index is a hash table, which answers "is
// this chunk stored" in one probe but has no order; "every stored chunk in
// this box" would have to visit every entry. So the first range query
// builds a second index beside it, a spatialTree over the stored keys
// (see tree.go): a query reads the tree's nodes that meet its box and the
// keys of the leaves its faces cut; commits keep the tree up to date from
// then on. A store that never answers a range query never pays for it.

// rangeIndex holds the spatial tree of a store, built on first use.
type rangeIndex struct {
	mu   sync.Mutex
	tree *spatialTree // nil until a range query builds it
}

// buildTree makes the spatial tree of the store's current entries: every
// key with a chunk or a body block. The caller holds s.mu (shared at
// least).
func (s *Store) buildTree() *spatialTree {
	keys := make([]ikey, 0, s.chunks.Len()+s.bodies.Len())
	s.chunks.each(func(k ikey, _ ival) bool {
		keys = append(keys, k)
		return true
	})
	s.bodies.each(func(k ikey, _ ival) bool {
		if _, ok := s.chunks.get(k); !ok {
			keys = append(keys, k)
		}
		return true
	})
	return newSpatialTree(s.axes, keys)
}

// updateRange brings a built spatial tree up to date with the index
// changes of a commit. The caller holds s.mu exclusively.
func (s *Store) updateRange(muts []mutation) {
	s.space.mu.Lock()
	defer s.space.mu.Unlock()
	t := s.space.tree
	if t == nil {
		return
	}
	for _, m := range muts {
		_, chunk := s.chunks.get(m.key)
		_, body := s.bodies.get(m.key)
		if chunk || body {
			t.add(m.key)
		} else {
			t.remove(m.key)
		}
	}
}

// EntriesIn returns every index entry whose key lies in b, chunks and
// body blocks, in page-table order (as [Store.Entries] gives them). It
// visits only the nodes of a spatial tree that meet b and the keys of the
// leaves b's faces cut, not the whole index (see the package
// documentation); the first call builds that tree, in time linear in the
// entries. b's corners must have the
// store's axes (ErrAxes); a box whose Min exceeds its Max on some axis is
// empty.
func (s *Store) EntriesIn(b Box) ([]Entry, error) {
	es, _, err := s.entriesInBox(b)
	return es, err
}

// entriesInBox is EntriesIn that also returns the work the tree did.
func (s *Store) entriesInBox(b Box) ([]Entry, treeStats, error) {
	if err := checkAxes(b.Min, s.axes, "entries in box"); err != nil {
		return nil, treeStats{}, err
	}
	if err := checkAxes(b.Max, s.axes, "entries in box"); err != nil {
		return nil, treeStats{}, err
	}
	for i := range s.axes {
		if b.Min.c[i] > b.Max.c[i] {
			return nil, treeStats{}, nil
		}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, treeStats{}, ErrClosed
	}
	s.space.mu.Lock()
	if s.space.tree == nil {
		s.space.tree = s.buildTree()
	}
	var keys []ikey
	visited := s.space.tree.query(b, func(k ikey) { keys = append(keys, k) })
	s.space.mu.Unlock()
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

// String describes the box.
func (b Box) String() string { return fmt.Sprintf("%v..%v", b.Min, b.Max) }
