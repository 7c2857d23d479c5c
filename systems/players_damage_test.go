package systems_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/vfs"
)

// threePlayerGenerations saves three generations with players ada and bob
// in memory, one player changing in each (ada in 1 and 3, bob in 2), with
// two backups kept (each with its own copy of the chunk store and of the
// players, the default). It returns the file system and the players as
// generation 3 holds them.
func threePlayerGenerations(t *testing.T) (*vfs.Mem, map[string]string) {
	t.Helper()
	mem, want := playerGenerations(t, &autosave.Config{Interval: time.Hour, MaxBackups: 2})
	return mem, want[3]
}

// playerGenerations is threePlayerGenerations with the autosave
// configuration conf, returning the players of each generation.
func playerGenerations(t *testing.T, conf *autosave.Config) (*vfs.Mem, map[int]map[string]string) {
	t.Helper()
	mem := vfs.NewMem()
	g := playerGame(t, gametest.Opts{FS: mem, Dir: "/save", Radius: 1, Autosave: conf})
	g.Settle(t)
	g.SpawnPlayer("ada", 10, 10, 5, "sword", "rope")
	g.SpawnPlayer("bob", 20, 20, 1, "map")
	want := map[int]map[string]string{}
	for gen := 1; gen <= 3; gen++ {
		q := ecs.NewFilter2[components.Player, gametest.Inventory](g.W).Query()
		for q.Next() {
			if p, inv := q.Get(); (p.ID == "bob") == (gen%2 == 0) {
				inv.Gold += 10 * gen
			}
		}
		res := g.Pers.SaveNow()
		must(t, res.Err)
		expect(t, res.Generation == uint64(gen), "save %d committed generation %d", gen, res.Generation)
		want[gen] = map[string]string{"ada": g.InventoryOf(t, "ada"), "bob": g.InventoryOf(t, "bob")}
	}
	must(t, g.Pers.Close())
	return mem, want
}

// playersDamage are the ways the committed generation's players files get
// lost or damaged; each returns the file it damaged.
var playersDamage = []struct {
	name   string
	damage func(t *testing.T, fsys vfs.FS, m *savedir.Manifest, p *savedir.Players) string
}{
	{"players data removed", func(t *testing.T, fsys vfs.FS, m *savedir.Manifest, _ *savedir.Players) string {
		must(t, fsys.Remove("/save/"+m.Players.Data))
		return m.Players.Data
	}},
	{"players data truncated", func(t *testing.T, fsys vfs.FS, m *savedir.Manifest, p *savedir.Players) string {
		// Cut inside the last record generation 3 uses.
		last := p.Entries[0]
		for _, e := range p.Entries {
			if e.Offset > last.Offset {
				last = e
			}
		}
		f, err := fsys.OpenRW("/save/" + m.Players.Data)
		must(t, err)
		must(t, f.Truncate(last.Offset+int64(last.Length)/2))
		must(t, f.Close())
		return m.Players.Data
	}},
	{"players data byte flipped", func(t *testing.T, fsys vfs.FS, m *savedir.Manifest, p *savedir.Players) string {
		e, ok := p.Find("ada")
		expect(t, ok, "generation 3 has no ada")
		gametest.FlipAt(t, fsys, "/save/"+m.Players.Data, e.Offset+int64(e.Length)/2)
		return m.Players.Data
	}},
	{"players index removed", func(t *testing.T, fsys vfs.FS, m *savedir.Manifest, _ *savedir.Players) string {
		must(t, fsys.Remove("/save/"+m.Players.Index.Name))
		return m.Players.Index.Name
	}},
}

// damagePlayers damages generation 3's players in one of the ways, after
// checking that they are the files of the top level the generation names.
func damagePlayers(t *testing.T, mem vfs.FS, damage func(*testing.T, vfs.FS, *savedir.Manifest, *savedir.Players) string) string {
	t.Helper()
	d, err := savedir.OpenDirReadOnly(mem, "/save")
	must(t, err)
	m := d.Manifest()
	expect(t, m.Generation == 3 && m.Players != nil, "manifest %+v", m)
	p, err := d.ReadPlayers(m)
	must(t, err)
	expect(t, slices.Equal(p.IDs(), []string{"ada", "bob"}), "players %v", p.IDs())
	return damage(t, mem, m, p)
}

