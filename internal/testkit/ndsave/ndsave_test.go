package ndsave_test

import (
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/testkit"
	"github.com/arksave/arksave/internal/testkit/ndsave"
)

// The kit's save holds keys of its axes that differ only in z (and w),
// chunks of every storage type and body sets, and a backup generation.
func TestBuild(t *testing.T) {
	ndsave.ForAxes(t, func(t *testing.T, n int) {
		s := ndsave.Build(t, t.TempDir(), n)
		types := map[chunkstore.StorageType]int{}
		for k, typ := range s.Types {
			testkit.Expect(t, k.Axes() == n, "key %v", k)
			types[typ]++
		}
		testkit.Expect(t, s.Generation == 2 && len(s.Chunks) == 8 && len(s.Bodies) == 2, "%v", s)
		testkit.Expect(t, types[chunkstore.Delta] == 3 && types[chunkstore.Palette] >= 1 && types[chunkstore.Empty] == 1, "types %v", types)
		testkit.Expect(t, len(s.Previous) == 7, "backup: %d chunks", len(s.Previous))
		_, apart := s.Chunks[ndsave.Key(n, 0, 0, -1, 1)]
		testkit.Expect(t, apart, "keys %v", s.Keys())
	})
}
