package systems

import (
	"errors"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"sort"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/conv"
	"github.com/arksave/arksave/internal/plugin"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/snapshot"
)

// Regional entities (components.Regional) live in the chunk they stand in.
// The runtime places every such entity in a loaded chunk, its home (the
// plugin's home component), keeps the chunk's members, and saves them
// with the chunk as an entity section (archetype.AppendEntities) plus the
// pixel bodies among them (body records). A chunk's entities are "dirty"
// (its region's version differs from the saved one) when one is spawned,
// despawned, crosses into or out of it by more than the hysteresis margin,
// or when a checkpoint finds that their saved form changed.

// region is what the runtime knows of the regional entities of one loaded
// chunk.
type region struct {
	members []ecs.Entity // placed with home here; may hold stale entries until pruned
	version uint64       // bumped by every change
	saved   uint64       // the version the store holds (or that was loaded)
	hash    uint64       // hash of what the store holds (0: nothing, or unknown)
	kept    keptEntities // what this game cannot read, carried as stored
}

// keptEntities is what a chunk's stored entities hold that this game
// cannot read (a component type it does not register, or registers
// incompatibly): entity sections as stored, and the pixel bodies that
// none of the chunk's readable entities claims (they may be those
// entities'). They are not spawned; every save of the chunk's entities
// writes them again unchanged, before the chunk's own section, so that a
// game that can read them gets them back.
type keptEntities struct {
	sections [][]byte
	bodies   []components.PixelBody
}

func (k *keptEntities) empty() bool { return len(k.sections) == 0 && len(k.bodies) == 0 }

func (g *region) dirty() bool { return g.version != g.saved }

// pendingPart is entities unloaded into a chunk that is not loaded, waiting
// for a save: as one entity section and the bodies among them.
type pendingPart struct {
	section   []byte
	bodies    []components.PixelBody
	version   uint64
	committed bool // a save committed it while the chunk was on its way back
}

// pendingSet is what waits in memory for a save of an unloaded chunk's
// entities: complete, the chunk's whole set (it was unloaded with them);
// otherwise parts to add to what the store holds (entities that moved or
// were placed into the chunk while it was not loaded).
type pendingSet struct {
	complete bool
	hash     uint64 // of a complete set of one part
	parts    []pendingPart
}

// committed reports whether a save committed every part of the set (it is
// kept only for a chunk on its way back, which takes it instead of what the
// loader may have read before that commit).
func (p *pendingSet) committed() bool {
	for _, part := range p.parts {
		if !part.committed {
			return false
		}
	}
	return true
}

// entitySet turns a pending set into the snapshot's form.
func (p *pendingSet) entitySet(pos components.ChunkPos) snapshot.EntitySet {
	set := snapshot.EntitySet{Pos: pos, Merge: !p.complete}
	for _, part := range p.parts {
		if part.section != nil {
			set.Sections = append(set.Sections, part.section)
		}
		set.Bodies = conv.MergeByID(set.Bodies, part.bodies, bodyKey)
		set.Version = part.version
	}
	if p.complete && len(p.parts) == 1 {
		set.Hash = p.hash
	}
	return set
}

func bodyKey(b *components.PixelBody) uint64 { return uint64(b.ID) }

// regional is the runtime's state for regional entities.
type regional struct {
	locators []plugin.BoundLocator
	placedQ  *ecs.Filter2[components.Regional, plugin.Home]
	strayQ   *ecs.Filter1[plugin.Home] // home without Regional
	playerQ  *ecs.Filter2[plugin.Home, components.Player]
	legacyQ  *ecs.Filter2[components.PixelBody, components.Persistable] // bodies to make regional
	homes    *ecs.Map[plugin.Home]
	regs     *ecs.Map[components.Regional]
	bodyMap  *ecs.Map[components.PixelBody]
	persMap  *ecs.Map[components.Persistable]
	playerID ecs.ID

	regions map[components.ChunkPos]*region
	pending map[components.ChunkPos]*pendingSet
	placed  int // placed regional entities the runtime knows of
	version uint64

	byID    map[uint64]ecs.Entity // loaded regional entities by stable id
	ghosts  map[ecs.Entity]uint64 // handles of unloaded regional entities, and placeholders of unresolved references
	ghostOf map[uint64]ecs.Entity // the placeholder of an unresolved stable id
	waiting map[uint64][]ecs.Entity

	opts       []archetype.Option           // for entity sections
	unresolved []uint64                     // stable ids the last decode could not resolve
	kept       [][]byte                     // sections the last decode could not read, as stored
	keptErrs   []error                      // why, per kept section
	reported   map[components.ChunkPos]bool // chunks whose kept entities were reported

	ckQueue  []components.ChunkPos
	ckCredit float64

	stats plugin.RegionStats
}

