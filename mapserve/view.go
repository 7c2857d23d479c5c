package mapserve

import (
	"cmp"
	"errors"
	"fmt"
	"hash/maphash"
	"image"
	"io/fs"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/words"
)

// view is one committed generation of the save, opened for reading: its
// manifest, its chunk store, and what the map needs of its index. A view
// never changes once opened; a new generation is a new view. Requests hold
// a reference while they use it; the store closes with the last one.
type view struct {
	refs  atomic.Int64
	man   *savedir.Manifest
	store *chunkstore.Store
	size  int      // chunk edge, world pixels
	axes  int      // of the store's chunk keys
	at    [2]int32 // z and w of the slice shown (Options.At)
	// identity tells saves apart: a tile drawn from one never stands for a
	// tile of another (a new world started in the same directory).
	identity uint64
	chunks   map[chunkstore.Pos]*chunkRec
	order    []chunkstore.Pos // positions with a chunk record (or a damaged one), by (y, x)
	bounds   image.Rectangle  // world pixels of the stored chunks
	extent   image.Rectangle  // the map: bounds grown by a chunk on every side
	bodies   []*body          // every pixel body, by id
	// regionals are the regional entities that are not pixel bodies, by
	// stable id (then chunk).
	regionals []*regional
	players   []*player // players with a position, by id
	warnings  []string

	listOnce sync.Once
	list     []storedJSON // what /api/world lists, made once
}

// chunkRec is what the store holds at one position.
type chunkRec struct {
	hasChunk bool
	typ      chunkstore.StorageType // Empty, Delta or Full, when hasChunk
	handle   storetool.Handle       // the chunk's record; zero for Empty
	// version names the chunk's content: the record it was first read
	// from. A record copied elsewhere with the same content (a compaction
	// writes every record anew) keeps the version, so the map does not
	// redraw it.
	version   version
	bodyBlock storetool.Handle // the body block's record; zero when none
	bodyVer   version          // the body block's content, as version
	bodies    []*body          // those of the body block
	regionals []*regional      // the block's other regional entities
	bodyErr   error            // why the body block (or a section of it) does not read
	// damaged says why the chunk's record is lost: the chunk store could
	// only be opened by rebuilding its index (a truncated data file), and
	// the chunk's record was found cut or unreadable on the way.
	damaged error
	// changedIn is the generation in which the server saw the chunk's
	// content change; 0 when it has not seen it change since it started.
	changedIn uint64
}

// version names a record's content: the store file and the record it was
// first read from.
type version struct {
	store string
	h     storetool.Handle
}

// compareBudget bounds the record bytes a new generation reads to tell
// whether records that moved (a compaction) still hold the same content;
// beyond it they count as changed.
const compareBudget = 256 << 20

