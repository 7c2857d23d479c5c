package savetool_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savetest"
)

// base is a save built once for the package's tests; fresh copies it.
var base string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "savetool")
	if err == nil {
		base = filepath.Join(dir, "save")
		err = savetest.Build(base)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "building the test save:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fresh returns a copy of the test save.
func fresh(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "save")
	must(t, savetest.CopyDir(base, dir))
	return dir
}

func expect(t testing.TB, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Fatalf(format, args...)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// layout is where things are in the test save's chunk store.
type layout struct {
	store   string // path of the store file
	size    int64
	table   int64 // the committed generation's page-table root record
	records map[string]chunkstore.Handle
	backup  map[uint64]map[string]chunkstore.Handle // the records of each backup generation
}

// Chunks of the test save by what they are.
var (
	fullChunk  = chunkstore.Pos{X: -1, Y: -1} // written in the last generation
	deltaChunk = chunkstore.Pos{X: 1, Y: 1}   // written in the last generation, holds a body
	emptyChunk = chunkstore.Pos{X: -1, Y: 1}
)

func layoutOf(t testing.TB, dir string) *layout {
	t.Helper()
	d, err := autosave.OpenDirForRepair(nil, dir)
	must(t, err)
	m := d.Manifest()
	ri, err := chunkstore.ParseRoot(m.Chunks.Root)
	must(t, err)
	s, err := chunkstore.OpenRoot(d.Join(m.Chunks.Name), chunkstore.Config{ReadOnly: true}, m.Chunks.Root)
	must(t, err)
	defer s.Close()
	l := &layout{store: d.Join(m.Chunks.Name), size: s.Stats().FileSize, table: ri.Table,
		records: handles(s), backup: map[uint64]map[string]chunkstore.Handle{}}
	for _, b := range d.Backups() {
		bs, err := chunkstore.OpenRoot(d.Join(b.Chunks.Name), chunkstore.Config{ReadOnly: true}, b.Chunks.Root)
		must(t, err)
		l.backup[b.Generation] = handles(bs)
		must(t, bs.Close())
	}
	return l
}

func handles(s *chunkstore.Store) map[string]chunkstore.Handle {
	out := map[string]chunkstore.Handle{}
	s.Entries(func(e chunkstore.Entry) bool {
		out[fmt.Sprintf("%v/%v", e.Pos, e.Type)] = e.Handle
		return true
	})
	return out
}

func (l *layout) record(t testing.TB, p chunkstore.Pos, typ chunkstore.StorageType) chunkstore.Handle {
	t.Helper()
	h, ok := l.records[fmt.Sprintf("%v/%v", p, typ)]
	expect(t, ok && !h.IsZero(), "no %v record of chunk %v in %v", typ, p, l.records)
	return h
}

// flip inverts bits of the byte at off of a file.
func flip(t testing.TB, path string, off int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	must(t, err)
	expect(t, off < int64(len(data)), "offset %d past %s's %d bytes", off, path, len(data))
	data[off] ^= 0x5a
	must(t, os.WriteFile(path, data, 0o644))
}

func truncate(t testing.TB, path string, size int64) {
	t.Helper()
	must(t, os.Truncate(path, size))
}

// loads checks that the game loads the save and returns its score.
func loads(t testing.TB, dir string) int {
	t.Helper()
	g, err := savetest.Open(dir, true)
	must(t, err)
	defer g.Close()
	must(t, g.Settle())
	return ecs.GetResource[savetest.Score](g.W).Points
}
