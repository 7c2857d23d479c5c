package savetool_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
)

func TestInspectDir(t *testing.T) {
	info, err := savetool.InspectDir(base, savetool.Options{})
	must(t, err)
	expect(t, len(info.Generations) == 3 && info.Generations[0].Current && info.Generations[0].Chunks == 6 &&
		info.Generations[2].Generation == 1, "generations %+v", info.Generations)
	expect(t, len(info.Stores) == 1, "stores %+v", info.Stores)
	st := info.Stores[0]
	expect(t, st.Chunks == 6 && st.Full == 2 && st.Delta == 3 && st.Empty == 1 && st.BodyBlocks == 2 && st.Bodies == 2 &&
		st.ChunkSize == savetest.ChunkSize && st.Seed == savetest.Seed && st.GeneratorVersion == 1 && st.DeadBytes > 0,
		"store %+v", st)
	expect(t, info.World != nil && info.World.Header.Entities == 2 && info.WorldError == "", "world %+v %s", info.World, info.WorldError)
	out, err := json.Marshal(info)
	must(t, err)
	expect(t, bytes.Contains(out, []byte(`"dead_bytes"`)), "json %s", out)

	dir := fresh(t)
	must(t, os.Remove(filepath.Join(dir, "manifest")))
	must(t, savetest.Flip(filepath.Join(dir, "world-3.pecs"), 100))
	info, err = savetool.InspectDir(dir, savetool.Options{})
	must(t, err)
	expect(t, info.ManifestError != "" && len(info.Generations) == 2 && info.World == nil, "without a manifest: %+v", info)

	st2, err := savetool.InspectStore(filepath.Join(base, "chunks.pxsw"), savetool.Options{})
	must(t, err)
	expect(t, st2.Chunks == 6 && st2.Generation == 3, "store file %+v", st2)
}

func TestCheckFiles(t *testing.T) {
	var dir string
	for f, off := range map[string]int64{"world-3.pecs": 200, "chunks.pxsw": 90, savetest.DataFile1: 200} {
		dir = fresh(t) // the store file and its data file are checked together
		r, err := savetool.Check(filepath.Join(dir, f), savetool.Options{})
		must(t, err)
		expect(t, r.OK(), "%s: %v", f, r.Problems)
		must(t, savetest.Flip(filepath.Join(dir, f), off))
		r, err = savetool.Check(filepath.Join(dir, f), savetool.Options{})
		must(t, err)
		expect(t, len(r.Problems) == 1 && r.Problems[0].File == f, "%s: %v", f, r.Problems)
	}
	_, err := savetool.Check(filepath.Join(dir, "manifest"), savetool.Options{})
	expect(t, err != nil, "a manifest checked as a file")
	_, err = savetool.Check(filepath.Join(dir, "nope"), savetool.Options{})
	expect(t, errors.Is(err, os.ErrNotExist), "%v", err)
}

// Compact, data file by data file (the default) and whole: the contents
// stay, the dead bytes go, the old generation's files stay while a backup
// uses them and go with it.
func TestCompact(t *testing.T) {
	for _, whole := range []bool{false, true} {
		dir := fresh(t)
		want, err := savetest.Read(dir)
		must(t, err)
		r, err := savetool.Compact(dir, savetool.CompactOptions{MaxBackups: -1, Whole: whole})
		must(t, err)
		expect(t, r.Generation == 4 && r.After < r.Before && r.DeadBefore > 0 && r.DeadAfter == 0 && r.OldKept && r.BackupsKept == 2,
			"compact (whole %v) %+v", whole, r)
		if whole {
			expect(t, r.NewStore == "chunks-4.pxsw", "whole into %s", r.NewStore)
		} else {
			expect(t, r.NewStore == "chunks.pxsw" && slices.Equal(r.Emptied, []string{savetest.DataFile1}), "file by file: %+v", r)
		}
		got, err := savetest.Read(dir)
		must(t, err)
		expect(t, savetest.Diff(got, want) == "", "after compact: %s", savetest.Diff(got, want))
		c, err := savetool.Check(dir, savetool.Options{})
		must(t, err)
		expect(t, c.OK(), "check after compact: %v", c.Problems)
		expect(t, loads(t, dir) == 3, "the compacted save does not load")

		// Without backups, the files of the old generation go.
		r, err = savetool.Compact(dir, savetool.CompactOptions{MaxBackups: 0, Whole: whole})
		must(t, err)
		expect(t, !r.OldKept && r.DirAfter < r.DirBefore, "compact without backups: %+v", r)
		gone := filepath.Join(dir, savetest.DataFile1)
		if whole {
			gone = filepath.Join(dir, "chunks.pxsw")
		}
		_, err = os.Stat(gone)
		expect(t, errors.Is(err, os.ErrNotExist), "%s is still there: %v", gone, err)
		c, err = savetool.Check(dir, savetool.Options{})
		must(t, err)
		expect(t, c.OK(), "check after the second compact: %v", c.Problems)

		// A damaged store is not compacted.
		dir = fresh(t)
		l := layoutOf(t, dir)
		h, err := l.Record(savetest.DeltaChunk, chunkstore.Delta)
		must(t, err)
		must(t, l.Flip(h.Offset+30))
		_, err = savetool.Compact(dir, savetool.CompactOptions{MaxBackups: -1, Whole: whole})
		expect(t, errors.Is(err, savetool.ErrDamaged), "compact of a damaged store: %v", err)
		for _, f := range []string{"chunks-4.pxsw", "chunks-data-2.pxsd"} {
			_, err = os.Stat(filepath.Join(dir, f))
			expect(t, errors.Is(err, os.ErrNotExist), "a refused compaction left %s: %v", f, err)
		}
	}
}

