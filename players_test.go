package arksave_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/vfs"
)

// Inventory is what the test game's players carry.
type Inventory struct {
	Items []string
	Gold  int
	Held  ecs.Entity // another entity of the same player
}

func registerPlayers(w *ecs.World) {
	registerRegional(w)
	ecs.ComponentID[Inventory](w)
}

func playerGame(t testing.TB, o gameOpts) *game {
	t.Helper()
	o.prepare = registerPlayers
	return newGame(t, o)
}

// spawnPlayer makes player id: an avatar standing at (x, y) with an
// inventory, and an item entity the inventory holds.
func (g *game) spawnPlayer(id string, x, y float64, gold int, items ...string) {
	item := ecs.NewMap2[components.Player, Crate](g.w).NewEntity(&components.Player{ID: id}, &Crate{HP: gold, Tags: items})
	ecs.NewMap3[components.Player, Position, Inventory](g.w).NewEntity(&components.Player{ID: id}, &Position{x, y},
		&Inventory{Items: slices.Clone(items), Gold: gold, Held: item})
}

// inventory describes player id as the world holds it: "" when it is not
// loaded. It checks that the inventory still holds the player's item.
func (g *game) inventory(t testing.TB, id string) string {
	t.Helper()
	q := ecs.NewFilter3[components.Player, Position, Inventory](g.w).Query()
	out := ""
	for q.Next() {
		p, pos, inv := q.Get()
		if p.ID != id {
			continue
		}
		held := "none"
		if g.w.Alive(inv.Held) && ecs.NewMap1[Crate](g.w).HasAll(inv.Held) {
			c := ecs.NewMap1[Crate](g.w).Get(inv.Held)
			held = fmt.Sprint(c.HP, c.Tags)
		}
		out = fmt.Sprintf("%v at %v,%v gold %d items %v held %s", p.ID, pos.X, pos.Y, inv.Gold, inv.Items, held)
	}
	return out
}

// removePlayer removes every entity of player id.
func (g *game) removePlayer(id string) {
	var rm []ecs.Entity
	q := ecs.NewFilter1[components.Player](g.w).Query()
	for q.Next() {
		if q.Get().ID == id {
			rm = append(rm, q.Entity())
		}
	}
	for _, e := range rm {
		g.w.RemoveEntity(e)
	}
}

