package savetool_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/savetool"
)

// chunkLines describes a diff's chunks, one string each.
func chunkLines(r *savetool.DiffReport) []string {
	var out []string
	for _, c := range r.Chunks {
		out = append(out, fmt.Sprintf("(%d, %d) %s %s>%s %d%s", c.X, c.Y, c.Kind, c.From, c.To, c.Pixels, map[bool]string{true: "+"}[c.AtLeast]))
	}
	return out
}

func diff(t *testing.T, dir string, a, b uint64) *savetool.DiffReport {
	t.Helper()
	r, err := savetool.Diff(dir, a, b, savetool.Options{})
	must(t, err)
	return r
}

// The test save's generations differ by the chunks its build painted:
// generation 2 changed one pixel of (0, 0) and painted 30 of (0, 1),
// generation 3 filled (-1, -1) whole and painted 12 pixels of (1, 1).
func TestDiffChunksOfTheTestSave(t *testing.T) {
	for _, c := range []struct {
		a, b uint64
		want string
	}{
		{1, 2, "[(0, 0) changed delta>delta 1 (0, 1) added >delta 30]"},
		{2, 1, "[(0, 0) changed delta>delta 1 (0, 1) removed delta> 30]"},
		{2, 3, "[(-1, -1) added >full 0+ (1, 1) added >delta 12]"},
		{1, 0, "[(-1, -1) added >full 0+ (0, 0) changed delta>delta 1 (0, 1) added >delta 30 (1, 1) added >delta 12]"},
	} {
		r := diff(t, base, c.a, c.b)
		expect(t, fmt.Sprint(chunkLines(r)) == c.want, "diff %d %d: chunks %v, want %s", c.a, c.b, chunkLines(r), c.want)
		expect(t, len(r.Damaged) == 0, "diff %d %d: damaged %v", c.a, c.b, r.Damaged)
		expect(t, r.Shared > 0, "diff %d %d: no entry shared", c.a, c.b)
	}
	for g := uint64(1); g <= 3; g++ {
		r := diff(t, base, g, g)
		expect(t, r.IsEmpty(), "diff %d %d: %+v", g, g, r)
	}
}

// A store written whole again (compact --whole) holds every chunk in
// other records of other files: the diff decodes them all and finds
// nothing changed.
func TestDiffAfterWholeCompactionIsEmpty(t *testing.T) {
	dir := fresh(t)
	rep, err := savetool.Compact(dir, savetool.CompactOptions{Whole: true, MaxBackups: -1})
	must(t, err)
	expect(t, rep.NewStore != rep.OldStore, "compact --whole kept the store %s", rep.OldStore)
	r := diff(t, dir, 3, 0)
	expect(t, r.B == rep.Generation, "diff to generation %d, want %d", r.B, rep.Generation)
	expect(t, r.IsEmpty(), "a compacted copy differs: %v %v", chunkLines(r), r.Damaged)
	expect(t, r.Shared == 0, "%d entries shared between two stores", r.Shared)
}

// A generation the directory does not keep is refused, naming the kept
// ones.
func TestDiffGenerationNotKept(t *testing.T) {
	_, err := savetool.Diff(base, 1, 9, savetool.Options{})
	expect(t, errors.Is(err, autosave.ErrNoGeneration), "err %v", err)
	expect(t, err != nil && strings.Contains(err.Error(), "3 (committed), 2, 1"), "err %v does not name the kept generations", err)
}
