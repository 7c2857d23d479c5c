package savetool_test

import (
	"os"
	"testing"

	"github.com/mlange-42/ark/ecs"

	"github.com/arksave/arksave/internal/testkit/savetest"
)

// base is a save built once for the package's tests; fresh copies it.
var base string

func TestMain(m *testing.M) { os.Exit(savetest.Main(m, &base)) }

// fresh returns a copy of the test save.
func fresh(t *testing.T) string { return savetest.Fresh(t, base) }

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
