package chunkstore_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/testkit"
	"github.com/arksave/arksave/internal/testkit/terrain"
	"github.com/arksave/arksave/vfs"
)

// Small chunks keep the exhaustive tests fast.
const (
	small = 16
	npix  = small * small
)

var expect, must = testkit.Expect, testkit.Must

func must2[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		must(t, err)
		return v
	}
}

// mustCheck runs the checker: every test that changes a store ends with it.
func mustCheck(t testing.TB, s *chunkstore.Store) {
	t.Helper()
	if r := s.Check(); !r.OK() {
		t.Fatalf("check: %s", r)
	}
}

var gen = terrain.Generator{Surface: 8}

// testConfig keeps data files small (2 KiB: a Full record of a random
// chunk is 1 KiB), so that the tests of every other feature cross data
// files too.
func testConfig(fsys vfs.FS) chunkstore.Options {
	return chunkstore.Options{
		ChunkSize: small, TileSize: 4, PixelSize: 4, Seed: 7,
		Generator: gen, FS: fsys, Workers: 2, DataFileSize: 2 << 10,
	}
}

// locate returns the file of the store at path that holds store offset off
// (see storetool.Handle) and the offset within it.
func locate(path string, off int64) (string, int64) {
	h := storetool.Handle{Offset: off}
	if h.File() == 0 {
		return path, off
	}
	return storetool.Tool.DataFileName(path, h.File()), h.FileOffset()
}

func generated(p chunkstore.Pos, size int) []uint32 {
	dst := make([]uint32, size*size)
	gen.Generate(p.X, p.Y, 7, dst)
	return dst
}

// deltaChunk is the generated chunk with n pixels changed.
func deltaChunk(p chunkstore.Pos, size, n int, rng *rand.Rand) []uint32 {
	pix := generated(p, size)
	for _, i := range rng.Perm(len(pix))[:n] {
		pix[i] = terrain.Water | uint32(rng.IntN(4))<<8
	}
	return pix
}

func randomChunk(size int, rng *rand.Rand) []uint32 {
	pix := make([]uint32, size*size)
	for i := range pix {
		pix[i] = rng.Uint32()
	}
	return pix
}

func uniformChunk(size int, p uint32) []uint32 {
	pix := make([]uint32, size*size)
	for i := range pix {
		pix[i] = p
	}
	return pix
}

// model is what a store should hold: chunk contents and bodies.
type model struct {
	chunks map[chunkstore.Pos][]uint32
	bodies map[chunkstore.Pos][]chunkstore.Body
}

func newModel() *model {
	return &model{chunks: map[chunkstore.Pos][]uint32{}, bodies: map[chunkstore.Pos][]chunkstore.Body{}}
}

func (m *model) clone() *model {
	c := newModel()
	for k, v := range m.chunks {
		c.chunks[k] = slices.Clone(v)
	}
	for k, v := range m.bodies {
		c.bodies[k] = slices.Clone(v)
	}
	return c
}

// apply records a batch's effect, under mask.
func (m *model) putChunk(b *chunkstore.Batch, p chunkstore.Pos, pix []uint32) {
	b.PutChunk(p, pix)
	m.chunks[p] = slices.Clone(pix)
}

func (m *model) deleteChunk(b *chunkstore.Batch, p chunkstore.Pos) {
	b.DeleteChunk(p)
	delete(m.chunks, p)
}

func (m *model) putBodies(b *chunkstore.Batch, p chunkstore.Pos, bodies []chunkstore.Body) {
	b.PutEntities(p, chunkstore.EntityBlock{Bodies: bodies})
	var kept []chunkstore.Body
	for _, bd := range bodies {
		if !bd.IsEmpty() {
			kept = append(kept, bd)
		}
	}
	if len(kept) == 0 {
		delete(m.bodies, p)
	} else {
		m.bodies[p] = kept
	}
}

