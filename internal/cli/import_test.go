package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/internal/testkit/savetest"
)

// exportTo runs export --json on path and writes the JSON to a file.
func exportTo(t *testing.T, path string, args ...string) string {
	t.Helper()
	code, stdout, stderr := arksave(append(append([]string{"export", "--json"}, args...), path)...)
	expectCode(t, 0, code, stderr)
	js := filepath.Join(t.TempDir(), "export.json")
	must(t, os.WriteFile(js, []byte(stdout), 0o644))
	return js
}

// export then import gives the world file back, byte for byte; the output is written beside the
// JSON unless --out names it, never over a file without --force.
func TestImportWorldFile(t *testing.T) {
	for _, opts := range [][]archetype.Option{nil, {archetype.LZ4()}} {
		world := writeWorld(t, opts...)
		want, err := os.ReadFile(world)
		must(t, err)
		js := exportTo(t, world)

		code, stdout, stderr := arksave("import", js)
		expectCode(t, 0, code, stderr)
		out := strings.TrimSuffix(js, ".json") + ".pecs"
		expectContains(t, stdout, "wrote "+out, "the export of a world file", "2 entities")
		got, err := os.ReadFile(out)
		must(t, err)
		if !bytes.Equal(got, want) {
			t.Fatalf("imported %d bytes differ from the %d exported", len(got), len(want))
		}

		code, _, stderr = arksave("import", js)
		expectCode(t, 1, code, stderr)
		expectContains(t, stderr, "exists", "--force")
		code, _, stderr = arksave("import", "--force", js)
		expectCode(t, 0, code, stderr)

		other := filepath.Join(t.TempDir(), "other.pecs")
		stdin = bytes.NewReader(mustRead(t, js))
		code, stdout, stderr = arksave("import", "--out", other, "-")
		stdin = os.Stdin
		expectCode(t, 0, code, stderr)
		expectContains(t, stdout, "wrote "+other)
		got, err = os.ReadFile(other)
		must(t, err)
		if !bytes.Equal(got, want) {
			t.Fatalf("imported from standard input: %d bytes differ from the %d exported", len(got), len(want))
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	must(t, err)
	return data
}

// Bad JSON names the JSON path, says nothing was written, and leaves no file.
func TestImportBadJSON(t *testing.T) {
	js := exportTo(t, writeWorld(t))
	edited := strings.Replace(string(mustRead(t, js)), `"Tick":77`, `"Tick":"soon"`, 1)
	must(t, os.WriteFile(js, []byte(edited), 0o644))
	code, _, stderr := arksave("import", js)
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, js, `resources["`+pkg+`Clock"].Tick`, "a number expected, found a string", "nothing was written")
	if _, err := os.Stat(strings.TrimSuffix(js, ".json") + ".pecs"); !os.IsNotExist(err) {
		t.Errorf("a file was written: %v", err)
	}
	entries, err := os.ReadDir(filepath.Dir(js))
	must(t, err)
	if len(entries) != 1 {
		t.Errorf("files left beside the JSON: %v", entries)
	}

	for _, args := range [][]string{{"import"}, {"import", "-"}, {"import", "--out", "a.pecs", "--into", "dir", js}} {
		code, _, stderr = arksave(args...)
		expectCode(t, 2, code, stderr)
		expectContains(t, stderr, "usage: arksave import")
	}
}

// import --into commits an edited export of a save directory as a new generation the game loads,
// refuses an export of another generation without --force, and a save the game holds.
func TestImportIntoSave(t *testing.T) {
	dir := fresh(t)
	js := exportTo(t, dir)
	must(t, os.WriteFile(js, bytes.Replace(mustRead(t, js), []byte(`"Points":3`), []byte(`"Points":41`), 1), 0o644))
	code, stdout, stderr := arksave("import", "--into", dir, js)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "the export of generation 3", "as generation 4", "generation 3 is now a backup")
	code, _, stderr = arksave("check", dir)
	expectCode(t, 0, code, stderr)
	if got := loadsScore(t, dir); got != 41 {
		t.Fatalf("the game loads score %d, want the imported 41", got)
	}

	old := exportTo(t, dir, "--generation", "2")
	code, _, stderr = arksave("import", "--into", dir, old)
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, "generation 2", "--force", "nothing was written")
	code, stdout, stderr = arksave("import", "--into", dir, "--force", old)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "as generation 5")

	g, err := savetest.Open(dir, true)
	must(t, err)
	defer g.Close()
	before := files(t, dir)
	code, _, stderr = arksave("import", "--into", dir, "--force", js)
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, "in use", fmt.Sprintf("pid %d", os.Getpid()), "close the game first")
	after := files(t, dir)
	for name, b := range before {
		if after[name] != b {
			t.Errorf("%s changed while the game held the save", name)
		}
	}
}