// Players are saved apart: not in the world file, not with a chunk; a
// load spawns none; each loads alone; a player who leaves is saved first.
func TestPlayersSavedApart(t *testing.T) {
	mem := vfs.NewMem()
	g := playerGame(t, gameOpts{fs: mem, dir: "/save", radius: 1})
	g.settle(t)
	g.spawnPlayer("ada", 10, 10, 5, "sword", "rope")
	g.spawnPlayer("bob", 20, 20, 1, "map")
	adaWant := g.inventory(t, "ada")
	res := g.pers.SaveNow()
	must(t, res.Err)
	expect(t, res.PlayersWritten == 2 && res.RegionsWritten == 0, "%v", res)
	types := worldTypes(t, mem, "/save")
	expect(t, !hasType(types, ".Inventory") && !hasType(types, "components.Player"), "the world file holds players: %v", types)
	expect(t, len(storedBlock(t, mem, "/save", chunkstore.Pos{}).Sections) == 0, "a player was saved with its chunk")
	d, err := autosave.OpenDirReadOnly(mem, "/save")
	must(t, err)
	m := d.Manifest()
	expect(t, m.Players != nil && m.Players.Index.Name == autosave.PlayersName(1) && m.Players.Data == autosave.PlayersDataName, "manifest players: %+v", m.Players)
	expect(t, slices.Equal(g.pers.Players(), []string{"ada", "bob"}), "players %v", g.pers.Players())

	// Copy-on-write: one player changes, one record is written.
	dataPath, _ := d.File(m.Players.Data)
	before := fileSize(t, mem, dataPath)
	q := ecs.NewFilter2[components.Player, Inventory](g.w).Query()
	for q.Next() {
		if p, inv := q.Get(); p.ID == "bob" {
			inv.Gold = 2
		}
	}
	res = g.pers.SaveNow()
	must(t, res.Err)
	expect(t, res.PlayersWritten == 1, "%d player records written for one changed player", res.PlayersWritten)
	grown := fileSize(t, mem, dataPath) - before
	expect(t, grown > 0 && grown < before, "the players data grew by %d bytes (was %d)", grown, before)
	res = g.pers.SaveNow()
	must(t, res.Err)
	expect(t, res.PlayersWritten == 0, "%d records written when no player changed", res.PlayersWritten)

	// Bob leaves: saved, then removed; the save commits him.
	_, err = g.pers.SavePlayer("bob")
	must(t, err)
	bobWant := g.inventory(t, "bob")
	g.removePlayer("bob")
	_, err = g.pers.SavePlayer("bob")
	expect(t, errors.Is(err, arksave.ErrNoPlayer), "SavePlayer of an absent player: %v", err)
	must(t, g.pers.SaveNow().Err)
	g.pers.Close()

	h := playerGame(t, gameOpts{fs: mem, dir: "/save", load: true, radius: 1})
	h.settle(t)
	expect(t, h.inventory(t, "ada") == "" && h.inventory(t, "bob") == "", "a load spawned players")
	_, err = h.pers.LoadPlayer("bob")
	must(t, err)
	expect(t, h.inventory(t, "bob") == bobWant, "bob: %q, want %q", h.inventory(t, "bob"), bobWant)
	expect(t, h.inventory(t, "ada") == "", "loading bob loaded ada")
	_, err = h.pers.LoadPlayer("bob")
	expect(t, errors.Is(err, arksave.ErrPlayerOnline), "loading bob twice: %v", err)
	_, err = h.pers.LoadPlayer("cyd")
	expect(t, errors.Is(err, arksave.ErrNoPlayer), "loading a player never saved: %v", err)
	ents, err := h.pers.LoadPlayer("ada")
	must(t, err)
	expect(t, len(ents) == 2 && h.inventory(t, "ada") == adaWant, "ada: %q, want %q", h.inventory(t, "ada"), adaWant)

	// Deleted players are gone after the next save.
	_, err = h.pers.DeletePlayer("bob")
	expect(t, errors.Is(err, arksave.ErrPlayerOnline), "deleting a player in the world: %v", err)
	h.removePlayer("bob")
	_, err = h.pers.DeletePlayer("bob")
	must(t, err)
	must(t, h.pers.SaveNow().Err)
	expect(t, slices.Equal(h.pers.Players(), []string{"ada"}), "players after a deletion: %v", h.pers.Players())
}

func fileSize(t testing.TB, fsys vfs.FS, p string) int64 {
	t.Helper()
	st, err := fsys.Stat(p)
	must(t, err)
	return st.Size()
}

// Seed checklist: a player's inventory survives repeated save/load cycles.
func TestPlayerInventoryRepeatedCycles(t *testing.T) {
	mem := vfs.NewMem()
	g := playerGame(t, gameOpts{fs: mem, dir: "/save", radius: 1})
	g.settle(t)
	g.spawnPlayer("ada", 3, 4, 0, "stick")
	must(t, g.pers.SaveNow().Err)
	g.pers.Close()
	want := ""
	for cycle := 1; cycle <= 12; cycle++ {
		h := playerGame(t, gameOpts{fs: mem, dir: "/save", load: true, radius: 1})
		h.settle(t)
		_, err := h.pers.LoadPlayer("ada")
		must(t, err)
		if want != "" {
			expect(t, h.inventory(t, "ada") == want, "cycle %d: %q, want %q", cycle, h.inventory(t, "ada"), want)
		}
		q := ecs.NewFilter2[components.Player, Inventory](h.w).Query()
		for q.Next() {
			_, inv := q.Get()
			inv.Gold += cycle
			inv.Items = append(inv.Items, fmt.Sprint("gem", cycle))
		}
		// Crates and chunks change too: regional churn around the player.
		h.spawnCrate(float64(cycle), 5, 0, cycle)
		h.paint(t, 0, 0, cycle, 1, components.MakePixel(uint8(cycle), 0, 0, 0))
		want = h.inventory(t, "ada")
		if cycle%2 == 0 {
			_, err = h.pers.SavePlayer("ada")
			must(t, err)
			h.removePlayer("ada")
		}
		must(t, h.pers.SaveNow().Err)
		h.pers.Close()
	}
}

