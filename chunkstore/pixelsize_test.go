package chunkstore_test

import (
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/testkit/terrain"
	"github.com/arksave/arksave/vfs"
)

// pixelMarker is the one value the misfit stores write with high bits set.
const pixelMarker = 0x00C0FFEE

// Where pixelStore puts what: a Full chunk (random values), a Palette
// chunk (three values), a Delta chunk (a few pixels changed) and two bodies.
var (
	fullAt    = chunkstore.Pos{X: 0, Y: 50}
	paletteAt = chunkstore.Pos{X: 1, Y: 50}
	deltaAt   = chunkstore.Pos{X: 2, Y: 0}
	bodiesAt  = chunkstore.Pos{X: 3, Y: 50}
)

// pixelStore writes a store of size-byte pixels at storePath of mem (each
// value v written as widen(v); nil: cut to size bytes) holding every record
// kind, with values that fit in size bytes, and returns the model of what
// it holds.
func pixelStore(t *testing.T, mem vfs.FS, size int, widen func(uint32) uint64) *model {
	return pixelStoreWith(t, testConfig(mem), size, widen)
}

// pixelStoreWith is pixelStore with the store's options.
func pixelStoreWith(t *testing.T, cfg chunkstore.Options, size int, widen func(uint32) uint64) *model {
	t.Helper()
	restore := storetool.Tool.SetPixelWriter(size, widen)
	defer restore()
	fit := ^uint32(0)
	if size < 4 {
		fit = 1<<(8*size) - 1
	}
	rng := rand.New(rand.NewPCG(uint64(size), 9))
	s := create(t, cfg)
	defer s.Close()
	m := newModel()
	b := s.NewBatch()
	full := randomChunk(small, rng)
	for i := range full {
		full[i] &= fit
	}
	full[17] = pixelMarker & fit
	m.putChunk(b, fullAt, full)
	pal := paletteChunk(rng)
	m.putChunk(b, paletteAt, pal)
	m.putChunk(b, deltaAt, deltaChunk(deltaAt, small, 5, rng))
	bodies := []chunkstore.Body{body(11, 3, 2, rng), body(12, 4, 4, rng)}
	for i := range bodies {
		for j := range bodies[i].Pixels {
			bodies[i].Pixels[j] &= fit
		}
	}
	m.putBodies(b, bodiesAt, bodies)
	st := commit(t, s, b)
	expect(t, st.Full == 1 && st.Palette == 1 && st.Delta == 1, "commit %+v: want one Full, one Palette, one Delta chunk", st)
	return m
}

// openForMigration opens the store at storePath of mem to migrate it.
func openForMigration(t *testing.T, mem vfs.FS) *chunkstore.Store {
	t.Helper()
	o := storetool.Tool.ForPixelMigration(chunkstore.Options{FS: mem})
	return must2[*chunkstore.Store](t)(chunkstore.Open(storePath, &o))
}

func TestPixelSizeMigratedWhenValuesFit(t *testing.T) {
	for _, size := range []int{1, 2, 8} {
		t.Run(fmt.Sprintf("%d-byte", size), func(t *testing.T) {
			mem := vfs.NewMem()
			var m *model
			if size == 1 {
				// One byte holds neither the Full chunk's nor the bodies' values: a
				// store of palette and delta chunks only.
				m = bytePixelStore(t, mem)
			} else {
				m = pixelStore(t, mem, size, nil)
			}
			_, err := chunkstore.Open(storePath, ptr(testConfig(mem)))
			expect(t, errors.Is(err, chunkstore.ErrConfigMismatch), "open for the game: %v, want ErrConfigMismatch", err)
			want := []string{"the file stores " + string(rune('0'+size)) + "-byte pixels", "the game 4-byte", "arksave migrate DIR"}
			for _, w := range want {
				expect(t, err != nil && strings.Contains(err.Error(), w), "open for the game: %v, want it to say %q", err, w)
			}
			s := openForMigration(t, mem)
			defer s.Close()
			expect(t, storetool.Tool.PixelSize(s) == size, "pixel size %d, want %d", storetool.Tool.PixelSize(s), size)
			must(t, storetool.Tool.CheckPixels(s))
			c := must2[*chunkstore.Store](t)(s.CompactTo("/migrated.pxsw"))
			expect(t, storetool.Tool.PixelSize(c) == 4, "migrated pixel size %d", storetool.Tool.PixelSize(c))
			must(t, c.Close())
			got := must2[*chunkstore.Store](t)(chunkstore.Open("/migrated.pxsw", ptr(testConfig(mem))))
			defer got.Close()
			mustCheck(t, got)
			if d := m.diff(got, small, ^uint32(0)); d != "" {
				t.Fatalf("migrated store: %s", d)
			}
		})
	}
}

// bytePixelStore writes a store of 1-byte pixels: Palette and Delta
// chunks of small values.
func bytePixelStore(t *testing.T, mem vfs.FS) *model {
	t.Helper()
	defer storetool.Tool.SetPixelWriter(1, nil)()
	s := create(t, testConfig(mem))
	defer s.Close()
	m := newModel()
	b := s.NewBatch()
	pal := paletteChunk(rand.New(rand.NewPCG(1, 9)))
	m.putChunk(b, paletteAt, pal)
	// The generator's values are 32-bit: only the changed pixels are stored.
	d := generated(deltaAt, small)
	d[3], d[70] = terrain.Water, terrain.Sand
	m.putChunk(b, deltaAt, d)
	st := commit(t, s, b)
	expect(t, st.Palette == 1 && st.Delta == 1, "commit %+v", st)
	return m
}