func newRegional(w *ecs.World, locs []plugin.Locator, extra []archetype.Option) *regional {
	g := &regional{
		placedQ:  ecs.NewFilter2[components.Regional, plugin.Home](w).Without(ecs.C[components.Player]()),
		strayQ:   ecs.NewFilter1[plugin.Home](w).Without(ecs.C[components.Regional]()),
		playerQ:  ecs.NewFilter2[plugin.Home, components.Player](w),
		legacyQ:  ecs.NewFilter2[components.PixelBody, components.Persistable](w).Without(ecs.C[components.Regional](), ecs.C[components.Player]()),
		homes:    ecs.NewMap[plugin.Home](w),
		regs:     ecs.NewMap[components.Regional](w),
		bodyMap:  ecs.NewMap[components.PixelBody](w),
		persMap:  ecs.NewMap[components.Persistable](w),
		playerID: ecs.ComponentID[components.Player](w),
		regions:  map[components.ChunkPos]*region{},
		pending:  map[components.ChunkPos]*pendingSet{},
		byID:     map[uint64]ecs.Entity{},
		ghosts:   map[ecs.Entity]uint64{},
		ghostOf:  map[uint64]ecs.Entity{},
		waiting:  map[uint64][]ecs.Entity{},
		reported: map[components.ChunkPos]bool{},
	}
	var without []ecs.Comp
	for _, l := range append([]plugin.Locator{plugin.BodyLocator}, locs...) {
		g.locators = append(g.locators, l.Bind(w, without))
		without = append(without, l.Comp())
	}
	g.opts = append(slices.Clone(extra),
		archetype.SkipComponents(ecs.C[components.PixelBody](), ecs.C[plugin.Home]()),
		archetype.SkipEntitiesWith(ecs.C[components.Transient]()),
		archetype.LZ4())
	return g
}

// reset forgets every entity and region (the world was reset).
func (g *regional) reset() {
	clear(g.regions)
	clear(g.pending)
	clear(g.byID)
	clear(g.ghosts)
	clear(g.ghostOf)
	clear(g.waiting)
	clear(g.reported)
	g.placed = 0
	g.ckQueue = nil
	g.ckCredit = 0
	g.stats = plugin.RegionStats{}
}

func (r *runner) nextVersion() uint64 {
	r.reg.version++
	return r.reg.version
}

// mark records a change of the entities of the loaded chunk at pos.
func (r *runner) mark(pos components.ChunkPos) {
	if g := r.reg.regions[pos]; g != nil {
		g.version = r.nextVersion()
	}
}

// inChunk reports how far outside chunk c the point (x, y) lies, in
// pixels (0 inside).
func outside(c components.ChunkPos, x, y float64, size int) float64 {
	s := float64(size)
	x0, y0 := float64(c.X)*s, float64(c.Y)*s
	d := max(x0-x, x-(x0+s), y0-y, y-(y0+s), 0)
	if math.IsNaN(d) {
		return 0
	}
	return d
}

// trackRegional places new regional entities, moves those that crossed a
// border past the hysteresis margin, unloads those whose chunk is not
// loaded, and notices the ones the game removed. It runs every tick.
func (r *runner) trackRegional() {
	r.trackNew()
	r.trackMoves()
	r.trackRemoved()
}

// trackNew makes persistable bodies regional, forgets entities that are no
// longer regional and places new ones: what a snapshot needs first, since
// the world file leaves regional entities out (a crossing since the last
// tick can wait: the entity is saved with the chunk it was in).
func (r *runner) trackNew() {
	g := r.reg
	r.adoptBodies()
	r.dropStrays()

	// New entities.
	type freshEnt struct {
		e    ecs.Entity
		x, y float64
	}
	var fresh []freshEnt
	for _, l := range g.locators {
		l.Fresh(func(e ecs.Entity, _ *components.Regional, x, y float64) {
			fresh = append(fresh, freshEnt{e, x, y})
		})
	}
	for _, f := range fresh {
		r.place(f.e, components.ChunkOf(f.x, f.y, r.cfg.ChunkSize))
	}
}

