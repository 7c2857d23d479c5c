package chunkstore_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/arksave/arksave/chunkstore"
)

// FuzzOpen opens arbitrary file bytes (seeded from testdata/*.pxsw and
// testdata/fuzz/FuzzOpen): Open, Open for repair, Check, every read and Scan
// must return errors, never panic or allocate beyond what the bytes justify.
func FuzzOpen(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "*.pxsw"))
	for _, n := range names {
		if data, err := os.ReadFile(n); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memWith(t, data)
		cfg := fixtureConfig(mem)
		cfg.ReadOnly = true
		dst := make([]uint32, 64)
		exercise := func(s *chunkstore.Store) {
			s.Check()
			s.Stats()
			s.Entries(func(e chunkstore.Entry) bool {
				s.Get(e.Pos, dst)
				s.Bodies(e.Pos)
				s.ReadRaw(e.Pos)
				s.RecordInfo(e.Handle)
				return true
			})
			s.Close()
		}
		if s, err := chunkstore.Open(storePath, &cfg); err == nil {
			exercise(s)
		}
		if s, err := chunkstore.Open(storePath, forRepair(cfg, nil)); err == nil {
			exercise(s)
		}
		chunkstore.Scan(mem, storePath, func(chunkstore.ScanRecord) bool { return true })
	})
}
