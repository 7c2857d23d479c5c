package arksave_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/testkit/savetest"
)

// A save whose chunk store has 8-byte pixels (another build of a game
// wrote it) is not migrated at load: Install fails with
// chunkstore.ErrConfigMismatch naming both sizes and arksave migrate, and
// the save's files stay as they were.
func TestInstallRefusesAnotherPixelSize(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "save")
	if err := savetest.BuildPixel8(dir); err != nil {
		t.Fatal(err)
	}
	before, err := savetest.Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	g, err := savetest.Open(dir, true)
	if err == nil {
		g.Close()
		t.Fatal("Install loaded a save of 8-byte pixels")
	}
	if !errors.Is(err, chunkstore.ErrConfigMismatch) {
		t.Errorf("Install: %v, want chunkstore.ErrConfigMismatch", err)
	}
	for _, want := range []string{"the file stores 8-byte pixels, the game 4-byte", "run arksave migrate"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Install: %v\nwant it to say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "the permissions") {
		t.Errorf("Install: %v\nsends the player to the disk and the permissions for a save of other settings", err)
	}
	after, err := savetest.Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The lock file stays, as after any game that opened the directory.
	delete(after, savedir.LockName)
	if d := savetest.SameFiles(after, before); d != "" {
		t.Errorf("a refused load changed the directory: %s", d)
	}
}