// openView opens generation gen of the save at dir (0: the committed
// one; else a kept one, through its backup manifest). What it has in
// common with prev, the previous generation of the same save (which must
// stay open meanwhile), keeps prev's versions and parsed bodies.
func openView(dir string, gen uint64, o *Options, seed maphash.Seed, prev *view) (*view, error) {
	s, m, err := savetool.OpenStore(dir, gen, savetool.Options{FS: o.FS, Key: o.Key})
	var damage *chunkstore.Report
	if errors.Is(err, chunkstore.ErrCorrupt) {
		// A page table cut off (a truncated data file): show what still
		// reads, the rest as damaged, rather than nothing.
		s, m, damage, err = openDamaged(dir, gen, o, err)
	}
	if err != nil {
		return nil, lostFile(dir, err)
	}
	cfg := s.Options()
	v := &view{man: m, store: s, size: int(cfg.ChunkSize), axes: cfg.Axes, at: o.At, chunks: map[chunkstore.Pos]*chunkRec{}}
	if err := savetool.CheckSlice(v.axes, v.at); err != nil {
		s.Close()
		return nil, fmt.Errorf("mapserve: %w", err)
	}
	v.refs.Store(1)
	var h maphash.Hash
	h.SetSeed(seed)
	maphash.WriteComparable(&h, struct {
		created                int64
		seed                   uint64
		genVersion, chunkSize  uint32
		generator, genMatching bool
		rebuilt                bool
	}{m.CreatedMS, cfg.Seed, s.GeneratorVersion(), uint32(cfg.ChunkSize), o.Generator != nil,
		o.Generator != nil && o.Generator.Version() == s.GeneratorVersion(), damage != nil})
	v.identity = h.Sum64()
	if prev != nil && prev.identity != v.identity {
		prev = nil
	}
	if o.Generator != nil && o.Generator.Version() != s.GeneratorVersion() {
		v.warnings = append(v.warnings, fmt.Sprintf("the store was written with generator version %d, the generator given is version %d: delta chunks may look wrong",
			s.GeneratorVersion(), o.Generator.Version()))
	}

	rec := func(p chunkstore.Pos) *chunkRec {
		r := v.chunks[p]
		if r == nil {
			r = &chunkRec{}
			v.chunks[p] = r
		}
		return r
	}
	storetool.Tool.Entries(s, func(e storetool.Entry) bool {
		if e.Key != v.key(e.Pos) {
			return true // another slice
		}
		r := rec(e.Pos)
		if e.Type == chunkstore.BodyBlock {
			r.bodyBlock = e.Handle
		} else {
			r.hasChunk, r.typ, r.handle = true, e.Type, e.Handle
			v.order = append(v.order, e.Pos)
		}
		v.bounds = v.bounds.Union(v.chunkRect(e.Pos))
		return true
	})
	if damage != nil {
		v.markDamaged(dir, damage, rec)
	}
	budget := int64(compareBudget)
	for pos, r := range v.chunks {
		var p *chunkRec
		if prev != nil {
			p = prev.chunks[pos]
		}
		if r.hasChunk {
			r.version = version{m.Chunks.Name, r.handle}
			if p != nil && p.hasChunk && p.typ == r.typ && sameChunk(prev, v, pos, p.handle, r.handle, &budget) {
				r.version, r.changedIn = p.version, p.changedIn
			} else if prev != nil {
				r.changedIn = m.Generation
			}
		}
		if !r.bodyBlock.IsZero() {
			v.readBlock(pos, r, p, prev, o.Position)
			v.bodies = append(v.bodies, r.bodies...)
			v.regionals = append(v.regionals, r.regionals...)
		}
	}
	slices.SortFunc(v.bodies, func(a, b *body) int {
		return cmp.Or(cmp.Compare(a.body.ID, b.body.ID), cmp.Compare(a.Chunk[1], b.Chunk[1]), cmp.Compare(a.Chunk[0], b.Chunk[0]))
	})
	slices.SortFunc(v.regionals, func(a, b *regional) int {
		return cmp.Or(cmp.Compare(a.stable, b.stable), cmp.Compare(a.Chunk[1], b.Chunk[1]), cmp.Compare(a.Chunk[0], b.Chunk[0]))
	})
	v.readPlayers(dir, o, prev)
	slices.SortFunc(v.order, comparePos)
	if v.bounds.Empty() {
		v.extent = v.chunkRect(chunkstore.Pos{}).Inset(-v.size)
	} else {
		v.extent = v.bounds.Inset(-v.size)
	}
	return v, nil
}

// sameChunk reports whether the chunk at pos holds the same content in
// prev's record a and v's record b: the same record of the same file, or
// records of the same length that read the same (while the budget lasts).
func sameChunk(prev, v *view, pos chunkstore.Pos, a, b storetool.Handle, budget *int64) bool {
	switch {
	case a == b && prev.man.Chunks.Name == v.man.Chunks.Name:
		return true
	case a.Length != b.Length || *budget < int64(a.Length):
		return false
	}
	*budget -= int64(a.Length)
	ra, _, errA := storetool.Tool.ReadRawKey(prev.store, prev.key(pos))
	rb, _, errB := storetool.Tool.ReadRawKey(v.store, v.key(pos))
	return errA == nil && errB == nil && ra.Type == rb.Type && slices.Equal(ra.Delta, rb.Delta) && slices.Equal(ra.Pixels, rb.Pixels)
}

// readBlock reads the entity block at pos into r: its pixel bodies and
// its other regional entities, placed by place (Options.Position). What
// prev read of the same record is taken as it is; bodies that read the
// same as prev's keep their version.
func (v *view) readBlock(pos chunkstore.Pos, r, p *chunkRec, prev *view, place func(Components) (float64, float64, bool)) {
	r.bodyVer = version{v.man.Chunks.Name, r.bodyBlock}
	if p != nil && p.bodyErr == nil && p.bodyBlock == r.bodyBlock && prev.man.Chunks.Name == v.man.Chunks.Name {
		r.bodies, r.regionals, r.bodyVer = p.bodies, p.regionals, p.bodyVer
		return
	}
	blk, err := v.store.EntitiesKey(v.key(pos))
	if err != nil {
		r.bodyErr = err
		v.warnings = append(v.warnings, err.Error())
		return
	}
	regionals, sections, err := regionalsOf(pos, v.size, &blk, place)
	if err != nil {
		r.bodyErr = err
		v.warnings = append(v.warnings, err.Error())
	}
	r.regionals = regionals
	bs := blk.Bodies
	if p != nil && p.bodyErr == nil && len(p.bodies) == len(bs) && !p.bodyBlock.IsZero() && sameRegionals(p.regionals, r.regionals) {
		same := true
		for i := range bs {
			same = same && reflect.DeepEqual(p.bodies[i].body, &bs[i]) && p.bodies[i].section.same(sections[bs[i].ID])
		}
		if same {
			r.bodies, r.regionals, r.bodyVer = p.bodies, p.regionals, p.bodyVer
			return
		}
	}
	r.bodies = bodiesOf(pos, bs, sections)
}

