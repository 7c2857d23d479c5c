package arksave_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/cli"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/gametest"
	"github.com/arksave/arksave/vfs"
)

// history is a save directory on disk whose game saved generations with
// changes in between, and what each generation held.
type history struct {
	dir  string
	conf autosave.Config
	rec  map[uint64]string    // each kept generation's export (exportOf)
	at   map[uint64]time.Time // when each of the saved generations committed
}

// saveHistory runs the test game for n saves into a new directory, and
// between the saves paints chunks, moves a pixel body and a crate (a
// regional entity) across chunk borders, changes the world's ECS entities
// and resource, and changes a player; after each save it records the
// generation's export. copies is whether the writer copies the chunk store
// for each backup (autosave.Config.BackupCopyEvery). The game is closed.
func saveHistory(t *testing.T, n int, copies bool) *history {
	t.Helper()
	h := &history{dir: t.TempDir(), rec: map[uint64]string{}, at: map[uint64]time.Time{}}
	h.conf = autosave.Config{Interval: time.Hour, MaxBackups: 100}
	if !copies {
		h.conf.BackupCopyEvery = -1
	}
	g := gametest.New(t, gametest.Opts{Dir: h.dir, Radius: 1, Autosave: &h.conf, Prepare: gametest.RegisterPlayers})
	g.Settle(t)
	ids := ecs.GetResource[components.BodyIDs](g.W)
	body := g.Bodies.NewEntity(&components.PixelBody{ID: ids.New(), X: 10, Y: 12, Width: 2, Height: 2,
		Pixels: []components.Pixel{1, 2, 3, 4}, Shape: []bool{true, true, false, true}}, &components.Persistable{})
	crate := g.SpawnCrate(4, 20, 0, 1)
	prop := ecs.NewMap1[gametest.Position](g.W).NewEntity(&gametest.Position{X: 1})
	g.SpawnPlayer("bo", 1, 2, 0, "axe")
	g.Tick() // the body and the crate are placed
	var extra []ecs.Entity
	for gen := uint64(1); gen <= uint64(n); gen++ {
		k := int(gen)
		g.Paint(t, int32(k%2), 0, k, k+1, components.MakePixel(uint8(10+k), 1, 0, 0))
		b, _ := g.Bodies.Get(body)
		b.X += 8 // crosses into chunk (1, 0) at the fourth save
		c := ecs.NewMap1[gametest.Position](g.W).Get(crate)
		c.X += 9
		ecs.NewMap1[gametest.Position](g.W).Get(prop).Y = float64(k)
		ecs.GetResource[gametest.Score](g.W).Points = 10 * k
		if k%2 == 0 {
			extra = append(extra, ecs.NewMap1[gametest.Player](g.W).NewEntity(&gametest.Player{Name: fmt.Sprint("extra", k)}))
		} else if len(extra) > 0 {
			g.W.RemoveEntity(extra[0])
			extra = extra[1:]
		}
		must(t, g.Pers.MarkDirty(body))
		must(t, g.Pers.MarkDirty(crate))
		g.Tick()
		if gen > 1 {
			_, err := g.Pers.LoadPlayer("bo")
			must(t, err)
		}
		q := ecs.NewFilter1[gametest.Inventory](g.W).Query()
		for q.Next() {
			q.Get().Gold = k
		}
		sh, err := g.Pers.SavePlayer("bo")
		must(t, err)
		g.RemovePlayer("bo")
		res := sh.Wait()
		must(t, res.Err)
		expect(t, res.Generation == gen, "save %d committed generation %d", gen, res.Generation)
		g.Pers.WaitIdle()
		h.rec[gen] = exportOf(t, h.dir, gen)
		h.at[gen] = committedAt(t, h.dir, gen)
		for time.Now().UnixMilli() <= h.at[gen].UnixMilli()+1 {
			time.Sleep(time.Millisecond) // the next save commits at a later time
		}
	}
	must(t, g.Pers.Close())
	return h
}

