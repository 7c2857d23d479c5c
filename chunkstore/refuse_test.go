//go:build unix

package chunkstore_test

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/vfs"
)

// Scan opens no data file that is not a regular file: a named pipe (whose
// open would wait for a writer) and a symbolic link (to a file outside)
// are each reported as a damaged stretch naming the file and what it is,
// and the scan goes on with the next data file.
func TestScanRefusesPipesAndLinks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.pxsw")
	cfg := testConfig(vfs.OS)
	s := must2[*chunkstore.Store](t)(chunkstore.Create(path, &cfg))
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range 6 {
		b := s.NewBatch()
		b.PutChunk(chunkstore.Pos{X: int32(i)}, randomChunk(small, rng))
		commit(t, s, b)
	}
	must(t, s.Close())
	fifo, link := storetool.Tool.DataFileName(path, 1), storetool.Tool.DataFileName(path, 2)
	outside := filepath.Join(t.TempDir(), "outside.pxsd")
	must(t, os.Rename(link, outside))
	must(t, os.Symlink(outside, link))
	must(t, os.Remove(fifo))
	must(t, syscall.Mkfifo(fifo, 0o644))

	done := make(chan error, 1)
	var refused []string
	later := 0
	go func() {
		done <- storetool.Tool.Scan(nil, path, func(r storetool.ScanRecord) bool {
			switch {
			case r.Err != nil && r.Kind == 0 && r.Handle.Length == 0 && errors.Is(r.Err, chunkstore.ErrCorrupt):
				refused = append(refused, r.Err.Error())
			case r.Err == nil && r.Handle.File() > 2:
				later++
			}
			return true
		})
	}()
	select {
	case err := <-done:
		must(t, err)
	case <-time.After(2 * time.Minute): // a guard against a hang, not a timing assertion
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatal("Scan opened the named pipe")
	}
	expect(t, len(refused) == 2 && strings.Contains(refused[0], "w-data-1.pxsd is a named pipe (FIFO)") &&
		strings.Contains(refused[1], "w-data-2.pxsd is a symbolic link"), "refused: %q", refused)
	expect(t, later > 0, "the scan stopped at the refused data files")
}
