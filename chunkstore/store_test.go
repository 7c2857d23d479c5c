package chunkstore_test

import (
	"errors"
	"fmt"
	"io/fs"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/testkit/terrain"
	"github.com/arksave/arksave/vfs"
)

func create(t testing.TB, cfg chunkstore.Options) *chunkstore.Store {
	t.Helper()
	return must2[*chunkstore.Store](t)(chunkstore.Create("/w.pxsw", &cfg))
}

func reopen(t testing.TB, s *chunkstore.Store, cfg chunkstore.Options) *chunkstore.Store {
	t.Helper()
	must(t, s.Close())
	return must2[*chunkstore.Store](t)(chunkstore.Open("/w.pxsw", &cfg))
}

func commit(t testing.TB, s *chunkstore.Store, b *chunkstore.Batch) chunkstore.CommitStats {
	t.Helper()
	return must2[chunkstore.CommitStats](t)(s.Commit(b))
}

func expectSame(t testing.TB, m *model, s *chunkstore.Store, mask uint32) {
	t.Helper()
	if d := m.diff(s, small, mask); d != "" {
		t.Fatal(d)
	}
}

func TestRoundTripEachType(t *testing.T) {
	cfg := testConfig(vfs.NewMem())
	s := create(t, cfg)
	rng := rand.New(rand.NewPCG(1, 2))
	m := newModel()
	b := s.NewBatch()
	m.putChunk(b, chunkstore.Pos{X: 0, Y: 0}, deltaChunk(chunkstore.Pos{X: 0, Y: 0}, small, 10, rng))
	m.putChunk(b, chunkstore.Pos{X: 1, Y: 0}, randomChunk(small, rng))
	m.putChunk(b, chunkstore.Pos{X: -1, Y: 3}, uniformChunk(small, 0))
	m.putChunk(b, chunkstore.Pos{X: 2, Y: 2}, generated(chunkstore.Pos{X: 2, Y: 2}, small))
	m.putBodies(b, chunkstore.Pos{X: 0, Y: 0}, []chunkstore.Body{body(1, 5, 3, rng), body(2, 9, 9, rng)})
	st := commit(t, s, b)
	expect(t, st.Delta == 1 && st.Full == 1 && st.Empty == 1 && st.Reverted == 1 && st.BodyBlocks == 1, "stats %+v", st)
	expect(t, s.Generation() == 1, "generation %d", s.Generation())
	expectSame(t, m, s, ^uint32(0))
	mustCheck(t, s)
	s = reopen(t, s, cfg)
	defer s.Close()
	expectSame(t, m, s, ^uint32(0))
	stats := storetool.Tool.Stats(s)
	expect(t, stats.Chunks == 3 && stats.Delta == 1 && stats.Full == 1 && stats.Empty == 1 && stats.BodyBlocks == 1, "%+v", stats)

	// Overwrite, delete, revert to generation, remove bodies.
	b = s.NewBatch()
	m.putChunk(b, chunkstore.Pos{X: 0, Y: 0}, randomChunk(small, rng))
	m.deleteChunk(b, chunkstore.Pos{X: 1, Y: 0})
	m.putChunk(b, chunkstore.Pos{X: -1, Y: 3}, generated(chunkstore.Pos{X: -1, Y: 3}, small))
	m.putBodies(b, chunkstore.Pos{X: 0, Y: 0}, nil)
	st = commit(t, s, b)
	expect(t, st.Full == 1 && st.Deleted == 1 && st.Reverted == 1 && st.BodyRemovals == 1, "stats %+v", st)
	expectSame(t, m, s, ^uint32(0))
	s = reopen(t, s, cfg)
	expectSame(t, m, s, ^uint32(0))
	expect(t, storetool.Tool.Stats(s).Chunks == 1, "%+v", storetool.Tool.Stats(s))
	mustCheck(t, s)
}

// lowLayers returns a kept layer of the low bits of mask, which holds its
// low bits only, and a layer of the others that is not kept.
func lowLayers(mask uint32) []chunkstore.Layer {
	kept := uint8(bits.OnesCount32(mask))
	ls := []chunkstore.Layer{{Name: "kept", Offset: 0, Bits: kept, Persist: true}}
	if kept < 32 {
		ls = append(ls, chunkstore.Layer{Name: "dropped", Offset: kept, Bits: 32 - kept})
	}
	return ls
}