// manifestOf returns the manifest of kept generation gen of dir.
func manifestOf(t testing.TB, dir string, gen uint64) (*savedir.Dir, *savedir.Manifest) {
	t.Helper()
	d, err := savedir.OpenDirReadOnly(vfs.OS, dir)
	must(t, err)
	if m := d.Manifest(); m != nil && m.Generation == gen {
		return d, m
	}
	m, err := d.Backup(gen)
	must(t, err)
	return d, m
}

// committedAt is the time generation gen of dir committed.
func committedAt(t testing.TB, dir string, gen uint64) time.Time {
	_, m := manifestOf(t, dir, gen)
	return time.UnixMilli(m.ModifiedMS)
}

// exportOf returns what kept generation gen of dir holds, as arksave
// export writes it (the ECS world, the stored chunks with their bodies and
// regional entities) with each player's record exported likewise, less
// what differs between two generations of the same contents: generation
// numbers, file names and places, and the world file's time stamp.
func exportOf(t testing.TB, dir string, gen uint64) string {
	return exportAs(t, dir, gen, false)
}

// savedAgain is exportOf as the next save of a loaded world compares to
// its generation: without Ark's entity pool (its dead and recycled slots
// follow the order in which the chunks, never saved in the world file,
// streamed in) and the pixel-body id generator (a load starts a new
// session). The saved entities keep their exact ids and generations.
func savedAgain(t testing.TB, dir string, gen uint64) string {
	return exportAs(t, dir, gen, true)
}

func exportAs(t testing.TB, dir string, gen uint64, again bool) string {
	t.Helper()
	d, m := manifestOf(t, dir, gen)
	export := gen
	if m.Generation == d.Generation() {
		export = 0 // the committed one
	}
	var buf bytes.Buffer
	must(t, savetool.ExportJSON(&buf, dir, export, savetool.Options{}))
	var doc struct {
		World  map[string]any `json:"world"`
		Chunks struct {
			Chunks []map[string]any `json:"chunks"`
		} `json:"chunks"`
	}
	must(t, json.Unmarshal(buf.Bytes(), &doc))
	delete(doc.World, "timestamp")
	if again {
		delete(doc.World, "pool")
		delete(doc.World["resources"].(map[string]any), "github.com/arksave/arksave/components.BodyIDs")
	}
	p, err := d.File(m.Chunks.Name)
	must(t, err)
	store, err := chunkstore.Open(p, &chunkstore.Options{FS: vfs.OS, ReadOnly: true, Root: m.Chunks.Root, Generator: gametest.Gen{}})
	must(t, err)
	defer store.Close()
	px := make([]uint32, gametest.ChunkSize*gametest.ChunkSize)
	for _, c := range doc.Chunks.Chunks {
		delete(c, "offset")
		delete(c, "length")
		// What the export leaves out: the pixels and the regional entities.
		pos := chunkstore.Pos{X: int32(c["x"].(float64)), Y: int32(c["y"].(float64))}
		_, err := store.Get(pos, px)
		must(t, err)
		sum := fnv.New64a()
		must(t, binary.Write(sum, binary.LittleEndian, px))
		c["pixels"] = sum.Sum64()
		blk, err := store.Entities(pos)
		must(t, err)
		var sections []any
		for _, sec := range blk.Sections {
			buf.Reset()
			must(t, archetype.ExportSectionJSON(&buf, sec))
			var v map[string]any
			must(t, json.Unmarshal(buf.Bytes(), &v))
			delete(v, "timestamp")
			sections = append(sections, v)
		}
		c["entities"] = sections
	}
	players := map[string]any{}
	ps, err := d.ReadPlayers(m)
	must(t, err)
	for _, id := range ps.IDs() {
		rec, err := d.ReadPlayer(ps, id)
		must(t, err)
		buf.Reset()
		must(t, archetype.ExportSectionJSON(&buf, rec))
		var p map[string]any
		must(t, json.Unmarshal(buf.Bytes(), &p))
		delete(p, "timestamp")
		players[id] = p
	}
	out, err := json.MarshalIndent(map[string]any{"world": doc.World, "chunks": doc.Chunks.Chunks, "players": players}, "", " ")
	must(t, err)
	return string(out)
}