// swapInjector lets a test change the injector of a Faulty file system.
type swapInjector struct {
	mu  sync.Mutex
	inj vfs.Injector
}

func (s *swapInjector) Inject(op vfs.Op, name string) error {
	s.mu.Lock()
	inj := s.inj
	s.mu.Unlock()
	if inj == nil {
		return nil
	}
	return inj.Inject(op, name)
}

func (s *swapInjector) set(inj vfs.Injector) {
	s.mu.Lock()
	s.inj = inj
	s.mu.Unlock()
}

// Seed checklist: a player's inventory survives a crash at every step of a
// save, whatever of the unsynced writes the disk kept, and so does the rest:
// every crash leaves exactly the generation before the save or the one it
// made (this covers a crash between the data append and the manifest
// swap).
func TestPlayerInventoryCrashAtEveryStep(t *testing.T) {
	for _, keep := range []float64{0, 1, 0.5} {
		seen := map[uint64]int{}
		for n := 0; ; n++ {
			mem := vfs.NewMem()
			sw := &swapInjector{}
			g := playerGame(t, gameOpts{fs: vfs.Faulty(mem, sw), dir: "/save", radius: 1})
			g.settle(t)
			g.spawnPlayer("ada", 3, 4, 7, "sword")
			g.spawnCrate(12, 5, 500, 1)
			must(t, g.pers.SaveNow().Err)
			old := [2]string{g.inventory(t, "ada"), crateDigest(t, g)}

			q := ecs.NewFilter2[components.Player, Inventory](g.w).Query()
			for q.Next() {
				_, inv := q.Get()
				inv.Gold = 8
				inv.Items = append(inv.Items, "shield")
			}
			_, ents := g.crates(t)
			ecs.NewMap1[Crate](g.w).Get(ents[500]).HP = 2
			must(t, g.pers.MarkDirty(ents[500]))
			ecs.NewMap1[Position](g.w).Get(ents[500]).X = testChunk + 12 // crosses into chunk 1,0
			g.tick()
			neu := [2]string{g.inventory(t, "ada"), crateDigest(t, g)}

			c := &vfs.Crasher{Mem: mem, N: n, Keep: keep, Rand: rand.New(rand.NewPCG(uint64(n), 9))}
			sw.set(c)
			res := g.pers.SaveNow()
			crashed := c.Crashed()
			if crashed == nil {
				must(t, res.Err)
				g.pers.Close()
				expect(t, seen[1] > 0 && seen[2] > 0, "keep %v: %d crash points, generations seen %v", keep, n, seen)
				t.Logf("keep %v: %d crash points, generations %v", keep, n, seen)
				break
			}
			g.pers.Close()
			h := playerGame(t, gameOpts{fs: crashed, dir: "/save", load: true, radius: 1})
			h.settle(t)
			_, err := h.pers.LoadPlayer("ada")
			must(t, err)
			got := [2]string{h.inventory(t, "ada"), crateDigest(t, h)}
			gen := h.pers.Generation()
			seen[gen]++
			switch {
			case gen == 1 && got == old:
			case gen == 2 && got == neu:
			default:
				t.Fatalf("keep %v, crash at call %d: generation %d holds %q, want %q (1) or %q (2)", keep, n, gen, got, old, neu)
			}
			h.pers.Close()
		}
	}
}

// crateDigest describes the loaded crates, by stable id.
func crateDigest(t testing.TB, g *game) string {
	t.Helper()
	views, _ := g.crates(t)
	return fmt.Sprint(views)
}

