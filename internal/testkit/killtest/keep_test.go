package killtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Keep copies a directory's regular files, subdirectories included, and
// follows no symbolic link.
func TestKeep(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "backups"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "manifest"), []byte("m"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "backups", "world-1.pecs"), []byte("w1"), 0o644))
	outside := filepath.Join(t.TempDir(), "secret")
	must(os.WriteFile(outside, []byte("s"), 0o644))
	must(os.Symlink(outside, filepath.Join(dir, "link")))

	msg := Keep(dir)
	to, ok := strings.CutPrefix(strings.TrimSuffix(msg, ")"), "(the directory is kept at ")
	if !ok {
		t.Fatalf("Keep: %s", msg)
	}
	defer os.RemoveAll(to)
	for name, want := range map[string]string{"manifest": "m", "backups/world-1.pecs": "w1"} {
		got, err := os.ReadFile(filepath.Join(to, name))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := os.Lstat(filepath.Join(to, "link")); !os.IsNotExist(err) {
		t.Errorf("the link was copied or followed: %v", err)
	}
}
