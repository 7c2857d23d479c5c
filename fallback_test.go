package arksave_test

import (
	"bytes"
	"errors"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/vfs"
)

// threeGenerations saves three generations in memory, each painting one
// more pixel of chunk (0,0) and setting Score to its number, with two
// backups kept, each with a chunk store of its own. It returns the file
// system and the digest of chunk (0,0) in each generation.
func threeGenerations(t *testing.T) (*vfs.Mem, map[uint64]uint64) {
	t.Helper()
	mem := vfs.NewMem()
	g := newGame(t, gameOpts{fs: mem, dir: "/save", radius: 1, autosave: &arksave.AutosaveConfig{Interval: time.Hour, MaxBackups: 2}})
	g.settle(t)
	digests := map[uint64]uint64{}
	for gen := uint64(1); gen <= 3; gen++ {
		g.paint(t, 0, 0, int(gen), 2, components.MakePixel(9, 0, 0, 0))
		ecs.GetResource[Score](g.w).Points = int(gen)
		res := g.waitSave(t, g.pers.Save())
		must(t, res.Err)
		expect(t, res.Generation == gen, "save %d committed generation %d", gen, res.Generation)
		if gen > 1 {
			want := autosave.CopiedChunksName(gen - 1)
			expect(t, res.BackupChunks == want, "the backup of generation %d got store %q, want %q", gen-1, res.BackupChunks, want)
		}
		digests[gen] = g.chunkDigest(t, 0, 0)
	}
	must(t, g.pers.Close())
	return mem, digests
}

