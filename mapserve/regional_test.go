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

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/testkit/savetest"
	"github.com/arksave/arksave/mapserve"
	"github.com/arksave/arksave/vfs"
)

type (
	Crate  = savetest.Crate
	Beacon = savetest.Beacon
	Link   = savetest.Link
)

// fullName is a type's name as the JSON export gives it.
func fullName[T any]() string {
	t := reflect.TypeFor[T]()
	return t.PkgPath() + "." + t.Name()
}

// regionalGame is a game whose chunks hold regional entities besides a
// pixel body: crates 101 (in chunk 0,0, linked to 102) and 102 (chunk
// 1,0), beacon 103 (chunk -1,0, at -20,20); and players: ada at 5,-8 with
// an item linked to her avatar, bob without a position. Saved once.
type regionalGame struct {
	*savetest.RegionalGame
	byID   map[uint64]ecs.Entity
	bodyID uint64
	ada    ecs.Entity
}

func newRegionalGame(t testing.TB, dir string) *regionalGame {
	t.Helper()
	return newRegionalGameOn(t, nil, dir)
}

// newRegionalGameOn is newRegionalGame on the file system fsys (nil: the
// real one).
func newRegionalGameOn(t testing.TB, fsys vfs.FS, dir string) *regionalGame {
	t.Helper()
	rg, err := savetest.OpenRegional(fsys, dir, savetest.ChunkSize, savetest.Generator)
	must(t, err)
	t.Cleanup(func() { rg.Close() })
	g := &regionalGame{RegionalGame: rg, byID: map[uint64]ecs.Entity{}}
	g.byID[102] = g.Crate(102, 40, 5, "lamp", ecs.Entity{})
	g.byID[101] = g.Crate(101, 10, 12, "rope", g.byID[102])
	g.byID[103] = g.Beacon(103, -20, 20)
	g.bodyID = g.Body(20, 40)
	g.ada = ecs.NewMap2[components.Player, savetest.Position](g.W).NewEntity(&components.Player{ID: "ada"}, &savetest.Position{X: 5, Y: -8})
	links := ecs.NewMap2[components.Player, Link](g.W)
	links.NewEntity(&components.Player{ID: "ada"}, &Link{To: g.ada})
	links.NewEntity(&components.Player{ID: "bob"}, &Link{})
	g.save(t)
	return g
}

