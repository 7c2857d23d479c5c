package mapserve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"math"
	"reflect"
	"strconv"

	_ "github.com/arksave/arksave/archetype" // registers the reader sectionjson.Read uses
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/sectionjson"
)

// kindEntity is the entity.Kind of a regional entity that is not a pixel
// body: an entity of any archetype with components.Regional, stored in an
// entity section of the chunk it stands in. Its ID is its stable id
// (Regional.ID) in decimal.
const kindEntity = "entity"

// How the map found where a regional entity stands (entity.Placed).
const (
	// placedRegistered: Options.Position gave the position.
	placedRegistered = "registered"
	// placedFields: a component's fields X and Y (or x and y), numbers;
	// entity.PlacedBy names the component.
	placedFields = "fields"
	// placedChunk: neither; the entity is drawn at the centre of the chunk
	// it is stored with.
	placedChunk = "chunk"
)

// Components are a regional entity's components in the JSON export's view
// (archetype.ExportSectionJSON), keyed by the type's full name
// ("example.com/game.Crate"), as the map hands them to Options.Position.
type Components map[string]json.RawMessage

// PositionFields returns an Options.Position that reads the position from
// fields x and y (numbers, world pixels) of the component with the full
// type name component, as the JSON export names types and fields: for
// type Crate struct{ X, Y float64 } of package example.com/game,
// PositionFields("example.com/game.Crate", "X", "Y"). An entity without
// that component, or whose fields are not finite numbers, is left to the
// map's own guess.
func PositionFields(component, x, y string) func(Components) (float64, float64, bool) {
	return func(c Components) (float64, float64, bool) {
		return fieldsXY(objectFields(c[component]), x, y)
	}
}

// field is a field of a JSON object: its name, unquoted, and its value.
type field struct {
	name  []byte
	value json.RawMessage
}

// objectFields returns the fields of a struct's JSON, in order; nil for
// anything else. It reads them in place: the map reads the fields of
// every component of every entity of a chunk it shows.
func objectFields(value json.RawMessage) []field { return appendFields(nil, value) }

// appendFields appends the fields of a struct's JSON to fields; nothing
// for anything else.
func appendFields(fields []field, value json.RawMessage) []field {
	if len(value) == 0 || value[0] != '{' || !json.Valid(value) {
		return fields
	}
	for i := skipSpace(value, 1); i < len(value) && value[i] == '"'; {
		end := stringEnd(value, i)
		name := value[i+1 : end-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			var unquoted string
			if json.Unmarshal(value[i:end], &unquoted) != nil {
				return fields[:0]
			}
			name = []byte(unquoted)
		}
		start := skipSpace(value, skipSpace(value, end)+1) // past the colon
		stop := valueEnd(value, start)
		fields = append(fields, field{name, value[start:stop]})
		i = skipSpace(value, stop)
		if i < len(value) && value[i] == ',' {
			i = skipSpace(value, i+1)
		}
	}
	return fields
}

