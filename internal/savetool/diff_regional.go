package savetool

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/sectionjson"
)

// regionalName is the full type name of components.Regional, as a
// section's type registry names it.
var regionalName = func() string {
	t := reflect.TypeFor[components.Regional]()
	return t.PkgPath() + "." + t.Name()
}()

// blockSide is what the body blocks of one generation that differ hold:
// its pixel bodies and other regional entities, by stable id, and the
// positions whose block does not read.
type blockSide struct {
	bodies   map[uint64]*bodyItem
	regional map[uint64]*entityItem
	damaged  map[chunkstore.Key]bool
}

// bodyItem is a pixel body where a generation keeps it, with the entity
// of its other components.
type bodyItem struct {
	key    chunkstore.Key
	body   *chunkstore.Body
	entity *entityItem
}

// entityItem is a regional entity of an entity section: its components'
// JSON by full type name, and the references they hold, resolved.
type entityItem struct {
	key   chunkstore.Key
	comps map[string][]byte
}

// diffBlocks compares the body blocks that differ: the pixel bodies and
// the other regional entities they hold.
func (c *chunkDiff) diffBlocks() {
	if len(c.blocks) == 0 {
		return
	}
	a := c.readBlocks(c.a, func(p blockPos) bool { return p.a })
	b := c.readBlocks(c.b, func(p blockPos) bool { return p.b })
	c.diffBodies(a, b)
	c.diffRegional(a, b)
}

// readBlocks reads the blocks of g that differ.
func (c *chunkDiff) readBlocks(g genStore, holds func(blockPos) bool) *blockSide {
	side := &blockSide{bodies: map[uint64]*bodyItem{}, regional: map[uint64]*entityItem{}, damaged: map[chunkstore.Key]bool{}}
	for _, p := range c.blocks {
		if !holds(p) {
			continue
		}
		blk, err := g.s.EntitiesKey(p.key)
		if err != nil {
			side.damaged[p.key] = true
			c.rep.recordDamage(g.gen, "bodies and entities of chunk "+keyString(p.key), err)
			continue
		}
		if err := side.add(p.key, &blk); err != nil {
			side.damaged[p.key] = true
			c.rep.damage(g.gen, "entities of chunk "+keyString(p.key), err)
		}
	}
	return side
}

// add takes the bodies and regional entities of the block at key.
func (s *blockSide) add(key chunkstore.Key, blk *chunkstore.EntityBlock) error {
	ids := make(map[uint64]bool, len(blk.Bodies))
	for i := range blk.Bodies {
		b := &blk.Bodies[i]
		ids[b.ID] = true
		s.bodies[b.ID] = &bodyItem{key: key, body: b}
	}
	// Read every section before taking any, so that a damaged one
	// leaves the chunk's entities out whole.
	var items []map[uint64]*entityItem
	for _, sec := range blk.Sections {
		got, err := sectionEntities(key, sec)
		if err != nil {
			return err
		}
		items = append(items, got)
	}
	for _, got := range items { // a later section's copy replaces an earlier one
		for id, e := range got {
			if ids[id] {
				s.bodies[id].entity = e
			} else {
				s.regional[id] = e
			}
		}
	}
	return nil
}

// refPattern matches an ecs.Entity as a section's JSON writes it: [r, 0],
// entry r of the reference table.
var refPattern = regexp.MustCompile(`\[\s*([0-9]+)\s*,\s*0\s*\]`)

// sectionEntities reads the entities with a stable id of an entity
// section, each with the references its components hold resolved: to the
// stable id of an entity of the section, or as the table has them.
func sectionEntities(key chunkstore.Key, data []byte) (map[uint64]*entityItem, error) {
	sec, err := sectionjson.Read(data)
	if err != nil {
		return nil, err
	}
	stable := map[uint64]uint64{} // section index -> stable id
	ids := make([]uint64, len(sec.Entities))
	has := make([]bool, len(sec.Entities))
	for i := range sec.Entities {
		e := &sec.Entities[i]
		for j, n := range e.Names {
			var reg components.Regional
			if n == regionalName && json.Unmarshal(e.Values[j], &reg) == nil {
				ids[i], has[i] = reg.ID, true
				stable[e.Index] = reg.ID
			}
		}
	}
	refs := resolveRefs(sec.Refs, stable)
	out := map[uint64]*entityItem{}
	for i := range sec.Entities {
		if !has[i] {
			continue // not regional: no stable id to know it by
		}
		e := &sec.Entities[i]
		item := &entityItem{key: key, comps: make(map[string][]byte, len(e.Names)+1)}
		var used []string
		for j, n := range e.Names {
			item.comps[n] = e.Values[j]
			for _, m := range refPattern.FindAllSubmatch(e.Values[j], -1) {
				if r, err := strconv.Atoi(string(m[1])); err == nil && r > 0 && r <= len(refs) {
					used = append(used, refs[r-1])
				}
			}
		}
		if len(used) > 0 {
			item.comps[" references"] = []byte(fmtList(used))
		}
		out[ids[i]] = item
	}
	return out, nil
}

