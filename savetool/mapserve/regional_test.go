package mapserve_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savetest"
	"github.com/arksave/arksave/savetool/mapserve"
)

// Components of the regional game: a crate places itself by its X and Y
// (which the map finds by itself), a beacon by an array the map cannot
// read unless told, and a link points at another entity.
type (
	Crate struct {
		X, Y  float64
		Label string
	}
	Beacon struct{ At [2]float64 }
	Link   struct{ To ecs.Entity }
)

// fullName is a type's name as the JSON export gives it.
func fullName[T any]() string {
	t := reflect.TypeFor[T]()
	return t.PkgPath() + "." + t.Name()
}

// regionalGame is a game whose chunks hold regional entities besides a
// pixel body: crates 101 (in chunk 0,0, linked to 102) and 102 (chunk
// 1,0), beacon 103 (chunk -1,0, at -20,20).
type regionalGame struct {
	w       *ecs.World
	systems []arksave.System
	pers    *arksave.Persistence
	byID    map[uint64]ecs.Entity
	bodyID  uint64
}

func newRegionalGame(t *testing.T, dir string) *regionalGame {
	t.Helper()
	w := ecs.NewWorld()
	ecs.ComponentID[Crate](w)
	ecs.ComponentID[Beacon](w)
	ecs.ComponentID[Link](w)
	systems, err := arksave.Plugin{Dir: dir, ChunkSize: savetest.ChunkSize, TileSize: savetest.TileSize,
		Seed: savetest.Seed, Generator: savetest.Generator,
		Positions: []arksave.RegionalPosition{
			arksave.Position(func(c *Crate) (float64, float64) { return c.X, c.Y }),
			arksave.Position(func(b *Beacon) (float64, float64) { return b.At[0], b.At[1] }),
		},
	}.Install(w)
	must(t, err)
	g := &regionalGame{w: w, systems: systems, pers: ecs.GetResource[arksave.Persistence](w), byID: map[uint64]ecs.Entity{}}
	t.Cleanup(func() { g.pers.Close() })
	ecs.NewMap1[components.Focus](w).NewEntity(&components.Focus{Radius: 1})
	ix := ecs.GetResource[components.ChunkIndex](w)
	for i := 0; i < 5000 && ix.Len() < 9; i++ {
		g.tick()
		time.Sleep(time.Millisecond)
	}
	expect(t, ix.Len() == 9, "%d chunks loaded", ix.Len())

	crates := ecs.NewMap3[Crate, Link, components.Regional](w)
	b := crates.NewEntity(&Crate{X: 40, Y: 5, Label: "lamp"}, &Link{}, &components.Regional{ID: 102})
	g.byID[102] = b
	g.byID[101] = crates.NewEntity(&Crate{X: 10, Y: 12, Label: "rope"}, &Link{To: b}, &components.Regional{ID: 101})
	g.byID[103] = ecs.NewMap2[Beacon, components.Regional](w).NewEntity(&Beacon{At: [2]float64{-20, 20}}, &components.Regional{ID: 103})
	body := components.PixelBody{ID: ecs.GetResource[components.BodyIDs](w).New(), X: 20, Y: 40, Width: 2, Height: 2,
		Pixels: make([]components.Pixel, 4), Shape: []bool{true, true, true, true}}
	for i := range body.Pixels {
		body.Pixels[i] = components.MakePixel(3, 1, 0, components.FlagPixelBody)
	}
	g.bodyID = uint64(body.ID)
	ecs.NewMap2[components.PixelBody, components.Persistable](w).NewEntity(&body, &components.Persistable{})
	g.save(t)
	return g
}

func (g *regionalGame) tick() {
	for _, s := range g.systems {
		s.Update(g.w)
	}
}

func (g *regionalGame) save(t *testing.T) {
	t.Helper()
	g.tick() // places new regional entities in their chunks
	must(t, g.pers.SaveNow().Err)
}

type entitiesAnswer struct {
	Generation uint64
	Entities   []mapserve.Entity
}

// entityOf finds an entity of a listing.
func entityOf(list []mapserve.Entity, kind, id string) (mapserve.Entity, bool) {
	i := slices.IndexFunc(list, func(e mapserve.Entity) bool { return e.Kind == kind && e.ID == id })
	if i < 0 {
		return mapserve.Entity{}, false
	}
	return list[i], true
}