// trackMoves moves the entities that crossed a border past the hysteresis
// margin into their new chunk, or unloads them into it when it is not
// loaded.
func (r *runner) trackMoves() {
	g := r.reg
	// Crossings past the margin.
	type move struct {
		e        ecs.Entity
		from, to components.ChunkPos
	}
	var moves []move
	margin := r.cfg.Hysteresis * float64(r.cfg.ChunkSize)
	for _, l := range g.locators {
		l.Placed(func(e ecs.Entity, _ *components.Regional, h *plugin.Home, x, y float64) {
			if outside(h.Pos, x, y, r.cfg.ChunkSize) <= margin {
				return
			}
			to := components.ChunkOf(x, y, r.cfg.ChunkSize)
			if r.loading[to] {
				return // it crosses when the chunk is there
			}
			moves = append(moves, move{e, h.Pos, to})
		})
	}
	for _, m := range moves {
		g.stats.Crossings++
		r.mark(m.from)
		if to := g.regions[m.to]; to != nil {
			g.homes.Get(m.e).Pos = m.to
			to.members = append(to.members, m.e)
			to.version = r.nextVersion()
			continue
		}
		if err := r.unloadInto(m.to, []ecs.Entity{m.e}); err != nil {
			r.report(problem{section: sectionRegional, pos: m.to, err: err})
			continue
		}
		r.despawn(m.e)
	}
}

// trackRemoved notices the entities the game removed (or copied): their
// chunks' sets changed.
func (r *runner) trackRemoved() {
	g := r.reg
	q := g.placedQ.Query()
	n := q.Count()
	q.Close()
	if n != g.placed {
		r.rebuildMembers()
	}
}

// orphanFresh unloads the new regional entities still waiting for their
// chunk to arrive into that chunk's pending set, so that a snapshot holds
// them: the world file leaves regional entities out.
func (r *runner) orphanFresh() {
	g := r.reg
	type freshEnt struct {
		e   ecs.Entity
		pos components.ChunkPos
	}
	var fresh []freshEnt
	for _, l := range g.locators {
		l.Fresh(func(e ecs.Entity, _ *components.Regional, x, y float64) {
			fresh = append(fresh, freshEnt{e, components.ChunkOf(x, y, r.cfg.ChunkSize)})
		})
	}
	for _, f := range fresh {
		if err := r.unloadInto(f.pos, []ecs.Entity{f.e}); err != nil {
			r.report(problem{section: sectionRegional, pos: f.pos, err: err})
			continue
		}
		r.despawn(f.e)
	}
}

// sectionRegional names regional entities in problems.
const sectionRegional = "entities"

// adoptBodies makes persistable pixel bodies regional: Regional with the
// body's id (a fresh one for both when the body has none).
func (r *runner) adoptBodies() {
	g := r.reg
	var list []ecs.Entity
	q := g.legacyQ.Query()
	for q.Next() {
		list = append(list, q.Entity())
	}
	for _, e := range list {
		b := g.bodyMap.Get(e)
		if b.ID == 0 {
			b.ID = r.bodyID.New()
		}
		g.regs.Add(e, &components.Regional{ID: uint64(b.ID)})
	}
}

// dropStrays takes the home note off entities that are no longer regional
// (the game removed Regional, or made them players): their chunk's set
// changed.
func (r *runner) dropStrays() {
	g := r.reg
	var list []ecs.Entity
	q := g.strayQ.Query()
	for q.Next() {
		list = append(list, q.Entity())
	}
	pq := g.playerQ.Query()
	for pq.Next() {
		list = append(list, pq.Entity())
	}
	for _, e := range list {
		r.mark(g.homes.Get(e).Pos)
		g.homes.Remove(e)
	}
	if len(list) > 0 {
		r.rebuildMembers()
	}
}

// place puts a new regional entity into the chunk at pos: its home when
// loaded (a chunk being loaded waits for it), else it is unloaded into
// that chunk at once.
func (r *runner) place(e ecs.Entity, pos components.ChunkPos) {
	g := r.reg
	reg := g.regs.Get(e)
	if reg.ID == 0 {
		reg.ID = uint64(r.bodyID.New())
	}
	if other, ok := g.byID[reg.ID]; ok && other != e && r.world.Alive(other) && g.regs.Has(other) && g.regs.Get(other).ID == reg.ID {
		old := reg.ID
		reg.ID = uint64(r.bodyID.New())
		r.report(problem{section: sectionRegional, pos: pos,
			err: fmt.Errorf("regional id %d is taken by another entity: this one gets %d", old, reg.ID)})
	}
	if g.bodyMap.Has(e) {
		g.bodyMap.Get(e).ID = components.BodyID(reg.ID)
	}
	dst := g.regions[pos]
	if dst == nil {
		if r.loading[pos] {
			return // placed once its chunk is there
		}
		if err := r.unloadInto(pos, []ecs.Entity{e}); err != nil {
			r.report(problem{section: sectionRegional, pos: pos, err: err})
			return
		}
		r.despawn(e)
		return
	}
	g.homes.Add(e, &plugin.Home{Pos: pos})
	dst.members = append(dst.members, e)
	dst.version = r.nextVersion()
	g.placed++
	g.stats.Spawned++
	r.known(reg.ID, e)
}