// expectLoaded checks a load of generation want that made it current as
// the directory's committed generation: the directory's export equals
// want's, every generation recorded before is still kept with the same
// contents, and the game saves the world it loaded exactly: its next
// save's export equals want's too. It records the new generations.
func (h *history) expectLoaded(t *testing.T, g *gametest.Game, want uint64) {
	t.Helper()
	cur := g.Pers.Generation()
	_, ok := h.rec[cur]
	expect(t, !ok, "loading generation %d committed no new generation (%d)", want, cur)
	got := exportOf(t, h.dir, cur)
	expect(t, got == h.rec[want], "generation %d, loaded from generation %d, differs from it: %s", cur, want, firstDiff(got, h.rec[want]))
	h.rec[cur] = got
	for gen, rec := range h.rec {
		got := exportOf(t, h.dir, gen)
		expect(t, got == rec, "generation %d changed after generation %d was loaded: %s", gen, want, firstDiff(got, rec))
	}
	g.Settle(t)
	res := g.Pers.SaveNow()
	must(t, res.Err)
	g.Pers.WaitIdle()
	got = savedAgain(t, h.dir, res.Generation)
	expect(t, got == savedAgain(t, h.dir, cur), "the save after loading generation %d differs from it: %s", want, firstDiff(got, savedAgain(t, h.dir, cur)))
	h.rec[res.Generation] = exportOf(t, h.dir, res.Generation)
}

// firstDiff shows where two exports first differ, with the lines around.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) && i < len(w); i++ {
		if g[i] != w[i] {
			lo, hi := max(i-8, 0), min(i+3, len(g), len(w))
			return fmt.Sprintf("at line %d:\n%s\nwant\n%s", i+1, strings.Join(g[lo:hi], "\n"), strings.Join(w[lo:hi], "\n"))
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(g), len(w))
}

// expectReported checks that the load reported the generation it loaded.
func expectReported(t *testing.T, g *gametest.Game, want uint64) {
	t.Helper()
	probs := g.Pers.Problems()
	expect(t, len(probs) > 0 && strings.Contains(probs[0].Err.Error(), fmt.Sprintf("loaded generation %d of ", want)) &&
		!errors.Is(probs[0].Err, arksave.ErrCorrupt), "problems after loading generation %d: %v", want, probs)
}

