package savetool_test

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
)

// freshWithCopies returns a copy of a save whose backups have chunk stores
// of their own, and whose committed generation's copy waits in backups/.
func freshWithCopies(t *testing.T) string { return savetest.FreshWithCopies(t, base) }

// flipMiddle flips a byte in the middle of the file rel of dir.
func flipMiddle(t *testing.T, dir, rel string) { must(t, savetest.FlipMiddle(filepath.Join(dir, rel))) }

// Check verifies every file a load or its fallback may read: the copy of
// the committed generation's chunk store made for its backup (which no
// manifest names yet, and which a load falls back to first), its data
// file, and the stores of the backups, each problem naming the damaged
// file by its path in the save directory.
func TestCheckVerifiesBackupCopies(t *testing.T) {
	r, err := savetool.Check(freshWithCopies(t), savetool.Options{})
	must(t, err)
	expect(t, r.OK(), "an intact save with backup copies: %v", r.Problems)
	for _, tc := range []struct {
		file   string
		damage func(t *testing.T, dir string)
	}{
		{"backups/chunks-3.pxsw", func(t *testing.T, dir string) {
			must(t, savetest.Flip(filepath.Join(dir, "backups/chunks-3.pxsw"), 12))
		}},
		{"backups/chunks-3-data-1.pxsd", func(t *testing.T, dir string) { flipMiddle(t, dir, "backups/chunks-3-data-1.pxsd") }},
		{"backups/chunks-3-data-1.pxsd", func(t *testing.T, dir string) { must(t, os.Remove(filepath.Join(dir, "backups/chunks-3-data-1.pxsd"))) }},
		{"backups/chunks-2-data-1.pxsd", func(t *testing.T, dir string) { flipMiddle(t, dir, "backups/chunks-2-data-1.pxsd") }},
	} {
		t.Run(tc.file, func(t *testing.T) {
			dir := freshWithCopies(t)
			tc.damage(t, dir)
			r, err := savetool.Check(dir, savetool.Options{})
			must(t, err)
			named := false
			for _, p := range r.Problems {
				named = named || p.File == tc.file
			}
			expect(t, named, "check does not name %s: %v", tc.file, r.Problems)
		})
	}
}

// Check verifies every players copy a load or its fallback may read: the
// copy of the committed generation's players made for its backup (which no
// manifest names yet, and which a load reads first when the committed
// players are damaged) and the copies the backups' manifests name, every
// record of each and its index, each problem naming the damaged file by
// its path in the save directory. A copy whose index is not in place yet
// (being written: its data file comes first) is not damage.
func TestCheckVerifiesPlayersCopies(t *testing.T) {
	r, err := savetool.Check(savetest.FreshWithPlayers(t, base), savetool.Options{})
	must(t, err)
	expect(t, r.OK(), "an intact save with players copies: %v", r.Problems)
	expect(t, r.Players == 4, "%d players indexes checked, want 4 (the committed one, its copy, and the two backups' copies)", r.Players)
	expect(t, r.JSON("save").Players == 4, "check --json counts %d players indexes, want 4", r.JSON("save").Players)
	truncate := func(rel string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			p := filepath.Join(dir, rel)
			st, err := os.Stat(p)
			must(t, err)
			must(t, os.Truncate(p, st.Size()-3))
		}
	}
	remove := func(rel string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) { must(t, os.Remove(filepath.Join(dir, rel))) }
	}
	for _, tc := range []struct {
		name, file string
		damage     func(t *testing.T, dir string)
	}{
		{"flipped pending data", "backups/players-3.pxpd", func(t *testing.T, dir string) { flipMiddle(t, dir, "backups/players-3.pxpd") }},
		{"truncated pending index", "backups/players-3.pxpl", truncate("backups/players-3.pxpl")},
		{"deleted pending data", "backups/players-3.pxpd", remove("backups/players-3.pxpd")},
		{"truncated pending data", "backups/players-3.pxpd", truncate("backups/players-3.pxpd")},
		{"flipped backup data", "backups/players-2.pxpd", func(t *testing.T, dir string) { flipMiddle(t, dir, "backups/players-2.pxpd") }},
		{"truncated backup index", "backups/players-1.pxpl", truncate("backups/players-1.pxpl")},
		{"deleted backup data", "backups/players-1.pxpd", remove("backups/players-1.pxpd")},
		{"deleted backup index", "backups/players-2.pxpl", remove("backups/players-2.pxpl")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := savetest.FreshWithPlayers(t, base)
			tc.damage(t, dir)
			r, err := savetool.Check(dir, savetool.Options{})
			must(t, err)
			named := slices.ContainsFunc(r.Problems, func(p chunkstore.Problem) bool {
				return p.File == tc.file && errors.Is(p.Err, autosave.ErrCorrupt)
			})
			expect(t, named, "check does not name %s as damaged: %v", tc.file, r.Problems)
		})
	}
	t.Run("being written", func(t *testing.T) {
		// The writer writes the copy's data file, then its index through
		// a temp file it renames into place.
		dir := savetest.FreshWithPlayers(t, base)
		idx := filepath.Join(dir, "backups/players-3.pxpl")
		must(t, os.Rename(idx, idx+".tmp"))
		must(t, savetest.Flip(idx+".tmp", 4))
		truncate("backups/players-3.pxpd")(t, dir)
		r, err := savetool.Check(dir, savetool.Options{})
		must(t, err)
		expect(t, r.OK(), "a players copy not yet in place is reported: %v", r.Problems)
	})
}

