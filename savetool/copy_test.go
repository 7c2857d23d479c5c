package savetool_test

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/savetool"
	"github.com/arksave/arksave/snapshot"
)

// A repair takes the chunks a damaged store lost from the copy of the
// committed generation's store that the writer made for its backup, and
// names what it took from there and the body sets that may be lost.
func TestRepairTakesTheGenerationsCopy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "save")
	cfg := chunkstore.Options{ChunkSize: 16, TileSize: 8, PixelSize: 4, Seed: 3}
	w, err := autosave.OpenWriter(dir, autosave.Options{Store: cfg})
	must(t, err)
	var world bytes.Buffer
	must(t, archetype.Encode(&world, ecs.NewWorld()))
	rng := rand.New(rand.NewPCG(2, 2))
	want := map[chunkstore.Pos][]uint32{}
	for g := 1; g <= 2; g++ {
		pix := make([]uint32, 16*16)
		for i := range pix {
			pix[i] = uint32(components.MakePixel(uint8(1+rng.IntN(9)), uint8(rng.IntN(256)), 0, 0))
		}
		pos := components.ChunkPos{X: int32(g)}
		want[snapshot.StorePos(pos)] = slices.Clone(pix)
		c := components.NewChunkFrom(16, snapshot.Pixels(pix))
		snap := &snapshot.Snapshot{World: world.Bytes(), Chunks: []snapshot.Chunk{{Pos: pos, Buf: c.Share(), Version: 1}}}
		if g == 2 {
			snap.Entities = []snapshot.EntitySet{{Pos: pos, Version: 1, Bodies: []components.PixelBody{{
				ID: 9, Width: 1, Height: 1, Pixels: []components.Pixel{components.MakePixel(4, 0, 0, components.FlagPixelBody)}, Shape: []bool{true}}}}}
		}
		expect(t, w.Submit(autosave.Job{Snap: snap, MaxBackups: 1, BackupCopyEvery: 1}), "busy")
		must(t, w.Wait().Err)
	}
	must(t, w.Close()) // the copy of generation 2's store is made
	d, err := autosave.OpenDirReadOnly(nil, dir)
	must(t, err)
	expect(t, d.PendingCopy() != nil && d.PendingCopy().Name == autosave.CopiedChunksName(2), "no copy of generation 2: %v", d.PendingCopy())

	// The newest data file loses its second half: generation 2's records.
	m := d.Manifest()
	newest := filepath.Join(dir, m.Chunks.Data[len(m.Chunks.Data)-1])
	st, err := os.Stat(newest)
	must(t, err)
	must(t, os.Truncate(newest, st.Size()/2))

	rep, err := savetool.Repair(dir, savetool.RepairOptions{})
	must(t, err)
	took, bodies := false, false
	for _, l := range append(rep.Reverted, rep.Dropped...) {
		if l.Pos == (chunkstore.Pos{X: 2}) && !l.Bodies && strings.Contains(l.Reason, "the copy of generation 2's") {
			took = true
		}
		if l.Pos == (chunkstore.Pos{X: 2}) && l.Bodies {
			bodies = true
		}
	}
	expect(t, took && bodies, "repair: reverted %v, dropped %v", rep.Reverted, rep.Dropped)

	d, err = autosave.OpenDirReadOnly(nil, dir)
	must(t, err)
	m = d.Manifest()
	p, err := d.File(m.Chunks.Name)
	must(t, err)
	o := cfg
	o.ReadOnly, o.Root = true, m.Chunks.Root
	s, err := chunkstore.Open(p, &o)
	must(t, err)
	defer s.Close()
	got := make([]uint32, 16*16)
	for pos, pix := range want {
		ok, err := s.Get(pos, got)
		must(t, err)
		expect(t, ok && slices.Equal(got, pix), "chunk %v after the repair differs from the one saved", pos)
	}
	r, err := savetool.Check(dir, savetool.Options{})
	must(t, err)
	expect(t, r.OK(), "check after the repair: %v", r.Problems)
}
