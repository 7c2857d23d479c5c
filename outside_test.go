package arksave_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A game written outside the module builds against the public API alone
// (its own file system implementing vfs.FS included) and runs: no exported
// signature needs an internal type.
func TestAGameOutsideTheModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	root, err := os.Getwd()
	must(t, err)
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "outside", "main.go.txt"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644))
	mod, err := os.ReadFile("go.mod")
	must(t, err)
	require := mod[strings.Index(string(mod), "require"):]
	gomod := "module example.com/outside\n\ngo 1.24.0\n\nrequire github.com/arksave/arksave v0.0.0\n\n" + string(require) +
		"\nreplace github.com/arksave/arksave => " + root + "\n"
	must(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	sum, err := os.ReadFile("go.sum")
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))

	cmd := exec.Command("go", "run", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off", "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the outside game: %v\n%s", err, out)
	}
	want := "generation 2 score 3 problems 0 opened files true corrupt is one check true"
	expect(t, strings.Contains(string(out), want), "the outside game printed %q, want %q", out, want)
}
