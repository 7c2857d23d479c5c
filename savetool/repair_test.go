package savetool_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savetest"
	"github.com/arksave/arksave/savetool"
)

// damageCase is one way a save gets damaged, named after its defect.
type damageCase struct {
	name   string
	damage func(t *testing.T, dir string, l *layout)
	// files that check must name
	files []string
	// chunks (and their bodies) the repair may lose or revert; all others
	// must read back exactly
	lost []chunkstore.Pos
	// the score of the ECS world the repaired save loads (3: the committed
	// one; 2: the backup's)
	score int
	opts  savetool.RepairOptions
	// backups that must survive the repair
	backups int
}

func file(name string) func(dir string) string {
	return func(dir string) string { return filepath.Join(dir, name) }
}

var damageCases = []damageCase{
	{name: "flipped-manifest", files: []string{"manifest"}, score: 3, backups: 2,
		damage: func(t *testing.T, dir string, l *layout) { flip(t, file("manifest")(dir), 40) }},
	{name: "deleted-manifest", files: []string{"manifest"}, score: 3, backups: 2,
		damage: func(t *testing.T, dir string, l *layout) { must(t, os.Remove(file("manifest")(dir))) }},
	{name: "truncated-manifest", files: []string{"manifest"}, score: 3, backups: 2,
		damage: func(t *testing.T, dir string, l *layout) { truncate(t, file("manifest")(dir), 50) }},
	{name: "flipped-world", files: []string{"world-3.pecs"}, score: 2, backups: 2,
		damage: func(t *testing.T, dir string, l *layout) { flip(t, file("world-3.pecs")(dir), 100) }},
	{name: "deleted-world", files: []string{"world-3.pecs"}, score: 2, backups: 2,
		damage: func(t *testing.T, dir string, l *layout) { must(t, os.Remove(file("world-3.pecs")(dir))) }},
	{name: "truncated-world", files: []string{"world-3.pecs"}, score: 2, backups: 2,
		damage: func(t *testing.T, dir string, l *layout) { truncate(t, file("world-3.pecs")(dir), 300) }},
	{name: "flipped-header-slot-a", files: []string{"chunks.pxsw"}, score: 3, backups: 2,
		damage: func(t *testing.T, dir string, l *layout) { flip(t, l.store, 12) }},
	{name: "flipped-header-slots", files: []string{"chunks.pxsw"}, score: 3, backups: 2,
		damage: func(t *testing.T, dir string, l *layout) { flip(t, l.store, 12); flip(t, l.store, 64+20) }},
	{name: "flipped-page-table", files: []string{"chunks.pxsw"}, score: 3, backups: 2,
		damage: func(t *testing.T, dir string, l *layout) { flip(t, l.store, l.table+40) }},
	{name: "flipped-full-record", files: []string{"chunks.pxsw"}, score: 3, backups: 2, lost: []chunkstore.Pos{fullChunk},
		damage: func(t *testing.T, dir string, l *layout) {
			flip(t, l.store, l.record(t, fullChunk, chunkstore.Full).Offset+40)
		}},
	{name: "flipped-delta-record", files: []string{"chunks.pxsw"}, score: 3, backups: 2, lost: []chunkstore.Pos{deltaChunk},
		damage: func(t *testing.T, dir string, l *layout) {
			flip(t, l.store, l.record(t, deltaChunk, chunkstore.Delta).Offset+30)
		}},
	{name: "flipped-record-header", files: []string{"chunks.pxsw"}, score: 3, backups: 2, lost: []chunkstore.Pos{deltaChunk},
		damage: func(t *testing.T, dir string, l *layout) {
			flip(t, l.store, l.record(t, deltaChunk, chunkstore.Delta).Offset+2)
		}},
	{name: "flipped-body-record", files: []string{"chunks.pxsw"}, score: 3, lost: []chunkstore.Pos{deltaChunk},
		damage: func(t *testing.T, dir string, l *layout) {
			flip(t, l.store, l.record(t, deltaChunk, chunkstore.BodyBlock).Offset+70)
		}},
	// An older record, still used by the backups: they lose it, the
	// committed generation does not.
	{name: "flipped-backup-record", files: []string{"chunks.pxsw"}, score: 3,
		damage: func(t *testing.T, dir string, l *layout) {
			old := l.backup[1][fmt.Sprintf("%v/%v", chunkstore.Pos{}, chunkstore.Delta)]
			expect(t, old != l.record(t, chunkstore.Pos{}, chunkstore.Delta), "chunk (0,0) was not rewritten since generation 1")
			flip(t, l.store, old.Offset+30)
		}},
	{name: "truncated-store-table", files: []string{"chunks.pxsw"}, score: 3, backups: 2,
		damage: func(t *testing.T, dir string, l *layout) { truncate(t, l.store, l.size-30) }},
	{name: "truncated-store-record", files: []string{"chunks.pxsw"}, score: 3, lost: []chunkstore.Pos{fullChunk, deltaChunk},
		damage: func(t *testing.T, dir string, l *layout) {
			truncate(t, l.store, l.record(t, fullChunk, chunkstore.Full).Offset+50)
		}},
	{name: "flipped-backup-world", files: []string{"backups/world-1.pecs"}, score: 3, backups: 1,
		damage: func(t *testing.T, dir string, l *layout) { flip(t, file("backups/world-1.pecs")(dir), 90) }},
	{name: "flipped-backup-manifest", files: []string{"backups/manifest-2"}, score: 3, backups: 1,
		damage: func(t *testing.T, dir string, l *layout) { flip(t, file("backups/manifest-2")(dir), 60) }},
	{name: "deleted-manifest-and-world", files: []string{"manifest"}, score: 2, backups: 2,
		damage: func(t *testing.T, dir string, l *layout) {
			must(t, os.Remove(file("manifest")(dir)))
			must(t, os.Remove(file("world-3.pecs")(dir)))
		}},
	{name: "deleted-manifest-flipped-slots", files: []string{"manifest", "chunks.pxsw"}, score: 3, backups: 2,
		damage: func(t *testing.T, dir string, l *layout) {
			must(t, os.Remove(file("manifest")(dir)))
			flip(t, l.store, 12)
			flip(t, l.store, 64+20)
		}},
}