// known records that the entity with stable id is loaded as e, and fills
// in references that waited for it.
func (r *runner) known(id uint64, e ecs.Entity) {
	g := r.reg
	g.byID[id] = e
	holders, ok := g.waiting[id]
	if !ok {
		return
	}
	delete(g.waiting, id)
	ghost := g.ghostOf[id]
	for _, h := range holders {
		if r.world.Alive(h) {
			r.patchRefs(h, ghost, e)
		}
	}
}

// despawn removes a regional entity whose data the runtime has handed on
// (to a pending set or a snapshot): its handle is remembered, so that
// references to it are saved by its stable id.
func (r *runner) despawn(e ecs.Entity) {
	g := r.reg
	if g.regs.Has(e) {
		id := g.regs.Get(e).ID
		g.ghosts[e] = id
		if g.byID[id] == e {
			delete(g.byID, id)
		}
	}
	if g.homes.Has(e) {
		g.placed--
	}
	g.stats.Unloaded++
	r.world.RemoveEntity(e)
}

// rebuildMembers recounts the members of every loaded chunk from the
// world: entities the game removed leave their chunk (which becomes
// dirty), copies that share a stable id get new ids.
func (r *runner) rebuildMembers() {
	g := r.reg
	seen := map[components.ChunkPos][]ecs.Entity{}
	ids := map[uint64]ecs.Entity{}
	var renumber []ecs.Entity
	var homeless []ecs.Entity
	q := g.placedQ.Query()
	for q.Next() {
		reg, h := q.Get()
		e := q.Entity()
		if _, ok := g.regions[h.Pos]; !ok {
			homeless = append(homeless, e) // a copy of an entity whose chunk is gone: placed anew
			continue
		}
		if _, dup := ids[reg.ID]; dup {
			renumber = append(renumber, e)
			continue
		}
		ids[reg.ID] = e
		seen[h.Pos] = append(seen[h.Pos], e)
	}
	for _, e := range homeless {
		g.homes.Remove(e)
	}
	for _, e := range renumber {
		reg := g.regs.Get(e)
		old := reg.ID
		reg.ID = uint64(r.bodyID.New())
		if g.bodyMap.Has(e) {
			g.bodyMap.Get(e).ID = components.BodyID(reg.ID)
		}
		pos := g.homes.Get(e).Pos
		seen[pos] = append(seen[pos], e)
		ids[reg.ID] = e
		r.report(problem{section: sectionRegional, pos: pos,
			err: fmt.Errorf("two entities share regional id %d (a copy?): one gets %d", old, reg.ID)})
	}
	n := 0
	for pos, g2 := range g.regions {
		now := seen[pos]
		if !sameMembers(g2.members, now) {
			g2.version = r.nextVersion()
		}
		g2.members = now
		n += len(now)
	}
	g.placed = n
	clear(g.byID)
	for id, e := range ids {
		g.byID[id] = e
	}
}

// sameMembers reports whether two member lists hold the same entities.
func sameMembers(a, b []ecs.Entity) bool {
	if len(a) != len(b) {
		return false
	}
	set := make(map[ecs.Entity]bool, len(a))
	for _, e := range a {
		set[e] = true
	}
	for _, e := range b {
		if !set[e] {
			return false
		}
	}
	return true
}

// members returns the current members of the chunk at pos, pruned of
// entities that left it, sorted by stable id.
func (r *runner) members(pos components.ChunkPos) []ecs.Entity {
	g := r.reg
	rg := g.regions[pos]
	if rg == nil {
		return nil
	}
	kept := rg.members[:0]
	for _, e := range rg.members {
		if r.world.Alive(e) && g.homes.Has(e) && g.homes.Get(e).Pos == pos && g.regs.Has(e) && !r.world.Unsafe().Has(e, g.playerID) {
			kept = append(kept, e)
		}
	}
	clear(rg.members[len(kept):])
	rg.members = kept
	sort.Slice(kept, func(i, j int) bool { return g.regs.Get(kept[i]).ID < g.regs.Get(kept[j]).ID })
	return kept
}

