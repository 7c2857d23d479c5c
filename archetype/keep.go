package archetype

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/mlange-42/ark/ecs"
)

// KeepUndecodable makes [DecodeEntities] keep, instead of refusing, the entities of an intact
// section that the world cannot take: tables with a type the world has not registered
// ([ErrUnknownType]), or registered with another type version, memory layout or value schema and
// no migration ([ErrVersion], [ErrIncompatible]). DecodeEntities then reads the other tables into
// the world and calls keep once with a section of the refused tables (their columns' bytes as
// stored, a later DecodeEntities into a world that takes them gives back the same entities) and
// the error that refused them, and returns no error. A table with a value its type cannot take
// (300 for an int8) is kept the same way. When no table can be read, or the section is refused
// for any other reason that is not damage, keep is given the section itself, byte for byte, with
// that error, and nothing is created.
//
// References between the two parts: an ecs.Entity value of a kept entity that points to an entity
// read into the world is kept by that entity's stable id ([StableRefs]' toStable, asked once the
// entity exists; the entity as it is when toStable does not know it). An entity whose table
// refers (an ecs.Entity value or a relation target) to a kept entity cannot be read without
// losing that reference, so its table is kept too, with the same cause, and so on for the tables
// that refer to it: nothing is lost when the kept section is stored again.
//
// A damaged section ([ErrCorrupt]) is refused as without this option, and keep is not called.
// DecodeEntities only.
func KeepUndecodable(keep func(rest []byte, cause error)) Option {
	return func(o *options) { o.keep = keep }
}

// decodeKeeping is DecodeEntities with [KeepUndecodable].
func decodeKeeping(data []byte, world *ecs.World, opts []Option, o *options) ([]ecs.Entity, error) {
	inner := append(slices.Clone(opts), KeepUndecodable(nil))
	created, err := DecodeEntities(data, world, inner...)
	if err == nil || !refusedIntact(err) {
		return created, err
	}
	sp, perr := readSplit(data, o.key)
	switch {
	case perr != nil && errors.Is(perr, ErrCorrupt):
		return nil, perr
	case perr != nil:
		o.keep(data, err)
		return nil, nil
	}
	refused, cause := sp.refusedTables(world, o)
	var te *tableError
	if len(refused) == 0 && errors.As(err, &te) {
		refused[te.table], cause = true, err // a value the world's type cannot take
	}
	var good []int
	for len(refused) > 0 && len(refused) < len(sp.f.tables) {
		good = good[:0]
		for i := range sp.f.tables {
			if !refused[i] {
				good = append(good, i)
			}
		}
		okSec, err2 := sp.build(good, nil)
		if err2 == nil {
			kept := append(slices.Clone(inner), keptRefs(sp.refsOutside(good)))
			if created, err2 = DecodeEntities(okSec, world, kept...); err2 == nil {
				break
			}
		}
		if errors.Is(err2, ErrCorrupt) {
			return nil, err2
		}
		if !errors.As(err2, &te) {
			refused = nil // kept whole
			break
		}
		refused[good[te.table]] = true
	}
	if len(refused) == 0 || len(refused) == len(sp.f.tables) {
		if cause == nil || len(refused) == 0 {
			cause = err
		}
		o.keep(data, cause)
		return nil, nil
	}
	okIndex := sp.indexIn(good)
	rest, err2 := sp.build(sortedKeys(refused), func(k int) ref {
		e := created[okIndex[k]]
		if o.toStable != nil {
			if id, ok := o.toStable(e); ok {
				return ref{kind: refStable, value: id}
			}
		}
		return ref{kind: refExact, value: uint64(e.ID()) | uint64(e.Gen())<<32}
	})
	if err2 != nil {
		for _, e := range created {
			world.RemoveEntity(e)
		}
		return nil, err2
	}
	o.keep(rest, cause)
	return created, nil
}

// tableError is an error of DecodeEntities met while reading the values of table (index into the
// section's archetype table): [KeepUndecodable] keeps that table.
type tableError struct {
	table int
	err   error
}

func (e *tableError) Error() string { return e.err.Error() }
func (e *tableError) Unwrap() error { return e.err }

// errRefersToKept is the error of DecodeEntities for a reference to an entity that
// [KeepUndecodable] keeps: the table that holds it is kept too.
var errRefersToKept = errors.New("archetype: refers to an entity kept undecoded")

// keptRefs makes DecodeEntities refuse, with errRefersToKept, the tables that use one of the given
// entries of the reference table.
func keptRefs(entries map[int]bool) Option {
	return func(o *options) { o.keptRefs = entries }
}

// refsOutside returns the entries of the reference table that point to an entity of the section
// that is not in the given tables.
func (sp *splitSection) refsOutside(tables []int) map[int]bool {
	index := sp.indexIn(tables)
	out := map[int]bool{}
	for i, r := range sp.f.refs {
		if _, ok := index[int(r.value)]; r.kind == refLocal && !ok {
			out[i] = true
		}
	}
	return out
}

// refusedIntact reports whether DecodeEntities refused a section for another reason than damage.
func refusedIntact(err error) bool {
	return !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrWrongKey) && !errors.Is(err, ErrEncrypted)
}