// Every kept generation loads exactly, by number and by time, through
// Persistence.LoadVersion, Plugin.LoadVersion and arksave restore
// followed by a plain load; each load keeps every generation there was.
func TestLoadVersionLoadsEveryKeptGenerationExactly(t *testing.T) {
	for _, copies := range []bool{true, false} {
		t.Run(fmt.Sprint("copies=", copies), func(t *testing.T) {
			h := saveHistory(t, 5, copies)
			for gen := uint64(1); gen < 5; gen++ {
				expect(t, h.rec[gen] != h.rec[gen+1], "generations %d and %d hold the same", gen, gen+1)
			}
			open := func(v arksave.Version) *gametest.Game {
				return gametest.New(t, gametest.Opts{Dir: h.dir, Load: true, Radius: 1, Autosave: &h.conf, Prepare: gametest.RegisterPlayers,
					Plugin: func(p *arksave.Plugin) { p.LoadVersion = v }})
			}

			// Persistence, on the game that made the saves.
			g := open(arksave.Version{})
			must(t, g.Pers.LoadVersion(h.dir, arksave.Version{Generation: 2}))
			expectReported(t, g, 2)
			h.expectLoaded(t, g, 2)
			must(t, g.Pers.LoadVersion(h.dir, arksave.Version{At: h.at[4]}))
			expectReported(t, g, 4)
			h.expectLoaded(t, g, 4)
			between := h.at[1].Add(h.at[2].Sub(h.at[1]) / 2)
			must(t, g.Pers.LoadVersion(h.dir, arksave.Version{At: between}))
			h.expectLoaded(t, g, 1)
			must(t, g.Pers.Close())

			// Plugin, at Install.
			g = open(arksave.Version{Generation: 3})
			expectReported(t, g, 3)
			h.expectLoaded(t, g, 3)
			must(t, g.Pers.Close())
			g = open(arksave.Version{At: h.at[5]})
			h.expectLoaded(t, g, 5)
			must(t, g.Pers.Close())

			// arksave restore, then a plain load.
			var out, errOut bytes.Buffer
			code := cli.Run([]string{"restore", "--generation", "2", h.dir}, &out, &errOut)
			expect(t, code == 0, "restore --generation 2: %d %s", code, errOut.String())
			g = open(arksave.Version{})
			h.expectLoaded(t, g, 2)
			must(t, g.Pers.Close())
			code = cli.Run([]string{"restore", "--at", h.at[3].Format(time.RFC3339Nano), h.dir}, &out, &errOut)
			expect(t, code == 0, "restore --at: %d %s", code, errOut.String())
			expect(t, strings.Contains(out.String(), "restored generation 3 as generation"), "restore --at said %q", out.String())
			h.expectLoaded(t, open(arksave.Version{}), 3)
		})
	}
}

// A load of a generation that is not kept, of a time before every kept
// generation, or with both or neither of a generation and a time set, fails
// naming what is kept, and changes neither the game nor the directory.
func TestLoadVersionRefusesWhatIsNotKept(t *testing.T) {
	h := saveHistory(t, 3, false)
	before := gametest.Files(t, vfs.OS, h.dir)
	early := h.at[1].Add(-time.Hour)
	cases := []struct {
		v    arksave.Version
		want []string
	}{
		{arksave.Version{Generation: 9}, []string{"no generation 9", "3 (committed), 2, 1"}},
		{arksave.Version{At: early}, []string{"no generation committed at or before", "the oldest kept is generation 1 of " + h.at[1].UTC().Format(time.RFC3339)}},
		{arksave.Version{Generation: 2, At: h.at[2]}, []string{"both generation 2 and the time"}},
	}
	for _, c := range cases {
		_, err := gametest.Install(t, gametest.Opts{Dir: h.dir, Load: true, Radius: 1, Prepare: gametest.RegisterPlayers,
			Plugin: func(p *arksave.Plugin) { p.LoadVersion = c.v }})
		expect(t, errors.Is(err, autosave.ErrNoGeneration), "Install with %+v: %v", c.v, err)
		for _, w := range c.want {
			expect(t, strings.Contains(err.Error(), w), "Install with %+v: %v, want %q", c.v, err, w)
		}
		gametest.ExpectSameFiles(t, before, gametest.Files(t, vfs.OS, h.dir))
	}

	_, err := gametest.Install(t, gametest.Opts{Dir: h.dir, Radius: 1, Prepare: gametest.RegisterPlayers,
		Plugin: func(p *arksave.Plugin) { p.LoadVersion = arksave.Version{Generation: 2} }}) // Overwrite is set
	expect(t, err != nil && strings.Contains(err.Error(), "LoadVersion") && strings.Contains(err.Error(), "Overwrite"), "Install with LoadVersion and Overwrite: %v", err)
	gametest.ExpectSameFiles(t, before, gametest.Files(t, vfs.OS, h.dir))

	g := gametest.New(t, gametest.Opts{Dir: h.dir, Load: true, Radius: 1, Prepare: gametest.RegisterPlayers})
	g.Settle(t)
	score := ecs.GetResource[gametest.Score](g.W).Points
	for _, c := range cases {
		err := g.Pers.LoadVersion(h.dir, c.v)
		expect(t, errors.Is(err, autosave.ErrNoGeneration), "LoadVersion %+v: %v", c.v, err)
		expect(t, g.Pers.Generation() == 3 && ecs.GetResource[gametest.Score](g.W).Points == score, "LoadVersion %+v changed the game", c.v)
	}
	err = g.Pers.LoadVersion(h.dir, arksave.Version{})
	expect(t, errors.Is(err, autosave.ErrNoGeneration), "LoadVersion of the zero Version: %v", err)
	must(t, g.Pers.Close())
	gametest.ExpectSameFiles(t, before, gametest.Files(t, vfs.OS, h.dir))

	var out, errOut bytes.Buffer
	code := cli.Run([]string{"restore", "--at", "1h", h.dir}, &out, &errOut)
	expect(t, code == 1 && strings.Contains(errOut.String(), "the oldest kept is generation 1 of"), "restore --at 1h: %d %s", code, errOut.String())
	code = cli.Run([]string{"restore", "--at", "0s", h.dir}, &out, &errOut)
	expect(t, code == 0 && strings.Contains(out.String(), "generation 3 of") && strings.Contains(out.String(), "nothing was changed"), "restore --at 0s: %d %s %s", code, out.String(), errOut.String())
	code = cli.Run([]string{"restore", "--at", "10m", "--generation", "2", h.dir}, &out, &errOut)
	expect(t, code == 2, "restore with both --at and --generation: %d %s", code, errOut.String())
	gametest.ExpectSameFiles(t, before, gametest.Files(t, vfs.OS, h.dir))
}

