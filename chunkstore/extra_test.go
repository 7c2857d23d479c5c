package chunkstore_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/vfs"
)

// extraSource is a PixelSource with extra data.
type extraSource struct {
	pix   []uint32
	extra []byte
}

func (s extraSource) ReadPixels(dst []uint32) error { copy(dst, s.pix); return nil }
func (s extraSource) ChunkExtra() []byte            { return s.extra }

// Extra data is stored with its chunk, whatever the pixels: as generated (a
// delta of no entries), all air (not Empty), or changed; through PutChunkExtra
// or an ExtraSource. Identical records share, different extra data does
// not; a chunk without it as generated leaves the store.
func TestExtraData(t *testing.T) {
	cfg := testConfig(vfs.NewMem())
	cfg.DataFileSize = 0
	s := create(t, cfg)
	defer s.Close()
	asGen, air := chunkstore.Pos{X: 1, Y: 0}, chunkstore.Pos{X: 5, Y: 60} // air deep below the surface
	b := s.NewBatch()
	b.PutChunkExtra(asGen, generated(asGen, small), []byte("sign"))
	b.PutChunkExtra(air, make([]uint32, npix), []byte("cloud"))
	painted := uniformChunk(small, 0x0307)
	for i := range 3 {
		p := chunkstore.Pos{X: int32(i), Y: 60}
		b.PutChunkFrom(p, extraSource{painted, []byte{"AAB"[i]}}) // two alike, one not
	}
	st := commit(t, s, b)
	expect(t, st.Delta == 1 && st.Palette+st.Full == 4 && st.Empty == 0 && st.Shared == 1, "commit %+v", st)
	dst := make([]uint32, npix)
	for p, want := range map[chunkstore.Pos]string{asGen: "sign", air: "cloud", {X: 0, Y: 60}: "A", {X: 1, Y: 60}: "A", {X: 2, Y: 60}: "B"} {
		stored, extra, err := s.GetExtra(p, dst)
		must(t, err)
		expect(t, stored && string(extra) == want, "chunk %v: stored %v, extra %q, want %q", p, stored, extra, want)
	}
	must2[bool](t)(s.Get(asGen, dst))
	expect(t, slices.Equal(dst, generated(asGen, small)), "pixels of the chunk as generated")
	must2[bool](t)(s.Get(air, dst))
	expect(t, slices.Equal(dst, make([]uint32, npix)), "pixels of the air chunk")
	mustCheck(t, s)

	// Without its extra data a chunk as generated is removed.
	b = s.NewBatch()
	b.PutChunk(asGen, generated(asGen, small))
	st = commit(t, s, b)
	stored, extra, err := s.GetExtra(asGen, dst)
	expect(t, err == nil && !stored && extra == nil && st.Reverted == 1, "after clearing: %v %q %v %+v", stored, extra, err, st)

	// Too much extra data is refused at Commit.
	b = s.NewBatch()
	b.PutChunkExtra(asGen, generated(asGen, small), make([]byte, chunkstore.MaxExtra+1))
	_, err = s.Commit(b)
	expect(t, errors.Is(err, chunkstore.ErrInvalidChunk), "oversized extra data: %v", err)
	mustCheck(t, s)
}
