package testkit_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/arksave/arksave/internal/testkit"
)

// recorder is a testing.TB that records what a failing assertion calls
// instead of ending the test that runs it.
type recorder struct {
	testing.TB
	helper bool
	fatal  []string
}

func (r *recorder) Helper()           { r.helper = true }
func (r *recorder) Fatal(args ...any) { r.fatal = append(r.fatal, fmt.Sprint(args...)) }
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = append(r.fatal, fmt.Sprintf(format, args...))
}

func TestMustStopsOnAnError(t *testing.T) {
	r := &recorder{TB: t}
	testkit.Must(r, nil)
	if len(r.fatal) != 0 {
		t.Fatalf("Must(nil) failed the test: %q", r.fatal)
	}
	testkit.Must(r, fs.ErrNotExist)
	if !r.helper || len(r.fatal) != 1 || r.fatal[0] != fs.ErrNotExist.Error() {
		t.Fatalf("Must(err): helper %v, fatal %q; want a helper and one Fatal with the error", r.helper, r.fatal)
	}
}

func TestExpectStopsWithTheMessage(t *testing.T) {
	r := &recorder{TB: t}
	testkit.Expect(r, true, "never %d", 1)
	if len(r.fatal) != 0 {
		t.Fatalf("Expect(true) failed the test: %q", r.fatal)
	}
	testkit.Expect(r, false, "chunk %d,%d missing", 3, -4)
	if !r.helper || len(r.fatal) != 1 || r.fatal[0] != "chunk 3,-4 missing" {
		t.Fatalf("Expect(false): helper %v, fatal %q; want a helper and one Fatalf with the message", r.helper, r.fatal)
	}
}

// TestOneMustAndExpect holds every test package of the repository, its
// other modules included, to the shared pair: no package defines its own.
func TestOneMustAndExpect(t *testing.T) {
	root, err := filepath.Abs("../..")
	testkit.Must(t, err)
	def := regexp.MustCompile(`(?m)^func (must|expect)\(`)
	var found []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range def.FindAllSubmatch(b, -1) {
			rel, _ := filepath.Rel(root, p)
			found = append(found, rel+": "+string(m[1]))
		}
		return nil
	})
	testkit.Must(t, err)
	if len(found) > 0 {
		t.Fatalf("own must/expect defined in %q: use testkit.Must and testkit.Expect", found)
	}
}