// A repair drops a damaged copy of the committed generation's players made
// for its backup, saying so, and check is clean afterwards: on its own when
// the generation stays (its chunk store's copy made again), with the
// generation when the repair replaces it. The game loads the repaired save.
func TestRepairDropsADamagedPlayersCopy(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		damage     func(dir string) error
		store      bool // the chunk store's copy is still there
	}{
		{"flipped data", "backups/players-3.pxpd", func(dir string) error { return savetest.FlipMiddle(filepath.Join(dir, "backups/players-3.pxpd")) }, true},
		{"deleted data", "backups/players-3.pxpd", func(dir string) error { return os.Remove(filepath.Join(dir, "backups/players-3.pxpd")) }, true},
		{"flipped index", "backups/players-3.pxpl", func(dir string) error { return savetest.Flip(filepath.Join(dir, "backups/players-3.pxpl"), 20) }, true},
		{"flipped index and world", "backups/players-3.pxpl", func(dir string) error {
			if err := savetest.FlipMiddle(filepath.Join(dir, "world-3.pecs")); err != nil {
				return err
			}
			return savetest.Flip(filepath.Join(dir, "backups/players-3.pxpl"), 20)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := savetest.FreshWithPlayers(t, base)
			must(t, tc.damage(dir))
			rep, err := savetool.Repair(dir, savetool.RepairOptions{})
			must(t, err)
			expect(t, rep.After != nil && rep.After.OK(), "check after the repair: %v\nrepair: %+v", rep.After, rep)
			said := slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, "dropped "+tc.file) })
			expect(t, said, "the repair does not say it dropped %s: %v", tc.file, rep.Notes)
			for _, f := range []string{"backups/players-3.pxpl", "backups/players-3.pxpd"} {
				_, err := os.Stat(filepath.Join(dir, f))
				expect(t, os.IsNotExist(err), "%s is still there after the repair: %v", f, err)
			}
			_, err = os.Stat(filepath.Join(dir, "backups/chunks-3.pxsw"))
			expect(t, (err == nil) == tc.store, "the copy of the chunk store after the repair: %v", err)
			loads(t, dir)
		})
	}
}

// damageByName returns the damage of savetest.Damages named name.
func damageByName(t *testing.T, name string) func(string, *savetest.Layout) error {
	t.Helper()
	for _, d := range savetest.Damages {
		if d.Name == name {
			return d.Apply
		}
	}
	t.Fatalf("no damage %q", name)
	return nil
}

// region is the world the test game loads around its player (chunks -2 to
// 2 on both axes), in pixels.
var region = image.Rect(-2*savetest.ChunkSize, -2*savetest.ChunkSize, 3*savetest.ChunkSize, 3*savetest.ChunkSize)

// render draws the committed generation of the save in dir as the game
// sees it: stored chunks, generated ones, bodies.
func render(t *testing.T, dir string) *image.RGBA {
	t.Helper()
	img, _, err := savetool.RenderDir(dir, savetool.RenderOptions{Generator: savetest.Generator, Region: region, Scale: 1})
	must(t, err)
	return img
}