// recordOf returns the path and offset of the record of chunk pos in the
// committed generation's chunk store.
func recordOf(t *testing.T, fsys vfs.FS, pos chunkstore.Pos) (string, int64, int64) {
	t.Helper()
	s, m := openCommittedStore(t, fsys, "/save")
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

// storeFiles lists the paths of the committed generation's chunk store
// file and data files.
func storeFiles(t testing.TB, fsys vfs.FS) []string {
	t.Helper()
	d, err := autosave.OpenDirReadOnly(fsys, "/save")
	must(t, err)
	m := d.Manifest()
	var out []string
	for _, n := range append([]string{m.Chunks.Name}, m.Chunks.Data...) {
		p, err := d.File(n)
		must(t, err)
		out = append(out, p)
	}
	return out
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
// Problems and AutosaveState.Fallback, and removes none of the damaged
// files. Both ways of loading do it: Install with Load, and
// Persistence.Load of a running game.
func TestLoadFallsBackToTheNewestIntactGeneration(t *testing.T) {
	damageRecord := func(t *testing.T, fsys vfs.FS) []string {
		p, off, n := recordOf(t, fsys, chunkstore.Pos{})
		flipAt(t, fsys, p, off+n/2)
		return []string{p}
	}
	cases := []struct {
		name   string
		damage func(t *testing.T, fsys vfs.FS) []string // returns the damaged files
		loaded uint64                                   // the generation whose contents load
	}{
		{"world file", func(t *testing.T, fsys vfs.FS) []string {
			flipAt(t, fsys, "/save/world-3.pecs", 40)
			return []string{"/save/world-3.pecs"}
		}, 2},
		// The copy of the store made after generation 3 (for its backup)
		// is intact, and so is its world file: generation 3 loads.
		{"store data file", damageRecord, 3},
		{"store data file without a copy for generation 3", func(t *testing.T, fsys vfs.FS) []string {
			for _, n := range []string{"chunks-3.pxsw", "chunks-3-data-1.pxsd"} {
				must(t, fsys.Remove("/save/backups/"+n))
			}
			return damageRecord(t, fsys)
		}, 2},
		{"everything it shares", func(t *testing.T, fsys vfs.FS) []string {
			files := append([]string{"/save/world-3.pecs"}, storeFiles(t, fsys)...)
			for _, p := range files {
				ruin(t, fsys, p)
			}
			return files
		}, 2},
	}
	for _, tc := range cases {
		for _, how := range []string{"install", "reload"} {
			t.Run(tc.name+"/"+how, func(t *testing.T) {
				mem, digests := threeGenerations(t)
				var g *game
				if how == "reload" {
					g = newGame(t, gameOpts{fs: mem, dir: "/save", load: true, radius: 1})
					g.settle(t)
					expect(t, g.state().Fallback == nil && len(g.pers.Problems()) == 0, "an intact save loaded with a fallback")
				}
				damaged := tc.damage(t, mem)
				before := map[string][]byte{}
				for _, p := range damaged {
					raw, err := vfs.ReadFile(mem, p)
					must(t, err)
					before[p] = raw
				}
				if how == "install" {
					g = newGame(t, gameOpts{fs: mem, dir: "/save", load: true, radius: 1})
				} else {
					must(t, g.pers.Load("/save"))
				}
				g.settle(t)

				fb := g.state().Fallback
				expect(t, fb != nil && fb.Damaged == 3 && fb.Loaded == tc.loaded && fb.Generation == 4 && len(fb.Problems) > 0,
					"fallback %+v", fb)
				expect(t, g.pers.Generation() == 4, "generation %d after the fallback", g.pers.Generation())
				expect(t, ecs.GetResource[Score](g.w).Points == int(tc.loaded), "score %d, want generation %d's", ecs.GetResource[Score](g.w).Points, tc.loaded)
				expect(t, g.chunkDigest(t, 0, 0) == digests[tc.loaded], "chunk (0,0) is not generation %d's", tc.loaded)
				probs := g.pers.Problems()
				expect(t, len(probs) == len(fb.Problems)+1 && probs[0].File == autosave.ManifestName &&
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
				d, err := autosave.OpenDirReadOnly(mem, "/save")
				must(t, err)
				_, err = d.Backup(3)
				must(t, err)

				// The game goes on from generation 4.
				g.paint(t, 0, 0, 9, 9, components.MakePixel(9, 0, 0, 0))
				res := g.waitSave(t, g.pers.Save())
				must(t, res.Err)
				want := g.chunkDigest(t, 0, 0)
				must(t, g.pers.Close())
				h := newGame(t, gameOpts{fs: mem, dir: "/save", load: true, radius: 1})
				h.settle(t)
				expect(t, h.state().Fallback == nil && h.pers.Generation() == 5 && h.chunkDigest(t, 0, 0) == want,
					"after the fallback's next save: fallback %+v, generation %d", h.state().Fallback, h.pers.Generation())
			})
		}
	}
}

// TestLoadWithoutAnIntactGeneration: a damaged world file and no intact
// backup is an error naming arksave repair, and nothing is changed.
func TestLoadWithoutAnIntactGeneration(t *testing.T) {
	mem, _ := threeGenerations(t)
	for _, p := range []string{"/save/world-3.pecs", "/save/backups/world-2.pecs", "/save/backups/world-1.pecs"} {
		flipAt(t, mem, p, 40)
	}
	// Opening the directory removes what no manifest names: that is done
	// first, so that what follows compares the save's files.
	d, err := autosave.OpenDir(mem, "/save")
	must(t, err)
	must(t, d.Close())
	before := snapshotMem(t, mem, "/save")
	_, err = installGame(t, gameOpts{fs: mem, dir: "/save", load: true, radius: 1})
	expect(t, errors.Is(err, arksave.ErrCorrupt) && strings.Contains(err.Error(), "arksave repair") &&
		strings.Contains(err.Error(), "no backup is intact"), "Install: %v", err)
	after := snapshotMem(t, mem, "/save")
	expect(t, len(before) == len(after), "files changed: %d before, %d after", len(before), len(after))
	for name, raw := range before {
		expect(t, bytes.Equal(after[name], raw), "%s changed", name)
	}
}

// snapshotMem returns every file under dir (and backups/) with its bytes.
func snapshotMem(t *testing.T, fsys vfs.FS, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, sub := range []string{dir, dir + "/backups"} {
		names, _ := fsys.ReadDir(sub)
		for _, n := range names {
			p := sub + "/" + n
			if st, err := fsys.Stat(p); err == nil && !st.IsDir() {
				raw, err := vfs.ReadFile(fsys, p)
				must(t, err)
				out[p] = raw
			}
		}
	}
	return out
}
