package chunkstore_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/vfs"
)

// source supplies pixels to PutChunkFrom and counts its reads.
type source struct {
	pix   []uint32
	err   error
	reads atomic.Int32
}

func (s *source) ReadPixels(dst []uint32) error {
	s.reads.Add(1)
	if s.err != nil {
		return s.err
	}
	if len(dst) != len(s.pix) {
		return chunkstore.ErrInvalidChunk
	}
	copy(dst, s.pix)
	return nil
}

// A chunk put from a source is read once, while Commit compresses, and
// stored as if put with its pixels; a failing source fails the commit
// naming the chunk, and the store stays at its generation.
func TestPutChunkFrom(t *testing.T) {
	s := create(t, testConfig(vfs.NewMem()))
	defer s.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	srcs := map[chunkstore.Pos]*source{}
	b := s.NewBatch()
	for x := range int32(12) {
		pos := chunkstore.Pos{X: x, Y: 1}
		srcs[pos] = &source{pix: deltaChunk(pos, small, 1+int(x)*20, rng)}
		b.PutChunkFrom(pos, srcs[pos])
	}
	b.PutChunk(chunkstore.Pos{Y: 2}, randomChunk(small, rng)) // mixed with pixels put directly
	must2[chunkstore.CommitStats](t)(s.Commit(b))
	got := make([]uint32, npix)
	for pos, src := range srcs {
		expect(t, src.reads.Load() == 1, "chunk %v read %d times", pos, src.reads.Load())
		_, err := s.Get(pos, got)
		must(t, err)
		expect(t, slices.Equal(got, src.pix), "chunk %v differs from its source's pixels", pos)
	}
	mustCheck(t, s)

	broken := errors.New("the pixels are gone")
	b = s.NewBatch()
	b.PutChunkFrom(chunkstore.Pos{X: 3, Y: 4}, &source{err: broken})
	_, err := s.Commit(b)
	expect(t, errors.Is(err, broken), "a failing source: %v", err)
	expect(t, s.Generation() == 1, "a failed commit moved the store to generation %d", s.Generation())
	b = s.NewBatch()
	b.PutChunkFrom(chunkstore.Pos{X: 3, Y: 4}, &source{pix: make([]uint32, npix-1)})
	_, err = s.Commit(b)
	expect(t, errors.Is(err, chunkstore.ErrInvalidChunk), "a source of the wrong size: %v", err)
	mustCheck(t, s)
}