var hashSeed = maphash.MakeSeed()

// encode returns the saved form of the given regional entities: one entity
// section and the pixel bodies among them (empty bodies are not saved,
// their entities neither). A panic in the game's own encoding code is
// returned as an error.
func (r *runner) encode(list []ecs.Entity) (section []byte, bodies []components.PixelBody, hash uint64, err error) {
	g := r.reg
	defer func() {
		if p := recover(); p != nil {
			section, bodies, hash, err = nil, nil, 0, panicError(p)
		}
	}()
	keep := make([]ecs.Entity, 0, len(list))
	for _, e := range list {
		if g.bodyMap.Has(e) {
			b := g.bodyMap.Get(e)
			if b.IsEmpty() {
				continue // a body that left nothing in the world leaves no record
			}
			c := b.Clone()
			c.ID = components.BodyID(g.regs.Get(e).ID)
			bodies = append(bodies, c)
		}
		keep = append(keep, e)
	}
	if len(keep) == 0 {
		return nil, nil, 0, nil
	}
	section, err = archetype.AppendEntities(nil, r.world, keep, append(g.opts, archetype.StableRefs(r.toStable, nil))...)
	if err != nil {
		return nil, nil, 0, err
	}
	return section, bodies, hashSet(section, bodies), nil
}

// hashSet identifies a saved entity set (never 0 for a non-empty one).
func hashSet(section []byte, bodies []components.PixelBody) uint64 {
	if section == nil && len(bodies) == 0 {
		return 0
	}
	return (maphash.Bytes(hashSeed, section) ^ conv.HashBodies(bodies)*31) | 1
}

// encodeRegion returns the snapshot form of a loaded chunk's entities.
func (r *runner) encodeRegion(pos components.ChunkPos) (snapshot.EntitySet, error) {
	section, bodies, h, err := r.encode(r.members(pos))
	if err != nil {
		return snapshot.EntitySet{}, fmt.Errorf("systems: encode the entities of chunk %v: %w", pos, err)
	}
	rg := r.reg.regions[pos]
	set := snapshot.EntitySet{Pos: pos, Bodies: bodies, Hash: h, Version: rg.version}
	set.Sections = slices.Clone(rg.kept.sections)
	if section != nil {
		set.Sections = append(set.Sections, section)
	}
	set.Bodies = conv.MergeByID(slices.Clone(rg.kept.bodies), set.Bodies, bodyKey)
	return set, nil
}

// unloadInto hands entities that stand in the unloaded chunk at pos to
// its pending set; the caller despawns them.
func (r *runner) unloadInto(pos components.ChunkPos, list []ecs.Entity) error {
	section, bodies, _, err := r.encode(list)
	if err != nil {
		return err
	}
	p := r.reg.pending[pos]
	if p == nil {
		p = &pendingSet{}
		r.reg.pending[pos] = p
	}
	p.parts = append(p.parts, pendingPart{section: section, bodies: bodies, version: r.nextVersion()})
	return nil
}

// unloadRegion hands the entities of a loaded chunk that unloads to its
// pending set when they differ from what the store holds, and despawns
// them. It fails, unloading nothing, when they cannot be encoded.
func (r *runner) unloadRegion(pos components.ChunkPos) error {
	g := r.reg
	rg := g.regions[pos]
	if rg == nil {
		return nil
	}
	list := r.members(pos)
	section, bodies, h, err := r.encode(list)
	if err != nil {
		return fmt.Errorf("the entities of chunk %v cannot be saved, so it stays loaded: %w", pos, err)
	}
	if rg.dirty() || h != rg.hash || g.pending[pos] != nil {
		p := &pendingSet{complete: true, hash: h}
		p.parts = []pendingPart{{section: section, bodies: bodies, version: rg.version}}
		if !rg.kept.empty() {
			p.parts = append(rg.kept.parts(rg.version), p.parts...)
		}
		if prev := g.pending[pos]; prev != nil && !prev.complete {
			// Cannot happen (parts go to chunks that are not loaded); keep
			// them, they are older.
			p.parts = append(prev.parts, p.parts...)
		}
		g.pending[pos] = p
	}
	for _, e := range list {
		r.despawn(e)
	}
	delete(g.regions, pos)
	return nil
}