// Every damage is found by check, and repair recovers everything else: the
// undamaged chunks and bodies read back exactly, check passes afterwards,
// and the game loads the directory.
func TestRepairEveryDamage(t *testing.T) {
	want, err := savetest.Read(base)
	must(t, err)
	for _, tc := range damageCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := fresh(t)
			tc.damage(t, dir, layoutOf(t, dir))

			r, err := savetool.Check(dir, savetool.Options{})
			must(t, err)
			expect(t, !r.OK(), "check found nothing")
			for _, f := range tc.files {
				found := false
				for _, p := range r.Problems {
					found = found || p.File == f
				}
				expect(t, found, "check does not name %s: %v", f, r.Problems)
			}

			dry, err := savetool.Repair(dir, savetool.RepairOptions{DryRun: true})
			must(t, err)
			again, err := savetool.Check(dir, savetool.Options{})
			must(t, err)
			expect(t, len(again.Problems) == len(r.Problems), "a dry run changed the directory: %v", again.Problems)

			rep, err := savetool.Repair(dir, tc.opts)
			must(t, err)
			expect(t, rep.After != nil && rep.After.OK(), "check after repair: %v\nrepair: %+v", rep.After, rep)
			expect(t, len(dry.Dropped) == len(rep.Dropped), "dry run drops %v, repair %v", dry.Dropped, rep.Dropped)
			for _, l := range append(rep.Dropped, rep.Reverted...) {
				expect(t, slices.Contains(tc.lost, l.Pos), "repair lost %v, not expected", l)
			}
			got, err := savetest.Read(dir)
			must(t, err)
			if d := savetest.Diff(got, want, tc.lost...); d != "" {
				t.Fatalf("after repair: %s\nrepair: %+v", d, rep)
			}
			expect(t, len(rep.BackupsKept)+len(rep.BackupsRewritten) >= tc.backups, "backups kept %v, rewritten %v, dropped %v",
				rep.BackupsKept, rep.BackupsRewritten, rep.BackupsDropped)
			expect(t, loads(t, dir) == tc.score, "the repaired save's ECS world is not generation %d's", tc.score)
			r, err = savetool.Check(dir, savetool.Options{})
			must(t, err)
			expect(t, r.OK(), "check after the game loaded the repaired save: %v", r.Problems)
		})
	}
}

