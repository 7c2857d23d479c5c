package archetype

import (
	"fmt"
	"sort"
)

// fileType is one entry of the type registry: a component or resource type as stored.
type fileType struct {
	id      [typeIDSize]byte
	name    string
	version uint32
	flags   uint32
	size    uint32
	schema  []byte
	node    *schemaNode // parsed schema of raw types
	vs      *vschema    // parsed value schema of the others (format 2.0)
	info    *typeInfo   // the Go type, when encoding
}

func (t *fileType) is(flag uint32) bool { return t.flags&flag != 0 }

// hasData reports whether columns of this component type carry bytes.
func (t *fileType) hasData() bool { return !t.is(TypeZeroSized) && !t.is(TypeTransient) }

// group orders the registry: components, resources, concrete types.
func (t *fileType) group() int {
	switch {
	case t.is(TypeResource):
		return 1
	case t.is(TypeConcrete):
		return 2
	}
	return 0
}

// needsValueSchema reports whether a type of a format 2.0 file carries a value schema: every type
// whose values are stored as msgpack.
func (t *fileType) needsValueSchema() bool {
	return !t.is(TypeRaw) && (t.is(TypeResource) || t.is(TypeConcrete) || t.hasData())
}

// sortTypes puts components before resources before concrete types, each sorted by name, so that
// the registry does not depend on the order in which the world registered its types.
func sortTypes(types []*fileType) {
	sort.Slice(types, func(i, j int) bool {
		a, b := types[i], types[j]
		if a.group() != b.group() {
			return a.group() < b.group()
		}
		return a.name < b.name
	})
}

// indexTypes sorts the types into registry order and returns the registry index and type id of
// each.
func indexTypes(types []*fileType) (map[*fileType]uint16, [][typeIDSize]byte) {
	sortTypes(types)
	index := make(map[*fileType]uint16, len(types))
	ids := make([][typeIDSize]byte, len(types))
	for i, t := range types {
		index[t] = uint16(i)
		ids[i] = t.id
	}
	return index, ids
}

// appendRegistry encodes the type registry section.
func appendRegistry(types []*fileType) []byte {
	size := 0
	for _, t := range types {
		size += typeFixedSize + len(t.name) + len(t.schema)
	}
	b := sectionBuf(uint32(len(types)), size)
	for _, t := range types {
		b.bytes(t.id[:])
		b.str16(t.name)
		b.u32(t.version)
		b.u32(t.flags)
		b.u32(t.size)
		b.u32(uint32(len(t.schema)))
		b.bytes(t.schema)
	}
	return finishSection(b)
}

// readRegistry reads and validates the type registry section.
func readRegistry(s *streamReader, h *fileHeader, buf []byte) ([]fileType, []byte, error) {
	r, count, buf, err := s.section(buf, "type registry", typeFixedSize)
	if err != nil {
		return nil, buf, err
	}
	if count != h.Types {
		return nil, buf, fmt.Errorf("%w: type registry at offset %d: %d types, header says %d", ErrCorrupt, r.base-sectionHeadSize, count, h.Types)
	}
	types := make([]fileType, count)
	seen := make(map[string]bool, count)
	resources := uint32(0)
	for i := range types {
		t := &types[i]
		at := r.offset()
		copy(t.id[:], r.take(typeIDSize))
		t.name = r.str16()
		t.version = r.u32()
		t.flags = r.u32()
		t.size = r.u32()
		t.schema = append([]byte(nil), r.take(int(r.u32()))...)
		if r.err != nil {
			return nil, buf, r.err
		}
		bad := func(format string, args ...any) ([]fileType, []byte, error) {
			return nil, buf, fmt.Errorf("%w: type registry entry %d (%q) at offset %d: %s", ErrCorrupt, i, t.name, at, fmt.Sprintf(format, args...))
		}
		if t.is(TypeResource) {
			resources++
		}
		if msg := t.check(h.VersionMajor == 1, seen); msg != "" {
			return bad("%s", msg)
		}
	}
	if r.remaining() != 0 {
		return nil, buf, fmt.Errorf("%w: type registry at offset %d: %d bytes after the last entry", ErrCorrupt, r.offset(), r.remaining())
	}
	if resources != h.Resources {
		return nil, buf, fmt.Errorf("%w: type registry: %d resource types, header says %d resources", ErrCorrupt, resources, h.Resources)
	}
	return types, buf, nil
}

// check validates a registry entry read from a file of format 1.0 (v1) or later and parses its
// schema; seen holds the names of the entries before it, by group. It returns what is wrong, or "".
func (t *fileType) check(v1 bool, seen map[string]bool) string {
	key := t.name
	if t.is(TypeResource) {
		key += " (resource)"
	}
	if t.is(TypeConcrete) {
		key += " (concrete)"
	}
	known := knownTypeFlags
	if v1 {
		known = knownTypeFlagsV1
	}
	wantSchema := t.is(TypeRaw) || !v1 && t.needsValueSchema()
	switch {
	case len(t.name) == 0 || len(t.name) > maxNameLen:
		return fmt.Sprintf("name length %d", len(t.name))
	case t.id != typeID(t.name):
		return fmt.Sprintf("type id %x does not match the name", t.id)
	case seen[key]:
		return "type listed twice"
	case t.flags&^known != 0:
		return fmt.Sprintf("unknown flags %#x", t.flags&^known)
	case t.is(TypeResource) && t.flags&(TypeTransient|TypeRelation|TypeRaw|TypeConcrete) != 0:
		return fmt.Sprintf("flags %#x are not valid for a resource", t.flags)
	case t.is(TypeConcrete) && t.flags&(TypeTransient|TypeRelation|TypeRaw) != 0:
		return fmt.Sprintf("flags %#x are not valid for a concrete type", t.flags)
	case t.is(TypeZeroSized) != (t.size == 0):
		return fmt.Sprintf("size %d with flags %#x", t.size, t.flags)
	case t.is(TypeZeroSized) && t.is(TypeRaw):
		return "zero-sized type marked raw"
	case wantSchema != (len(t.schema) > 0):
		return fmt.Sprintf("schema of %d bytes with flags %#x", len(t.schema), t.flags)
	}
	seen[key] = true
	var err error
	if t.is(TypeRaw) {
		if t.node, err = parseSchema(t.schema, t.size); err != nil {
			return fmt.Sprintf("schema does not describe %d bytes", t.size)
		}
	} else if wantSchema {
		if t.vs, err = parseValueSchema(t.schema); err != nil {
			return err.Error()
		}
	}
	return ""
}