// spawnRegion spawns the regional entities of a chunk that arrived: what
// the store holds (blk), or, when entities of it wait in memory, those
// instead (a complete set) or as well (parts). Sections are read oldest
// first; an entity in a later one replaces an earlier copy. A damaged
// section is dropped and reported; entities of an intact one that this
// game cannot read are kept as stored (keepUnread, region.kept).
func (r *runner) spawnRegion(pos components.ChunkPos, blk chunkstore.EntityBlock) {
	g := r.reg
	rg := &region{}
	g.regions[pos] = rg
	var sections [][]byte
	var bodies []components.PixelBody
	p := g.pending[pos]
	if p == nil || !p.complete {
		sections = blk.Sections
		for i := range blk.Bodies {
			bodies = append(bodies, conv.FromStore(&blk.Bodies[i]))
		}
	}
	fromStore := p == nil
	clean := p != nil && p.committed() && p.complete && len(p.parts) == 1
	if p != nil {
		for _, part := range p.parts {
			if part.section != nil {
				sections = append(sections, part.section)
			}
			bodies = conv.MergeByID(bodies, part.bodies, bodyKey)
			rg.version = part.version
		}
		delete(g.pending, pos)
	}

	// Decode every section; later copies of a stable id win.
	byID := map[uint64]ecs.Entity{}
	var order []uint64
	for i, sec := range sections {
		created, err := r.decodeSection(sec)
		if err != nil {
			r.report(problem{section: chunkstore.SectionBodies, pos: pos, err: fmt.Errorf("entity section %d dropped: %w", i, err)})
			continue
		}
		r.keepUnread(pos, rg)
		for _, e := range created {
			if !g.regs.Has(e) {
				r.world.RemoveEntity(e) // a section only holds regional entities
				continue
			}
			id := g.regs.Get(e).ID
			if old, ok := byID[id]; ok {
				r.world.RemoveEntity(old)
			} else {
				order = append(order, id)
			}
			byID[id] = e
		}
	}
	order = r.joinBodies(rg, bodies, byID, order)
	for _, id := range order {
		e := byID[id]
		g.homes.Add(e, &plugin.Home{Pos: pos})
		rg.members = append(rg.members, e)
		g.placed++
		g.stats.Spawned++
	}
	for _, id := range order {
		r.known(id, byID[id])
	}
	for _, id := range order {
		e := byID[id]
		if g.bodyMap.Has(e) && r.cfg.OnBodyLoaded != nil {
			r.cfg.OnBodyLoaded(r.world, e)
		}
		if r.cfg.OnEntityLoaded != nil && r.world.Alive(e) {
			r.cfg.OnEntityLoaded(r.world, e)
		}
	}
	if clean {
		// The pending set was committed while the chunk was on its way.
		rg.saved = rg.version
		rg.hash = p.hash
	}
	if fromStore {
		// What the store holds: clean, with the hash its saved form has now.
		rg.version = r.nextVersion()
		rg.saved = rg.version
		if len(rg.members) > 0 {
			if _, _, h, err := r.encode(r.members(pos)); err == nil {
				rg.hash = h
			}
		}
	}
}

// joinBodies gives the spawned entities of a chunk (byID, order) their
// pixel bodies and returns order with the entities added for bodies
// without one (a save from before entity sections). When the chunk keeps
// entities it cannot read, a body without an entity is kept with them
// instead: it may be one of theirs.
func (r *runner) joinBodies(rg *region, bodies []components.PixelBody, byID map[uint64]ecs.Entity, order []uint64) []uint64 {
	g := r.reg
	for i := range bodies {
		b := &bodies[i]
		e, ok := byID[uint64(b.ID)]
		switch {
		case !ok && len(rg.kept.sections) > 0:
			rg.kept.bodies = append(rg.kept.bodies, *b)
			continue
		case !ok:
			e = r.world.NewEntity()
			g.regs.Add(e, &components.Regional{ID: uint64(b.ID)})
			g.persMap.Add(e, &components.Persistable{})
			byID[uint64(b.ID)] = e
			order = append(order, uint64(b.ID))
		}
		g.bodyMap.Add(e, b)
	}
	return order
}