// Per-layer persistence: only the bits of the persisted layers are stored,
// compared and returned, for chunks and bodies.
func TestPersistedLayerBits(t *testing.T) {
	for _, mask := range []uint32{^uint32(0), 0x01FFFFFF, 0x00FFFFFF, 0x000000FF, 0x0000FFFF} {
		cfg := testConfig(vfs.NewMem())
		cfg.Layers = lowLayers(mask)
		s := create(t, cfg)
		rng := rand.New(rand.NewPCG(uint64(mask), 3))
		m := newModel()
		b := s.NewBatch()
		p0, p1, p2 := chunkstore.Pos{X: 0, Y: 1}, chunkstore.Pos{X: 5, Y: -2}, chunkstore.Pos{X: 3, Y: 3}
		m.putChunk(b, p0, deltaChunk(p0, small, 20, rng))
		m.putChunk(b, p1, randomChunk(small, rng))
		// Differs from generation only in bits outside the mask: not stored.
		same := generated(p2, small)
		for i := range same {
			same[i] |= ^mask
		}
		b.PutChunk(p2, same)
		m.putBodies(b, p0, []chunkstore.Body{body(9, 7, 5, rng)})
		st := commit(t, s, b)
		if mask != ^uint32(0) {
			expect(t, st.Reverted == 1, "mask %#x: masked-only change stored: %+v", mask, st)
		}
		expectSame(t, m, s, mask)
		s = reopen(t, s, cfg)
		expectSame(t, m, s, mask)
		dst := make([]uint32, npix)
		_, err := s.Get(p2, dst)
		must(t, err)
		for i, v := range dst {
			expect(t, v&^mask == 0, "mask %#x: generated pixel %d has masked bits: %#x", mask, i, v)
		}
		mustCheck(t, s)
		s.Close()
	}
}

// Delta is chosen while fewer than DeltaThreshold of the pixels differ
// (with EncodeDeltaFull; EncodeSmallest takes it as the delta's upper bound,
// see TestSmallestEncoding).
func TestDeltaThreshold(t *testing.T) {
	for _, tc := range []struct {
		threshold float64
		changed   int
		want      chunkstore.StorageType
	}{
		{0.75, 1, chunkstore.Delta},
		{0.75, npix*3/4 - 1, chunkstore.Delta},
		{0.75, npix * 3 / 4, chunkstore.Full},
		{0.75, npix, chunkstore.Full},
		{0.25, npix / 4, chunkstore.Full},
		{0.25, npix/4 - 1, chunkstore.Delta},
	} {
		cfg := testConfig(vfs.NewMem())
		cfg.DeltaThreshold = tc.threshold
		cfg.Encoding = chunkstore.EncodeDeltaFull
		s := create(t, cfg)
		p := chunkstore.Pos{X: 1, Y: 0}
		pix := generated(p, small)
		for i := range tc.changed {
			pix[i] ^= 0x00400000 // damage layer: differs from anything generated
		}
		b := s.NewBatch()
		b.PutChunk(p, pix)
		commit(t, s, b)
		var got chunkstore.StorageType = 99
		s.Entries(func(e chunkstore.Entry) bool { got = e.Type; return true })
		expect(t, got == tc.want, "threshold %v, %d of %d changed: %v, want %v", tc.threshold, tc.changed, npix, got, tc.want)
		raw, ok, err := storetool.Tool.ReadRaw(s, p)
		must(t, err)
		expect(t, ok && raw.Type == tc.want, "ReadRaw: %v %v", ok, raw.Type)
		if tc.want == chunkstore.Delta {
			expect(t, len(raw.Delta) == tc.changed, "delta of %d entries, want %d", len(raw.Delta), tc.changed)
		}
		mustCheck(t, s)
		s.Close()
	}
}

func TestWithoutGenerator(t *testing.T) {
	cfg := testConfig(vfs.NewMem())
	cfg.Generator = nil
	s := create(t, cfg)
	defer s.Close()
	rng := rand.New(rand.NewPCG(4, 4))
	b := s.NewBatch()
	pix := generated(chunkstore.Pos{}, small)
	pix[3] = 77
	b.PutChunk(chunkstore.Pos{}, pix)
	b.PutChunk(chunkstore.Pos{X: 1}, make([]uint32, npix)) // zero: identical to "generation" (nothing)
	b.PutChunk(chunkstore.Pos{X: 2}, randomChunk(small, rng))
	st := commit(t, s, b)
	expect(t, st.Full == 2 && st.Delta == 0 && st.Reverted == 1, "%+v", st)
	dst := make([]uint32, npix)
	stored, err := s.Get(chunkstore.Pos{X: 9}, dst)
	must(t, err)
	expect(t, !stored && dst[0] == 0, "unstored chunk without generator: %v %#x", stored, dst[0])
	stored, err = s.Get(chunkstore.Pos{}, dst)
	must(t, err)
	expect(t, stored && dst[3] == 77, "got %v %d", stored, dst[3])
	mustCheck(t, s)
}

