package savetool_test

import (
	"os"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/internal/testkit"
	"github.com/arksave/arksave/internal/testkit/savetest"
)

// base is a save built once for the package's tests; fresh copies it.
var base string

func TestMain(m *testing.M) { os.Exit(savetest.Main(m, &base)) }

// fresh returns a copy of the test save.
func fresh(t *testing.T) string { return savetest.Fresh(t, base) }

var expect, must = testkit.Expect, testkit.Must

func layoutOf(t testing.TB, dir string) *savetest.Layout {
	t.Helper()
	l, err := savetest.LayoutOf(dir)
	must(t, err)
	return l
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
