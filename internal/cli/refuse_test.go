//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/arksave/arksave/internal/testkit/savetest"
)

// arksave repair over a data file that is a named pipe or a symbolic link
// to a file outside returns, opens and follows neither, and prints a line
// naming the file it refused and why; check is clean afterwards.
func TestRepairRefusesPipesAndLinks(t *testing.T) {
	for _, tc := range []struct {
		name, says string
		make       func(t *testing.T, path string)
	}{
		{"fifo", "it is a named pipe (FIFO), not a regular file", func(t *testing.T, path string) {
			must(t, os.Remove(path))
			must(t, syscall.Mkfifo(path, 0o644))
		}},
		{"symlink", "it is a symbolic link, not a regular file", func(t *testing.T, path string) {
			outside := filepath.Join(t.TempDir(), "outside.pxsd")
			must(t, os.Rename(path, outside))
			must(t, os.Symlink(outside, path))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := fresh(t)
			path := filepath.Join(dir, savetest.DataFile1)
			tc.make(t, path)
			type result struct {
				code           int
				stdout, stderr string
			}
			done := make(chan result, 1)
			go func() {
				code, stdout, stderr := arksave("repair", dir)
				done <- result{code, stdout, stderr}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(2 * time.Minute): // a guard against a hang, not a timing assertion
				if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close() // lets a reader waiting in open go
				}
				t.Fatal("arksave repair waits on the data file")
			}
			expectCode(t, 0, r.code, r.stderr+r.stdout)
			expectContains(t, r.stdout, "note: refused "+savetest.DataFile1+": "+tc.says, "no problems found")
			code, stdout, stderr := arksave("check", dir)
			expectCode(t, 0, code, stderr+stdout)
		})
	}
}
