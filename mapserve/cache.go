package mapserve

import (
	"container/list"
	"image"
	"sync"
)

// tileKey names a tile's content: its level and place, and a hash of
// everything drawn in it (the save's identity, each stored chunk's record,
// each body's block). Tiles that draw nothing but the "not stored" hatch
// share one key per level, whatever their place.
type tileKey struct {
	z, x, y int32
	sum     uint64
}

// tile is a rendered tile: its pixels (to build the levels above it) and
// its PNG, either of which may be missing.
type tile struct {
	rgba *image.RGBA
	png  []byte
}

func (t *tile) bytes() int64 {
	n := int64(len(t.png))
	if t.rgba != nil {
		n += int64(len(t.rgba.Pix))
	}
	return n
}

// cache keeps rendered tiles, the least recently used going first once
// their bytes exceed the budget, and renders each key once however many
// requests want it at the same time.
type cache struct {
	mu       sync.Mutex
	budget   int64
	used     int64
	lru      *list.List // of *cacheEntry, most recent first
	byKey    map[tileKey]*list.Element
	inflight map[flightKey]*flight
	hits     int64
	misses   int64
}

type cacheEntry struct {
	key tileKey
	t   tile
}

// flightKey is one rendering under way: the pixels of a tile, or its PNG.
type flightKey struct {
	key tileKey
	png bool
}

type flight struct {
	done chan struct{}
	t    tile
	err  error
}

func newCache(budget int64) *cache {
	return &cache{budget: budget, lru: list.New(), byKey: map[tileKey]*list.Element{}, inflight: map[flightKey]*flight{}}
}

// get returns the tile of key with its pixels (png false) or its PNG (png
// true), calling render when the cache does not hold it; concurrent calls for
// the same key and form wait for one make.
func (c *cache) get(key tileKey, png bool, render func() (tile, error)) (tile, error) {
	fk := flightKey{key, png}
	c.mu.Lock()
	if e, ok := c.byKey[key]; ok {
		t := e.Value.(*cacheEntry).t
		if png && t.png != nil || !png && t.rgba != nil {
			c.lru.MoveToFront(e)
			c.hits++
			c.mu.Unlock()
			return t, nil
		}
	}
	if f, ok := c.inflight[fk]; ok {
		c.mu.Unlock()
		<-f.done
		return f.t, f.err
	}
	c.misses++
	f := &flight{done: make(chan struct{})}
	c.inflight[fk] = f
	c.mu.Unlock()

	f.t, f.err = render()

	c.mu.Lock()
	delete(c.inflight, fk)
	if f.err == nil {
		c.put(key, f.t)
	}
	c.mu.Unlock()
	close(f.done)
	return f.t, f.err
}

// put adds what t holds to the entry of key and evicts down to the budget.
// The caller holds mu.
func (c *cache) put(key tileKey, t tile) {
	if e, ok := c.byKey[key]; ok {
		ce := e.Value.(*cacheEntry)
		c.used -= ce.t.bytes()
		if t.rgba != nil {
			ce.t.rgba = t.rgba
		}
		if t.png != nil {
			ce.t.png = t.png
		}
		c.used += ce.t.bytes()
		c.lru.MoveToFront(e)
	} else {
		c.byKey[key] = c.lru.PushFront(&cacheEntry{key: key, t: t})
		c.used += t.bytes()
	}
	for c.used > c.budget && c.lru.Len() > 1 {
		e := c.lru.Back()
		ce := e.Value.(*cacheEntry)
		c.lru.Remove(e)
		delete(c.byKey, ce.key)
		c.used -= ce.t.bytes()
	}
}

// stats returns the cache's hits, misses and bytes.
func (c *cache) stats() (hits, misses, used int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses, c.used
}