// resolveRefs returns the entries of a section's reference table as
// text, a local one as the stable id of the entity it names when it has
// one.
func resolveRefs(table []byte, stable map[uint64]uint64) []string {
	var entries []json.RawMessage
	if json.Unmarshal(table, &entries) != nil {
		return nil
	}
	out := make([]string, len(entries))
	for i, raw := range entries {
		var ref []json.RawMessage
		out[i] = string(raw)
		if json.Unmarshal(raw, &ref) != nil || len(ref) != 2 || string(ref[0]) != `"local"` {
			continue
		}
		if ix, err := strconv.ParseUint(string(ref[1]), 10, 64); err == nil {
			if id, ok := stable[ix]; ok {
				out[i] = `["stable",` + strconv.FormatUint(id, 10) + `]`
			}
		}
	}
	return out
}

func fmtList(s []string) string {
	var b bytes.Buffer
	for _, x := range s {
		b.WriteString(x)
		b.WriteByte(';')
	}
	return b.String()
}

// matchByID calls fn for each id of a or b, ascending: with x alone (in A
// only), y alone (in B only) or both. An item whose block in the other
// generation does not read is left out: whether it is there is unknown.
func matchByID[T any](a, b map[uint64]T, damA, damB map[chunkstore.Key]bool, key func(T) chunkstore.Key, fn func(id uint64, x, y T, inA, inB bool)) {
	ids := make([]uint64, 0, len(a)+len(b))
	for id, x := range a {
		if _, ok := b[id]; ok || !damB[key(x)] {
			ids = append(ids, id)
		}
	}
	for id, y := range b {
		if _, ok := a[id]; !ok && !damA[key(y)] {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		x, inA := a[id]
		y, inB := b[id]
		fn(id, x, y, inA, inB)
	}
}

// kindOf is the change of an item in A only, B only, or both.
func kindOf(inA, inB bool) ChangeKind {
	switch {
	case !inB:
		return ChangeRemoved
	case !inA:
		return ChangeAdded
	}
	return ChangeChanged
}

// diffBodies compares the pixel bodies of the blocks that differ.
func (c *chunkDiff) diffBodies(a, b *blockSide) {
	matchByID(a.bodies, b.bodies, a.damaged, b.damaged, func(x *bodyItem) chunkstore.Key { return x.key },
		func(id uint64, x, y *bodyItem, inA, inB bool) {
			kind := kindOf(inA, inB)
			if inA && inB {
				var same bool
				if kind, same = compareBodies(x, y); same {
					return
				}
			}
			c.rep.Bodies = append(c.rep.Bodies, BodyChange{ID: id, Kind: kind, From: x.pos(), To: y.pos()})
		})
}

// pos is the chunk that holds a body, nil for none.
func (x *bodyItem) pos() *DiffPos {
	if x == nil {
		return nil
	}
	return diffPos(x.key)
}

// pos is the chunk that holds an entity, nil for none.
func (x *entityItem) pos() *DiffPos {
	if x == nil {
		return nil
	}
	return diffPos(x.key)
}

// compareBodies says how a body differs: changed when its pixels, shape,
// extension or other components do, moved when only its chunk, transform
// or velocities do.
func compareBodies(x, y *bodyItem) (ChangeKind, bool) {
	p, q := x.body, y.body
	if p.Width != q.Width || p.Height != q.Height || p.OriginX != q.OriginX || p.OriginY != q.OriginY ||
		!slices.Equal(p.Pixels, q.Pixels) || !slices.Equal(p.Shape, q.Shape) || !bytes.Equal(p.Extension, q.Extension) ||
		len(changedComponents(x.entity, y.entity)) > 0 {
		return ChangeChanged, false
	}
	if x.key != y.key || p.X != q.X || p.Y != q.Y || p.Rotation != q.Rotation || p.VX != q.VX || p.VY != q.VY || p.AngularVelocity != q.AngularVelocity {
		return ChangeMoved, false
	}
	return "", true
}

// diffRegional compares the regional entities of the blocks that differ.
func (c *chunkDiff) diffRegional(a, b *blockSide) {
	matchByID(a.regional, b.regional, a.damaged, b.damaged, func(x *entityItem) chunkstore.Key { return x.key },
		func(id uint64, x, y *entityItem, inA, inB bool) {
			e := EntityChange{ID: id, Kind: kindOf(inA, inB), From: x.pos(), To: y.pos()}
			if inA && inB {
				if e.Components = changedComponents(x, y); len(e.Components) == 0 && x.key == y.key {
					return
				}
			}
			c.rep.Regional = append(c.rep.Regional, e)
		})
}

// changedComponents lists the components x and y do not have alike, by
// name, sorted; "references" when the entities they point at differ.
func changedComponents(x, y *entityItem) []string {
	var a, b map[string][]byte
	if x != nil {
		a = x.comps
	}
	if y != nil {
		b = y.comps
	}
	return diffComponents(a, b)
}

// diffComponents lists the names whose values a and b do not have alike,
// sorted.
func diffComponents(a, b map[string][]byte) []string {
	var out []string
	for n, v := range a {
		if w, ok := b[n]; !ok || !bytes.Equal(v, w) {
			out = append(out, trimName(n))
		}
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			out = append(out, trimName(n))
		}
	}
	slices.Sort(out)
	return out
}

// trimName names the pseudo-components of references and relations,
// which a leading space keeps apart from type names.
func trimName(n string) string { return strings.TrimPrefix(n, " ") }

func diffPos(k chunkstore.Key) *DiffPos { return &DiffPos{X: k.Pos().X, Y: k.Pos().Y, Key: axesOf(k)} }
