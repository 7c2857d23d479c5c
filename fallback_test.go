package arksave_test

import (
	"bytes"
	"errors"
	"path"
	"strings"
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

// recordOf returns the path and offset of the record of chunk pos in the
// committed generation's chunk store.
func recordOf(t *testing.T, fsys vfs.FS, pos chunkstore.Pos) (string, int64, int64) {
	t.Helper()
	s, m := gametest.OpenCommittedStore(t, fsys, "/save")
	defer s.Close()
	var h storetool.Handle
	storetool.Tool.Entries(s, func(e storetool.Entry) bool {
		if e.Pos == pos && e.Type != chunkstore.BodyBlock {
			h = e.Handle
			return false
		}
		return true
	})
	expect(t, !h.IsZero(), "no record of chunk %v", pos)
	name := m.Chunks.Name
	if n := h.File(); n != 0 {
		name = storetool.Tool.DataFileName(m.Chunks.Name, n)
	}
	return path.Join("/save", name), h.FileOffset(), int64(h.Length)
}

// ruin inverts every byte of a file.
func ruin(t *testing.T, fsys vfs.FS, p string) {
	t.Helper()
	raw, err := vfs.ReadFile(fsys, p)
	must(t, err)
	for i := range raw {
		raw[i] ^= 0xff
	}
	must(t, vfs.WriteFileAtomic(fsys, p, raw))
}

// TestLoadFallsBackToTheNewestIntactGeneration: when the committed
// generation is damaged (its world file, a record of its chunk store, or
// every file it shares with nothing else ruined), loading takes the newest
// intact backup by itself, commits it as a new generation, reports it in
// Problems and autosave.State.Fallback, and removes none of the damaged
// files. Both ways of loading do it: Install with Load, and
// Persistence.Load of a running game.
func TestLoadFallsBackToTheNewestIntactGeneration(t *testing.T) {
	damageRecord := func(t *testing.T, fsys vfs.FS) []string {
		p, off, n := recordOf(t, fsys, chunkstore.Pos{})
		gametest.FlipAt(t, fsys, p, off+n/2)
		return []string{p}
	}
	cases := []struct {
		name   string
		damage func(t *testing.T, fsys vfs.FS) []string // returns the damaged files
		loaded uint64                                   // the generation whose contents load
	}{
		{"world file", func(t *testing.T, fsys vfs.FS) []string {
			gametest.FlipAt(t, fsys, "/save/world-3.pecs", 40)
			return []string{"/save/world-3.pecs"}
		}, 2},
		// The mirror of the data file (grown after generation 3) is
		// intact, and so is the world file: generation 3 loads.
		{"store data file", damageRecord, 3},
		{"store data file without its mirror", func(t *testing.T, fsys vfs.FS) []string {
			must(t, fsys.Remove("/save/"+savedir.MirrorName("chunks-data-1.pxsd")))
			return damageRecord(t, fsys)
		}, 2},
		{"everything it shares", func(t *testing.T, fsys vfs.FS) []string {
			files := append([]string{"/save/world-3.pecs"}, gametest.StoreFiles(t, fsys)...)
			for _, p := range files {
				ruin(t, fsys, p)
			}
			return files
		}, 2},
	}
	for _, tc := range cases {
		for _, how := range []string{"install", "reload"} {
			t.Run(tc.name+"/"+how, func(t *testing.T) {
				mem, digests := gametest.ThreeGenerations(t)
				var g *gametest.Game
				if how == "reload" {
					g = gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
					g.Settle(t)
					expect(t, g.State().Fallback == nil && len(g.Pers.Problems()) == 0, "an intact save loaded with a fallback")
				}
				damaged := tc.damage(t, mem)
				before := map[string][]byte{}
				for _, p := range damaged {
					raw, err := vfs.ReadFile(mem, p)
					must(t, err)
					before[p] = raw
				}
				if how == "install" {
					g = gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
				} else {
					must(t, g.Pers.Load("/save"))
				}
				g.Settle(t)

				fb := g.State().Fallback
				expect(t, fb != nil && fb.Damaged == 3 && fb.Loaded == tc.loaded && fb.Generation == 4 && len(fb.Problems) > 0,
					"fallback %+v", fb)
				expect(t, g.Pers.Generation() == 4, "generation %d after the fallback", g.Pers.Generation())
				expect(t, ecs.GetResource[gametest.Score](g.W).Points == int(tc.loaded), "score %d, want generation %d's", ecs.GetResource[gametest.Score](g.W).Points, tc.loaded)
				expect(t, g.ChunkDigest(t, 0, 0) == digests[tc.loaded], "chunk (0,0) is not generation %d's", tc.loaded)
				probs := g.Pers.Problems()
				expect(t, len(probs) == len(fb.Problems)+1 && probs[0].File == savedir.ManifestName &&
					errors.Is(probs[0].Err, arksave.ErrCorrupt) && strings.Contains(probs[0].Err.Error(), "as generation 4"),
					"problems %v", probs)
				names := map[string]bool{}
				for _, p := range probs[1:] {
					expect(t, errors.Is(p.Err, arksave.ErrCorrupt), "problem %v does not match ErrCorrupt", p)
					names[path.Join("/save", p.File)] = true
				}
				for _, p := range damaged {
					if p == "/save/world-3.pecs" {
						expect(t, names[p], "no problem names %s: %v", p, probs)
					}
				}
				// Every damaged file is still there, as it was: the world file
				// of the damaged generation went to backups/ with it.
				for p, raw := range before {
					at := p
					if p == "/save/world-3.pecs" {
						at = "/save/backups/world-3.pecs"
					}
					got, err := vfs.ReadFile(mem, at)
					must(t, err)
					expect(t, bytes.Equal(got, raw), "%s changed", at)
				}
				d, err := savedir.OpenDirReadOnly(mem, "/save")
				must(t, err)
				_, err = d.Backup(3)
				must(t, err)

				// The game goes on from generation 4.
				g.Paint(t, 0, 0, 9, 9, components.MakePixel(9, 0, 0, 0))
				res := g.WaitSave(t, g.Pers.Save())
				must(t, res.Err)
				want := g.ChunkDigest(t, 0, 0)
				must(t, g.Pers.Close())
				h := gametest.New(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
				h.Settle(t)
				expect(t, h.State().Fallback == nil && h.Pers.Generation() == 5 && h.ChunkDigest(t, 0, 0) == want,
					"after the fallback's next save: fallback %+v, generation %d", h.State().Fallback, h.Pers.Generation())
			})
		}
	}
}

// TestLoadWithoutAnIntactGeneration: a damaged world file and no intact
// backup is an error naming arksave repair, and nothing is changed.
func TestLoadWithoutAnIntactGeneration(t *testing.T) {
	mem, _ := gametest.ThreeGenerations(t)
	for _, p := range []string{"/save/world-3.pecs", "/save/backups/world-2.pecs", "/save/backups/world-1.pecs"} {
		gametest.FlipAt(t, mem, p, 40)
	}
	// Opening the directory removes what no manifest names: that is done
	// first, so that what follows compares the save's files.
	d, err := savedir.OpenDir(mem, "/save")
	must(t, err)
	must(t, d.Close())
	before := gametest.Files(t, mem, "/save")
	_, err = gametest.Install(t, gametest.Opts{FS: mem, Dir: "/save", Load: true, Radius: 1})
	expect(t, errors.Is(err, arksave.ErrCorrupt) && strings.Contains(err.Error(), "arksave repair") &&
		strings.Contains(err.Error(), "no backup is intact"), "Install: %v", err)
	after := gametest.Files(t, mem, "/save")
	gametest.ExpectSameFiles(t, before, after)
}
