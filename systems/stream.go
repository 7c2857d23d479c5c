package systems

import (
	"fmt"
	"sort"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/conv"
)

type focusArea struct {
	c components.ChunkPos
	r int32
}

func (r *runner) tickStream() {
	r.ticks++
	areas := r.focusAreas()
	r.spawnArrived(areas)
	if len(areas) > 0 {
		r.requestWanted(areas)
		r.unloadFar(areas)
	}
	r.trackRegional()
	r.dropLooseBodies()
	r.checkpoint()
}

func (r *runner) focusAreas() []focusArea {
	var areas []focusArea
	q := r.focuses.Query()
	for q.Next() {
		f := q.Get()
		areas = append(areas, focusArea{c: components.ChunkOf(f.X, f.Y, r.cfg.ChunkSize), r: f.Radius})
	}
	return areas
}

func chebyshev(a, b components.ChunkPos) int32 {
	dx, dy := a.X-b.X, a.Y-b.Y
	if dx < 0 {
		dx = -dx
	}
	if dy < 0 {
		dy = -dy
	}
	return max(dx, dy)
}

// slack returns how far beyond the nearest focus's radius pos lies
// (<= 0 inside some focus's radius).
func slack(areas []focusArea, pos components.ChunkPos) int32 {
	best := int32(1 << 30)
	for _, a := range areas {
		best = min(best, chebyshev(a.c, pos)-a.r)
	}
	return best
}

// requestWanted asks for every chunk within a focus's radius that is not
// loaded or on its way, nearest first, unless its last read failed and
// its backoff has not passed. Unloaded chunks that wait for the next save
// come back from memory at once.
func (r *runner) requestWanted(areas []focusArea) {
	type cand struct {
		pos  components.ChunkPos
		dist int32
	}
	var cands []cand
	for _, a := range areas {
		for y := a.c.Y - a.r; y <= a.c.Y+a.r; y++ {
			for x := a.c.X - a.r; x <= a.c.X+a.r; x++ {
				pos := components.ChunkPos{X: x, Y: y}
				if _, ok := r.index.Get(pos); ok || r.loading[pos] || !r.readDue(pos) {
					continue
				}
				cands = append(cands, cand{pos, chebyshev(a.c, pos)})
			}
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].dist != cands[j].dist {
			return cands[i].dist < cands[j].dist
		}
		if cands[i].pos.Y != cands[j].pos.Y {
			return cands[i].pos.Y < cands[j].pos.Y
		}
		return cands[i].pos.X < cands[j].pos.X
	})
	for _, c := range cands {
		if r.loading[c.pos] {
			continue // wanted by two foci
		}
		if _, ok := r.pendingChunks[c.pos]; ok {
			if p := r.reg.pending[c.pos]; p != nil && p.complete {
				// Pixels and entities wait in memory: no read needed.
				r.spawn(loadResult{pos: c.pos})
				continue
			}
		}
		r.loading[c.pos] = true
		r.loader.request(c.pos)
	}
}

// spawnArrived spawns the chunks the loader has read that are still wanted.
// A chunk whose read failed without proving its record damaged stays
// unloaded (see readFailed).
func (r *runner) spawnArrived(areas []focusArea) {
	for _, res := range r.loader.drain() {
		delete(r.loading, res.pos)
		if _, ok := r.index.Get(res.pos); ok {
			continue
		}
		if len(areas) > 0 && slack(areas, res.pos) > 1 {
			r.settleCommitted(res.pos) // the focus moved on
			continue
		}
		if res.readErr != nil {
			r.readFailed(res.pos, res.readErr)
			continue
		}
		r.readSucceeded(res.pos)
		if res.chunkErr != nil {
			r.report(problem{section: chunkstore.SectionChunk, pos: res.pos, err: fmt.Errorf("regenerated: %w", res.chunkErr)})
		}
		if res.bodyErr != nil {
			r.report(problem{section: chunkstore.SectionBodies, pos: res.pos, err: fmt.Errorf("dropped: %w", res.bodyErr)})
		}
		r.spawn(res)
	}
}

// spawn creates the entity of a chunk and its regional entities: pixels
// still waiting for a save win over what the loader read, and so do
// regional entities (see spawnRegion).
func (r *runner) spawn(res loadResult) {
	pos := res.pos
	var chunk components.Chunk
	state := components.ChunkState{Status: components.Clean}
	if p, ok := r.pendingChunks[pos]; ok {
		chunk = p.chunk
		state = components.ChunkState{Status: components.Dirty, Version: p.version}
		if p.committed {
			state.Status = components.Persisted
		}
		delete(r.pendingChunks, pos)
	} else {
		chunk = components.NewChunk(r.cfg.ChunkSize, conv.Pixels(res.pix))
		chunk.SetData(res.data)
	}
	e := r.chunkMap.NewEntity(&pos, &chunk, &state)
	r.index.Set(pos, e)
	if r.cfg.OnChunkLoaded != nil {
		r.cfg.OnChunkLoaded(r.world, e)
	}
	r.spawnRegion(pos, res.block)
}

// unloadFar unloads the chunks further than Radius+1 from every focus, and
// cancels queued loads that are no longer wanted.
func (r *runner) unloadFar(areas []focusArea) {
	var far []components.ChunkPos
	r.index.All(func(pos components.ChunkPos, _ ecs.Entity) bool {
		if slack(areas, pos) > 1 {
			far = append(far, pos)
		}
		return true
	})
	for pos := range r.loading {
		if slack(areas, pos) > 1 && r.loader.cancel(pos) {
			delete(r.loading, pos)
			r.settleCommitted(pos)
		}
	}
	r.forgetRetries(areas)
	if len(far) == 0 {
		return
	}
	sort.Slice(far, func(i, j int) bool {
		return far[i].Y < far[j].Y || far[i].Y == far[j].Y && far[i].X < far[j].X
	})
	for _, pos := range far {
		// The chunk's regional entities go first: pending, then despawned.
		// When they cannot be saved, the chunk stays.
		if err := r.unloadRegion(pos); err != nil {
			r.report(problem{section: sectionRegional, pos: pos, err: err})
			continue
		}
		e, _ := r.index.Get(pos)
		if r.chunkMap.HasAll(e) {
			_, ch, st := r.chunkMap.Get(e)
			if st.IsDirty() {
				r.pendingChunks[pos] = pendingChunk{chunk: *ch, version: st.Version}
			}
		}
		r.world.RemoveEntity(e)
		r.index.Delete(pos)
	}
}

// dropLooseBodies removes the pixel bodies that are not regional (no
// Persistable, no Regional) whose centre is in no loaded chunk: they go
// with their chunk, unsaved.
func (r *runner) dropLooseBodies() {
	var remove []ecs.Entity
	q := r.loose.Query()
	for q.Next() {
		b := q.Get()
		pos := components.ChunkOf(float64(b.X), float64(b.Y), r.cfg.ChunkSize)
		if _, ok := r.index.Get(pos); !ok && !r.loading[pos] {
			remove = append(remove, q.Entity())
		}
	}
	for _, e := range remove {
		r.world.RemoveEntity(e)
	}
}
