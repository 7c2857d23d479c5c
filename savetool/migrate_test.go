package savetool_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/savetest"
	"github.com/arksave/arksave/savetool"
)

var update = flag.Bool("update", false, "rewrite testdata/v1-save, the save of manifest format 1")

// v1Fixture is a save directory in manifest format 1: the test save with
// every manifest written as before chunk store roots existed.
const v1Fixture = "testdata/v1-save"

// manifestV1 is the manifest of format 1, field for field as it was
// written: no chunk store root.
type manifestV1 struct {
	Format     string `json:"format"`
	Version    int    `json:"version"`
	Generation uint64 `json:"generation"`
	CreatedMS  int64  `json:"created_ms"`
	ModifiedMS int64  `json:"modified_ms"`
	World      struct {
		Name   string `json:"name"`
		Size   int64  `json:"size"`
		CRC32C uint32 `json:"crc32c"`
	} `json:"world"`
	Chunks struct {
		Name       string `json:"name"`
		Generation uint64 `json:"generation"`
	} `json:"chunks"`
	Checksum uint32 `json:"crc32c"`
}

// writeV1 rewrites the manifest at path in format 1, with its own
// CRC32-C over its encoding with a zero checksum, as format 1 did.
func writeV1(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	must(t, err)
	var m manifestV1
	must(t, json.Unmarshal(data, &m))
	m.Version, m.Checksum = 1, 0
	body, err := json.MarshalIndent(&m, "", "  ")
	must(t, err)
	m.Checksum = crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli))
	out, err := json.MarshalIndent(&m, "", "  ")
	must(t, err)
	must(t, os.WriteFile(path, append(out, '\n'), 0o644))
}

func TestUpdateV1Fixture(t *testing.T) {
	if !*update {
		t.Skip("run with -update to rewrite " + v1Fixture)
	}
	must(t, os.RemoveAll(v1Fixture))
	must(t, savetest.Build(v1Fixture))
	manifests, err := filepath.Glob(filepath.Join(v1Fixture, "backups", "manifest-*"))
	must(t, err)
	for _, m := range append(manifests, filepath.Join(v1Fixture, "manifest")) {
		writeV1(t, m)
	}
}

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
	expect(t, rep.From == 1 && rep.To == autosave.ManifestVersion && rep.Generation == 4, "migrate: %+v", rep)
	slices.Sort(rep.BackupsUpgraded)
	expect(t, slices.Equal(rep.BackupsUpgraded, []uint64{1, 2, 3}), "backups upgraded: %v", rep.BackupsUpgraded)

	d, err := autosave.OpenDirReadOnly(nil, dir)
	must(t, err)
	expect(t, d.Manifest().Version == autosave.ManifestVersion && len(d.Manifest().Chunks.Root) == 64, "manifest %+v", d.Manifest())
	for _, b := range d.Backups() {
		expect(t, b.Version == autosave.ManifestVersion && len(b.Chunks.Root) == 64, "backup %d: %+v", b.Generation, b)
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
	d, err := autosave.OpenDirReadOnly(nil, dir)
	must(t, err)
	expect(t, d.Manifest().Version == autosave.ManifestVersion, "repaired manifest is format %d", d.Manifest().Version)
	got, err := savetest.Read(dir)
	must(t, err)
	expect(t, savetest.Diff(got, want) == "", "chunks: %s", savetest.Diff(got, want))
	expect(t, loads(t, dir) == 2, "the repaired save does not load the backup's world")
}
