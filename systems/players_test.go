package systems_test

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
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/vfs"
)

func playerGame(t testing.TB, o gametest.Opts) *gametest.Game {
	t.Helper()
	o.Prepare = gametest.RegisterPlayers
	return gametest.New(t, o)
}

// Players are saved apart: not in the world file, not with a chunk; a
// load spawns none; each loads alone; a player who leaves is saved first.
func TestPlayersSavedApart(t *testing.T) {
	mem := vfs.NewMem()
	g := playerGame(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 1})
	g.Settle(t)
	g.SpawnPlayer("ada", 10, 10, 5, "sword", "rope")
	g.SpawnPlayer("bob", 20, 20, 1, "map")
	adaWant := g.InventoryOf(t, "ada")
	res := g.Pers.SaveNow()
	must(t, res.Err)
	expect(t, res.PlayersWritten == 2 && res.RegionsWritten == 0, "%v", res)
	types := worldTypes(t, mem, "/save")
	expect(t, !hasType(types, ".Inventory") && !hasType(types, "components.Player"), "the world file holds players: %v", types)
	expect(t, len(storedBlock(t, mem, "/save", chunkstore.Pos{}).Sections) == 0, "a player was saved with its chunk")
	d, err := savedir.OpenDirReadOnly(mem, "/save")
	must(t, err)
	m := d.Manifest()
	expect(t, m.Players != nil && m.Players.Index.Name == savedir.PlayersName(1) && m.Players.Data == savedir.PlayersDataName, "manifest players: %+v", m.Players)
	expect(t, slices.Equal(g.Pers.Players(), []string{"ada", "bob"}), "players %v", g.Pers.Players())

	// Copy-on-write: one player changes, one record is written.
	dataPath, _ := d.File(m.Players.Data)
	before := fileSize(t, mem, dataPath)
	q := ecs.NewFilter2[components.Player, gametest.Inventory](g.W).Query()
	for q.Next() {
		if p, inv := q.Get(); p.ID == "bob" {
			inv.Gold = 2
		}
	}
	res = g.Pers.SaveNow()
	must(t, res.Err)
	expect(t, res.PlayersWritten == 1, "%d player records written for one changed player", res.PlayersWritten)
	grown := fileSize(t, mem, dataPath) - before
	expect(t, grown > 0 && grown < before, "the players data grew by %d bytes (was %d)", grown, before)
	res = g.Pers.SaveNow()
	must(t, res.Err)
	expect(t, res.PlayersWritten == 0, "%d records written when no player changed", res.PlayersWritten)

	// Bob leaves: saved, then removed; the save commits him.
	_, err = g.Pers.SavePlayer("bob")
	must(t, err)
	bobWant := g.InventoryOf(t, "bob")
	g.RemovePlayer("bob")
	_, err = g.Pers.SavePlayer("bob")
	expect(t, errors.Is(err, arksave.ErrNoPlayer), "SavePlayer of an absent player: %v", err)
	must(t, g.Pers.SaveNow().Err)
	g.Pers.Close()

	h := playerGame(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
	h.Settle(t)
	expect(t, h.InventoryOf(t, "ada") == "" && h.InventoryOf(t, "bob") == "", "a load spawned players")
	_, err = h.Pers.LoadPlayer("bob")
	must(t, err)
	expect(t, h.InventoryOf(t, "bob") == bobWant, "bob: %q, want %q", h.InventoryOf(t, "bob"), bobWant)
	expect(t, h.InventoryOf(t, "ada") == "", "loading bob loaded ada")
	_, err = h.Pers.LoadPlayer("bob")
	expect(t, errors.Is(err, arksave.ErrPlayerOnline), "loading bob twice: %v", err)
	_, err = h.Pers.LoadPlayer("cyd")
	expect(t, errors.Is(err, arksave.ErrNoPlayer), "loading a player never saved: %v", err)
	ents, err := h.Pers.LoadPlayer("ada")
	must(t, err)
	expect(t, len(ents) == 2 && h.InventoryOf(t, "ada") == adaWant, "ada: %q, want %q", h.InventoryOf(t, "ada"), adaWant)

	// Deleted players are gone after the next save.
	_, err = h.Pers.DeletePlayer("bob")
	expect(t, errors.Is(err, arksave.ErrPlayerOnline), "deleting a player in the world: %v", err)
	h.RemovePlayer("bob")
	_, err = h.Pers.DeletePlayer("bob")
	must(t, err)
	must(t, h.Pers.SaveNow().Err)
	expect(t, slices.Equal(h.Pers.Players(), []string{"ada"}), "players after a deletion: %v", h.Pers.Players())
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
	g := playerGame(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 1})
	g.Settle(t)
	g.SpawnPlayer("ada", 3, 4, 0, "stick")
	must(t, g.Pers.SaveNow().Err)
	g.Pers.Close()
	want := ""
	for cycle := 1; cycle <= 12; cycle++ {
		h := playerGame(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
		h.Settle(t)
		_, err := h.Pers.LoadPlayer("ada")
		must(t, err)
		if want != "" {
			expect(t, h.InventoryOf(t, "ada") == want, "cycle %d: %q, want %q", cycle, h.InventoryOf(t, "ada"), want)
		}
		q := ecs.NewFilter2[components.Player, gametest.Inventory](h.W).Query()
		for q.Next() {
			_, inv := q.Get()
			inv.Gold += cycle
			inv.Items = append(inv.Items, fmt.Sprint("gem", cycle))
		}
		// Crates and chunks change too: regional churn around the player.
		h.SpawnCrate(float64(cycle), 5, 0, cycle)
		h.Paint(t, 0, 0, cycle, 1, components.MakePixel(uint8(cycle), 0, 0, 0))
		want = h.InventoryOf(t, "ada")
		if cycle%2 == 0 {
			_, err = h.Pers.SavePlayer("ada")
			must(t, err)
			h.RemovePlayer("ada")
		}
		must(t, h.Pers.SaveNow().Err)
		h.Pers.Close()
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
			g := playerGame(t, gametest.Opts{FS: vfs.Faulty(mem, sw), Dir: "/save", Radius: 1})
			g.Settle(t)
			g.SpawnPlayer("ada", 3, 4, 7, "sword")
			g.SpawnCrate(12, 5, 500, 1)
			must(t, g.Pers.SaveNow().Err)
			old := [2]string{g.InventoryOf(t, "ada"), gametest.CrateDigest(t, g)}

			q := ecs.NewFilter2[components.Player, gametest.Inventory](g.W).Query()
			for q.Next() {
				_, inv := q.Get()
				inv.Gold = 8
				inv.Items = append(inv.Items, "shield")
			}
			_, ents := g.Crates(t)
			ecs.NewMap1[gametest.Crate](g.W).Get(ents[500]).HP = 2
			must(t, g.Pers.MarkDirty(ents[500]))
			ecs.NewMap1[gametest.Position](g.W).Get(ents[500]).X = gametest.ChunkSize + 12 // crosses into chunk 1,0
			g.Tick()
			neu := [2]string{g.InventoryOf(t, "ada"), gametest.CrateDigest(t, g)}

			c := &vfs.Crasher{Mem: mem, N: n, Keep: keep, Rand: rand.New(rand.NewPCG(uint64(n), 9))}
			sw.set(c)
			res := g.Pers.SaveNow()
			crashed := c.Crashed()
			if crashed == nil {
				must(t, res.Err)
				g.Pers.Close()
				expect(t, seen[1] > 0 && seen[2] > 0, "keep %v: %d crash points, generations seen %v", keep, n, seen)
				t.Logf("keep %v: %d crash points, generations %v", keep, n, seen)
				break
			}
			g.Pers.Close()
			h := playerGame(t, gametest.Opts{FS: crashed, Dir: "/save", Load: true, Radius: 1})
			h.Settle(t)
			_, err := h.Pers.LoadPlayer("ada")
			must(t, err)
			got := [2]string{h.InventoryOf(t, "ada"), gametest.CrateDigest(t, h)}
			gen := h.Pers.Generation()
			seen[gen]++
			switch {
			case gen == 1 && got == old:
			case gen == 2 && got == neu:
			default:
				t.Fatalf("keep %v, crash at call %d: generation %d holds %q, want %q (1) or %q (2)", keep, n, gen, got, old, neu)
			}
			h.Pers.Close()
		}
	}
}

