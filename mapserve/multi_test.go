package mapserve_test

import (
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arksave/arksave/internal/testkit/savetest"
	"github.com/arksave/arksave/mapserve"
)

// NewMulti serves each save at /w/NAME/ with the names of all for the
// page's switcher; / leads to the first; a name in the address only
// selects among the saves given and never reaches the file system.
func TestMultiServesEachSave(t *testing.T) {
	root := t.TempDir()
	fsys := newWatchedFS()
	var servers []*mapserve.Server
	for _, name := range []string{"alpha", "beta"} {
		dir := filepath.Join(root, name)
		must(t, savetest.CopyDir(base, dir))
		s, err := mapserve.New(dir, mapserve.Options{FS: fsys, Poll: -1})
		must(t, err)
		servers = append(servers, s)
	}
	h, err := mapserve.NewMulti(servers...)
	must(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		for _, s := range servers {
			s.Close()
		}
		ts.Close()
	})
	for _, name := range []string{"alpha", "beta"} {
		var w struct {
			Save  string   `json:"save"`
			Saves []string `json:"saves"`
		}
		getJSON(t, ts, "/w/"+name+"/api/world", &w)
		expect(t, w.Save == name && slices.Equal(w.Saves, []string{"alpha", "beta"}), "/w/%s/api/world: %+v", name, w)
		page := get(t, ts, "/w/"+name+"/")
		expect(t, page.status == http.StatusOK && strings.Contains(string(page.body), `src="app.js"`), "/w/%s/: %d", name, page.status)
		tile := get(t, ts, "/w/"+name+"/api/tiles/0/0/0.png")
		expect(t, tile.status == http.StatusOK, "/w/%s/ tile: %d %s", name, tile.status, tile.body)
	}
	// / and /w/NAME lead to a page.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for path, to := range map[string]string{"/": "/w/alpha/", "/w/beta": "/w/beta/"} {
		res, err := noFollow.Get(ts.URL + path)
		must(t, err)
		res.Body.Close()
		expect(t, res.StatusCode == http.StatusFound && res.Header.Get("Location") == to, "%s: %d to %q", path, res.StatusCode, res.Header.Get("Location"))
	}
	// Names that are not a save's, paths that climb: refused, nothing read.
	fsys.reset()
	for _, path := range []string{"/w/gamma/api/world", "/w/../alpha/api/world", "/w/%2e%2e/api/world", "/w/alpha%2f..%2fbeta/api/world",
		"/w//api/world", "/w/alpha/../beta/api/world", "/api/world", "/w/" + filepath.Base(root) + "/api/world", "/w/.%2falpha/api/world"} {
		r := get(t, ts, path)
		expect(t, r.status == http.StatusNotFound || r.status == http.StatusBadRequest, "%s: %d %s", path, r.status, r.body)
	}
	r := get(t, ts, "/w/gamma/")
	expect(t, strings.Contains(string(r.body), "/w/alpha/, /w/beta/"), "an unknown save's answer does not list the saves: %s", r.body)
	expect(t, len(fsys.calls) == 0, "refused requests touched the file system: %v", fsys.calls)

	// Two saves of one name, or none: refused.
	dup, err := mapserve.New(filepath.Join(root, "alpha"), mapserve.Options{Poll: -1})
	must(t, err)
	defer dup.Close()
	_, err = mapserve.NewMulti(servers[0], dup)
	expect(t, errors.Is(err, fs.ErrExist) && strings.Contains(err.Error(), `both named "alpha"`), "two saves named alpha: %v", err)
	_, err = mapserve.NewMulti()
	expect(t, errors.Is(err, fs.ErrInvalid), "no saves: %v", err)
}