// diff compares the store with the model over every position either
// knows, and returns a description of the first difference, or "".
func (m *model) diff(s *chunkstore.Store, size int, mask uint32) string {
	seen := map[chunkstore.Pos]bool{}
	for p := range m.chunks {
		seen[p] = true
	}
	for p := range m.bodies {
		seen[p] = true
	}
	s.Entries(func(e chunkstore.Entry) bool {
		seen[e.Pos] = true
		return true
	})
	dst := make([]uint32, size*size)
	for p := range seen {
		if _, err := s.Get(p, dst); err != nil {
			return fmt.Sprintf("chunk %v: %v", p, err)
		}
		want, ok := m.chunks[p]
		if !ok {
			want = generated(p, size)
		}
		for i := range dst {
			if dst[i] != want[i]&mask {
				return fmt.Sprintf("chunk %v pixel %d: %#x, want %#x", p, i, dst[i], want[i]&mask)
			}
		}
		bodies, err := s.Bodies(p)
		if err != nil {
			return fmt.Sprintf("bodies %v: %v", p, err)
		}
		if d := diffBodies(bodies, m.bodies[p], mask); d != "" {
			return fmt.Sprintf("bodies %v: %s", p, d)
		}
	}
	return ""
}

func diffBodies(got, want []chunkstore.Body, mask uint32) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d bodies, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		wp := make([]uint32, len(w.Pixels))
		for j, p := range w.Pixels {
			wp[j] = p & mask
		}
		switch {
		case g.ID != w.ID || g.X != w.X || g.Y != w.Y || g.Rotation != w.Rotation || g.VX != w.VX || g.VY != w.VY ||
			g.AngularVelocity != w.AngularVelocity || g.Width != w.Width || g.Height != w.Height ||
			g.OriginX != w.OriginX || g.OriginY != w.OriginY:
			return fmt.Sprintf("body %d: header %+v, want %+v", i, g, w)
		case !slices.Equal(g.Pixels, wp):
			return fmt.Sprintf("body %d: pixels differ", i)
		case !slices.Equal(g.Shape, w.Shape):
			return fmt.Sprintf("body %d: shape differs", i)
		case !slices.Equal(g.Extension, w.Extension) && (len(g.Extension)+len(w.Extension) > 0):
			return fmt.Sprintf("body %d: extension %q, want %q", i, g.Extension, w.Extension)
		}
	}
	return ""
}

// body makes a pixel body of w x h with a ragged shape.
func body(id uint64, w, h uint32, rng *rand.Rand) chunkstore.Body {
	b := chunkstore.Body{
		ID: id, X: rng.Float32() * 100, Y: rng.Float32() * 100, Rotation: 0.5, VX: 1, VY: -2, AngularVelocity: 0.25,
		Width: w, Height: h, OriginX: -int32(w / 2), OriginY: -int32(h / 2),
		Pixels: make([]uint32, w*h), Shape: make([]bool, w*h),
	}
	for i := range b.Pixels {
		b.Pixels[i] = rng.Uint32()
		b.Shape[i] = rng.IntN(3) != 0
	}
	b.Shape[0] = true
	return b
}

// atGeneration returns o opening generation gen.
func atGeneration(o chunkstore.Options, gen uint64) *chunkstore.Options {
	o.Generation = gen
	return &o
}

// atRoot returns o opening the generation root describes.
func atRoot(o chunkstore.Options, root []byte) *chunkstore.Options {
	o.Root = root
	return &o
}

// forRepair returns o opening for repair, at root when it is not nil.
func forRepair(o chunkstore.Options, root []byte) *chunkstore.Options {
	o.Repair, o.Root = true, root
	return &o
}

// openForRepair opens path for repair and returns what opening skipped.
func openForRepair(path string, o chunkstore.Options, root []byte) (*chunkstore.Store, chunkstore.Report, error) {
	s, err := chunkstore.Open(path, forRepair(o, root))
	if err != nil {
		return nil, chunkstore.Report{}, err
	}
	return s, s.OpenReport(), nil
}

func ptr(o chunkstore.Options) *chunkstore.Options { return &o }
