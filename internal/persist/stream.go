package persist

import (
	"fmt"
	"sort"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/snapshot"
)

type focusArea struct {
	c components.ChunkPos
	r int32
}

func (r *Runtime) tickStream() {
	areas := r.focusAreas()
	r.spawnArrived(areas)
	if len(areas) == 0 {
		return
	}
	r.requestWanted(areas)
	r.unloadFar(areas)
	r.unloadOrphans()
}

func (r *Runtime) focusAreas() []focusArea {
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
// loaded or on its way, nearest first. Unloaded chunks that wait for the
// next save come back from memory at once.
func (r *Runtime) requestWanted(areas []focusArea) {
	type cand struct {
		pos  components.ChunkPos
		dist int32
	}
	var cands []cand
	for _, a := range areas {
		for y := a.c.Y - a.r; y <= a.c.Y+a.r; y++ {
			for x := a.c.X - a.r; x <= a.c.X+a.r; x++ {
				pos := components.ChunkPos{X: x, Y: y}
				if _, ok := r.index.Get(pos); ok || r.loading[pos] {
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
		if _, ok := r.pendingChunks[c.pos]; ok && !r.pendingBodies[c.pos].Merge {
			r.spawn(loadResult{pos: c.pos}, true)
			continue
		}
		r.loading[c.pos] = true
		r.loader.request(c.pos)
	}
}

// spawnArrived spawns the chunks the loader has read that are still wanted.
func (r *Runtime) spawnArrived(areas []focusArea) {
	for _, res := range r.loader.drain() {
		delete(r.loading, res.pos)
		if _, ok := r.index.Get(res.pos); ok {
			continue
		}
		if len(areas) > 0 && slack(areas, res.pos) > 1 {
			continue // the focus moved on
		}
		if res.chunkErr != nil {
			r.report(problem{section: chunkstore.SectionChunk, pos: res.pos, err: fmt.Errorf("regenerated: %w", res.chunkErr)})
		}
		if res.bodyErr != nil {
			r.report(problem{section: chunkstore.SectionBodies, pos: res.pos, err: fmt.Errorf("dropped: %w", res.bodyErr)})
		}
		r.spawn(res, false)
	}
}

// spawn creates the entities of a chunk and its bodies. With fromPending,
// the chunk's pixels and bodies come from what unloading kept in memory;
// otherwise from the loader, except that pixels still waiting for a save
// win over the stored ones.
func (r *Runtime) spawn(res loadResult, fromPending bool) {
	pos := res.pos
	var chunk components.Chunk
	state := components.ChunkState{Status: components.Clean}
	if p, ok := r.pendingChunks[pos]; ok {
		chunk = p.chunk
		state = components.ChunkState{Status: components.Dirty, Version: p.version}
		delete(r.pendingChunks, pos)
	} else {
		chunk = components.NewChunkFrom(r.cfg.ChunkSize, snapshot.Pixels(res.pix))
	}

	var bodies []components.PixelBody
	if !fromPending {
		for i := range res.bodies {
			bodies = append(bodies, snapshot.FromStore(&res.bodies[i]))
		}
		r.storedBodies[pos] = snapshot.HashBodies(bodies)
	}
	if p, ok := r.pendingBodies[pos]; ok {
		if p.Merge {
			bodies = mergeSet(bodies, p.Bodies)
		} else {
			bodies = p.Bodies
		}
		delete(r.pendingBodies, pos)
	}

	e := r.chunkMap.NewEntity(&pos, &chunk, &state)
	r.index.Set(pos, e)
	if r.cfg.OnChunkLoaded != nil {
		r.cfg.OnChunkLoaded(r.world, e)
	}
	for i := range bodies {
		be := r.bodyMap.NewEntity(&bodies[i], &components.Persistable{})
		if r.cfg.OnBodyLoaded != nil {
			r.cfg.OnBodyLoaded(r.world, be)
		}
	}
}

// mergeSet returns base with the bodies of add replacing those with the
// same id, and the others of add appended.
func mergeSet(base, add []components.PixelBody) []components.PixelBody {
	return snapshot.MergeByID(base, add, func(b *components.PixelBody) uint64 { return uint64(b.ID) })
}

// unloadFar unloads the chunks further than Radius+1 from every focus, and
// cancels queued loads that are no longer wanted.
func (r *Runtime) unloadFar(areas []focusArea) {
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
		}
	}
	if len(far) == 0 {
		return
	}
	sort.Slice(far, func(i, j int) bool {
		return far[i].Y < far[j].Y || far[i].Y == far[j].Y && far[i].X < far[j].X
	})
	unload := make(map[components.ChunkPos]bool, len(far))
	for _, p := range far {
		unload[p] = true
	}
	r.unloadBodies(func(pos components.ChunkPos) bool { return unload[pos] }, false)
	for _, pos := range far {
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

// unloadOrphans unloads the bodies whose centre is in a chunk that is
// neither loaded nor on its way: persistable ones are merged into that
// chunk's stored bodies at the next save.
func (r *Runtime) unloadOrphans() {
	r.unloadBodies(func(pos components.ChunkPos) bool {
		_, loaded := r.index.Get(pos)
		return !loaded && !r.loading[pos]
	}, true)
}

// unloadBodies removes every body whose centre chunk matches; persistable,
// non-empty ones are kept for the next save, as their chunk's complete set
// (or, with merge, as additions to the stored set).
func (r *Runtime) unloadBodies(match func(components.ChunkPos) bool, merge bool) {
	var remove []ecs.Entity
	var sets map[components.ChunkPos][]components.PixelBody // made on first use: this runs every tick
	q := r.bodies.Query()
	for q.Next() {
		b := q.Get()
		pos := components.ChunkOf(float64(b.X), float64(b.Y), r.cfg.ChunkSize)
		if !match(pos) {
			continue
		}
		remove = append(remove, q.Entity())
		if sets == nil {
			sets = map[components.ChunkPos][]components.PixelBody{}
		}
		if r.world.Unsafe().Has(q.Entity(), r.persistID) && !b.IsEmpty() {
			sets[pos] = append(sets[pos], *b)
		}
	}
	if !merge {
		if sets == nil {
			sets = map[components.ChunkPos][]components.PixelBody{}
		}
		// Every unloading chunk gets its set, empty included, so that bodies
		// that left or were destroyed are removed from the store.
		r.index.All(func(pos components.ChunkPos, _ ecs.Entity) bool {
			if match(pos) {
				if _, ok := sets[pos]; !ok {
					sets[pos] = nil
				}
			}
			return true
		})
	}
	for pos, bodies := range sets {
		h := snapshot.HashBodies(bodies)
		if merge {
			if p, ok := r.pendingBodies[pos]; ok {
				bodies = mergeSet(p.Bodies, bodies)
				h = snapshot.HashBodies(bodies)
			}
			r.pendingBodies[pos] = snapshot.BodySet{Pos: pos, Bodies: bodies, Hash: h, Merge: true}
			continue
		}
		if h == r.storedBodies[pos] {
			delete(r.pendingBodies, pos)
			continue
		}
		r.pendingBodies[pos] = snapshot.BodySet{Pos: pos, Bodies: bodies, Hash: h}
	}
	for _, e := range remove {
		r.world.RemoveEntity(e)
	}
}