func (g *regionalGame) save(t testing.TB) {
	t.Helper()
	must(t, g.Save())
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
	expect(t, slices.Equal(kinds, []string{body, "entity 101", "entity 102", "entity 103", "player ada"}), "listed: %v", kinds)
	crate := fullName[Crate]()
	expectPlaced(t, list.Entities, "101", 10, 12, [2]int32{0, 0}, mapserve.PlacedFields, crate)
	expectPlaced(t, list.Entities, "102", 40, 5, [2]int32{1, 0}, mapserve.PlacedFields, crate)
	expectPlaced(t, list.Entities, "103", -16, 16, [2]int32{-1, 0}, mapserve.PlacedChunk, "")

	ada, ok := entityOf(list.Entities, mapserve.KindPlayer, "ada")
	expect(t, ok && ada.X == 5 && ada.Y == -8 && ada.Chunk == [2]int32{0, -1} && ada.Placed == mapserve.PlacedFields && ada.PlacedBy == fullName[savetest.Position](),
		"player ada: %+v", ada)

	var world struct{ Bodies, Entities, Players int }
	getJSON(t, ts, "/api/world", &world)
	expect(t, world.Bodies == 1 && world.Entities == 3 && world.Players == 1, "world: %+v", world)
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
	// Its other components are its entity in the chunk's section.
	var sec map[string]json.RawMessage
	must(t, json.Unmarshal(info.Section, &sec))
	_, persistable := sec[fullName[components.Persistable]()]
	expect(t, string(sec[fullName[components.Regional]()]) == `{"ID":`+itoa(g.bodyID)+`}` && persistable && sec[fullName[components.PixelBody]()] == nil,
		"the body's entity: %s", info.Section)

	// A player's components are every entity of its record; a player
	// without a position is not on the map.
	info.Entity = mapserve.Entity{}
	getJSON(t, ts, "/api/entity?kind=player&id=ada", &info)
	var record []map[string]json.RawMessage
	must(t, json.Unmarshal(info.Components, &record))
	expect(t, info.Kind == mapserve.KindPlayer && len(record) == 2 && string(info.Refs) == `[["local",0]]`, "player ada: %+v", info)
	pos := slices.IndexFunc(record, func(e map[string]json.RawMessage) bool { return e[fullName[savetest.Position]()] != nil })
	expect(t, pos >= 0 && string(record[1-pos][fullName[Link]()]) == `{"To":[1,0]}`, "ada's record: %s", info.Components)
	expect(t, get(t, ts, "/api/entity?kind=player&id=bob").status == http.StatusNotFound, "bob, who has no position, is on the map")

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

	crate := ecs.NewMap1[Crate](g.W)
	crate.Get(g.byID[102]).X, crate.Get(g.byID[102]).Y = 50, 20 // moves within chunk 1,0
	g.W.RemoveEntity(g.byID[103])
	g.Crate(104, -10, -10, "new", g.byID[101])
	ecs.NewMap1[savetest.Position](g.W).Get(g.ada).X = 70
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
	ada, _ := entityOf(list.Entities, mapserve.KindPlayer, "ada")
	expect(t, ada.X == 70 && ada.Chunk == [2]int32{2, -1}, "player ada after her move: %+v", ada)
	_, beacon := entityOf(list.Entities, mapserve.KindEntity, "103")
	expect(t, !beacon, "the removed beacon is still listed")
	expect(t, get(t, ts, "/api/entity?kind=entity&id=103").status == http.StatusNotFound, "the removed beacon still has an info")

	// A generation that changes none of them says so; one in which only a
	// player moved says the entities changed.
	for _, move := range []bool{false, true} {
		if move {
			ecs.NewMap1[savetest.Position](g.W).Get(g.ada).Y = 3
		}
		g.save(t)
		moved, err := s.Refresh()
		must(t, err)
		ev := next(t, events)
		expect(t, moved && ev.name == "generation" && ev.data.Entities == move, "player moved %v: event %+v", move, ev)
	}
	list = entitiesAnswer{}
	getJSON(t, ts, "/api/entities", &list)
	ada, _ = entityOf(list.Entities, mapserve.KindPlayer, "ada")
	expect(t, ada.X == 70 && ada.Y == 3, "player ada after her second move: %+v", ada)
}

// The server reads a save through Options.FS only, as savetool's commands
// do, so it serves a save on any vfs.FS: here one in memory, which a game
// saves into while it is served.
func TestServesASaveInMemory(t *testing.T) {
	mem := vfs.NewMem()
	g := newRegionalGameOn(t, mem, "/save")
	s, ts := newServer(t, "/save", mapserve.Options{FS: mem, Poll: -1, Generator: savetest.Generator})
	var world struct {
		Generation uint64
		Bodies     int
		Entities   int
		Chunks     []struct{ Kind string }
	}
	getJSON(t, ts, "/api/world", &world)
	expect(t, world.Generation == 1 && world.Bodies == 1 && world.Entities == 3 && len(world.Chunks) > 0, "world: %+v", world)
	getTile(t, ts, "/api/tiles/0/0/0.png")
	var info struct{ mapserve.Entity }
	getJSON(t, ts, "/api/entity?kind=entity&id=102", &info)
	expect(t, info.X == 40 && info.Y == 5 && strings.Contains(string(info.Components), `"Label":"lamp"`), "entity 102: %+v", info)
	var gens struct {
		Generations []struct{ Generation uint64 }
		World       *struct{ Entities uint64 }
	}
	getJSON(t, ts, "/api/generations", &gens)
	expect(t, len(gens.Generations) == 1 && gens.World != nil, "generations: %+v", gens)
	var check struct {
		OK       bool
		Problems []any
	}
	getJSON(t, ts, "/api/check", &check)
	expect(t, check.OK && len(check.Problems) == 0, "check: %+v", check)

	ecs.NewMap1[Crate](g.W).Get(g.byID[102]).X = 60
	g.save(t)
	moved, err := s.Refresh()
	must(t, err)
	expect(t, moved && s.Generation() == 2, "Refresh: moved %v to generation %d", moved, s.Generation())
	getJSON(t, ts, "/api/entity?kind=entity&id=102", &info)
	expect(t, info.X == 60, "entity 102 after the move: %+v", info)
}
