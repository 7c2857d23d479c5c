package savetool_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
)

// Gold is what the players of this test carry.
type Gold struct{ N int }

// playerSave makes a save with players ada and bob and a regional entity,
// over two generations, and returns its directory.
func playerSave(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "save")
	w := newPlayerWorld()
	systems, err := arksave.Plugin{Dir: dir, ChunkSize: savetest.ChunkSize, TileSize: savetest.TileSize,
		Positions: []arksave.RegionalPosition{arksave.Position(func(p *savetest.Position) (float64, float64) { return p.X, p.Y })},
	}.Install(w)
	must(t, err)
	ecs.NewMap1[components.Focus](w).NewEntity(&components.Focus{Radius: 1})
	for range 20 {
		for _, s := range systems {
			s.Update(w)
		}
	}
	pers := ecs.GetResource[arksave.Persistence](w)
	for i, id := range []string{"ada", "bob"} {
		ecs.NewMap2[components.Player, Gold](w).NewEntity(&components.Player{ID: id}, &Gold{N: i + 1})
	}
	ecs.NewMap2[savetest.Position, components.Regional](w).NewEntity(&savetest.Position{X: 3, Y: 3}, &components.Regional{ID: 9})
	must(t, pers.SaveNow().Err)
	must(t, pers.SaveNow().Err)
	must(t, pers.Close())
	return dir
}

func newPlayerWorld() *ecs.World {
	w := ecs.NewWorld()
	ecs.ComponentID[Gold](w)
	ecs.ComponentID[savetest.Position](w)
	return w
}

// loadPlayer loads player id of the save in dir and returns its gold, or
// the error of LoadPlayer.
func loadPlayer(t *testing.T, dir, id string) (int, error) {
	t.Helper()
	w := newPlayerWorld()
	_, err := arksave.Plugin{Dir: dir, Load: true, ChunkSize: savetest.ChunkSize, TileSize: savetest.TileSize}.Install(w)
	must(t, err)
	pers := ecs.GetResource[arksave.Persistence](w)
	defer pers.Close()
	ents, err := pers.LoadPlayer(id)
	if err != nil {
		return 0, err
	}
	for _, e := range ents {
		if m := ecs.NewMap1[Gold](w); m.HasAll(e) {
			return m.Get(e).N, nil
		}
	}
	return 0, errors.New("no gold")
}

// Check reads the players a generation names, every record; a damaged
// record is found, and repair restores the players data from its mirror,
// or, with no mirror holding it intact, drops that player and keeps the
// others.
func TestCheckAndRepairPlayers(t *testing.T) {
	for _, copies := range []bool{true, false} {
		t.Run(map[bool]string{true: "with mirrors", false: "without mirrors"}[copies], func(t *testing.T) {
			dir := playerSave(t)
			r, err := savetool.Check(dir, savetool.Options{})
			must(t, err)
			expect(t, r.OK() && r.Players >= 2, "check of an intact save: %v, %d players indexes", r.Problems, r.Players)

			d, err := savedir.OpenDirReadOnly(nil, dir)
			must(t, err)
			m := d.Manifest()
			p, err := d.ReadPlayers(m)
			must(t, err)
			bob, ok := p.Find("bob")
			expect(t, ok, "bob is not in the index")
			must(t, savetest.Flip(filepath.Join(dir, m.Players.Data), bob.Offset+int64(bob.Length)/2))
			if !copies {
				copied, err := filepath.Glob(filepath.Join(dir, savedir.BackupDir, "mirror-players*"))
				must(t, err)
				expect(t, len(copied) == 2, "the players mirrors in backups/: %v", copied)
				for _, c := range copied {
					must(t, os.Remove(c))
				}
			}

			r, err = savetool.Check(dir, savetool.Options{})
			must(t, err)
			found := false
			for _, pr := range r.Problems {
				if pr.File == m.Players.Data && strings.Contains(pr.Err.Error(), `"bob"`) && errors.Is(pr.Err, arksave.ErrCorrupt) {
					found = true
				}
			}
			expect(t, found, "the damaged record of bob is not reported: %v", r.Problems)

			rep, err := savetool.Repair(dir, savetool.RepairOptions{})
			must(t, err)
			expect(t, rep.After != nil && rep.After.OK(), "check after the repair: %v", rep.After)
			gold, err := loadPlayer(t, dir, "ada")
			must(t, err)
			expect(t, gold == 1, "ada's gold %d", gold)
			notes := strings.Join(rep.Notes, "\n")
			if copies {
				expect(t, strings.Contains(notes, m.Players.Data+": restored from its mirror "+savedir.MirrorName(m.Players.Data)), "notes: %v", rep.Notes)
				gold, err = loadPlayer(t, dir, "bob")
				must(t, err)
				expect(t, gold == 2, "bob's gold %d", gold)
				return
			}
			expect(t, strings.Contains(notes, `player "bob" dropped`), "notes: %v", rep.Notes)
			_, err = loadPlayer(t, dir, "bob")
			expect(t, errors.Is(err, arksave.ErrNoPlayer), "bob after the repair: %v", err)
		})
	}
}

// A repair that rebuilds a lost manifest keeps the players: the newest
// players index and its data file.
func TestRepairLostManifestKeepsPlayers(t *testing.T) {
	dir := playerSave(t)
	must(t, os.Remove(filepath.Join(dir, savedir.ManifestName)))
	rep, err := savetool.Repair(dir, savetool.RepairOptions{})
	must(t, err)
	expect(t, rep.After != nil && rep.After.OK(), "check after the repair: %v", rep.After)
	for id, want := range map[string]int{"ada": 1, "bob": 2} {
		gold, err := loadPlayer(t, dir, id)
		must(t, err)
		expect(t, gold == want, "%s's gold %d, want %d", id, gold, want)
	}
}

// Every tool that commits a generation with the chunks of the committed one
// keeps its players: compact (file by file and whole), restore, import.
func TestToolsKeepPlayers(t *testing.T) {
	for name, run := range map[string]func(t *testing.T, dir string){
		"compact": func(t *testing.T, dir string) {
			_, err := savetool.Compact(dir, savetool.CompactOptions{MaxBackups: -1})
			must(t, err)
		},
		"compact whole": func(t *testing.T, dir string) {
			_, err := savetool.Compact(dir, savetool.CompactOptions{MaxBackups: -1, Whole: true})
			must(t, err)
		},
		"restore": func(t *testing.T, dir string) {
			_, err := savetool.Restore(dir, 1, savetool.Options{})
			must(t, err)
		},
		"import": func(t *testing.T, dir string) {
			var js bytes.Buffer
			must(t, savetool.ExportJSON(&js, dir, 0, savetool.Options{}))
			_, err := savetool.ImportInto(dir, &js, savetool.ImportOptions{})
			must(t, err)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := playerSave(t)
			before := generationOf(t, dir)
			run(t, dir)
			expect(t, generationOf(t, dir) > before, "%s committed no generation", name)
			for id, want := range map[string]int{"ada": 1, "bob": 2} {
				gold, err := loadPlayer(t, dir, id)
				must(t, err)
				expect(t, gold == want, "%s's gold %d, want %d", id, gold, want)
			}
			r, err := savetool.Check(dir, savetool.Options{})
			must(t, err)
			expect(t, r.OK(), "check after %s: %v", name, r.Problems)
		})
	}
}

// generationOf returns the committed generation of the save in dir.
func generationOf(t *testing.T, dir string) uint64 {
	t.Helper()
	d, err := savedir.OpenDirReadOnly(nil, dir)
	must(t, err)
	defer d.Close()
	return d.Manifest().Generation
}
