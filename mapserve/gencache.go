package mapserve

import (
	"slices"
	"sync"

	"github.com/arksave/arksave/chunkstore"
)

// generatedChunks is how many generated chunks a server keeps: the tiles
// of one chunk (four of a 512-pixel chunk) generate it once.
const generatedChunks = 16

// genCache is the game's generator with the chunks it made last kept, the
// most recent last. It is safe for concurrent use, as the generator is.
type genCache struct {
	gen     chunkstore.Generator
	mu      sync.Mutex
	entries []genEntry
}

type genEntry struct {
	x, y int32
	seed uint64
	pix  []uint32
}

// Version returns the generator's version.
func (g *genCache) Version() uint32 { return g.gen.Version() }

// Generate fills dst with the chunk at (x, y), generated once while kept.
func (g *genCache) Generate(x, y int32, seed uint64, dst []uint32) {
	g.mu.Lock()
	i := slices.IndexFunc(g.entries, func(e genEntry) bool {
		return e.x == x && e.y == y && e.seed == seed && len(e.pix) == len(dst)
	})
	if i >= 0 {
		e := g.entries[i]
		copy(dst, e.pix)
		g.entries = append(slices.Delete(g.entries, i, i+1), e)
		g.mu.Unlock()
		return
	}
	g.mu.Unlock()
	g.gen.Generate(x, y, seed, dst)
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.entries) == generatedChunks {
		g.entries = slices.Delete(g.entries, 0, 1)
	}
	g.entries = append(g.entries, genEntry{x, y, seed, slices.Clone(dst)})
}