// A damaged backup is not loaded: the error names the damage and the
// generations kept, and nothing changes.
func TestLoadVersionRefusesADamagedBackup(t *testing.T) {
	h := saveHistory(t, 3, false)
	_, m := manifestOf(t, h.dir, 2)
	gametest.FlipAt(t, vfs.OS, h.dir+"/"+m.World.Name, 70)
	before := gametest.Files(t, vfs.OS, h.dir)
	_, err := gametest.Install(t, gametest.Opts{Dir: h.dir, Load: true, Radius: 1, Prepare: gametest.RegisterPlayers,
		Plugin: func(p *arksave.Plugin) { p.LoadVersion = arksave.Version{Generation: 2} }})
	expect(t, errors.Is(err, arksave.ErrCorrupt) && strings.Contains(err.Error(), "generation 2 of") &&
		strings.Contains(err.Error(), "nothing was changed"), "Install of a damaged backup: %v", err)
	gametest.ExpectSameFiles(t, before, gametest.Files(t, vfs.OS, h.dir))
	g := gametest.New(t, gametest.Opts{Dir: h.dir, Load: true, Radius: 1, Prepare: gametest.RegisterPlayers})
	score := ecs.GetResource[gametest.Score](g.W).Points
	err = g.Pers.LoadVersion(h.dir, arksave.Version{At: h.at[2]})
	expect(t, errors.Is(err, arksave.ErrCorrupt) && strings.Contains(err.Error(), "generation 2 of"), "LoadVersion of a damaged backup: %v", err)
	expect(t, g.Pers.Generation() == 3 && ecs.GetResource[gametest.Score](g.W).Points == score, "LoadVersion of a damaged backup changed the game")
	gametest.ExpectSameFiles(t, before, gametest.Files(t, vfs.OS, h.dir))
	must(t, g.Pers.LoadVersion(h.dir, arksave.Version{Generation: 1}))
	expect(t, g.Pers.Generation() == 4, "generation %d after loading generation 1", g.Pers.Generation())
	expect(t, exportOf(t, h.dir, 4) == h.rec[1], "generation 1 loaded as 4 differs")
}
