package mapserve

import (
	"encoding/json"
	"image"
	"strconv"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savetool"
)

// entity is one thing the map draws over the pixels, with its id, and that
// a click selects: a pixel body ([kindBody]), another regional entity
// ([kindEntity]) or a player with a position ([kindPlayer]). The page
// draws any list of entities by their bounds and ids.
type entity struct {
	Kind string `json:"kind"` // "body", "entity" or "player"
	// ID names the entity among those of its kind, as the page shows it: a
	// body's id, or a regional entity's stable id, in decimal (a string,
	// since JavaScript's numbers hold only 53 bits); a player's id.
	ID string  `json:"id"`
	X  float64 `json:"x"` // position, world pixels
	Y  float64 `json:"y"`
	// Placed says how a regional entity's (or a player's) position was found:
	// placedRegistered, placedFields (PlacedBy names the component) or
	// placedChunk (not found: the centre of its chunk). Empty for a body.
	Placed   string `json:"placed,omitempty"`
	PlacedBy string `json:"placed_by,omitempty"`
	// Bounds are the world pixels it may cover, [x0, y0, x1, y1) with x1
	// and y1 excluded: what the page frames and hit-tests (for a regional
	// entity a few pixels around its position).
	Bounds [4]int   `json:"bounds"`
	Chunk  [2]int32 `json:"chunk"` // the chunk it is stored with
	// Components is the JSON export's view of it (arksave export --json;
	// for a regional entity, archetype.ExportSectionJSON's object of the
	// entity: "entity" is its index in its section; for a player, an array
	// of the entities of its record); only /api/entity fills it.
	Components json.RawMessage `json:"components,omitempty"`
	// Section is, for a pixel body, its entity in its chunk's entity
	// section: its components besides PixelBody (whose data is the body
	// record, Components), in the export's view as for a regional entity;
	// none for a body saved without one. Only /api/entity fills it.
	Section json.RawMessage `json:"section,omitempty"`
	// Refs is the reference table of the section that holds a regional
	// entity (or a body's Section), which its ecs.Entity values ([r, 0]:
	// entry r, from 1) point into; only /api/entity fills it.
	Refs json.RawMessage `json:"refs,omitempty"`
}

// listed is e as /api/entities lists it: without its components.
func (e entity) listed() entity {
	e.Components, e.Section, e.Refs = nil, nil, nil
	return e
}

// kindBody is the entity.Kind of a pixel body.
const kindBody = "body"

// body is a pixel body of a view, with what the map needs of it.
type body struct {
	entity
	body    *chunkstore.Body
	section sectionEntity // its entity in the chunk's section, if any
	bounds  image.Rectangle
}

// bodiesOf describes the bodies of one body block, with their entities
// in its sections.
func bodiesOf(pos chunkstore.Pos, bs []chunkstore.Body, sections map[uint64]sectionEntity) []*body {
	out := make([]*body, 0, len(bs))
	for i := range bs {
		b := &bs[i]
		r := savetool.BodyBounds(b)
		out = append(out, &body{
			entity: entity{Kind: kindBody, ID: strconv.FormatUint(b.ID, 10), X: float64(b.X), Y: float64(b.Y),
				Bounds: [4]int{r.Min.X, r.Min.Y, r.Max.X, r.Max.Y}, Chunk: [2]int32{pos.X, pos.Y}},
			body: b, section: sections[b.ID], bounds: r,
		})
	}
	return out
}

// withComponents returns the entity with its components filled in.
func (b *body) withComponents() (entity, error) {
	e := b.entity
	c, err := json.Marshal(savetool.NewBodyEntry(b.body))
	e.Components, e.Section, e.Refs = c, b.section.components, b.section.refs
	return e, err
}
