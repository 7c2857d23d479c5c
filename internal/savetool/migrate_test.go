package savetool_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
)

// v1Fixture is a save directory of manifest format 1 and chunk store
// format 1 (a single store file), written by the code of those formats:
// the test save with every manifest as before chunk store roots existed.
// It is not rewritten: it holds this version to reading what earlier
// releases wrote.
const v1Fixture = "testdata/v1-save"

// The committed fixture is in format 1: the library reads it, migrate
// upgrades a copy to the current format as a new generation, and the game
// then loads it with the same chunks.
func TestMigrateV1Fixture(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "save")
	must(t, savetest.CopyDir(v1Fixture, dir))
	data, err := os.ReadFile(filepath.Join(dir, "manifest"))
	must(t, err)
	expect(t, bytes.Contains(data, []byte(`"version": 1,`)) && !bytes.Contains(data, []byte(`"root"`)), "the fixture is not format 1:\n%s", data)

	r, err := savetool.Check(dir, savetool.Options{})
	must(t, err)
	expect(t, r.OK() && r.Manifest.Version == 1, "check of the format-1 save: %v", r.Problems)
	want, err := savetest.Read(dir)
	must(t, err)

	rep, err := savetool.Migrate(dir, savetool.Options{})
	must(t, err)
	expect(t, rep.From == 1 && rep.To == savedir.ManifestVersion && rep.Generation == 4, "migrate: %+v", rep)
	slices.Sort(rep.BackupsUpgraded)
	expect(t, slices.Equal(rep.BackupsUpgraded, []uint64{1, 2, 3}), "backups upgraded: %v", rep.BackupsUpgraded)

	d, err := savedir.OpenDirReadOnly(nil, dir)
	must(t, err)
	expect(t, d.Manifest().Version == savedir.ManifestVersion && len(d.Manifest().Chunks.Root) == 64, "manifest %+v", d.Manifest())
	for _, b := range d.Backups() {
		expect(t, b.Version == savedir.ManifestVersion && len(b.Chunks.Root) == 64, "backup %d: %+v", b.Generation, b)
	}
	r, err = savetool.Check(dir, savetool.Options{})
	must(t, err)
	expect(t, r.OK(), "check after migrate: %v", r.Problems)
	got, err := savetest.Read(dir)
	must(t, err)
	expect(t, savetest.Diff(got, want) == "", "chunks after migrate: %s", savetest.Diff(got, want))
	expect(t, loads(t, dir) == 3, "the migrated save does not load generation 3's world")

	// Nothing left to do; every backup restores.
	rep, err = savetool.Migrate(dir, savetool.Options{})
	must(t, err)
	expect(t, rep.NothingToDo, "second migrate: %+v", rep)
	_, err = savetool.Restore(dir, 1, savetool.Options{})
	must(t, err)
	expect(t, loads(t, dir) == 1, "restored generation 1")
}

// A damaged save is not migrated: repair writes the current format.
func TestMigrateRefusesDamage(t *testing.T) {
	dir := fresh(t)
	must(t, savetest.Flip(filepath.Join(dir, "world-3.pecs"), 100))
	_, err := savetool.Migrate(dir, savetool.Options{})
	expect(t, err != nil && strings.Contains(err.Error(), "arksave repair"), "%v", err)
}

// A damaged save of format 1 is repaired into the current format; its
// backups, found through the roots their store generations wrote, survive.
func TestRepairV1Save(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "save")
	must(t, savetest.CopyDir(v1Fixture, dir))
	want, err := savetest.Read(dir)
	must(t, err)
	must(t, savetest.Flip(filepath.Join(dir, "world-3.pecs"), 100))
	must(t, savetest.Flip(filepath.Join(dir, "chunks.pxsw"), 12)) // header slot A
	rep, err := savetool.Repair(dir, savetool.RepairOptions{})
	must(t, err)
	expect(t, rep.After.OK() && len(rep.BackupsRewritten) == 2, "repair: %+v", rep)
	d, err := savedir.OpenDirReadOnly(nil, dir)
	must(t, err)
	expect(t, d.Manifest().Version == savedir.ManifestVersion, "repaired manifest is format %d", d.Manifest().Version)
	got, err := savetest.Read(dir)
	must(t, err)
	expect(t, savetest.Diff(got, want) == "", "chunks: %s", savetest.Diff(got, want))
	expect(t, loads(t, dir) == 2, "the repaired save does not load the backup's world")
}