func TestExportJSON(t *testing.T) {
	var buf bytes.Buffer
	must(t, savetool.ExportJSON(&buf, base, 0, savetool.Options{}))
	var out struct {
		Generation uint64
		Manifest   struct{ Generation uint64 }
		World      struct {
			Resources map[string]map[string]any
		}
		Chunks savetool.StoredChunks
	}
	must(t, json.Unmarshal(buf.Bytes(), &out))
	expect(t, out.Generation == 3 && out.Manifest.Generation == 3, "%+v", out)
	expect(t, out.World.Resources["github.com/arksave/arksave/internal/testkit/savetest.Score"]["Points"] == 3.0, "resources %v", out.World.Resources)
	types := map[string]int{}
	bodies := 0
	for _, c := range out.Chunks.Chunks {
		types[c.Type]++
		bodies += len(c.Bodies)
		expect(t, c.Error == "", "chunk %d,%d: %s", c.X, c.Y, c.Error)
		if c.Type == "delta" {
			expect(t, c.Changed > 0 && c.Stored > 0, "delta chunk %+v", c)
		}
	}
	expect(t, types["full"] == 2 && types["delta"] == 3 && types["empty"] == 1 && bodies == 2, "chunks %v, %d bodies", types, bodies)

	buf.Reset()
	must(t, savetool.ExportJSON(&buf, base, 1, savetool.Options{}))
	expect(t, bytes.Contains(buf.Bytes(), []byte(`"generation": 1`)), "backup export")
	err := savetool.ExportJSON(&buf, base, 9, savetool.Options{})
	expect(t, err != nil, "generation 9 exported")
}

// Long operations report their progress, ending each stage complete.
func TestProgress(t *testing.T) {
	dir := fresh(t)
	must(t, os.Remove(filepath.Join(dir, "manifest")))
	var mu sync.Mutex
	last := map[string]savetool.Progress{}
	o := savetool.Options{Progress: func(p savetool.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if q, ok := last[p.Stage]; ok && p.Done < q.Done && p.Done != 0 {
			t.Errorf("stage %q went back from %d to %d", p.Stage, q.Done, p.Done)
		}
		last[p.Stage] = p
	}}
	_, err := savetool.Repair(dir, savetool.RepairOptions{Options: o})
	must(t, err)
	_, _, err = savetool.RenderDir(dir, savetool.RenderOptions{Options: o})
	must(t, err)
	_, err = savetool.Compact(dir, savetool.CompactOptions{Options: o, MaxBackups: -1})
	must(t, err)
	_, err = savetool.Check(dir, o)
	must(t, err)
	for _, stage := range []string{"checking", "reading chunks.pxsw", "writing chunks-4.pxsw", "rendering", "compacting chunks-4.pxsw", "checking save"} {
		p, ok := last[stage]
		expect(t, ok && p.Total > 0 && p.Done == p.Total, "stage %q: %+v (stages: %v)", stage, p, last)
	}
}
