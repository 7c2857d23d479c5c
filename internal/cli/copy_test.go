package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/arksave/arksave/internal/testkit/savetest"
)

// copy makes a second save with the same generations, backups and chunks;
// it never writes over a save, and a location whose backend this build
// lacks is refused by name.
func TestCopy(t *testing.T) {
	dir := fresh(t)
	dst := filepath.Join(t.TempDir(), "copy")
	code, out, errOut := arksave("copy", "-q", dir, dst)
	expectCode(t, 0, code, errOut)
	expectContains(t, out, "copied generation 3 and 2 backups (8 files")
	want, err := savetest.Read(dir)
	must(t, err)
	got, err := savetest.Read(dst)
	must(t, err)
	if d := savetest.Diff(got, want); d != "" {
		t.Fatalf("the copy differs: %s", d)
	}
	code, _, errOut = arksave("check", "-q", dst)
	expectCode(t, 0, code, errOut)

	code, _, errOut = arksave("copy", dir, dst)
	expectCode(t, 1, code, errOut)
	expectContains(t, errOut, "already holds a save")

	code, _, errOut = arksave("copy", dir, "nats://user:secret@localhost:4222/w")
	expectCode(t, 1, code, errOut)
	expectContains(t, errOut, "github.com/arksave/arksave/jetstream", "user:xxxxx@")
	if strings.Contains(errOut, "secret") {
		t.Fatalf("the password is in the message: %s", errOut)
	}
}