// loadsAs loads the save in dir with the game (the plugin's load path,
// which falls back to the newest intact generation and commits it) and
// returns the score of the ECS world it loaded, or an error when the load
// refuses the directory.
func loadsAs(t *testing.T, dir string) (int, error) {
	t.Helper()
	g, err := savetest.Open(dir, true)
	if err != nil {
		return 0, err
	}
	defer g.Close()
	must(t, g.Settle())
	return ecs.GetResource[savetest.Score](g.W).Points, nil
}

// Repair never keeps less than a load would: for every damage of a save
// whose backups have stores of their own, the repaired save holds what a
// load of the damaged save falls back to (the committed generation through
// the copy of its chunk store, or a backup), pixel for pixel, body for
// body, with the same ECS world; where a load refuses the directory (its
// manifest is lost), what was committed. Where a load takes an older
// generation whole because one file of the committed one is damaged, the
// repair keeps the committed generation's other, intact file (its chunks
// or its ECS world) and the older one's for the rest: it keeps more. A
// damaged copy of a store is made again or dropped, saying so. Afterwards
// check is clean and the game loads the repaired save.
func TestRepairKeepsWhatALoadKeeps(t *testing.T) {
	flip := func(rel string) func(string, *savetest.Layout) error {
		return func(dir string, _ *savetest.Layout) error { return savetest.FlipMiddle(filepath.Join(dir, rel)) }
	}
	remove := func(rel string) func(string, *savetest.Layout) error {
		return func(dir string, _ *savetest.Layout) error { return os.Remove(filepath.Join(dir, rel)) }
	}
	for _, tc := range []repairCase{
		{name: "deleted-store", apply: remove("chunks.pxsw")},
		{name: "flipped-header-slots", apply: damageByName(t, "flipped-header-slots")},
		{name: "flipped-page-table", apply: damageByName(t, "flipped-page-table")},
		{name: "flipped-full-record", apply: damageByName(t, "flipped-full-record")},
		{name: "flipped-body-record", apply: damageByName(t, "flipped-body-record")},
		{name: "truncated-store-record", apply: damageByName(t, "truncated-store-record")},
		{name: "deleted-data-file", apply: damageByName(t, "deleted-data-file")},
		{name: "flipped-manifest", apply: damageByName(t, "flipped-manifest")},
		{name: "deleted-manifest", apply: damageByName(t, "deleted-manifest")},
		{name: "deleted-manifest-flipped-slots", apply: damageByName(t, "deleted-manifest-flipped-slots")},
		{name: "flipped-world", apply: damageByName(t, "flipped-world"), newer: "chunks"},
		{name: "flipped-copy", apply: flip("backups/chunks-3-data-1.pxsd"), says: "backups/chunks-3.pxsw"},
		{name: "deleted-copy-data-file", apply: remove("backups/chunks-3-data-1.pxsd"), says: "backups/chunks-3.pxsw"},
		{name: "flipped-copy-header-slot", apply: func(dir string, _ *savetest.Layout) error {
			return savetest.Flip(filepath.Join(dir, "backups/chunks-3.pxsw"), 12)
		}, says: "backups/chunks-3.pxsw"},
		{name: "flipped-backup-copy", apply: flip("backups/chunks-2-data-1.pxsd"), says: "backup 2"},
		{name: "deleted-backup-copy-data-file", apply: remove("backups/chunks-2-data-1.pxsd"), says: "backup 2"},
		{name: "deleted-backup-copy", apply: remove("backups/chunks-1.pxsw"), says: "backup 1"},
		{name: "flipped-world-and-copy", apply: func(dir string, l *savetest.Layout) error {
			if err := damageByName(t, "flipped-world")(dir, l); err != nil {
				return err
			}
			return flip("backups/chunks-3-data-1.pxsd")(dir, l)
		}, newer: "chunks", says: "backups/chunks-3.pxsw"},
		{name: "deleted-store-flipped-copy", apply: func(dir string, l *savetest.Layout) error {
			if err := remove("chunks.pxsw")(dir, l); err != nil {
				return err
			}
			return flip("backups/chunks-3-data-1.pxsd")(dir, l)
		}, newer: "world"},
	} {
		t.Run(tc.name, func(t *testing.T) { repairKeepsWhatALoadKeeps(t, freshWithCopies, tc) })
	}
}