// expectPlaced checks where the listing puts regional entity id.
func expectPlaced(t *testing.T, list []mapserve.Entity, id string, x, y float64, chunk [2]int32, placed, by string) {
	t.Helper()
	e, ok := entityOf(list, mapserve.KindEntity, id)
	expect(t, ok, "entity %s is not listed: %+v", id, list)
	expect(t, e.X == x && e.Y == y && e.Chunk == chunk && e.Placed == placed && e.PlacedBy == by,
		"entity %s: at %v,%v in chunk %v placed %q by %q; want %v,%v in %v placed %q by %q", id, e.X, e.Y, e.Chunk, e.Placed, e.PlacedBy, x, y, chunk, placed, by)
	expect(t, e.Bounds[0] < int(x) && int(x) < e.Bounds[2] && e.Bounds[1] < int(y) && int(y) < e.Bounds[3], "entity %s: bounds %v do not hold %v,%v", id, e.Bounds, x, y)
	expect(t, e.Components == nil && e.Refs == nil, "the listing carries components of %s", id)
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

// Regional entities that are not pixel bodies are listed with their stable
// ids and positions, by the game's registration, by a component's X and Y,
// or at their chunk's centre; each with its components in the export's
// view, references resolved through its section's table.
func TestRegionalEntities(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "save")
	g := newRegionalGame(t, dir)
	_, ts := newServer(t, dir, mapserve.Options{Poll: -1})

	var list entitiesAnswer
	getJSON(t, ts, "/api/entities", &list)
	var kinds []string
	for _, e := range list.Entities {
		kinds = append(kinds, e.Kind+" "+e.ID)
	}
	slices.Sort(kinds)
	body := mapserve.KindBody + " " + itoa(g.bodyID)
	expect(t, slices.Equal(kinds, []string{body, "entity 101", "entity 102", "entity 103"}), "listed: %v", kinds)
	crate := fullName[Crate]()
	expectPlaced(t, list.Entities, "101", 10, 12, [2]int32{0, 0}, mapserve.PlacedFields, crate)
	expectPlaced(t, list.Entities, "102", 40, 5, [2]int32{1, 0}, mapserve.PlacedFields, crate)
	expectPlaced(t, list.Entities, "103", -16, 16, [2]int32{-1, 0}, mapserve.PlacedChunk, "")

	var world struct{ Bodies, Entities int }
	getJSON(t, ts, "/api/world", &world)
	expect(t, world.Bodies == 1 && world.Entities == 3, "world: %d bodies, %d entities", world.Bodies, world.Entities)
	var chunk struct {
		Entities  int
		EntityIDs []string `json:"entity_ids"`
	}
	getJSON(t, ts, "/api/chunk?x=1&y=0", &chunk)
	expect(t, chunk.Entities == 1 && slices.Equal(chunk.EntityIDs, []string{"102"}), "chunk 1,0: %+v", chunk)

	var info struct {
		Generation uint64
		mapserve.Entity
	}
	getJSON(t, ts, "/api/entity?kind=entity&id=101", &info)
	expect(t, info.Kind == mapserve.KindEntity && info.ID == "101" && info.X == 10 && info.Generation == 1, "entity 101: %+v", info)
	var comps map[string]json.RawMessage
	must(t, json.Unmarshal(info.Components, &comps))
	expect(t, string(comps[crate]) == `{"X":10,"Y":12,"Label":"rope"}`, "crate of 101: %s", comps[crate])
	expect(t, string(comps[fullName[components.Regional]()]) == `{"ID":101}`, "Regional of 101: %s", info.Components)
	// The link points outside the section, at crate 102, by its stable id.
	var link struct{ To [2]uint64 }
	must(t, json.Unmarshal(comps[fullName[Link]()], &link))
	var refs [][]json.RawMessage
	must(t, json.Unmarshal(info.Refs, &refs))
	expect(t, link.To[0] >= 1 && int(link.To[0]) <= len(refs) && link.To[1] == 0, "link %v, refs %s", link.To, info.Refs)
	ref := refs[link.To[0]-1]
	expect(t, string(ref[0]) == `"stable"` && string(ref[1]) == "102", "link of 101 resolves to %s", ref)

	// A body is a body, not also an entity; its components are its record's.
	expect(t, get(t, ts, "/api/entity?kind=entity&id="+itoa(g.bodyID)).status == http.StatusNotFound, "a body listed as an entity")
	info.Entity = mapserve.Entity{}
	getJSON(t, ts, "/api/entity?kind=body&id="+itoa(g.bodyID), &info)
	expect(t, info.Kind == mapserve.KindBody && info.X == 20 && info.Y == 40, "body: %+v", info)

	// The game's registration places the beacon; the crates keep their fields.
	_, ts2 := newServer(t, dir, mapserve.Options{Poll: -1, Position: func(c mapserve.Components) (float64, float64, bool) {
		var b Beacon
		if raw, ok := c[fullName[Beacon]()]; ok && json.Unmarshal(raw, &b) == nil {
			return b.At[0], b.At[1], true
		}
		return 0, 0, false
	}})
	list = entitiesAnswer{} // decoding into the old list would keep fields the new one omits
	getJSON(t, ts2, "/api/entities", &list)
	expectPlaced(t, list.Entities, "103", -20, 20, [2]int32{-1, 0}, mapserve.PlacedRegistered, "")
	expectPlaced(t, list.Entities, "101", 10, 12, [2]int32{0, 0}, mapserve.PlacedFields, crate)

	// PositionFields reads named fields.
	_, ts3 := newServer(t, dir, mapserve.Options{Poll: -1, Position: mapserve.PositionFields(crate, "Y", "X")})
	list = entitiesAnswer{}
	getJSON(t, ts3, "/api/entities", &list)
	expectPlaced(t, list.Entities, "101", 12, 10, [2]int32{0, 0}, mapserve.PlacedRegistered, "")
	expectPlaced(t, list.Entities, "103", -16, 16, [2]int32{-1, 0}, mapserve.PlacedChunk, "")
}

