package mapserve_test

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/arksave/arksave/internal/testkit/savetest"
	"github.com/arksave/arksave/mapserve"
)

// Any request line: an answer below 500, and nothing read outside the save
// or written; on the shared save and on one with regional entities and
// players. (The event stream ends at once: the request's context is
// done.)
func FuzzRequest(f *testing.F) {
	for _, seed := range []string{
		"/", "/app.js", "/api/world", "/api/tiles/0/0/0.png", "/api/tiles/3/-1/-1.png?g=2", "/api/tiles/8/0/0.png",
		"/api/chunk?x=0&y=0", "/api/chunk?x=-1&y=1", "/api/entities", "/api/entity?kind=body&id=4294967297",
		"/api/generations", "/api/check", "/api/events", "/../canary", "/api/tiles/0/0/..%2f..%2fx.png",
		"/api/chunk?x=99999999999&y=0", "/api/entity?kind=body&id=%2e%2e",
		"/api/entity?kind=entity&id=101", "/api/entity?kind=player&id=ada", "/api/entity?kind=player&id=..%2fmanifest",
	} {
		f.Add("GET", seed)
	}
	f.Add("HEAD", "/api/tiles/0/-1/0.png")
	f.Add("POST", "/api/world")
	watch := newWatchedFS()
	s, err := mapserve.New(base, mapserve.Options{Poll: -1, FS: watch, Generator: savetest.Generator, CacheBytes: 4 << 20})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	// A save with regional entities and players, served too.
	regional := filepath.Join(f.TempDir(), "save")
	newRegionalGame(f, regional)
	watchRegional := newWatchedFS()
	rs, err := mapserve.New(regional, mapserve.Options{Poll: -1, FS: watchRegional, Generator: savetest.Generator, CacheBytes: 4 << 20})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { rs.Close() })
	done, cancel := context.WithCancel(context.Background())
	cancel()
	f.Fuzz(func(t *testing.T, method, target string) {
		for _, sv := range []struct {
			s     *mapserve.Server
			watch *watchedFS
			dir   string
		}{{s, watch, base}, {rs, watchRegional, regional}} {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sv.s.ServeHTTP(w, r.WithContext(done)) })
			rec, ok := serveRaw(h, method, target)
			if !ok {
				return
			}
			if rec.Code >= 500 {
				t.Fatalf("%s %s: %d %s", method, target, rec.Code, rec.Body)
			}
			sv.watch.expectInsideOrNone(t, sv.dir)
			sv.watch.reset()
		}
	})
}