func sortedKeys(m map[int]bool) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// splitSection is an entity section read whole and checked, ready to be split by table.
type splitSection struct {
	f     *fileReader
	blobs [][][]byte // per table, per column: the stored bytes
	first []int      // per table: the section index of its first entity
}

// readSplit reads and checks every part of an entity section: header, registry, tables, reference
// table, every column's checksum, resources and footer.
func readSplit(data, key []byte) (*splitSection, error) {
	f, err := readSectionHead(data, key)
	if err != nil {
		return nil, err
	}
	if err := f.readRefs(); err != nil {
		return nil, err
	}
	sp := &splitSection{f: f}
	n := 0
	for i := range f.tables {
		t := &f.tables[i]
		sp.first = append(sp.first, n)
		n += int(t.count)
		var cols [][]byte
		for j := range t.cols {
			c := &t.cols[j]
			start := f.s.off
			if _, err := f.readBlob(f.columnSection(i, c), c.raw, c.stored, nil); err != nil {
				return nil, err
			}
			cols = append(cols, data[start:start+int64(c.stored)])
		}
		sp.blobs = append(sp.blobs, cols)
	}
	if res, err := f.readResources(); err != nil {
		return nil, err
	} else if len(res) != 0 {
		return nil, fmt.Errorf("%w: resources: a section holds %d resources", ErrCorrupt, len(res))
	}
	return sp, f.readFooter()
}

// refusedTables returns the tables with a type the world cannot take, and the first such refusal.
func (sp *splitSection) refusedTables(world *ecs.World, o *options) (map[int]bool, error) {
	// Each type on its own: the others are passed over as concrete types are.
	typeErr := make([]error, len(sp.f.types))
	one := slices.Clone(sp.f.types)
	for i := range sp.f.types {
		for j := range one {
			one[j].flags = sp.f.types[j].flags
			if j != i {
				one[j].flags |= TypeConcrete
			}
		}
		_, typeErr[i] = bindTypes(world, one, o)
	}
	refused := map[int]bool{}
	var cause error
	for i := range sp.f.tables {
		for _, c := range sp.f.tables[i].comps {
			if typeErr[c] != nil {
				refused[i] = true
				if cause == nil {
					cause = typeErr[c]
				}
			}
		}
	}
	return refused, cause
}

// indexIn maps the section index of every entity of the given tables to its index in a section
// of those tables alone.
func (sp *splitSection) indexIn(tables []int) map[int]int {
	out := map[int]int{}
	n := 0
	for _, i := range tables {
		for k := range int(sp.f.tables[i].count) {
			out[sp.first[i]+k] = n
			n++
		}
	}
	return out
}

// build writes a section of the given tables (ascending), their columns' bytes as stored. A
// reference to an entity of another table becomes cross(index) (the zero entity when cross is
// nil).
func (sp *splitSection) build(tables []int, cross func(int) ref) ([]byte, error) {
	f := sp.f
	// The registry: the types the tables use, and every concrete type (values may name them).
	used := make([]bool, len(f.types))
	for i := range f.types {
		used[i] = f.types[i].is(TypeConcrete)
	}
	for _, i := range tables {
		for _, c := range f.tables[i].comps {
			used[c] = true
		}
	}
	newIdx := make([]uint16, len(f.types))
	var types []*fileType
	for i := range f.types {
		if used[i] {
			newIdx[i] = uint16(len(types))
			types = append(types, &f.types[i])
		}
	}
	index := sp.indexIn(tables)
	refs := make([]ref, len(f.refs))
	for i, r := range f.refs {
		refs[i] = r
		if r.kind != refLocal {
			continue
		}
		switch k, ok := index[int(r.value)]; {
		case ok:
			refs[i].value = uint64(k)
		case cross != nil:
			refs[i] = cross(int(r.value))
		default:
			refs[i] = ref{kind: refExact}
		}
	}
	e := &plan{registry: appendRegistry(types), refs: appendRefs(refs), resources: appendResources(nil, nil, false, nil)}
	for _, i := range tables {
		t := f.tables[i]
		entry := tableEntry{archID: t.archID, count: t.count}
		for _, c := range t.comps {
			entry.comps = append(entry.comps, newIdx[c])
		}
		for _, r := range t.rels {
			entry.rels = append(entry.rels, relEntry{comp: newIdx[r.comp], target: r.target})
		}
		var blobs []blob
		for j, c := range t.cols {
			entry.cols = append(entry.cols, colEntry{comp: newIdx[c.comp], raw: c.raw, stored: c.stored})
			blobs = append(blobs, blob{stored: sp.blobs[i][j]})
		}
		e.entries = append(e.entries, entry)
		e.blobs = append(e.blobs, blobs)
	}
	e.header = fileHeader{VersionMajor: f.header.VersionMajor, VersionMinor: f.header.VersionMinor, Flags: f.header.Flags,
		Entities: uint64(len(index)), Archetypes: uint32(len(e.entries)), Types: uint32(len(types))}
	e.layout()
	if e.header.FileSize > math.MaxInt {
		return nil, fmt.Errorf("archetype: section of %d bytes is too large", e.header.FileSize)
	}
	sw := newAppendWriter(nil, int(e.header.FileSize))
	if err := e.write(sw); err != nil {
		return nil, err
	}
	return sw.b, nil
}
