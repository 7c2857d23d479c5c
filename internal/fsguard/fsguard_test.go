//go:build unix

package fsguard_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/arksave/arksave/internal/fsguard"
	"github.com/arksave/arksave/vfs"
)

var errCorrupt = errors.New("corrupt")

// Regular accepts a regular file and a missing one, and refuses a symbolic
// link (to a regular file too), a named pipe and a directory, naming each
// and saying what it is, without opening it.
func TestRegular(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"file":    "",
		"missing": "",
		"link":    "link is a symbolic link, not a regular file: not followed",
		"fifo":    "fifo is a named pipe (FIFO), not a regular file: not opened",
		"dir":     "dir is a directory, not a regular file: not opened",
	} {
		err := fsguard.Regular(vfs.OS, filepath.Join(dir, name), name, errCorrupt)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case want != "" && (!errors.Is(err, errCorrupt) || !strings.HasSuffix(err.Error(), want)):
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
}