func TestBodiesRoundTrip(t *testing.T) {
	cfg := testConfig(vfs.NewMem())
	s := create(t, cfg)
	rng := rand.New(rand.NewPCG(5, 5))
	m := newModel()
	b := s.NewBatch()
	withExt := body(10, 3, 1, rng)
	withExt.Extension = []byte("health=3;team=blue")
	empty := body(11, 4, 4, rng)
	clear(empty.Shape)
	uniform := body(12, 13, 7, rng) // compresses: LZ4 sections
	for i := range uniform.Pixels {
		uniform.Pixels[i] = 0x01020304
		uniform.Shape[i] = true
	}
	var odd []chunkstore.Body
	for w := uint32(1); w <= 17; w += 2 { // odd widths: the mask does not end on a byte
		odd = append(odd, body(uint64(100+w), w, 3, rng))
	}
	m.putBodies(b, chunkstore.Pos{X: 0, Y: 0}, []chunkstore.Body{withExt, empty, uniform})
	m.putBodies(b, chunkstore.Pos{X: 1, Y: 0}, odd)
	m.putBodies(b, chunkstore.Pos{X: 2, Y: 0}, []chunkstore.Body{empty}) // only empty: nothing stored
	st := commit(t, s, b)
	expect(t, st.BodyBlocks == 2, "%+v", st)
	expectSame(t, m, s, ^uint32(0))
	s = reopen(t, s, cfg)
	defer s.Close()
	expectSame(t, m, s, ^uint32(0))
	got := must2[[]chunkstore.Body](t)(s.Bodies(chunkstore.Pos{X: 0, Y: 0}))
	expect(t, len(got) == 2 && got[0].ID == 10 && string(got[0].Extension) == "health=3;team=blue", "%+v", got)
	none := must2[[]chunkstore.Body](t)(s.Bodies(chunkstore.Pos{X: 2, Y: 0}))
	expect(t, none == nil, "empty bodies stored: %+v", none)

	// A body whose slices do not match its size is refused, nothing written.
	bad := body(13, 4, 4, rng)
	bad.Pixels = bad.Pixels[:5]
	b = s.NewBatch()
	b.PutEntities(chunkstore.Pos{X: 3}, chunkstore.EntityBlock{Bodies: []chunkstore.Body{bad}})
	_, err := s.Commit(b)
	expect(t, errors.Is(err, chunkstore.ErrInvalidBody), "err %v", err)
	expect(t, s.Generation() == 1, "generation moved: %d", s.Generation())
	mustCheck(t, s)
}

func TestOpenChecksConstants(t *testing.T) {
	mem := vfs.NewMem()
	cfg := testConfig(mem)
	s := create(t, cfg)
	must(t, s.Close())
	for _, tc := range []struct {
		edit func(*chunkstore.Options)
		want []string
	}{
		{func(c *chunkstore.Options) { c.ChunkSize = 32 }, []string{"chunk size", "16", "32"}},
		{func(c *chunkstore.Options) { c.TileSize = 8 }, []string{"tile size", "4", "8"}},
		{func(c *chunkstore.Options) { c.Seed = 8 }, []string{"seed", "7", "8"}},
	} {
		c := cfg
		tc.edit(&c)
		_, err := chunkstore.Open("/w.pxsw", &c)
		expect(t, errors.Is(err, chunkstore.ErrConfigMismatch), "err %v", err)
		for _, w := range tc.want {
			expect(t, strings.Contains(err.Error(), w), "%q does not name %q", err, w)
		}
	}
	c := cfg
	c.PixelSize = 8
	_, err := chunkstore.Open("/w.pxsw", &c)
	expect(t, errors.Is(err, chunkstore.ErrInvalidConfig), "pixel size 8: %v", err)

	// Zero values adopt the file's.
	c = chunkstore.Options{FS: mem, Generator: gen}
	s = must2[*chunkstore.Store](t)(chunkstore.Open("/w.pxsw", &c))
	got := s.Options()
	expect(t, got.ChunkSize == small && got.TileSize == 4 && got.PixelSize == 4 && s.Options().Seed == 7, "%+v", got)
	s.Close()

	_, err = chunkstore.Create("/w.pxsw", &cfg)
	expect(t, errors.Is(err, fs.ErrExist), "create over a store: %v", err)
}