// Seed checklist: a player's inventory survives the damage of the region it
// stands in: the chunk's records are lost (it regenerates, its entities are
// dropped and reported), the player is not.
func TestPlayerSurvivesRegionDamage(t *testing.T) {
	mem := vfs.NewMem()
	// No copy of the store for a backup: the damage must be met where it
	// is (with a copy, the load would take the generation from it).
	g := playerGame(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 1, Autosave: gametest.NoBackupCopy()})
	g.Settle(t)
	g.SpawnPlayer("ada", 40, 45, 3, "lamp") // chunk (1,1)
	g.SpawnCrate(41, 45, 600, 1)            // a crate beside the player
	g.Paint(t, 1, 1, 8, 8, components.MakePixel(7, 0, 0, 0))
	must(t, g.Pers.SaveNow().Err)
	want := g.InventoryOf(t, "ada")
	g.Pers.Close()
	gametest.DropMirrors(t, mem) // nor the mirrors of its files

	// Damage every record of chunk (1,1): its pixels and its entity block.
	d, err := savedir.OpenDirReadOnly(mem, "/save")
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
		gametest.FlipAt(t, mem, p, h.FileOffset()+int64(h.Length)-3)
	}

	h := playerGame(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
	h.Settle(t)
	_, err = h.Pers.LoadPlayer("ada")
	must(t, err)
	expect(t, h.InventoryOf(t, "ada") == want, "ada after her region's damage: %q, want %q", h.InventoryOf(t, "ada"), want)
	crates, _ := h.Crates(t)
	expect(t, len(crates) == 0, "crates from a damaged record: %v", crates)
	var sections []string
	for _, p := range h.Pers.Problems() {
		sections = append(sections, p.Section)
	}
	expect(t, len(sections) == 2, "problems reported: %v", strings.Join(sections, ", "))
}

