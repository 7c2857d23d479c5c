package gametest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/components"
)

// Components of the test game's regional entities.
type (
	// Crate is not plain-old-data: it is saved as a msgpack value.
	Crate struct {
		HP   int
		Tags []string
		Link ecs.Entity
	}
	// Tether is plain-old-data holding an entity.
	Tether struct {
		To  ecs.Entity
		Len float32
	}
)

// RegisterRegional registers the regional components, Crate and Tether.
func RegisterRegional(w *ecs.World) {
	ecs.ComponentID[Crate](w)
	ecs.ComponentID[Tether](w)
}

// SpawnCrate makes a regional crate at (x, y); id 0 lets the plugin choose.
func (g *Game) SpawnCrate(x, y float64, id uint64, hp int) ecs.Entity {
	return ecs.NewMap3[Position, Crate, components.Regional](g.W).NewEntity(
		&Position{x, y}, &Crate{HP: hp, Tags: []string{"wood", fmt.Sprint(hp)}}, &components.Regional{ID: id})
}

// CrateView is what a crate's components hold, comparable across loads.
type CrateView struct {
	X, Y float64
	HP   int
	Tags string
}

// Crates returns every loaded crate by stable id, with its entity.
func (g *Game) Crates(t testing.TB) (map[uint64]CrateView, map[uint64]ecs.Entity) {
	t.Helper()
	views := map[uint64]CrateView{}
	ents := map[uint64]ecs.Entity{}
	q := ecs.NewFilter3[components.Regional, Position, Crate](g.W).Query()
	for q.Next() {
		reg, p, c := q.Get()
		if _, dup := views[reg.ID]; dup {
			q.Close()
			t.Fatalf("stable id %d twice in the world", reg.ID)
		}
		views[reg.ID] = CrateView{p.X, p.Y, c.HP, fmt.Sprint(c.Tags)}
		ents[reg.ID] = q.Entity()
	}
	return views, ents
}

// CrateDigest describes the loaded crates, by stable id.
func CrateDigest(t testing.TB, g *Game) string {
	t.Helper()
	views, _ := g.Crates(t)
	return fmt.Sprint(views)
}

// Inventory is what the test game's players carry.
type Inventory struct {
	Items []string
	Gold  int
	Held  ecs.Entity // another entity of the same player
}

// RegisterPlayers registers the regional components and Inventory.
func RegisterPlayers(w *ecs.World) {
	RegisterRegional(w)
	ecs.ComponentID[Inventory](w)
}

// SpawnPlayer makes player id: an avatar standing at (x, y) with an
// inventory, and an item entity the inventory holds.
func (g *Game) SpawnPlayer(id string, x, y float64, gold int, items ...string) {
	item := ecs.NewMap2[components.Player, Crate](g.W).NewEntity(&components.Player{ID: id}, &Crate{HP: gold, Tags: items})
	ecs.NewMap3[components.Player, Position, Inventory](g.W).NewEntity(&components.Player{ID: id}, &Position{x, y},
		&Inventory{Items: slices.Clone(items), Gold: gold, Held: item})
}

// InventoryOf describes player id as the world holds it: "" when it is not
// loaded. It checks that the inventory still holds the player's item.
func (g *Game) InventoryOf(t testing.TB, id string) string {
	t.Helper()
	q := ecs.NewFilter3[components.Player, Position, Inventory](g.W).Query()
	out := ""
	for q.Next() {
		p, pos, inv := q.Get()
		if p.ID != id {
			continue
		}
		held := "none"
		if g.W.Alive(inv.Held) && ecs.NewMap1[Crate](g.W).HasAll(inv.Held) {
			c := ecs.NewMap1[Crate](g.W).Get(inv.Held)
			held = fmt.Sprint(c.HP, c.Tags)
		}
		out = fmt.Sprintf("%v at %v,%v gold %d items %v held %s", p.ID, pos.X, pos.Y, inv.Gold, inv.Items, held)
	}
	return out
}

// RemovePlayer removes every entity of player id.
func (g *Game) RemovePlayer(id string) {
	var rm []ecs.Entity
	q := ecs.NewFilter1[components.Player](g.W).Query()
	for q.Next() {
		if q.Get().ID == id {
			rm = append(rm, q.Entity())
		}
	}
	for _, e := range rm {
		g.W.RemoveEntity(e)
	}
}