func TestGeneratorChange(t *testing.T) {
	cfg := testConfig(vfs.NewMem())
	s := create(t, cfg)
	rng := rand.New(rand.NewPCG(6, 6))
	b := s.NewBatch()
	pd, pf := chunkstore.Pos{X: 1, Y: 1}, chunkstore.Pos{X: 2, Y: 1}
	b.PutChunk(pd, deltaChunk(pd, small, 5, rng))
	full := randomChunk(small, rng)
	b.PutChunk(pf, full)
	commit(t, s, b)
	must(t, s.Close())

	other := cfg
	other.Generator = terrain.Generator{Surface: 8, Rev: 1}
	_, err := chunkstore.Open("/w.pxsw", &other)
	expect(t, errors.Is(err, chunkstore.ErrGeneratorVersion), "err %v", err)
	expect(t, strings.Contains(err.Error(), "1") && strings.Contains(err.Error(), "2"), "%v does not name both versions", err)

	other.AllowGeneratorChange = true
	s = must2[*chunkstore.Store](t)(chunkstore.Open("/w.pxsw", &other))
	rep := s.OpenReport()
	expect(t, len(rep.Problems) == 1 && rep.Problems[0].Pos != nil && *rep.Problems[0].Pos == pd, "report %s", rep)
	dst := make([]uint32, npix)
	stored, err := s.Get(pd, dst)
	must(t, err)
	expect(t, !stored, "delta chunk survived a generator change")
	stored, err = s.Get(pf, dst)
	must(t, err)
	expect(t, stored && dst[7] == full[7], "full chunk lost")
	commit(t, s, s.NewBatch()) // records the new version and the loss
	must(t, s.Close())
	other.AllowGeneratorChange = false
	s = must2[*chunkstore.Store](t)(chunkstore.Open("/w.pxsw", &other))
	defer s.Close()
	expect(t, s.GeneratorVersion() == 2 && storetool.Tool.Stats(s).Chunks == 1, "version %d, %+v", s.GeneratorVersion(), storetool.Tool.Stats(s))
	mustCheck(t, s)
}

func TestMisuse(t *testing.T) {
	cfg := testConfig(vfs.NewMem())
	s := create(t, cfg)
	_, err := s.Get(chunkstore.Pos{}, make([]uint32, 3))
	expect(t, errors.Is(err, chunkstore.ErrInvalidChunk), "%v", err)
	b := s.NewBatch()
	b.PutChunk(chunkstore.Pos{}, make([]uint32, 3))
	_, err = s.Commit(b)
	expect(t, errors.Is(err, chunkstore.ErrInvalidChunk), "%v", err)
	_, err = chunkstore.Create("/x.pxsw", &chunkstore.Options{FS: cfg.FS})
	expect(t, errors.Is(err, chunkstore.ErrInvalidConfig), "%v", err)
	mustCheck(t, s)
	must(t, s.Close())
	_, err = s.Get(chunkstore.Pos{}, make([]uint32, npix))
	expect(t, errors.Is(err, chunkstore.ErrClosed), "%v", err)
	_, err = s.Commit(s.NewBatch())
	expect(t, errors.Is(err, chunkstore.ErrClosed), "%v", err)
	expect(t, errors.Is(s.Close(), chunkstore.ErrClosed), "second close")

	ro := cfg
	ro.ReadOnly = true
	s = must2[*chunkstore.Store](t)(chunkstore.Open("/w.pxsw", &ro))
	defer s.Close()
	_, err = s.Commit(s.NewBatch())
	expect(t, errors.Is(err, chunkstore.ErrReadOnly), "%v", err)
	expect(t, errors.Is(s.Compact(), chunkstore.ErrReadOnly), "compact read-only")
}

// An empty commit still moves the generation, with one fsync.
func TestEmptyCommit(t *testing.T) {
	s := create(t, testConfig(vfs.NewMem()))
	defer s.Close()
	st := commit(t, s, s.NewBatch())
	expect(t, st.Syncs == 1 && st.BytesWritten == 64 && st.Generation == 1, "%+v", st)
	b := s.NewBatch()
	b.DeleteChunk(chunkstore.Pos{X: 4}) // not stored: no change
	st = commit(t, s, b)
	expect(t, st.Syncs == 1 && st.Generation == 2, "%+v", st)
	mustCheck(t, s)
}