// Repair keeps what a load keeps in a save with mirrors, as the writer
// makes it today: for every damage a load meets through the mirrors (a
// lost or damaged data file, store file, players data), the repair
// restores the file from its mirror and keeps the committed generation,
// as the load does; a damaged mirror is made again from its file;
// damage no mirror holds (the world file, the manifest) costs what it
// costs a load. Afterwards check is clean and the game loads the save.
func TestRepairKeepsWhatALoadKeepsWithMirrors(t *testing.T) {
	fresh := func(t *testing.T) string { return savetest.FreshWithMirrors(t, base) }
	flip := func(rel string) func(string, *savetest.Layout) error {
		return func(dir string, _ *savetest.Layout) error { return savetest.FlipMiddle(filepath.Join(dir, rel)) }
	}
	remove := func(rel string) func(string, *savetest.Layout) error {
		return func(dir string, _ *savetest.Layout) error { return os.Remove(filepath.Join(dir, rel)) }
	}
	for _, tc := range []repairCase{
		{name: "deleted-store", apply: remove("chunks.pxsw"), says: "chunks.pxsw: restored from its mirror"},
		{name: "flipped-page-table", apply: damageByName(t, "flipped-page-table"), says: "chunks-data-1.pxsd: restored from its mirror"},
		{name: "flipped-full-record", apply: damageByName(t, "flipped-full-record"), says: "chunks-data-1.pxsd: restored from its mirror"},
		{name: "flipped-body-record", apply: damageByName(t, "flipped-body-record"), says: "chunks-data-1.pxsd: restored from its mirror"},
		{name: "truncated-store-record", apply: damageByName(t, "truncated-store-record"), says: "chunks-data-1.pxsd: restored from its mirror"},
		{name: "deleted-data-file", apply: damageByName(t, "deleted-data-file"), says: "chunks-data-1.pxsd: restored from its mirror"},
		{name: "deleted-players-data", apply: remove("players.pxpd"), says: "players.pxpd: restored from its mirror"},
		{name: "flipped-players-index", apply: flip("players-3.pxpl"), says: "players-3.pxpl: restored from its mirror"},
		{name: "flipped-world", apply: damageByName(t, "flipped-world"), newer: "chunks"},
		{name: "deleted-manifest", apply: damageByName(t, "deleted-manifest")},
		{name: "flipped-mirror", apply: flip("backups/mirror-chunks-data-1.pxsd"), says: "backups/mirror-chunks-data-1.pxsd is damaged: removed, and made again"},
	} {
		t.Run(tc.name, func(t *testing.T) { repairKeepsWhatALoadKeeps(t, fresh, tc) })
	}
}

// Check verifies the mirrors: a mirror that differs from its intact file,
// or whose records do not check out, is named; a mirror shorter than its
// file (the next commit grows it) is not damage.
func TestCheckVerifiesMirrors(t *testing.T) {
	r, err := savetool.Check(savetest.FreshWithMirrors(t, base), savetool.Options{})
	must(t, err)
	expect(t, r.OK() && r.Mirrors >= 4, "an intact save with mirrors: %v, %d mirrors checked", r.Problems, r.Mirrors)
	expect(t, r.JSON("save").Mirrors == r.Mirrors, "check --json counts %d mirrors, want %d", r.JSON("save").Mirrors, r.Mirrors)
	cut := func(rel string, keep int64) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			p := filepath.Join(dir, rel)
			st, err := os.Stat(p)
			must(t, err)
			must(t, os.Truncate(p, min(keep, st.Size()-1)))
		}
	}
	for _, tc := range []struct {
		name, file string
		damage     func(t *testing.T, dir string)
		ok         bool
	}{
		{"flipped data mirror", "backups/mirror-chunks-data-1.pxsd", func(t *testing.T, dir string) { flipMiddle(t, dir, "backups/mirror-chunks-data-1.pxsd") }, false},
		{"flipped data mirror header", "backups/mirror-chunks-data-1.pxsd", func(t *testing.T, dir string) {
			must(t, savetest.Flip(filepath.Join(dir, "backups/mirror-chunks-data-1.pxsd"), 20))
		}, false},
		{"flipped players mirror", "backups/mirror-players.pxpd", func(t *testing.T, dir string) { flipMiddle(t, dir, "backups/mirror-players.pxpd") }, false},
		{"flipped players index mirror", "backups/mirror-players-3.pxpl", func(t *testing.T, dir string) { flipMiddle(t, dir, "backups/mirror-players-3.pxpl") }, false},
		{"short data mirror", "", cut("backups/mirror-chunks-data-1.pxsd", 2000), true},
		{"short players mirror", "", cut("backups/mirror-players.pxpd", 8), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := savetest.FreshWithMirrors(t, base)
			tc.damage(t, dir)
			r, err := savetool.Check(dir, savetool.Options{})
			must(t, err)
			if tc.ok {
				expect(t, r.OK(), "a mirror shorter than its file is reported: %v", r.Problems)
				return
			}
			named := slices.ContainsFunc(r.Problems, func(p chunkstore.Problem) bool {
				return p.File == tc.file && errors.Is(p.Err, autosave.ErrCorrupt)
			})
			expect(t, named, "check does not name %s as damaged: %v", tc.file, r.Problems)
		})
	}
}

