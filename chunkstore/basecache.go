package chunkstore

import (
	"container/list"
	"sync"
)

// baseCache keeps the generator's output for the chunks most recently
// encoded or read, masked: a player works in a few chunks, which are saved
// again and again, and each Delta encode or read needs their generated base.
// Generating a 512x512 chunk costs about as much as the rest of encoding it.
type baseCache struct {
	mu  sync.Mutex
	max int
	m   map[Key]*list.Element
	lru list.List // of *baseEntry, most recent first
}

type baseEntry struct {
	pos Key
	pix []uint32 // read-only once cached
}

func newBaseCache(max int) *baseCache {
	if max <= 0 {
		return nil
	}
	return &baseCache{max: max, m: make(map[Key]*list.Element, max)}
}

func (c *baseCache) get(pos Key) []uint32 {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[pos]
	if !ok {
		return nil
	}
	c.lru.MoveToFront(el)
	return el.Value.(*baseEntry).pix
}

// put caches pix, which the cache then owns and nobody may change.
func (c *baseCache) put(pos Key, pix []uint32) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[pos]; ok {
		c.lru.MoveToFront(el)
		return
	}
	var e *baseEntry
	if c.lru.Len() >= c.max {
		old := c.lru.Back()
		e = old.Value.(*baseEntry)
		delete(c.m, e.pos)
		c.lru.Remove(old)
	}
	c.m[pos] = c.lru.PushFront(&baseEntry{pos: pos, pix: pix})
}