func TestPixelSizeMigrationRefusedWhenAValueDoesNotFit(t *testing.T) {
	mem := vfs.NewMem()
	pixelStore(t, mem, 8, widenOne(pixelMarker, 1<<40))
	s := openForMigration(t, mem)
	defer s.Close()
	err := storetool.Tool.CheckPixels(s)
	expect(t, errors.Is(err, chunkstore.ErrConfigMismatch), "check: %v, want ErrConfigMismatch", err)
	for _, w := range []string{"chunk (0, 50)", "pixel 17", "0x100" + "00c0ffee", "does not fit"} {
		expect(t, err != nil && strings.Contains(err.Error(), w), "check: %v, want it to name %q", err, w)
	}
	_, err = s.CompactTo("/migrated.pxsw")
	expect(t, errors.Is(err, chunkstore.ErrConfigMismatch) && strings.Contains(err.Error(), "pixel 17"), "compact: %v", err)
	for _, p := range []string{"/migrated.pxsw", "/migrated.pxsw.tmp"} {
		_, err := mem.Stat(p)
		expect(t, err != nil, "%s left behind by a refused migration", p)
	}
}

func TestPixelSizeMigrationNamesABodyPixel(t *testing.T) {
	mem := vfs.NewMem()
	m := pixelStore(t, mem, 8, nil)
	// The misfit in a body only: the value of pixel 5 of the second body.
	bad := m.bodies[bodiesAt][1].Pixels[5]
	mem = vfs.NewMem()
	pixelStore(t, mem, 8, widenOne(bad, 0xFF<<56))
	s := openForMigration(t, mem)
	defer s.Close()
	err := storetool.Tool.CheckPixels(s)
	expect(t, errors.Is(err, chunkstore.ErrConfigMismatch) && strings.Contains(err.Error(), "body 12, pixel 5"), "check: %v", err)
}

// widenOne writes value v as v|high and every other as it is.
func widenOne(v uint32, high uint64) func(uint32) uint64 {
	return func(x uint32) uint64 {
		if x == v {
			return high | uint64(x)
		}
		return uint64(x)
	}
}

func TestPixelSizeByteRefused(t *testing.T) {
	mem := vfs.NewMem()
	s := create(t, testConfig(mem))
	b := s.NewBatch()
	b.PutChunk(fullAt, uniformChunk(small, 9))
	commit(t, s, b)
	root := s.Root()
	must(t, s.Close())
	for _, p := range []byte{0, 3, 5, 6, 7, 9, 16, 255} {
		r := append([]byte(nil), root...)
		r[52] = p
		putCRC(r)
		_, err := storetool.Tool.ParseRoot(r)
		expect(t, errors.Is(err, chunkstore.ErrCorrupt) && strings.Contains(err.Error(), "byte 52"), "pixel size %d: %v", p, err)
	}
	for _, p := range []byte{1, 2, 4, 8} {
		r := append([]byte(nil), root...)
		r[52] = p
		putCRC(r)
		ri, err := storetool.Tool.ParseRoot(r)
		expect(t, err == nil && ri.PixelSize == p, "pixel size %d: %v", p, err)
	}
}

// putCRC sets the checksum of a header slot.
func putCRC(slot []byte) {
	c := crc32.Update(0, crc32.MakeTable(crc32.Castagnoli), slot[:36])
	c = crc32.Update(c, crc32.MakeTable(crc32.Castagnoli), slot[40:64])
	slot[36], slot[37], slot[38], slot[39] = byte(c), byte(c>>8), byte(c>>16), byte(c>>24)
}

var updatePixelFixture = os.Getenv("ARKSAVE_UPDATE_FIXTURES") != ""

// TestPixelFixture writes testdata/pixel8, the fuzz seed of a store of
// 8-byte pixels, when ARKSAVE_UPDATE_FIXTURES is set, and checks that the
// committed one migrates.
func TestPixelFixture(t *testing.T) {
	dir := filepath.Join("testdata", "pixel8")
	if updatePixelFixture {
		mem := vfs.NewMem()
		cfg := testConfig(mem)
		cfg.DataFileSize = 0 // one data file
		pixelStoreWith(t, cfg, 8, nil)
		must(t, os.RemoveAll(dir))
		must(t, os.MkdirAll(dir, 0o755))
		for _, name := range must2[[]string](t)(mem.ReadDir("/")) {
			data := must2[[]byte](t)(vfs.ReadFile(mem, "/"+name))
			must(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
		}
	}
	files := map[string][]byte{}
	names := must2[[]string](t)(filepath.Glob(filepath.Join(dir, "*")))
	for _, n := range names {
		files["/"+filepath.Base(n)] = must2[[]byte](t)(os.ReadFile(n))
	}
	expect(t, len(files) >= 2, "fixture %s: %d files", dir, len(files))
	mem := memWithFiles(t, files)
	s := openForMigration(t, mem)
	defer s.Close()
	expect(t, storetool.Tool.PixelSize(s) == 8, "fixture pixel size %d", storetool.Tool.PixelSize(s))
	must(t, storetool.Tool.CheckPixels(s))
}

// paletteChunk is a chunk of three values in random order: a Palette
// record is its smallest.
func paletteChunk(rng *rand.Rand) []uint32 {
	pal := make([]uint32, small*small)
	for i := range pal {
		pal[i] = uint32(1 + rng.IntN(3))
	}
	return pal
}