// repairCase is a damage of TestRepairKeepsWhatALoadKeeps.
type repairCase struct {
	name  string
	apply func(string, *savetest.Layout) error
	// newer is what the repair keeps of the committed generation
	// where the load takes an older one whole: "chunks" (the world
	// file is damaged, the store intact) or "world" (the store and its
	// copy are damaged, the world file intact).
	newer string
	says  string // what the repair's report says, when not empty
}

// repairKeepsWhatALoadKeeps damages a save that fresh makes as tc says,
// loads a copy of it, repairs it, and checks that the repair keeps what
// the load keeps (see TestRepairKeepsWhatALoadKeeps).
func repairKeepsWhatALoadKeeps(t *testing.T, fresh func(*testing.T) string, tc repairCase) {
	const committed = 3
	intact := fresh(t)
	intactImg := render(t, intact)
	intactContents, err := savetest.Read(intact)
	must(t, err)
	dir := fresh(t)
	must(t, tc.apply(dir, layoutOf(t, dir)))
	loaded := filepath.Join(t.TempDir(), "loaded")
	must(t, savetest.CopyDir(dir, loaded))
	wantScore, loadErr := loadsAs(t, loaded)
	wantImg, wantContents := intactImg, intactContents
	switch {
	case loadErr != nil:
		// The load refuses a directory that lost its manifest, and
		// names repair: what was committed is the measure.
		expect(t, strings.Contains(loadErr.Error(), "arksave repair"), "the load's error names no repair: %v", loadErr)
		wantScore = committed
	case tc.newer != "chunks":
		wantImg = render(t, loaded)
		wantContents, err = savetest.Read(loaded)
		must(t, err)
	}
	if tc.newer == "world" {
		wantScore = committed
	}

	rep, err := savetool.Repair(dir, savetool.RepairOptions{})
	must(t, err)
	expect(t, rep.After == nil || rep.After.OK(), "check after the repair: %v\nrepair: %+v", rep.After, rep)
	got, err := savetest.Read(dir)
	must(t, err)
	if d := savetest.Diff(got, wantContents); d != "" {
		t.Fatalf("the repaired save keeps less than a load: %s\nrepair: %+v", d, rep)
	}
	if d := savetest.Diff(wantContents, got); d != "" {
		t.Fatalf("the repaired save holds what a load does not: %s\nrepair: %+v", d, rep)
	}
	expect(t, bytes.Equal(render(t, dir).Pix, wantImg.Pix), "the repaired save renders differently from what a load gives\nrepair: %+v", rep)
	if tc.says != "" {
		said := slices.ContainsFunc(append(rep.Notes, fmt.Sprint(rep.BackupsDropped)), func(n string) bool { return strings.Contains(n, tc.says) })
		expect(t, said, "the repair does not say what became of %s: %+v", tc.says, rep)
	}
	r, err := savetool.Check(dir, savetool.Options{})
	must(t, err)
	expect(t, r.OK(), "check after the repair: %v", r.Problems)
	score, err := loadsAs(t, dir)
	must(t, err)
	expect(t, score == wantScore, "the repaired save's ECS world scores %d, the load's %d", score, wantScore)
}
