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
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/components"
	"github.com/arksave/arksave/internal/conv"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/snapshot"
)

// A repair of a damaged data file restores it from its mirror when the
// generation reads intact with the mirror in its place, as a load does:
// every chunk and body set as committed, none lost, the generation kept,
// and the report says what was restored.
func TestRepairRestoresFromMirror(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "save")
	cfg := chunkstore.Options{ChunkSize: 16, TileSize: 8, PixelSize: 4, Seed: 3}
	w, err := savedir.OpenWriter(dir, savedir.Options{Store: cfg})
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
		want[conv.StorePos(pos)] = slices.Clone(pix)
		c := components.NewChunk(16, conv.Pixels(pix))
		snap := &snapshot.Snapshot{World: world.Bytes(), Chunks: []snapshot.Chunk{{Pos: pos, Buf: c.Share(), Version: 1}}}
		if g == 2 {
			snap.Entities = []snapshot.EntitySet{{Pos: pos, Version: 1, Bodies: []components.PixelBody{{
				ID: 9, Width: 1, Height: 1, Pixels: []components.Pixel{components.MakePixel(4, 0, 0, components.FlagPixelBody)}, Shape: []bool{true}}}}}
		}
		expect(t, w.Submit(savedir.Job{Snap: snap, MaxBackups: 1}), "busy")
		must(t, w.Wait().Err)
	}
	must(t, w.Close()) // the mirrors of generation 2's files are grown
	d, err := savedir.OpenDirReadOnly(nil, dir)
	must(t, err)

	// The newest data file loses its second half: generation 2's records.
	m := d.Manifest()
	name := m.Chunks.Data[len(m.Chunks.Data)-1]
	newest := filepath.Join(dir, name)
	st, err := os.Stat(newest)
	must(t, err)
	must(t, os.Truncate(newest, st.Size()/2))

	dry, err := savetool.Repair(dir, savetool.RepairOptions{DryRun: true})
	must(t, err)
	expect(t, slices.Contains(dry.Notes, name+": would be restored from its mirror "+savedir.MirrorName(name)), "dry run: notes %v", dry.Notes)
	rep, err := savetool.Repair(dir, savetool.RepairOptions{})
	must(t, err)
	expect(t, slices.Contains(rep.Notes, name+": restored from its mirror "+savedir.MirrorName(name)) && strings.Contains(rep.Manifest, "kept: generation 2"),
		"repair: %s; notes %v", rep.Manifest, rep.Notes)
	expect(t, len(rep.Reverted)+len(rep.Dropped) == 0, "repair: reverted %v, dropped %v", rep.Reverted, rep.Dropped)

	d, err = savedir.OpenDirReadOnly(nil, dir)
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
	b, err := s.Bodies(chunkstore.Pos{X: 2})
	must(t, err)
	expect(t, len(b) == 1 && b[0].ID == 9, "the body of chunk (2, 0) after the repair: %v", b)
	r, err := savetool.Check(dir, savetool.Options{})
	must(t, err)
	expect(t, r.OK(), "check after the repair: %v", r.Problems)
}