// explosive is a generator that panics once armed.
type explosive struct{ armed *atomic.Bool }

func (explosive) Version() uint32 { return gen.Version() }
func (x explosive) Generate(cx, cy int32, seed uint64, dst []uint32) {
	if x.armed.Load() {
		panic("generator exploded")
	}
	gen.Generate(cx, cy, seed, dst)
}

// A panic on a compression worker comes back on the goroutine that commits, where a caller (the
// autosave writer) can recover it; on the worker it would end the process. The store stays usable.
func TestPanicOnCompressionWorkerReachesCommit(t *testing.T) {
	armed := &atomic.Bool{}
	cfg := testConfig(vfs.NewMem())
	cfg.Generator = explosive{armed}
	s := create(t, cfg)
	b := s.NewBatch()
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 8 {
		p := chunkstore.Pos{X: int32(i), Y: 3}
		b.PutChunk(p, deltaChunk(p, small, 5, rng))
	}
	armed.Store(true)
	func() {
		defer func() {
			p := recover()
			if p == nil || !strings.Contains(fmt.Sprint(p), "generator exploded") || !strings.Contains(fmt.Sprint(p), "compression worker") {
				t.Fatalf("want the worker's panic on the committing goroutine, got %v", p)
			}
		}()
		_, _ = s.Commit(b)
	}()
	armed.Store(false)
	s = reopen(t, s, cfg)
	commit(t, s, b)
	mustCheck(t, s)
	must(t, s.Close())
}

// A zero field of Options takes the default its documentation names, and
// a field no store can have is refused with ErrInvalidConfig, naming it.
func TestOptionsDefaults(t *testing.T) {
	mem := vfs.NewMem()
	s := must2[*chunkstore.Store](t)(chunkstore.Create("/d.pxsw", &chunkstore.Options{ChunkSize: small, FS: mem}))
	got := s.Options()
	must(t, s.Close())
	expect(t, got.DeltaThreshold == chunkstore.DefaultDeltaThreshold && got.CompactionThreshold == chunkstore.DefaultCompactionThreshold &&
		got.CheckpointRatio == chunkstore.DefaultCheckpointRatio && got.BaseCache == chunkstore.DefaultBaseCache &&
		got.DataFileSize == chunkstore.DefaultDataFileSize && got.MaxOpenFiles == chunkstore.DefaultMaxOpenFiles && got.Workers == runtime.GOMAXPROCS(0) &&
		got.Axes == chunkstore.MinAxes && got.PixelSize == 4 && got.FS == mem, "defaults: %+v", got)

	for _, tc := range []struct {
		field string
		edit  func(*chunkstore.Options)
	}{
		{"ChunkSize", func(c *chunkstore.Options) { c.ChunkSize = 0 }},
		{"ChunkSize", func(c *chunkstore.Options) { c.ChunkSize = 8192 }},
		{"PixelSize", func(c *chunkstore.Options) { c.PixelSize = 3 }},
		{"DataFileSize", func(c *chunkstore.Options) { c.DataFileSize = 10 }},
		{"MaxOpenFiles", func(c *chunkstore.Options) { c.MaxOpenFiles = 1 }},
		{"DeltaThreshold", func(c *chunkstore.Options) { c.DeltaThreshold = 1.5 }},
		{"CompactionThreshold", func(c *chunkstore.Options) { c.CompactionThreshold = 1 }},
		{"CheckpointRatio", func(c *chunkstore.Options) { c.CheckpointRatio = -1 }},
		{"Encoding", func(c *chunkstore.Options) { c.Encoding = 7 }},
		{"Dictionary", func(c *chunkstore.Options) { c.Dictionary = 7 }},
		{"Axes", func(c *chunkstore.Options) { c.Axes = 5 }},
		{"KeyGenerator", func(c *chunkstore.Options) { c.Axes = 3 }},
		{"layer", func(c *chunkstore.Options) { c.Layers = []chunkstore.Layer{{Name: "a", Bits: 8}} }},
	} {
		cfg := testConfig(vfs.NewMem())
		tc.edit(&cfg)
		_, err := chunkstore.Create(storePath, &cfg)
		expect(t, errors.Is(err, chunkstore.ErrInvalidConfig) && strings.Contains(err.Error(), tc.field), "%s: %v", tc.field, err)
	}
}
