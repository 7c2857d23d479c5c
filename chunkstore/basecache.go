package chunkstore

import (
	"container/list"
	"sync"
	"sync/atomic"
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

// baseEntry is a generated chunk, masked, and what encoding learnt of it.
type baseEntry struct {
	pos Key
	pix []uint32 // read-only once cached
	// plain is the payload size of the base's own record without Delta
	// (Palette, else Full), compressed, once an encode needed it: the
	// estimate of what a chunk a few pixels off the base costs that way.
	plain atomic.Pointer[plainSize]
}

// plainSize is the size of a chunk's smallest record that is not a Delta.
type plainSize struct {
	payload int         // compressed payload bytes (the layer mask and extra data not counted)
	typ     StorageType // Palette or Full
	count   int         // distinct pixels (a Palette's count), 0 for Full
}

func newBaseCache(max int) *baseCache {
	if max <= 0 {
		return nil
	}
	return &baseCache{max: max, m: make(map[Key]*list.Element, max)}
}

func (c *baseCache) get(pos Key) *baseEntry {
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
	return el.Value.(*baseEntry)
}

// put caches b, which the cache then owns and nobody may change, and
// returns the entry cached for b.pos: b, or the one another goroutine put
// first.
func (c *baseCache) put(b *baseEntry) *baseEntry {
	if c == nil {
		return b
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[b.pos]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*baseEntry)
	}
	if c.lru.Len() >= c.max {
		old := c.lru.Back()
		delete(c.m, old.Value.(*baseEntry).pos)
		c.lru.Remove(old)
	}
	c.m[b.pos] = c.lru.PushFront(b)
	return b
}