// sameRegionals reports whether two lists of regional entities read the
// same.
func sameRegionals(a, b []*regional) bool {
	return slices.EqualFunc(a, b, func(x, y *regional) bool {
		return x.stable == y.stable && x.X == y.X && x.Y == y.Y && x.Placed == y.Placed && x.PlacedBy == y.PlacedBy &&
			(sectionEntity{x.Components, x.Refs}).same(sectionEntity{y.Components, y.Refs})
	})
}

// key returns the store's key of the chunk the map shows at pos: in a
// store of 3 or 4 axes, the one in the slice at v.at.
func (v *view) key(pos chunkstore.Pos) chunkstore.Key { return savetool.SliceKey(v.axes, pos, v.at) }

// chunkPos is a chunk's position.
type chunkPos = chunkstore.Pos

// comparePos orders positions by (y, x), as the page table does.
func comparePos(a, b chunkstore.Pos) int { return cmp.Or(cmp.Compare(a.Y, b.Y), cmp.Compare(a.X, b.X)) }

// chunkRect returns the world pixels of the chunk at p.
func (v *view) chunkRect(p chunkstore.Pos) image.Rectangle {
	x, y := int(p.X)*v.size, int(p.Y)*v.size
	return image.Rect(x, y, x+v.size, y+v.size)
}

// chunksIn returns the range of chunk positions that region touches,
// inclusive.
func (v *view) chunksIn(region image.Rectangle) (x0, y0, x1, y1 int) {
	return floorDiv(region.Min.X, v.size), floorDiv(region.Min.Y, v.size),
		floorDiv(region.Max.X-1, v.size), floorDiv(region.Max.Y-1, v.size)
}

// eachStored calls fn for every stored chunk in region, by (y, x).
func (v *view) eachStored(region image.Rectangle, fn func(chunkstore.Pos, *chunkRec)) {
	x0, y0, x1, y1 := v.chunksIn(region)
	if y1-y0+1 > len(v.order) {
		for _, p := range v.order {
			if int(p.X) >= x0 && int(p.X) <= x1 && int(p.Y) >= y0 && int(p.Y) <= y1 {
				fn(p, v.chunks[p])
			}
		}
		return
	}
	for y := y0; y <= y1; y++ {
		i, _ := slices.BinarySearchFunc(v.order, chunkstore.Pos{X: int32(x0), Y: int32(y)}, comparePos)
		for ; i < len(v.order) && int(v.order[i].Y) == y && int(v.order[i].X) <= x1; i++ {
			fn(v.order[i], v.chunks[v.order[i]])
		}
	}
}

// acquire takes a reference; release drops it and closes the store with
// the last.
func (v *view) acquire() { v.refs.Add(1) }

func (v *view) release() {
	if v.refs.Add(-1) == 0 {
		v.store.Close()
	}
}

// diff says what the map must redraw going from prev to v: the world
// rectangles of every chunk whose content changed (added, replaced,
// removed), of every body in a body block that changed, before and after,
// and of what the map's extent gained or lost; all when the save itself
// changed.
func (v *view) diff(prev *view) (rects []image.Rectangle, all, entities bool) {
	if prev == nil || prev.identity != v.identity {
		return nil, true, true
	}
	rects = append(minus(v.extent, prev.extent), minus(prev.extent, v.extent)...)
	entities = !samePlayers(prev.players, v.players)
	none := &chunkRec{}
	for pos, r := range v.chunks {
		p := cmp.Or(prev.chunks[pos], none)
		if p.hasChunk != r.hasChunk || p.typ != r.typ || p.version != r.version {
			rects = append(rects, v.chunkRect(pos))
		}
		if p.bodyVer != r.bodyVer {
			entities = true
			rects = appendBounds(rects, p.bodies)
			rects = appendBounds(rects, r.bodies)
		}
	}
	for pos, p := range prev.chunks {
		if v.chunks[pos] != nil {
			continue
		}
		if p.hasChunk {
			rects = append(rects, v.chunkRect(pos))
		}
		if !p.bodyBlock.IsZero() {
			entities = true
			rects = appendBounds(rects, p.bodies)
		}
	}
	return rects, false, entities
}

