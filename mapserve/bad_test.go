package mapserve_test

import (
	"bufio"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arksave/arksave"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
	"github.com/arksave/arksave/mapserve"
)

// serveRaw sends a request line as a client could write it, unnormalised,
// straight to the handler; ok is false when net/http itself would not
// parse it.
func serveRaw(h http.Handler, method, target string) (rec *httptest.ResponseRecorder, ok bool) {
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(method + " " + target + " HTTP/1.1\r\nHost: map\r\n\r\n")))
	if err != nil {
		return nil, false
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec, true
}

// canary is what a file beside the save holds: no answer may contain it.
const canary = "CANARY-outside-the-save"

// Bad requests get a 4xx status and read nothing outside the save: a
// canary file beside the save directory (and one named like the save's
// files) never shows, whatever a path or parameter says.
func TestBadRequests(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "save")
	must(t, savetest.CopyDir(base, dir))
	for _, name := range []string{"canary", "canary.png", "manifest", "world-3.pecs", "index.html"} {
		must(t, os.WriteFile(filepath.Join(root, name), []byte(canary), 0o644))
	}
	watch := newWatchedFS()
	s, err := mapserve.New(dir, mapserve.Options{Poll: -1, FS: watch, Generator: savetest.Generator})
	must(t, err)
	defer s.Close()

	cases := []struct {
		target string
		status int
	}{
		// unknown zoom levels
		{"/api/tiles/9/0/0.png", 400},
		{"/api/tiles/-1/0/0.png", 400},
		{"/api/tiles/99999999999999999999/0/0.png", 400},
		{"/api/tiles/z/0/0.png", 400},
		// coordinates out of range
		{"/api/tiles/0/100000/0.png", 404},
		{"/api/tiles/0/0/-3.png", 404},
		{"/api/tiles/8/1/0.png", 404},
		{"/api/tiles/0/16777217/0.png", 400},
		{"/api/tiles/0/0x10/0.png", 400},
		{"/api/chunk?x=5000&y=0", 404},
		{"/api/chunk?x=0&y=-4", 404},
		{"/api/chunk?x=2147483648&y=0", 400},
		{"/api/chunk?x=1.5&y=0", 400},
		{"/api/chunk?x=1", 400},
		{"/api/chunk?x=1&y=0&x=2", 400},
		{"/api/chunk?x=1&y=0&z=2", 400},
		// malformed tiles and entities
		{"/api/tiles/0/0/0.jpg", 400},
		{"/api/tiles/0/0.png", 400},
		{"/api/tiles/0/0/0/0.png", 400},
		{"/api/tiles/0/0/0.png?g=x", 400},
		{"/api/tiles/0/0/0.png?v=1", 400},
		{"/api/entity?id=abc", 400},
		{"/api/entity?kind=monster&id=1", 400},
		{"/api/entity?kind=player&id=", 400},
		{"/api/entity?kind=player&id=" + strings.Repeat("a", 256), 400},
		{"/api/entity?kind=body&id=-1", 400},
		{"/api/entity?kind=body&id=1", 404},
		{"/api/check?fresh=2", 400},
		{"/api/nothing", 404},
		{"/favicon.ico", 404},
		// path traversal, in the path and in every parameter
		{"/../canary", 400},
		{"/api/../../canary", 400},
		{"/%2e%2e/canary", 400},
		{"/%2E%2E%2Fcanary", 400},
		{"/api/tiles/0/0/..%2F..%2F..%2Fcanary.png", 400},
		{"/api/tiles/../../../canary.png", 400},
		{"/api/tiles/0/0/0.png/../../../../canary", 400},
		{"/style.css/../../canary", 400},
		{"//canary", 400},
		{"/api//world", 400},
		{"/api/world/", 400},
		{"/index.html%00", 400},
		{"/index.html%5C..%5C..%5Ccanary", 400},
		{"/api/chunk?x=..%2F..%2Fcanary&y=0", 400},
		{"/api/chunk?x=0&y=../manifest", 400},
		{"/api/entity?kind=body&id=..%2F..%2Fcanary", 400},
		{"/api/entity?kind=../../canary&id=1", 400},
		{"/api/tiles/0/0/0.png?g=../../canary", 400},
		{"/api/world?file=../canary", 400},
		{"/api/world?dir=..", 400},
		{"/api/generations?dir=../", 400},
		{"/api/check?path=../canary", 400},
		{"/api/events?dir=..", 400},
		{"/?file=../canary", 400},
		{"/app.js?../../canary", 400},
		{"/api/check?fresh=1;../canary", 400},
		{"/api/chunk?x=0&y=0%00", 400},
	}
	for _, tc := range cases {
		rec, ok := serveRaw(s, "GET", tc.target)
		if !ok {
			t.Fatalf("%s: net/http does not parse it; the case tests nothing", tc.target)
		}
		expect(t, rec.Code == tc.status, "GET %s: %d %s, want %d", tc.target, rec.Code, rec.Body, tc.status)
		expect(t, !strings.Contains(rec.Body.String(), canary), "GET %s: the answer holds the canary", tc.target)
		expect(t, strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json"), "GET %s: %q", tc.target, rec.Header().Get("Content-Type"))
	}
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH"} {
		rec, _ := serveRaw(s, m, "/api/world")
		expect(t, rec.Code == http.StatusMethodNotAllowed && rec.Header().Get("Allow") == "GET, HEAD", "%s: %d", m, rec.Code)
	}
	watch.expectInside(t, dir)
	expect(t, s.Generation() == 3, "generation %d after bad requests", s.Generation())
}

// After Close the server answers 503 and Refresh fails.
func TestClosed(t *testing.T) {
	s, err := mapserve.New(base, mapserve.Options{Poll: -1})
	must(t, err)
	must(t, s.Close())
	must(t, s.Close())
	rec, _ := serveRaw(s, "GET", "/api/world")
	expect(t, rec.Code == http.StatusServiceUnavailable, "after Close: %d", rec.Code)
	_, err = s.Refresh()
	expect(t, err != nil && s.Generation() == 0, "Refresh after Close: %v", err)
}

// A path that is not a save is refused as savetool refuses it, with an
// error a game matches with arksave.ErrNoSave.
func TestNotASave(t *testing.T) {
	_, err := mapserve.New(t.TempDir(), mapserve.Options{Poll: -1})
	expect(t, errors.Is(err, savetool.ErrNotASave) && errors.Is(err, arksave.ErrNoSave), "an empty directory: %v", err)
	_, err = mapserve.New(filepath.Join(t.TempDir(), "nothing"), mapserve.Options{Poll: -1})
	expect(t, errors.Is(err, arksave.ErrNoSave), "a missing path: %v", err)
}

// A save whose committed generation does not open is refused with an
// error a game matches with arksave.ErrCorrupt, naming the tool that
// mends it: a damaged manifest, and a chunk store the manifest names that
// is gone.
func TestDamagedSaveIsCorrupt(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func(dir string) error
	}{
		{"manifest", func(dir string) error { return savetest.FlipMiddle(filepath.Join(dir, "manifest")) }},
		{"chunk store gone", func(dir string) error { return os.Remove(filepath.Join(dir, "chunks.pxsw")) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := savetest.Fresh(t, base)
			must(t, c.damage(dir))
			_, err := mapserve.New(dir, mapserve.Options{Poll: -1})
			expect(t, errors.Is(err, arksave.ErrCorrupt) && !errors.Is(err, arksave.ErrNoSave), "New: %v", err)
			expect(t, strings.Contains(err.Error(), "arksave repair "+dir), "the error does not say what to do: %v", err)
		})
	}
}
