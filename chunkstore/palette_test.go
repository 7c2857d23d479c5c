package chunkstore_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/vfs"
)

// Chunks of up to 256 distinct pixels (air, index 0 of every palette,
// counted) are stored with 8-bit indices, up to 65,536 with 16-bit ones,
// and read back exactly; a chunk of more distinct pixels is never a
// palette record. Index 0 is air, whether or not the chunk holds any.
func TestPaletteRoundTrip(t *testing.T) {
	const size = 512
	cfg := testConfig(vfs.NewMem())
	cfg.ChunkSize, cfg.TileSize, cfg.DataFileSize = size, 32, 0
	s := create(t, cfg)
	defer s.Close()
	n := size * size
	paint := func(distinct int) []uint32 {
		pix := make([]uint32, n)
		for i := range pix {
			pix[i] = uint32(1+(i*7919)%distinct) * 0x9E3779B1 // distinct, non-zero, every one used, scattered
		}
		return pix
	}
	cases := []struct {
		distinct int
		want     chunkstore.StorageType
		palette  int // entries of ReadRaw's palette
	}{
		{1, chunkstore.Palette, 2},
		{200, chunkstore.Palette, 201},
		{255, chunkstore.Palette, 256},
		{256, chunkstore.Palette, 257},
		{65535, chunkstore.Palette, 65536},
		{65536, chunkstore.Full, 0},
	}
	b := s.NewBatch()
	want := map[chunkstore.Pos][]uint32{}
	for i, c := range cases {
		p := chunkstore.Pos{X: int32(i), Y: 50} // deep below the surface: the generator gives stone
		want[p] = paint(c.distinct)
		b.PutChunk(p, want[p])
	}
	st := commit(t, s, b)
	expect(t, st.Palette == 5 && st.Full == 1, "commit %+v", st)
	expect(t, storetool.Tool.Stats(s).Palette == 5, "stats %+v", storetool.Tool.Stats(s))
	dst := make([]uint32, n)
	for i, c := range cases {
		p := chunkstore.Pos{X: int32(i), Y: 50}
		expect(t, must2[bool](t)(s.Get(p, dst)), "chunk %v not stored", p)
		expect(t, slices.Equal(dst, want[p]), "%d distinct: chunk differs", c.distinct)
		raw, ok, err := storetool.Tool.ReadRaw(s, p)
		must(t, err)
		expect(t, ok && raw.Type == c.want && len(raw.Palette) == c.palette && slices.Equal(raw.Pixels, want[p]),
			"%d distinct: ReadRaw %v with a palette of %d", c.distinct, raw.Type, len(raw.Palette))
		expect(t, c.want != chunkstore.Palette || len(raw.Palette) > 0 && raw.Palette[0] == 0, "%d distinct: index 0 of %v is not air", c.distinct, raw.Palette[:min(len(raw.Palette), 2)])
		info := must2[storetool.RecordInfo](t)(storetool.Tool.RecordInfo(s, raw.Handle))
		if c.want == chunkstore.Palette {
			width := 1
			if c.palette > 256 {
				width = 2
			}
			expect(t, info.Kind == storetool.RecordPalette && int(info.Raw) == 8+4*c.palette+width*n,
				"%d distinct: %+v, want %d-byte indices", c.distinct, info, width)
		}
	}
	mustCheck(t, s)
}

// A damaged palette record is reported with its section and offset, and
// its chunk regenerates.
func TestPaletteCorruptIsReported(t *testing.T) {
	mem := loadFixture(t, "v3/palette-index-out-of-range")
	s := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, ptr(fixtureConfig(mem))))
	defer s.Close()
	dst := make([]uint32, 64)
	stored, err := s.Get(chunkstore.Pos{X: 5, Y: 20}, dst)
	expect(t, !stored && errors.Is(err, chunkstore.ErrCorrupt), "stored=%v err=%v", stored, err)
	expect(t, err != nil && containsAll(err.Error(), "palette chunk", "pixel 9", "offset"), "error does not name section and offset: %v", err)
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// A store of format 2 that a game continues gets palette records and extra
// data in its newest data file, commits in format 3, and reads its old
// records as before.
func TestFormat2StoreContinued(t *testing.T) {
	for _, fixture := range []string{"v1/good.pxsw", "v2/good"} {
		mem := loadFixture(t, fixture)
		cfg := fixtureConfig(mem)
		s := must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &cfg))
		before := must2[storetool.RootInfo](t)(storetool.Tool.ParseRoot(s.Root()))
		old := make([]uint32, 64)
		must2[bool](t)(s.Get(chunkstore.Pos{X: 0, Y: 20}, old))
		pix := make([]uint32, 64)
		rng := rand.New(rand.NewPCG(2, 2))
		for i := range pix {
			pix[i] = uint32(1+rng.IntN(3)) * 0x9E3779B1 // three colours, scattered: a palette
		}
		b := s.NewBatch()
		b.PutChunkExtra(chunkstore.Pos{X: 9, Y: 20}, pix, []byte("tile entities"))
		commit(t, s, b)
		must(t, s.Close())

		s = must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &cfg))
		after := must2[storetool.RootInfo](t)(storetool.Tool.ParseRoot(s.Root()))
		expect(t, before.FormatVersion < 3 && after.FormatVersion == chunkstore.FormatVersion,
			"%s: format %d, then %d", fixture, before.FormatVersion, after.FormatVersion)
		got := make([]uint32, 64)
		stored, extra, err := s.GetExtra(chunkstore.Pos{X: 9, Y: 20}, got)
		must(t, err)
		expect(t, stored && slices.Equal(got, pix) && string(extra) == "tile entities", "%s: new chunk %v %q", fixture, stored, extra)
		must2[bool](t)(s.Get(chunkstore.Pos{X: 0, Y: 20}, got))
		expect(t, slices.Equal(got, old), "%s: an old record reads differently", fixture)
		raw, _, err := storetool.Tool.ReadRaw(s, chunkstore.Pos{X: 9, Y: 20})
		must(t, err)
		expect(t, raw.Type == chunkstore.Palette, "%s: stored as %v", fixture, raw.Type)
		mustCheck(t, s)
		s.Close()
	}
}
