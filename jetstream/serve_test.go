package jetstream_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/arksave/arksave/internal/testkit/savetest"
	"github.com/arksave/arksave/mapserve"
	"github.com/arksave/arksave/vfs"
)

// The web map serves a world in JetStream as it serves a directory: the
// same world, the same tiles, byte for byte.
func TestServeAWorldInJetStream(t *testing.T) {
	s := startServer(t)
	dir := filepath.Join(t.TempDir(), "save")
	must(t, savetest.Build(dir))
	loc := "nats://" + s.Addr().String() + "/served"
	expectRun(t, 0, "copy", "-q", dir, loc)

	get := func(h http.Handler, path string) []byte {
		t.Helper()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		expect(t, rec.Code == http.StatusOK, "GET %s: %d %s", path, rec.Code, rec.Body.String())
		b, err := io.ReadAll(rec.Body)
		must(t, err)
		return b
	}
	l, err := vfs.OpenLocation(loc)
	must(t, err)
	defer l.Close()
	inJS, err := mapserve.New(l.Path, mapserve.Options{FS: l.FS})
	must(t, err)
	defer inJS.Close()
	onDisk, err := mapserve.New(dir, mapserve.Options{})
	must(t, err)
	defer onDisk.Close()

	for _, path := range []string{"/api/tiles/0/0/0.png", "/api/tiles/1/0/0.png", "/api/chunk?x=0&y=0", "/api/entities"} {
		a, b := get(inJS, path), get(onDisk, path)
		expect(t, bytes.Equal(a, b), "GET %s: JetStream's answer (%d bytes) differs from the directory's (%d bytes)", path, len(a), len(b))
	}
	expect(t, bytes.Contains(get(inJS, "/api/world"), []byte(`"generation":3`)), "world: %s", get(inJS, "/api/world"))
}
