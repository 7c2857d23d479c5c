package cli

import (
	"slices"
	"testing"

	"github.com/arksave/arksave/internal/testkit/ndsave"
	"github.com/arksave/arksave/vfs"
)

// repair of a save of 3 or 4 axes with a damaged chunk record and a
// damaged body block keeps what a read of the damaged save keeps: every
// other chunk and body set as it was, keys that differ only in z or w
// apart; the damaged chunk reverts to the backup's version of it or is
// dropped (generated again), and the report names its whole key.
func TestRepairMoreAxes(t *testing.T) {
	forAxes(t, func(t *testing.T, s *ndsave.Save) {
		chunk := ndsave.Key(s.Axes, 0, 0, 1, -1)
		bodies := ndsave.Key(s.Axes, 1, 0, -1, -1)
		ndsave.Damage(t, s.Dir, chunk, false)
		ndsave.Damage(t, s.Dir, bodies, true)
		for _, dry := range []bool{true, false} {
			args := []string{"repair", "-q", s.Dir}
			if dry {
				args = []string{"repair", "-q", "--dry-run", s.Dir}
			}
			code, stdout, stderr := arksave(args...)
			expectCode(t, 0, code, stderr)
			expectContains(t, stdout, "kept: 8 chunks", "2 bodies in ", "dropped: bodies of chunk "+bodies.String(),
				"reverted: chunk "+chunk.String()+": its record in chunks.pxsw is damaged; backup 1's")
		}
		got := ndsave.Read(t, vfs.OS, s.Dir, s.Axes)
		for k, pix := range s.Chunks {
			if k == chunk {
				prev, ok := s.Previous[k]
				if !ok {
					prev = ndsave.Generated(k)
				}
				if g, stored := got.Chunks[k]; stored && !slices.Equal(g, prev) || !stored && !slices.Equal(prev, ndsave.Generated(k)) {
					t.Fatalf("the damaged chunk %v is neither the backup's nor generated", k)
				}
				continue
			}
			if !slices.Equal(got.Chunks[k], pix) {
				t.Fatalf("chunk %v differs after the repair", k)
			}
		}
		for k, b := range s.Bodies {
			if k == bodies {
				if len(got.Bodies[k]) != 0 {
					t.Fatalf("the damaged body block %v kept: %+v", k, got.Bodies[k])
				}
				continue
			}
			if len(got.Bodies[k]) != len(b) || got.Bodies[k][0].ID != b[0].ID {
				t.Fatalf("bodies at %v: %+v, want %+v", k, got.Bodies[k], b)
			}
		}
		code, stdout, stderr := arksave("check", s.Dir)
		expectCode(t, 0, code, stderr)
		expectContains(t, stdout, "no problems found")
	})
}