// Save As carries the players into the new directory, and a restored
// backup brings back its generation's players.
func TestPlayersSaveAsAndRestore(t *testing.T) {
	mem := vfs.NewMem()
	g := playerGame(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 1})
	g.Settle(t)
	g.SpawnPlayer("ada", 3, 4, 1, "first")
	must(t, g.Pers.SaveNow().Err) // generation 1
	first := g.InventoryOf(t, "ada")
	q := ecs.NewFilter2[components.Player, gametest.Inventory](g.W).Query()
	for q.Next() {
		_, inv := q.Get()
		inv.Gold = 2
	}
	must(t, g.Pers.SaveNow().Err) // generation 2
	second := g.InventoryOf(t, "ada")
	must(t, g.WaitSave(t, g.Pers.SaveAs("/copy")).Err)
	g.Pers.Close()

	c := playerGame(t, gametest.Opts{FS: mem, Dir: "/copy", Load: true, Radius: 1})
	_, err := c.Pers.LoadPlayer("ada")
	must(t, err)
	expect(t, c.InventoryOf(t, "ada") == second, "ada in the copy: %q, want %q", c.InventoryOf(t, "ada"), second)
	c.Pers.Close()

	d, err := savedir.OpenDir(mem, "/save")
	must(t, err)
	_, err = d.Restore(1, 2)
	must(t, err)
	must(t, d.Close())
	r := playerGame(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
	_, err = r.Pers.LoadPlayer("ada")
	must(t, err)
	expect(t, r.InventoryOf(t, "ada") == first, "ada after restoring generation 1: %q, want %q", r.InventoryOf(t, "ada"), first)
}
