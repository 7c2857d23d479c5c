package savetool_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
)

// Every damage is found by check, and repair recovers everything else: the
// undamaged chunks and bodies read back exactly, check passes afterwards,
// and the game loads the directory.
func TestRepairEveryDamage(t *testing.T) {
	want, err := savetest.Read(base)
	must(t, err)
	for _, tc := range savetest.Damages {
		t.Run(tc.Name, func(t *testing.T) {
			dir := fresh(t)
			must(t, tc.Apply(dir, layoutOf(t, dir)))

			r, err := savetool.Check(dir, savetool.Options{})
			must(t, err)
			expect(t, !r.OK(), "check found nothing")
			for _, p := range r.Problems {
				if tc.Is != nil {
					expect(t, errors.Is(p.Err, tc.Is), "%v does not match %v", p, tc.Is)
				} else {
					expect(t, errors.Is(p.Err, autosave.ErrCorrupt) || errors.Is(p.Err, chunkstore.ErrCorrupt), "%v is not damage", p)
				}
			}
			for _, f := range tc.Files {
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

			rep, err := savetool.Repair(dir, savetool.RepairOptions{})
			must(t, err)
			expect(t, rep.After != nil && rep.After.OK(), "check after repair: %v\nrepair: %+v", rep.After, rep)
			expect(t, len(dry.Dropped) == len(rep.Dropped), "dry run drops %v, repair %v", dry.Dropped, rep.Dropped)
			lost := tc.LostFrom(want)
			for _, l := range append(rep.Dropped, rep.Reverted...) {
				expect(t, slices.Contains(lost, l.Pos), "repair lost %v, not expected", l)
			}
			got, err := savetest.Read(dir)
			must(t, err)
			if d := savetest.Diff(got, want, lost...); d != "" {
				t.Fatalf("after repair: %s\nrepair: %+v", d, rep)
			}
			expect(t, len(rep.BackupsKept)+len(rep.BackupsRewritten) >= tc.Backups, "backups kept %v, rewritten %v, dropped %v",
				rep.BackupsKept, rep.BackupsRewritten, rep.BackupsDropped)
			expect(t, loads(t, dir) == tc.Score, "the repaired save's ECS world is not generation %d's", tc.Score)
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
		must(t, savetest.Flip(filepath.Join(dir, f), 70))
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
	must(t, savetest.Flip(l.Store, 12))
	must(t, savetest.Flip(l.Store, 64+20))
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

// After the current chunk store (a compacted copy) is truncated, the
// chunks it lost come back from the newest backup whose store holds them,
// and the report says which backup; every chunk reads as saved.
func TestRepairTakesLostChunksFromBackup(t *testing.T) {
	dir := fresh(t)
	want, err := savetest.Read(dir)
	must(t, err)
	_, err = savetool.Compact(dir, savetool.CompactOptions{MaxBackups: -1, Whole: true})
	must(t, err)
	l := layoutOf(t, dir)
	expect(t, strings.HasSuffix(l.Store, "chunks-4.pxsw"), "compacted into %s", l.Store)
	// Cut the compacted store's data file inside its third record: the
	// chunks after it are gone from it, the backups' store (chunks.pxsw)
	// still has them.
	var offsets []int64
	for _, h := range l.Records {
		if !h.IsZero() {
			offsets = append(offsets, h.Offset)
		}
	}
	slices.Sort(offsets)
	cut := offsets[2] + 10
	var lost []chunkstore.Pos
	for key, h := range l.Records {
		if !h.IsZero() && h.Offset >= offsets[2] && !strings.HasSuffix(key, "/"+chunkstore.BodyBlock.String()) {
			for p := range want.Chunks {
				if strings.HasPrefix(key, p.String()+"/") {
					lost = append(lost, p)
				}
			}
		}
	}
	expect(t, len(lost) >= 2, "only %v lost", lost)
	path, at := l.Locate(cut)
	must(t, os.Truncate(path, at))

	rep, err := savetool.Repair(dir, savetool.RepairOptions{})
	must(t, err)
	expect(t, rep.After.OK(), "check after the repair: %v", rep.After.Problems)
	for _, p := range lost {
		found := slices.ContainsFunc(rep.Reverted, func(l savetool.Loss) bool {
			return l.Pos == p && !l.Bodies && strings.Contains(l.Reason, "backup 3's (in chunks.pxsw) version is used")
		})
		expect(t, found, "chunk %v is not reported as taken from backup 3: %v", p, rep.Reverted)
	}
	got, err := savetest.Read(dir)
	must(t, err)
	for p, w := range want.Chunks {
		expect(t, slices.Equal(got.Chunks[p], w), "chunk %v reads differently after the repair", p)
	}
	expect(t, loads(t, dir) == 3, "the repaired save does not load the world")
}