func TestRepairNothingToDo(t *testing.T) {
	dir := fresh(t)
	rep, err := savetool.Repair(dir, savetool.RepairOptions{})
	must(t, err)
	expect(t, rep.NothingToDo && rep.Generation == 0, "repair of an intact save: %+v", rep)
}

// Without a chunk store, repair stops unless told to keep the world alone.
func TestRepairWithoutChunkStore(t *testing.T) {
	dir := fresh(t)
	must(t, os.Remove(filepath.Join(dir, "chunks.pxsw")))
	_, err := savetool.Repair(dir, savetool.RepairOptions{})
	expect(t, errors.Is(err, savetool.ErrNoChunks) && strings.Contains(err.Error(), "--empty-chunks"), "%v", err)
	rep, err := savetool.Repair(dir, savetool.RepairOptions{EmptyChunks: true})
	must(t, err)
	expect(t, rep.After.OK() && rep.Kept.Chunks == 0, "%+v", rep)
	expect(t, loads(t, dir) == 3, "world lost")
}

// Without any intact world file, repair stops unless told to start the
// entities anew.
func TestRepairWithoutWorld(t *testing.T) {
	dir := fresh(t)
	for _, f := range []string{"world-3.pecs", "backups/world-2.pecs", "backups/world-1.pecs"} {
		flip(t, filepath.Join(dir, f), 70)
	}
	_, err := savetool.Repair(dir, savetool.RepairOptions{})
	expect(t, errors.Is(err, savetool.ErrNoWorld) && strings.Contains(err.Error(), "--empty-world"), "%v", err)
	rep, err := savetool.Repair(dir, savetool.RepairOptions{EmptyWorld: true})
	must(t, err)
	expect(t, rep.After.OK() && rep.World.Empty && len(rep.BackupsDropped) == 2, "%+v", rep)
	want, err := savetest.Read(base)
	must(t, err)
	got, err := savetest.Read(dir)
	must(t, err)
	expect(t, savetest.Diff(got, want) == "", "chunks lost with the world: %s", savetest.Diff(got, want))
	g, err := savetest.Open(dir, true)
	must(t, err)
	must(t, g.Close())
}

// Both header slots damaged, the manifest lost and no backup: the game's
// constants must be given.
func TestRepairNeedsConstants(t *testing.T) {
	dir := fresh(t)
	l := layoutOf(t, dir)
	must(t, os.Remove(filepath.Join(dir, "manifest")))
	must(t, os.RemoveAll(filepath.Join(dir, "backups")))
	flip(t, l.store, 12)
	flip(t, l.store, 64+20)
	_, err := savetool.Repair(dir, savetool.RepairOptions{})
	expect(t, errors.Is(err, savetool.ErrUnknownConfig), "%v", err)
	rep, err := savetool.Repair(dir, savetool.RepairOptions{ChunkSize: savetest.ChunkSize, TileSize: savetest.TileSize,
		Seed: savetest.Seed, Generator: savetool.VersionOnly(savetest.Generator.Version())})
	must(t, err)
	expect(t, rep.After.OK() && rep.Store.Rebuilt, "%+v", rep)
	want, err := savetest.Read(base)
	must(t, err)
	got, err := savetest.Read(dir)
	must(t, err)
	expect(t, savetest.Diff(got, want) == "", "after a headerless repair: %s", savetest.Diff(got, want))
	expect(t, loads(t, dir) == 3, "world")
}
