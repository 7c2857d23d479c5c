package savedir_test

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
)

// gold is what the player of the damage tests carries; points the world's
// resource. Both change with every save.
type (
	gold   struct{ N int }
	points struct{ N int }
)

// damageGame installs the plugin over dir with data files of 16 KiB, so
// that a few saves of incompressible chunks seal some.
func damageGame(t *testing.T, dir string, load bool) (*savetest.Game, error) {
	t.Helper()
	w := ecs.NewWorld()
	ecs.ComponentID[gold](w)
	ecs.AddResource(w, &points{})
	systems, err := arksave.Plugin{Dir: dir, Load: load, Overwrite: !load,
		ChunkSize: savetest.ChunkSize, TileSize: savetest.TileSize, Seed: savetest.Seed, Generator: savetest.Generator,
		DataFileSize: 16 << 10, Autosave: &autosave.Config{Interval: time.Hour, MaxBackups: 2}}.Install(w)
	if err != nil {
		return nil, err
	}
	g := &savetest.Game{W: w, Systems: systems, Pers: ecs.GetResource[arksave.Persistence](w)}
	if !load {
		ecs.NewMap1[components.Focus](w).NewEntity(&components.Focus{Radius: savetest.Radius})
	}
	return g, nil
}

// damageState is what generation G of the damage tests' save holds.
type damageState struct {
	contents *savetest.Contents
	world    []byte // the world file's bytes
	points   int
	gold     int
}

// buildDamageSave saves four generations into dir, each painting three
// chunks of a row of its own with random pixels, changing the world's points and the player's
// gold, and returns each generation's state.
func buildDamageSave(t *testing.T, dir string) map[uint64]damageState {
	t.Helper()
	g, err := damageGame(t, dir, false)
	must(t, err)
	must(t, g.Settle())
	rng := rand.New(rand.NewPCG(4, 4))
	_, ada := ecs.NewMap2[components.Player, gold](g.W).Get(ecs.NewMap2[components.Player, gold](g.W).NewEntity(&components.Player{ID: "ada"}, &gold{}))
	states := map[uint64]damageState{}
	for gen := 1; gen <= 4; gen++ {
		for i := range 3 {
			must(t, g.Fill(int32(i-1), int32(gen-2), func(int, int) components.Pixel {
				return components.MakePixel(uint8(1+rng.IntN(9)), uint8(rng.IntN(256)), uint8(rng.IntN(256)), 0)
			}))
		}
		ecs.GetResource[points](g.W).N = gen
		ada.N = 10 * gen
		r := g.Pers.SaveNow()
		must(t, r.Err)
		g.Pers.WaitIdle()
		d, err := savedir.OpenDirReadOnly(nil, dir)
		must(t, err)
		m := d.Manifest()
		world, err := d.ReadWorld(m)
		must(t, err)
		c, err := savetest.Read(dir)
		must(t, err)
		states[m.Generation] = damageState{contents: c, world: world, points: gen, gold: 10 * gen}
	}
	must(t, g.Close())
	return states
}

// loadDamaged loads the save in dir with the plugin and returns what it
// loaded: the state of the generation it made current, and the fallback.
func loadDamaged(t *testing.T, dir string) (damageState, *autosave.Fallback, error) {
	t.Helper()
	g, err := damageGame(t, dir, true)
	if err != nil {
		return damageState{}, nil, err
	}
	defer g.Close()
	fb := ecs.GetResource[autosave.State](g.W).Fallback
	st := damageState{points: ecs.GetResource[points](g.W).N}
	ents, err := g.Pers.LoadPlayer("ada")
	must(t, err)
	for _, e := range ents {
		if m := ecs.NewMap1[gold](g.W); m.HasAll(e) {
			st.gold = m.Get(e).N
		}
	}
	d, err := savedir.OpenDirReadOnly(nil, dir)
	must(t, err)
	st.world, err = d.ReadWorld(d.Manifest())
	must(t, err)
	st.contents, err = savetest.Read(dir)
	must(t, err)
	return st, fb, nil
}