// Seed checklist: a player's inventory survives the damage of the region it
// stands in: the chunk's records are lost (it regenerates, its entities are
// dropped and reported), the player is not.
func TestPlayerSurvivesRegionDamage(t *testing.T) {
	mem := vfs.NewMem()
	// No copy of the store for a backup: the damage must be met where it
	// is (with a copy, the load would take the generation from it).
	g := playerGame(t, gameOpts{fs: mem, dir: "/save", radius: 1, autosave: noBackupCopy()})
	g.settle(t)
	g.spawnPlayer("ada", 40, 45, 3, "lamp") // chunk (1,1)
	g.spawnCrate(41, 45, 600, 1)            // a crate beside the player
	g.paint(t, 1, 1, 8, 8, components.MakePixel(7, 0, 0, 0))
	must(t, g.pers.SaveNow().Err)
	want := g.inventory(t, "ada")
	g.pers.Close()

	// Damage every record of chunk (1,1): its pixels and its entity block.
	d, err := autosave.OpenDirReadOnly(mem, "/save")
	must(t, err)
	m := d.Manifest()
	storePath, _ := d.File(m.Chunks.Name)
	s, err := chunkstore.Open(storePath, &chunkstore.Options{FS: mem, ReadOnly: true, Root: m.Chunks.Root})
	must(t, err)
	var handles []storetool.Handle
	storetool.Tool.Entries(s, func(e storetool.Entry) bool {
		if e.Pos == (chunkstore.Pos{X: 1, Y: 1}) {
			handles = append(handles, e.Handle)
		}
		return true
	})
	s.Close()
	expect(t, len(handles) == 2, "chunk 1,1 has %d records, want its pixels and its entities", len(handles))
	for _, h := range handles {
		p := storePath
		if n := h.File(); n != 0 {
			p, _ = d.File(storetool.Tool.DataFileName(m.Chunks.Name, n))
		}
		flipAt(t, mem, p, h.FileOffset()+int64(h.Length)-3)
	}

	h := playerGame(t, gameOpts{fs: mem, dir: "/save", load: true, radius: 1})
	h.settle(t)
	_, err = h.pers.LoadPlayer("ada")
	must(t, err)
	expect(t, h.inventory(t, "ada") == want, "ada after her region's damage: %q, want %q", h.inventory(t, "ada"), want)
	crates, _ := h.crates(t)
	expect(t, len(crates) == 0, "crates from a damaged record: %v", crates)
	var sections []string
	for _, p := range h.pers.Problems() {
		sections = append(sections, p.Section)
	}
	expect(t, len(sections) == 2, "problems reported: %v", strings.Join(sections, ", "))
}

// Save As carries the players into the new directory, and a restored
// backup brings back its generation's players.
func TestPlayersSaveAsAndRestore(t *testing.T) {
	mem := vfs.NewMem()
	g := playerGame(t, gameOpts{fs: mem, dir: "/save", radius: 1})
	g.settle(t)
	g.spawnPlayer("ada", 3, 4, 1, "first")
	must(t, g.pers.SaveNow().Err) // generation 1
	first := g.inventory(t, "ada")
	q := ecs.NewFilter2[components.Player, Inventory](g.w).Query()
	for q.Next() {
		_, inv := q.Get()
		inv.Gold = 2
	}
	must(t, g.pers.SaveNow().Err) // generation 2
	second := g.inventory(t, "ada")
	must(t, g.waitSave(t, g.pers.SaveAs("/copy")).Err)
	g.pers.Close()

	c := playerGame(t, gameOpts{fs: mem, dir: "/copy", load: true, radius: 1})
	_, err := c.pers.LoadPlayer("ada")
	must(t, err)
	expect(t, c.inventory(t, "ada") == second, "ada in the copy: %q, want %q", c.inventory(t, "ada"), second)
	c.pers.Close()

	d, err := autosave.OpenDir(mem, "/save")
	must(t, err)
	_, err = d.Restore(1, 2)
	must(t, err)
	must(t, d.Close())
	r := playerGame(t, gameOpts{fs: mem, dir: "/save", load: true, radius: 1})
	_, err = r.pers.LoadPlayer("ada")
	must(t, err)
	expect(t, r.inventory(t, "ada") == first, "ada after restoring generation 1: %q, want %q", r.inventory(t, "ada"), first)
}