// Bad entity requests get a 4xx and name what is wrong.
func TestRegionalEntityBadRequests(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "save")
	newRegionalGame(t, dir)
	_, ts := newServer(t, dir, mapserve.Options{Poll: -1})
	for _, tc := range []struct {
		query  string
		status int
	}{
		{"kind=entity&id=999", http.StatusNotFound},
		{"kind=body&id=101", http.StatusNotFound},
		{"kind=entity&id=abc", http.StatusBadRequest},
		{"kind=entity&id=-101", http.StatusBadRequest},
		{"kind=entity&id=", http.StatusBadRequest},
		{"kind=entity&id=101.0", http.StatusBadRequest},
		{"kind=entity&id=18446744073709551616", http.StatusBadRequest},
		{"kind=entity&id=" + url.QueryEscape("../../manifest"), http.StatusBadRequest},
		{"kind=" + url.QueryEscape("../entity") + "&id=101", http.StatusBadRequest},
		{"kind=crate&id=101", http.StatusBadRequest},
		{"kind=entity&id=101&id=102", http.StatusBadRequest},
		{"kind=entity&id=101&chunk=0", http.StatusBadRequest},
	} {
		r := get(t, ts, "/api/entity?"+tc.query)
		var e struct{ Error string }
		expect(t, r.status == tc.status && json.Unmarshal(r.body, &e) == nil && strings.HasPrefix(e.Error, "mapserve: "),
			"%s: %d %s, want %d and an error", tc.query, r.status, r.body, tc.status)
	}
}

// A new generation in which regional entities moved, were removed and
// added is an event that says the entities changed, and the listing
// follows it.
func TestRegionalEntitiesFollowGenerations(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "save")
	g := newRegionalGame(t, dir)
	s, ts := newServer(t, dir, mapserve.Options{Poll: -1})
	events := subscribe(t, ts.URL)
	hello := next(t, events)
	expect(t, hello.name == "hello" && hello.data.Generation == 1, "first event %+v", hello)

	crate := ecs.NewMap1[Crate](g.w)
	crate.Get(g.byID[102]).X, crate.Get(g.byID[102]).Y = 50, 20 // moves within chunk 1,0
	g.w.RemoveEntity(g.byID[103])
	ecs.NewMap3[Crate, Link, components.Regional](g.w).NewEntity(&Crate{X: -10, Y: -10, Label: "new"}, &Link{To: g.byID[101]}, &components.Regional{ID: 104})
	g.save(t)
	moved, err := s.Refresh()
	must(t, err)
	expect(t, moved && s.Generation() == 2, "Refresh: moved %v to generation %d", moved, s.Generation())
	ev := next(t, events)
	expect(t, ev.name == "generation" && ev.data.Generation == 2 && ev.data.Entities, "event %+v", ev)

	var list entitiesAnswer
	getJSON(t, ts, "/api/entities", &list)
	expect(t, list.Generation == 2, "listing of generation %d", list.Generation)
	crateName := fullName[Crate]()
	expectPlaced(t, list.Entities, "102", 50, 20, [2]int32{1, 0}, mapserve.PlacedFields, crateName)
	expectPlaced(t, list.Entities, "104", -10, -10, [2]int32{-1, -1}, mapserve.PlacedFields, crateName)
	expectPlaced(t, list.Entities, "101", 10, 12, [2]int32{0, 0}, mapserve.PlacedFields, crateName)
	_, beacon := entityOf(list.Entities, mapserve.KindEntity, "103")
	expect(t, !beacon, "the removed beacon is still listed")
	expect(t, get(t, ts, "/api/entity?kind=entity&id=103").status == http.StatusNotFound, "the removed beacon still has an info")
}