// decodeSection reads one entity section into the world; references it
// could not resolve wait for their targets.
func (r *runner) decodeSection(sec []byte) ([]ecs.Entity, error) {
	g := r.reg
	g.unresolved = g.unresolved[:0]
	g.kept, g.keptErrs = g.kept[:0], g.keptErrs[:0]
	created, err := archetype.DecodeEntities(sec, r.world, append(g.opts, archetype.StableRefs(r.toStable, r.fromStable),
		archetype.KeepUndecodable(func(rest []byte, cause error) {
			g.kept = append(g.kept, rest)
			g.keptErrs = append(g.keptErrs, cause)
		}))...)
	if err != nil {
		return nil, err
	}
	for _, id := range g.unresolved {
		g.waiting[id] = append(g.waiting[id], created...)
	}
	return created, nil
}

// keepUnread takes what the last decodeSection could not read into the
// chunk's kept entities, and reports them (Problems and the log) the first
// time the chunk keeps entities since the plugin started (or the last
// load): the game should know that entities wait for a type it does not
// have.
func (r *runner) keepUnread(pos components.ChunkPos, rg *region) {
	g := r.reg
	for i, sec := range g.kept {
		rg.kept.sections = append(rg.kept.sections, sec)
		cause := g.keptErrs[i]
		if g.reported[pos] {
			continue
		}
		g.reported[pos] = true
		r.report(problem{section: chunkstore.SectionBodies, pos: pos,
			err: fmt.Errorf("entities kept as stored, not spawned, and saved again unchanged with the chunk: this game cannot read them: %w", cause)})
		if log := r.cfg.Writer.Logger; log != nil {
			log.Warn("regional entities this game cannot read are kept as stored", "chunk", pos, "err", cause)
		}
	}
	g.kept, g.keptErrs = g.kept[:0], g.keptErrs[:0]
}

// parts returns the kept entities as pending parts of the given version,
// older than the chunk's own.
func (k *keptEntities) parts(version uint64) []pendingPart {
	out := make([]pendingPart, 0, len(k.sections)+1)
	for _, sec := range k.sections {
		out = append(out, pendingPart{section: sec, version: version})
	}
	if len(k.bodies) > 0 {
		out = append(out, pendingPart{bodies: k.bodies, version: version})
	}
	return out
}

// toStable returns the stable id of a regional entity, loaded or unloaded
// (a handle the runtime remembers).
func (r *runner) toStable(e ecs.Entity) (uint64, bool) {
	g := r.reg
	if r.world.Alive(e) {
		if g.regs.Has(e) && !r.world.Unsafe().Has(e, g.playerID) {
			return g.regs.Get(e).ID, true
		}
		return 0, false
	}
	id, ok := g.ghosts[e]
	return id, ok
}

// fromStable returns the loaded entity with a stable id, or a placeholder
// handle that is never alive (and is saved as that id again) while it is
// not loaded.
func (r *runner) fromStable(id uint64) ecs.Entity {
	g := r.reg
	if e, ok := g.byID[id]; ok && r.world.Alive(e) {
		return e
	}
	g.unresolved = append(g.unresolved, id)
	if e, ok := g.ghostOf[id]; ok {
		return e
	}
	e := r.world.NewEntity()
	r.world.RemoveEntity(e) // its handle is dead for good: ids come back with a new generation
	g.ghostOf[id] = e
	g.ghosts[e] = id
	return e
}

// Resolve returns the entity a handle to a regional entity stands for now:
// e itself while alive; for the handle of an entity that was unloaded (or
// a reference a load could not resolve), the entity with its stable id if
// that is loaded.
func (r *runner) Resolve(e ecs.Entity) (ecs.Entity, bool) {
	if r.world.Alive(e) {
		return e, true
	}
	if id, ok := r.reg.ghosts[e]; ok {
		return r.Entity(id)
	}
	return ecs.Entity{}, false
}

// Entity returns the loaded regional entity with the given stable id.
func (r *runner) Entity(id uint64) (ecs.Entity, bool) {
	g := r.reg
	e, ok := g.byID[id]
	if ok && r.world.Alive(e) && g.regs.Has(e) && g.regs.Get(e).ID == id {
		return e, true
	}
	return ecs.Entity{}, false
}

// MarkDirty marks the chunk of a regional entity as changed, for changes
// of its components that a checkpoint would find only later.
func (r *runner) MarkDirty(e ecs.Entity) error {
	if r.closed {
		return r.closedErr("MarkDirty")
	}
	g := r.reg
	if !r.world.Alive(e) || !g.regs.Has(e) {
		return errors.New("arksave: MarkDirty: not an alive regional entity")
	}
	if !g.homes.Has(e) {
		return nil // placed at the next tick, which marks its chunk
	}
	r.mark(g.homes.Get(e).Pos)
	return nil
}