// skipSpace returns the index of the first byte of b from i on that is not
// JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just past the string of valid JSON b that
// starts at i.
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// valueEnd returns the index just past the value of valid JSON b that
// starts at i.
func valueEnd(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch c := b[i]; c {
		case '"':
			i = stringEnd(b, i) - 1
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}

// fieldsXY reads fields x and y as finite numbers; of a name given twice,
// the last (as encoding/json reads it).
func fieldsXY(fields []field, x, y string) (float64, float64, bool) {
	var rx, ry json.RawMessage
	for _, f := range fields {
		switch string(f.name) {
		case x:
			rx = f.value
		case y:
			ry = f.value
		}
	}
	fx, okx := number(rx)
	fy, oky := number(ry)
	return fx, fy, okx && oky
}

// number parses a JSON number; the export writes NaN and infinities as
// strings, which are not positions.
func number(raw json.RawMessage) (float64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	return f, err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
}

// heuristicFields are the field pairs the map looks for when the game
// registers no position, in order.
var heuristicFields = [...][2]string{{"X", "Y"}, {"x", "y"}}

// regional is a regional entity of a view that is not a pixel body.
type regional struct {
	entity
	stable uint64
}

// entityMark is how far from its position, in world pixels, a regional
// entity's bounds reach: the page draws a marker of its own size there.
const entityMark = 4

// maxPosition bounds the positions the map takes from components (chunk
// coordinates are int32); beyond it (or not finite) a regional entity is
// placed at its chunk's centre.
const maxPosition = 1 << 31

// regionalName is the full type name of components.Regional, as a
// section's type registry names it.
var regionalName = func() string {
	t := reflect.TypeFor[components.Regional]()
	return t.PkgPath() + "." + t.Name()
}()

// sectionEntity is an entity of a section in the JSON export's view, with
// its section's reference table.
type sectionEntity struct {
	components json.RawMessage
	refs       json.RawMessage
}

// same reports whether two section entities read the same.
func (a sectionEntity) same(b sectionEntity) bool {
	return bytes.Equal(a.components, b.components) && bytes.Equal(a.refs, b.refs)
}

// eachEntity calls fn for every entity of an entity section, in the
// section's order: its table's component names and their JSON, its object
// in the JSON export's view (archetype.ExportSectionJSON's, byte for byte)
// and the section's reference table. The section is read whole before fn
// is called: a damaged section yields no entity.
func eachEntity(sec []byte, fn func(e *sectionjson.Entity, raw, refs json.RawMessage)) error {
	s, err := sectionjson.Read(sec)
	if err != nil {
		return err
	}
	keys := map[string][]byte{}
	for i := range s.Entities {
		e := &s.Entities[i]
		fn(e, entityObject(e, keys), s.Refs)
	}
	return nil
}

// entityObject writes an entity's object as the export does: "entity",
// then its components in its table's order. keys caches the names in
// JSON.
func entityObject(e *sectionjson.Entity, keys map[string][]byte) json.RawMessage {
	n := len(`{"entity": }`) + 20
	for i, name := range e.Names {
		k, ok := keys[name]
		if !ok {
			k, _ = json.Marshal(name)
			keys[name] = k
		}
		n += len(", : ") + len(k) + len(e.Values[i])
	}
	raw := strconv.AppendUint(append(make([]byte, 0, n), `{"entity": `...), e.Index, 10)
	for i, name := range e.Names {
		raw = append(append(append(append(raw, ", "...), keys[name]...), ": "...), e.Values[i]...)
	}
	return append(raw, '}')
}

// component returns the JSON of an entity's component with the full type
// name name; nil when it has none.
func component(e *sectionjson.Entity, name string) json.RawMessage {
	for i, n := range e.Names {
		if n == name {
			return e.Values[i]
		}
	}
	return nil
}

// stableID reads a Regional's JSON as encoding/json does: the export
// writes {"ID":n}, read in place; anything else goes through
// json.Unmarshal. False when there is none or it does not read.
func stableID(raw json.RawMessage) (components.Regional, bool) {
	if raw == nil {
		return components.Regional{}, false
	}
	var scratch [2]field
	if f := appendFields(scratch[:0], raw); len(f) == 1 && string(f[0].name) == "ID" {
		if id, ok := digits(f[0].value); ok {
			return components.Regional{ID: id}, true
		}
	}
	return stableIDJSON(raw)
}

// stableIDJSON reads a Regional's JSON through encoding/json.
func stableIDJSON(raw json.RawMessage) (components.Regional, bool) {
	var reg components.Regional
	return reg, json.Unmarshal(raw, &reg) == nil
}

// digits reads a number of decimal digits alone that fits a uint64.
func digits(b []byte) (uint64, bool) {
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' || n > (math.MaxUint64-uint64(c-'0'))/10 {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, len(b) > 0
}

// regionalsOf returns the regional entities of the entity block at pos
// that are not its pixel bodies, with their components and the reference
// table of their section, in the order the sections list them, and the
// entities of the bodies, by body id: a later section's copy of a stable
// id replaces an earlier one (as a load does), and entities without a
// Regional are left out. size is the chunk edge; place is
// Options.Position.
func regionalsOf(pos chunkPos, size int, blk *chunkstore.EntityBlock, place func(Components) (float64, float64, bool)) ([]*regional, map[uint64]sectionEntity, error) {
	set := newRegionalSet(pos, size, blk)
	for si, sec := range blk.Sections {
		err := eachEntity(sec, func(e *sectionjson.Entity, raw, refs json.RawMessage) {
			reg, ok := stableID(component(e, regionalName))
			if !ok || set.body(reg.ID, raw, refs) {
				return
			}
			x, y, placed, by, ok := locate(e, place)
			set.add(reg.ID, raw, refs, x, y, placed, by, ok)
		})
		if err != nil {
			return set.out, set.bodies, fmt.Errorf("mapserve: entity section %d of chunk %v: %w", si, pos, err)
		}
	}
	return set.out, set.bodies, nil
}

// regionalSet gathers the regional entities of an entity block, section
// after section, and the entities of its pixel bodies.
type regionalSet struct {
	pos    chunkPos
	size   int
	out    []*regional
	index  map[uint64]int // of out, by stable id
	bodies map[uint64]sectionEntity
}

func newRegionalSet(pos chunkPos, size int, blk *chunkstore.EntityBlock) *regionalSet {
	s := &regionalSet{pos: pos, size: size, index: map[uint64]int{}, bodies: make(map[uint64]sectionEntity, len(blk.Bodies))}
	for i := range blk.Bodies {
		s.bodies[blk.Bodies[i].ID] = sectionEntity{}
	}
	return s
}

// body takes the entity with stable id id when it is a body's, and
// reports whether it is.
func (s *regionalSet) body(id uint64, raw, refs json.RawMessage) bool {
	if _, ok := s.bodies[id]; !ok {
		return false
	}
	s.bodies[id] = sectionEntity{raw, refs}
	return true
}

// add adds the regional entity with stable id id, standing at (x, y)
// (placed by by), or at its chunk's centre when ok is false; it replaces
// an earlier copy of id.
func (s *regionalSet) add(id uint64, raw, refs json.RawMessage, x, y float64, placed, by string, ok bool) {
	r := &regional{stable: id, entity: entity{Kind: kindEntity, ID: strconv.FormatUint(id, 10),
		Chunk: [2]int32{s.pos.X, s.pos.Y}, Components: raw, Refs: refs, X: x, Y: y, Placed: placed, PlacedBy: by}}
	if !ok {
		half := float64(s.size) / 2
		r.X, r.Y, r.Placed = float64(int(s.pos.X)*s.size)+half, float64(int(s.pos.Y)*s.size)+half, placedChunk
	}
	r.Bounds = markBounds(r.X, r.Y)
	if i, ok := s.index[id]; ok {
		s.out[i] = r
		return
	}
	s.index[id] = len(s.out)
	s.out = append(s.out, r)
}

// locate finds where an entity stands from its components: by place, else
// by the first component (in the section's order) with number fields X
// and Y, or x and y.
func locate(e *sectionjson.Entity, place func(Components) (float64, float64, bool)) (x, y float64, placed, by string, ok bool) {
	if place != nil {
		// The game's function gets copies: what it does to them changes
		// neither this entity nor the next.
		comps := make(Components, len(e.Names))
		for i, name := range e.Names {
			comps[name] = bytes.Clone(e.Values[i])
		}
		if x, y, ok := place(comps); usable(x, y, ok) {
			return x, y, placedRegistered, "", true
		}
	}
	var scratch [8]field
	for i, name := range e.Names {
		if name == regionalName {
			continue // its one field is the stable id
		}
		fields := appendFields(scratch[:0], e.Values[i])
		for _, f := range heuristicFields {
			if x, y, ok := fieldsXY(fields, f[0], f[1]); usable(x, y, ok) {
				return x, y, placedFields, name, true
			}
		}
	}
	return 0, 0, "", "", false
}

// usable reports whether a position read (ok) is one the map can place
// an entity at.
func usable(x, y float64, ok bool) bool {
	return ok && math.Abs(x) < maxPosition && math.Abs(y) < maxPosition
}

// markBounds are the bounds of a marker at (x, y).
func markBounds(x, y float64) [4]int {
	ix, iy := int(math.Floor(x)), int(math.Floor(y))
	return rect4(image.Rect(ix-entityMark, iy-entityMark, ix+entityMark, iy+entityMark))
}