// loadsPlayers loads the save at /save through the plugin and checks that
// ada and bob come back as want holds them; it returns the game.
func loadsPlayers(t *testing.T, mem vfs.FS, want map[string]string) *gametest.Game {
	t.Helper()
	h := playerGame(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
	h.Settle(t)
	hasPlayers(h, t, want)
	return h
}

// hasPlayers loads ada and bob into the game and checks that they are as
// want holds them.
func hasPlayers(h *gametest.Game, t *testing.T, want map[string]string) {
	t.Helper()
	for _, id := range []string{"ada", "bob"} {
		_, err := h.Pers.LoadPlayer(id)
		must(t, err)
		expect(t, h.InventoryOf(t, id) == want[id], "%s: %q, want %q", id, h.InventoryOf(t, id), want[id])
	}
}

// intactBackups returns the backed-up generations of /save whose every
// file verifies (what a load could fall back to).
func intactBackups(t *testing.T, fsys vfs.FS) []uint64 {
	t.Helper()
	d, err := savedir.OpenDirReadOnly(fsys, "/save")
	must(t, err)
	var out []uint64
	for _, b := range d.Backups() {
		if _, probs, err := d.VerifyGeneration(b, nil); err == nil && len(probs) == 0 {
			out = append(out, b.Generation)
		}
	}
	slices.Sort(out)
	return out
}

// repairKeepsIntactBackups repairs /save, whose backups 1 and 2 are
// intact or damaged only in files whose mirrors hold them, and checks that
// it drops no backup, that both are intact after it, and that the
// repaired directory checks clean.
func repairKeepsIntactBackups(t *testing.T, mem vfs.FS) *savetool.RepairReport {
	t.Helper()
	before := intactBackups(t, mem)
	rep, err := savetool.Repair("/save", savetool.RepairOptions{Options: savetool.Options{FS: mem}})
	must(t, err)
	expect(t, len(rep.BackupsDropped) == 0, "the repair dropped %v", rep.BackupsDropped)
	expect(t, rep.After != nil && rep.After.OK(), "the repaired directory does not check clean: %+v", rep.After)
	after := intactBackups(t, mem)
	expect(t, slices.Equal(after, []uint64{1, 2}), "intact backups %v after the repair, %v before", after, before)
	return rep
}

// No single lost or damaged players file makes a world unloadable: the
// players files have mirrors in backups/, a load
// falls back to the newest intact players and reports it, and a repair
// keeps every intact backup, its repaired generation loading the same
// players. Both ways of loading fall back: Install with Load, and
// Persistence.Load of a running game.
func TestPlayersFileLostOrDamaged(t *testing.T) {
	for _, tc := range playersDamage {
		for _, how := range []string{"install", "reload"} {
			t.Run(tc.name+"/"+how, func(t *testing.T) { playersFallBack(t, tc.damage, how) })
		}
		t.Run(tc.name+"/repair", func(t *testing.T) {
			mem, want := threePlayerGenerations(t)
			damagePlayers(t, mem, tc.damage)
			repairKeepsIntactBackups(t, mem)
			h := loadsPlayers(t, mem, want)
			expect(t, h.State().Fallback == nil, "the repaired save fell back: %+v", h.State().Fallback)
		})
	}
}

// playersFallBack damages generation 3's players of a save with mirrors
// and loads it (how: "install" or "reload"): the players of generation 3
// come back from the mirrors, and the fallback is reported.
func playersFallBack(t *testing.T, damage func(*testing.T, vfs.FS, *savedir.Manifest, *savedir.Players) string, how string) {
	mem, want := threePlayerGenerations(t)
	d, err := savedir.OpenDirReadOnly(mem, "/save")
	must(t, err)
	backups := d.Backups()
	var h *gametest.Game
	if how == "reload" {
		h = playerGame(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
		h.Settle(t)
		expect(t, h.State().Fallback == nil, "an intact save loaded with a fallback")
	}
	file := damagePlayers(t, mem, damage)
	if how == "reload" {
		must(t, h.Pers.Load("/save"))
		h.Settle(t)
		hasPlayers(h, t, want)
	} else {
		h = loadsPlayers(t, mem, want)
	}
	fb := h.State().Fallback
	expect(t, fb != nil && fb.Damaged == 3 && fb.Loaded == 3 && fb.Generation == 4, "fallback %+v", fb)
	probs := h.Pers.Problems()
	expect(t, len(probs) >= 2 && probs[0].File == savedir.ManifestName && errors.Is(probs[0].Err, arksave.ErrCorrupt) &&
		strings.Contains(probs[0].Err.Error(), "players"), "problems %v", probs)
	named := false
	for _, p := range probs[1:] {
		named = named || p.File == file
	}
	expect(t, named, "no problem names %s: %v", file, probs)

	// The game goes on from the players it fell back to.
	res := h.Pers.SaveNow()
	must(t, res.Err)
	must(t, h.Pers.Close())
	loadsPlayers(t, mem, want)

	// The backups share the players files of the top level (no copy of
	// their own): generation 3's players came back from the mirrors.
	expect(t, len(backups) == 2, "%d backups", len(backups))
	for _, b := range backups {
		_, mirrored := savedir.MirroredName(savedir.MirrorName(b.Players.Data))
		expect(t, b.Players != nil && !strings.HasPrefix(b.Players.Index.Name, savedir.BackupDir) && mirrored,
			"backup %d names players %+v", b.Generation, b.Players)
	}
}

// Backups without a players copy of their own (written before copies, or
// with autosave.Config.BackupCopyEvery < 0) share the players data file,
// which only grows: when a save's records at its end are cut off, a load
// falls back to the newest backup whose players are intact, and a repair
// keeps every backup whose players read intact, taking the lost record
// from the newest players index that holds one.
func TestPlayersDataTruncatedWithoutCopies(t *testing.T) {
	conf := func() *autosave.Config {
		return &autosave.Config{Interval: time.Hour, MaxBackups: 2, BackupCopyEvery: -1}
	}
	for _, how := range []string{"load", "repair"} {
		t.Run(how, func(t *testing.T) {
			mem, want := playerGenerations(t, conf())
			gametest.DropMirrors(t, mem) // a save written before mirrors
			d, err := savedir.OpenDirReadOnly(mem, "/save")
			must(t, err)
			for _, b := range d.Backups() {
				expect(t, b.Players != nil && b.Players.Data == savedir.PlayersDataName, "backup %d names players %+v", b.Generation, b.Players)
			}
			damagePlayers(t, mem, playersDamage[1].damage) // ada's record of generation 3 cut
			if how == "load" {
				h := loadsPlayers(t, mem, want[2])
				fb := h.State().Fallback
				expect(t, fb != nil && fb.Damaged == 3 && fb.Loaded == 2 && fb.Generation == 4, "fallback %+v", fb)
				return
			}
			rep := repairKeepsIntactBackups(t, mem)
			// Ada's record of generation 3 is lost: hers of generation 1
			// (the newest index that holds her intact, generation 2's)
			// comes back, and bob's of generation 2 and 3.
			loadsPlayers(t, mem, map[string]string{"ada": want[2]["ada"], "bob": want[3]["bob"]})
			expect(t, slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, `player "ada": taken from players-2.pxpl`) }),
				"notes %v", rep.Notes)
		})
	}
}

// Without backups there is no copy to fall back to: a lost players index
// fails the load with an error naming arksave repair, changing nothing,
// and the repaired save loads.
func TestPlayersIndexLostWithoutBackups(t *testing.T) {
	mem, _ := playerGenerations(t, &autosave.Config{Interval: time.Hour})
	gametest.DropMirrors(t, mem) // no mirror to read the index from either
	damagePlayers(t, mem, playersDamage[3].damage)
	before := gametest.Files(t, mem, "/save")
	_, err := gametest.Install(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1, Prepare: gametest.RegisterPlayers})
	expect(t, errors.Is(err, arksave.ErrCorrupt) && strings.Contains(err.Error(), "arksave repair") &&
		strings.Contains(err.Error(), savedir.PlayersName(3)), "Install: %v", err)
	after := gametest.Files(t, mem, "/save")
	gametest.ExpectSameFiles(t, before, after)

	_, err = savetool.Repair("/save", savetool.RepairOptions{Options: savetool.Options{FS: mem}})
	must(t, err)
	h := playerGame(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
	h.Settle(t)
	expect(t, h.State().Fallback == nil, "the repaired save fell back: %+v", h.State().Fallback)
}