// minus returns a without b as up to four rectangles.
func minus(a, b image.Rectangle) []image.Rectangle {
	b = b.Intersect(a)
	if b.Empty() {
		if a.Empty() {
			return nil
		}
		return []image.Rectangle{a}
	}
	var out []image.Rectangle
	for _, r := range []image.Rectangle{
		{a.Min, image.Pt(a.Max.X, b.Min.Y)},                      // above b
		{image.Pt(a.Min.X, b.Max.Y), a.Max},                      // below b
		{image.Pt(a.Min.X, b.Min.Y), image.Pt(b.Min.X, b.Max.Y)}, // left of b
		{image.Pt(b.Max.X, b.Min.Y), image.Pt(a.Max.X, b.Max.Y)}, // right of b
	} {
		if !r.Empty() {
			out = append(out, r)
		}
	}
	return out
}

func appendBounds(rects []image.Rectangle, bs []*body) []image.Rectangle {
	for _, b := range bs {
		if !b.bounds.Empty() {
			rects = append(rects, b.bounds)
		}
	}
	return rects
}

// floorDiv divides rounding down, for b > 0.
func floorDiv(a, b int) int {
	if a < 0 {
		return -((-a + b - 1) / b)
	}
	return a / b
}

// openDamaged opens the chunk store of generation gen (0: the committed
// one) of the save at dir when its page table does not read (err, from the
// plain open): the index rebuilt by scanning its records (chunkstore's
// Repair, read-only), with the report of what was skipped. A store that
// cannot be opened even so returns err.
func openDamaged(dir string, gen uint64, o *Options, err error) (*chunkstore.Store, *savedir.Manifest, *chunkstore.Report, error) {
	var s *chunkstore.Store
	var man *savedir.Manifest
	rerr := savedir.ReadConsistent(o.FS, dir, func(d *savedir.Dir) error {
		m := d.Manifest()
		if m != nil && gen != 0 && gen != m.Generation {
			m, _ = d.Backup(gen)
		}
		if m == nil || len(m.Chunks.Root) == 0 {
			return err
		}
		p, ferr := d.File(m.Chunks.Name)
		if ferr != nil {
			return ferr
		}
		var oerr error
		s, oerr = chunkstore.Open(p, &chunkstore.Options{FS: d.FS(), ReadOnly: true, Repair: true, Root: m.Chunks.Root, Key: o.Key})
		man = m
		return oerr
	})
	if rerr != nil {
		return nil, nil, nil, err
	}
	rep := s.OpenReport()
	return s, man, &rep, nil
}

// lostFile turns the error for a file the generation names that is gone
// (its chunk store, a data file) into one that matches autosave.ErrCorrupt,
// and so arksave.ErrCorrupt, as every other damage does, with the next
// step; other errors it returns as they are.
func lostFile(dir string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) || errors.Is(err, autosave.ErrNoSave) || errors.Is(err, autosave.ErrCorrupt) {
		return err
	}
	return fmt.Errorf("%w: a file the committed generation of %s names is missing: %w; arksave check %s lists what is there, arksave repair %s rebuilds the save from what is left",
		autosave.ErrCorrupt, dir, err, dir, dir)
}

// markDamaged notes the chunks whose records the rebuilt index of a
// damaged store lost, to draw and list as damaged, and warns that the
// store is damaged, naming the tools that list and mend it.
func (v *view) markDamaged(dir string, rep *chunkstore.Report, rec func(chunkstore.Pos) *chunkRec) {
	for _, p := range rep.Problems {
		if p.Key == nil || *p.Key != v.key(p.Key.Pos()) {
			continue // not about a chunk of the slice shown
		}
		pos := p.Key.Pos()
		r := rec(pos)
		if r.damaged == nil && !r.hasChunk {
			v.order = append(v.order, pos)
		}
		r.damaged = p.Err
		v.bounds = v.bounds.Union(v.chunkRect(pos))
	}
	first := ""
	if len(rep.Problems) > 0 {
		first = fmt.Sprintf(", first: %s", rep.Problems[0])
	}
	lost := ""
	if ri, err := storetool.Tool.ParseRoot(v.man.Chunks.Root); err == nil && int(ri.Chunks) > len(v.order) {
		// Records past the cut leave no trace but the count.
		lost = fmt.Sprintf(" (the generation stored %d chunks; %d of them are not found at all and show as not stored)", ri.Chunks, int(ri.Chunks)-len(v.order))
	}
	v.warnings = append(v.warnings, fmt.Sprintf("the chunk store %s of generation %d is damaged (%s%s): the map shows what still reads, "+
		"damaged chunks hatched red%s; arksave check %s lists the damage, arksave repair %s recovers what is intact",
		v.man.Chunks.Name, v.man.Generation, words.Count(len(rep.Problems), "problem", "problems"), first, lost, dir, dir))
}

// isDamaged reports whether the chunk at pos lost its record in a damaged
// store: it is drawn hatched red.
func (v *view) isDamaged(pos chunkstore.Pos) bool {
	c := v.chunks[pos]
	return c != nil && c.damaged != nil
}
