package chunkstore_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/storetool"
)

// FuzzOpen opens an arbitrary store file and data files 1 and 2 (seeded
// from testdata/v1, testdata/v2, testdata/v3 (stores of 3 and 4 axes) and
// testdata/fuzz/FuzzOpen): Open (with the game's generator, and for
// inspection, which opens a store of any axes), Open for repair, Check,
// every read, a range query and Scan must return errors, never panic or
// allocate beyond what the bytes justify.
func FuzzOpen(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "v1", "*.pxsw"))
	for _, n := range names {
		if data, err := os.ReadFile(n); err == nil {
			f.Add(data, []byte(nil), []byte(nil))
		}
	}
	dirs, _ := filepath.Glob(filepath.Join("testdata", "v2", "*"))
	v3, _ := filepath.Glob(filepath.Join("testdata", "v3", "*"))
	// pixel8: a store of 8-byte pixels, read only to migrate it.
	for _, d := range append(append(dirs, v3...), filepath.Join("testdata", "pixel8")) {
		m, _ := os.ReadFile(filepath.Join(d, "w.pxsw"))
		d1, _ := os.ReadFile(filepath.Join(d, "w-data-1.pxsd"))
		d2, _ := os.ReadFile(filepath.Join(d, "w-data-2.pxsd"))
		f.Add(m, d1, d2)
	}
	f.Fuzz(func(t *testing.T, data, data1, data2 []byte) {
		files := map[string][]byte{storePath: data}
		if len(data1) > 0 {
			files[storetool.Tool.DataFileName(storePath, 1)] = data1
		}
		if len(data2) > 0 {
			files[storetool.Tool.DataFileName(storePath, 2)] = data2
		}
		mem := memWithFiles(t, files)
		cfg := fixtureConfig(mem)
		cfg.ReadOnly = true
		dst := make([]uint32, 64)
		exercise := func(s *chunkstore.Store) {
			s.Check()
			storetool.Tool.Stats(s)
			var box chunkstore.Box
			storetool.Tool.Entries(s, func(e storetool.Entry) bool {
				s.Get(e.Pos, dst)
				s.Bodies(e.Pos)
				storetool.Tool.ReadRaw(s, e.Pos)
				s.GetKey(e.Key, dst)
				s.EntitiesKey(e.Key)
				storetool.Tool.ReadRawKey(s, e.Key)
				storetool.Tool.RecordInfo(s, e.Handle)
				if box.Min.Axes() == 0 {
					box = chunkstore.Box{Min: e.Key, Max: e.Key}
				}
				box.Max = e.Key
				return true
			})
			s.EntriesIn(box)
			s.Close()
		}
		if s, err := chunkstore.Open(storePath, &cfg); err == nil {
			exercise(s)
		}
		if s, err := chunkstore.Open(storePath, &chunkstore.Options{FS: mem, ReadOnly: true}); err == nil {
			exercise(s)
		}
		// With the key of the encrypted seed (testdata/fuzz/FuzzOpen/v3-encrypted).
		keyed := cfg
		keyed.Key = bytes.Repeat([]byte{0x26}, 32)
		if s, err := chunkstore.Open(storePath, &keyed); err == nil {
			exercise(s)
		}
		if s, err := chunkstore.Open(storePath, forRepair(cfg, nil)); err == nil {
			exercise(s)
		}
		if s, err := chunkstore.Open(storePath, ptr(storetool.Tool.ForPixelMigration(cfg))); err == nil {
			storetool.Tool.CheckPixels(s)
			if c, err := s.CompactTo("/migrated.pxsw"); err == nil {
				exercise(c)
			}
			exercise(s)
		}
		storetool.Tool.Scan(mem, storePath, func(storetool.ScanRecord) bool { return true })
	})
}