// checkpoint re-encodes a share of the loaded chunks' entities each tick,
// so that every chunk is looked at once per Checkpoint of game time, and
// marks those whose saved form changed: movement within the hysteresis
// margin and component changes reach the store that way.
func (r *runner) checkpoint() {
	g := r.reg
	if r.cfg.Checkpoint <= 0 || len(g.regions) == 0 {
		return
	}
	g.ckCredit += float64(len(g.regions)) * float64(r.cfg.TickDuration) / float64(r.cfg.Checkpoint)
	for g.ckCredit >= 1 {
		if len(g.ckQueue) == 0 {
			for pos := range g.regions {
				g.ckQueue = append(g.ckQueue, pos)
			}
			slices.SortFunc(g.ckQueue, comparePos)
		}
		pos := g.ckQueue[0]
		g.ckQueue = g.ckQueue[1:]
		g.ckCredit--
		rg := g.regions[pos]
		if rg == nil || rg.dirty() || (len(rg.members) == 0 && rg.hash == 0) {
			continue
		}
		if _, _, h, err := r.encode(r.members(pos)); err == nil && h != rg.hash {
			rg.version = r.nextVersion()
			g.stats.Checkpoints++
		}
	}
}

func comparePos(a, b components.ChunkPos) int {
	switch {
	case a.Y != b.Y:
		return int(a.Y) - int(b.Y)
	case a.X != b.X:
		return int(a.X) - int(b.X)
	}
	return 0
}

// entitySets returns the snapshot's entity sets: every dirty loaded chunk
// and every pending set; with flush also every loaded chunk whose
// entities' saved form changed since the store got them (movement within
// the hysteresis margin, changed components that no checkpoint has found
// yet): a save the game asks for holds every change, an automatic one
// costs only what is dirty.
func (r *runner) entitySets(flush bool) ([]snapshot.EntitySet, error) {
	g := r.reg
	var sets []snapshot.EntitySet
	dirty := make([]components.ChunkPos, 0, 8)
	for pos, rg := range g.regions {
		if rg.dirty() || flush && (len(rg.members) > 0 || rg.hash != 0) {
			dirty = append(dirty, pos)
		}
	}
	slices.SortFunc(dirty, comparePos)
	for _, pos := range dirty {
		rg := g.regions[pos]
		set, err := r.encodeRegion(pos)
		if err != nil {
			return nil, err
		}
		if !rg.dirty() {
			if set.Hash == rg.hash {
				continue
			}
			rg.version = r.nextVersion()
			set.Version = rg.version
		}
		sets = append(sets, set)
	}
	for pos, p := range g.pending {
		sets = append(sets, p.entitySet(pos))
	}
	return sets, nil
}

// confirmEntities takes what a save committed of the chunks' entities.
func (r *runner) confirmEntities(evs []snapshot.EntitySet) {
	g := r.reg
	for _, ev := range evs {
		if rg := g.regions[ev.Pos]; rg != nil {
			if rg.version == ev.Version {
				rg.saved, rg.hash = ev.Version, ev.Hash
			}
			continue
		}
		p := g.pending[ev.Pos]
		if p == nil {
			continue
		}
		if r.loading[ev.Pos] {
			// A chunk on its way takes the pending set as well: the store
			// may have been read before this commit.
			for i := range p.parts {
				if p.parts[i].version <= ev.Version {
					p.parts[i].committed = true
				}
			}
			if p.complete && len(p.parts) == 1 {
				p.hash = ev.Hash
			}
			continue
		}
		kept := p.parts[:0]
		for _, part := range p.parts {
			if part.version > ev.Version {
				kept = append(kept, part)
			}
		}
		if len(kept) == 0 {
			delete(g.pending, ev.Pos)
			continue
		}
		p.parts = kept
		p.complete = false // the store holds the committed part; the rest adds to it
	}
}

// RegionStats returns the regional bookkeeping's counters.
func (r *runner) RegionStats() plugin.RegionStats {
	g := r.reg
	s := g.stats
	s.Entities = g.placed
	s.Pending = len(g.pending)
	for _, rg := range g.regions {
		if len(rg.members) > 0 {
			s.Regions++
		}
		if rg.dirty() {
			s.Dirty++
		}
	}
	return s
}

// panicError is the error of a panic while encoding the game's values.
func panicError(p any) error { return savedir.NewPanicError(p) }