// TestLoadSurvivesDamageToAnyFile: whatever file of the committed
// generation is damaged (flipped, cut short or removed): a sealed data
// file, the newest data file, the store file's header slots, the players
// data, the players index, the world file, the manifest, the plugin's load
// gives an intact generation of the retention window, exactly (chunks,
// bodies, the world file's bytes, the player), and says what it used: the
// committed generation itself through the mirrors of its damaged files
// where they hold them, else the newest intact backup. A damaged manifest
// is never loaded over: the load fails naming arksave repair, changing
// nothing, and the repair gives the committed generation. A mirror damaged
// while its file is intact changes nothing for a load.
func TestLoadSurvivesDamageToAnyFile(t *testing.T) {
	base := filepath.Join(t.TempDir(), "base")
	states := buildDamageSave(t, base)
	d, err := savedir.OpenDirReadOnly(nil, base)
	must(t, err)
	m := d.Manifest()
	expect(t, m.Generation == 4 && len(m.Chunks.Data) >= 2 && m.Players != nil && m.Players.Index.Name == savedir.PlayersName(4),
		"the save has generation %d, data files %v, players %+v: the test needs two data files and the players of generation 4", m.Generation, m.Chunks.Data, m.Players)
	sealed, newest := m.Chunks.Data[0], m.Chunks.Data[len(m.Chunks.Data)-1]

	damages := map[string]func(t *testing.T, p string) error{
		"flipped": func(t *testing.T, p string) error { return flipUsed(t, base, p) },
		"truncated": func(_ *testing.T, p string) error {
			st, err := os.Stat(p)
			if err != nil {
				return err
			}
			return os.Truncate(p, st.Size()/2)
		},
		"removed": func(_ *testing.T, p string) error { return os.Remove(p) },
	}
	for _, tc := range []struct {
		file   string
		loaded uint64 // the generation whose state the load must give
		mirror bool   // through the mirrors: the fallback loads the damaged generation itself
		repair bool   // the load refuses the directory, naming arksave repair
	}{
		{file: sealed, loaded: 4, mirror: true},
		{file: newest, loaded: 4, mirror: true},
		{file: m.Chunks.Name, loaded: 4, mirror: true},
		{file: m.Players.Data, loaded: 4, mirror: true},
		{file: m.Players.Index.Name, loaded: 4, mirror: true},
		{file: m.World.Name, loaded: 3},
		{file: savedir.ManifestName, loaded: 4, repair: true},
		{file: savedir.MirrorName(sealed), loaded: 4},
		{file: savedir.MirrorName(newest), loaded: 4},
		{file: savedir.MirrorName(m.Players.Data), loaded: 4},
	} {
		for how, damage := range damages {
			t.Run(how+" "+tc.file, func(t *testing.T) {
				dir := savetest.Fresh(t, base)
				must(t, damage(t, filepath.Join(dir, tc.file)))
				got, fb, err := loadDamaged(t, dir)
				_, isMirror := savedir.MirroredName(tc.file)
				switch {
				case tc.repair:
					expect(t, err != nil && strings.Contains(err.Error(), "arksave repair"), "a damaged manifest: the load gives %v", err)
					_, err := savetool.Repair(dir, savetool.RepairOptions{})
					must(t, err)
					got, _, err = loadDamaged(t, dir)
					must(t, err)
				case tc.file == m.Chunks.Name && how != "removed":
					// The root is the manifest's: the slots are not read.
					must(t, err)
					expect(t, fb == nil, "flipped header slots: fallback %v", fb)
				case isMirror:
					must(t, err)
					expect(t, fb == nil, "a damaged mirror of an intact file: fallback %v", fb)
				default:
					must(t, err)
					expect(t, fb != nil && fb.Damaged == 4 && fb.Loaded == tc.loaded && fb.Generation == 5,
						"fallback %+v, want generation %d loaded as 5", fb, tc.loaded)
					named := false
					for _, p := range fb.Problems {
						named = named || p.File == tc.file || strings.Contains(p.Err.Error(), tc.file)
					}
					expect(t, named, "the fallback does not name %s: %v", tc.file, fb.Problems)
					// The generation it made has its mirrors at once.
					d, err := savedir.OpenDirReadOnly(nil, dir)
					must(t, err)
					for _, n := range d.Manifest().Chunks.Data {
						_, err := os.Stat(filepath.Join(dir, savedir.MirrorName(n)))
						expect(t, err == nil, "no mirror of %s after the fallback: %v", n, err)
					}
				}
				want := states[tc.loaded]
				expect(t, got.points == want.points && got.gold == want.gold, "loaded points %d and gold %d, want %d and %d",
					got.points, got.gold, want.points, want.gold)
				expect(t, bytes.Equal(got.world, want.world), "the world file loaded differs from generation %d's", tc.loaded)
				if diff := savetest.Diff(got.contents, want.contents); diff != "" {
					t.Fatalf("the chunks loaded differ from generation %d's: %s", tc.loaded, diff)
				}
				if diff := savetest.Diff(want.contents, got.contents); diff != "" {
					t.Fatalf("the chunks loaded differ from generation %d's: %s", tc.loaded, diff)
				}
			})
		}
	}
}

// flipUsed flips a byte that generation G of the save at base uses in the
// file at p (of a copy of that save): in the middle of a live record of a
// data file or of the player's record in the players data, else in the
// middle of the file.
func flipUsed(t *testing.T, base, p string) error {
	t.Helper()
	d, err := savedir.OpenDirReadOnly(nil, base)
	must(t, err)
	m := d.Manifest()
	name := filepath.Base(p)
	if _, n, ok := savedir.DataFileOf(name); ok && !strings.Contains(p, savedir.BackupDir) {
		sp, err := d.File(m.Chunks.Name)
		must(t, err)
		s, err := chunkstore.Open(sp, &chunkstore.Options{ReadOnly: true, Root: m.Chunks.Root})
		must(t, err)
		defer s.Close()
		at := int64(-1)
		storetool.Tool.Entries(s, func(e storetool.Entry) bool {
			if !e.Handle.IsZero() && e.Handle.File() == n {
				at = e.Handle.FileOffset() + int64(e.Handle.Length)/2
			}
			return at < 0
		})
		expect(t, at >= 0, "no live record in %s", name)
		return savetest.Flip(p, at)
	}
	if name == m.Players.Data {
		players, err := d.ReadPlayers(m)
		must(t, err)
		e, ok := players.Find("ada")
		expect(t, ok, "no ada in the players index")
		return savetest.Flip(p, e.Offset+int64(e.Length)/2)
	}
	return savetest.FlipMiddle(p)
}
