package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/arksave/arksave/internal/testkit/savetest"
)

// serve prints where it serves the map, serves it, and stops when its
// context is done (Ctrl-C).
func TestServe(t *testing.T) {
	dir := fresh(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines, done := startServe(t, ctx, dir, 1)
	line := lines[0]
	m := regexp.MustCompile(`^serving the map of .* \(generation 3\) at (http://127\.0\.0\.1:\d+/)\n$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("serve says %q", line)
	}
	res, err := http.Get(m[1] + "api/world")
	must(t, err)
	var w struct{ Generation uint64 }
	must(t, json.NewDecoder(res.Body).Decode(&w))
	res.Body.Close()
	if res.StatusCode != http.StatusOK || w.Generation != 3 {
		t.Fatalf("/api/world: %d, generation %d", res.StatusCode, w.Generation)
	}
	res, err = http.Get(m[1])
	must(t, err)
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	expectContains(t, string(page), "<title>arksave map</title>", `src="app.js"`)
	cancel()
	must(t, <-done)
}

// serve serves several saves, given one by one or as the slots of a
// folder, each at /w/NAME/ with the names of the others for the page's
// switcher; a name that is not one of them reads nothing.
func TestServeSeveralSaves(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"alpha", "beta"} {
		must(t, savetest.CopyDir(base, filepath.Join(root, name)))
	}
	for _, args := range [][]string{{filepath.Join(root, "alpha"), filepath.Join(root, "beta")}, {"--root", root}} {
		ctx, cancel := context.WithCancel(context.Background())
		lines, done := startServeArgs(t, ctx, 3, args...)
		urls := map[string]string{}
		for _, line := range lines[:2] {
			m := regexp.MustCompile(`^serving the map of .*(alpha|beta) \(generation 3\) at (http://127\.0\.0\.1:\d+/w/(alpha|beta)/)\n$`).FindStringSubmatch(line)
			if m == nil || m[1] != m[3] {
				t.Fatalf("serve %q says %q", args, lines)
			}
			urls[m[1]] = m[2]
		}
		expectContains(t, lines[2], "terrain not generated", "mapserve.Options.Generator")
		for name, url := range urls {
			var w struct {
				Save       string
				Saves      []string
				Generation uint64
			}
			res, err := http.Get(url + "api/world")
			must(t, err)
			must(t, json.NewDecoder(res.Body).Decode(&w))
			res.Body.Close()
			if res.StatusCode != http.StatusOK || w.Save != name || w.Generation != 3 || len(w.Saves) != 2 || !slices.Contains(w.Saves, "alpha") || !slices.Contains(w.Saves, "beta") {
				t.Fatalf("%s: %d %+v", url, res.StatusCode, w)
			}
		}
		other := strings.Replace(urls["alpha"], "/w/alpha/", "/w/gamma/", 1)
		for _, u := range []string{other + "api/world", strings.Replace(other, "/w/gamma/", "/w/..%2falpha/", 1) + "api/world"} {
			res, err := http.Get(u)
			must(t, err)
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "/w/alpha/, /w/beta/") {
				t.Fatalf("%s: %d %s", u, res.StatusCode, body)
			}
		}
		cancel()
		must(t, <-done)
	}
}

func TestServeErrors(t *testing.T) {
	code, _, stderr := arksave("serve")
	expectCode(t, 2, code, stderr)
	expectContains(t, stderr, "no save directory given")
	code, _, stderr = arksave("serve", "--root", t.TempDir(), base)
	expectCode(t, 2, code, stderr)
	expectContains(t, stderr, "not both")
	code, _, stderr = arksave("serve", "--root", t.TempDir())
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, "holds no save")
	code, _, stderr = arksave("serve", base, base)
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, "both named")
	code, _, stderr = arksave("serve", "--poll", "0", base)
	expectCode(t, 2, code, stderr)
	code, _, stderr = arksave("serve", t.TempDir())
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, "is not a save")
	code, _, stderr = arksave("serve", "--addr", "127.0.0.1:99999", base)
	expectCode(t, 1, code, stderr)
	expectContains(t, stderr, "arksave serve:")
}

// startServe runs serve on dir on a free port until ctx is done, and
// returns the first n lines it prints and the channel of its result.
func startServe(t *testing.T, ctx context.Context, dir string, n int) ([]string, <-chan error) {
	t.Helper()
	return startServeArgs(t, ctx, n, dir)
}

// startServeArgs runs serve with args on a free port until ctx is done,
// and returns the first n lines it prints and the channel of its result.
func startServeArgs(t *testing.T, ctx context.Context, n int, args ...string) ([]string, <-chan error) {
	t.Helper()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, append([]string{"--addr", "127.0.0.1:0"}, args...), pw, io.Discard)
		pw.Close()
	}()
	r := bufio.NewReader(pr)
	var lines []string
	for len(lines) < n {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("serve stopped: %v; said %q; %v", err, lines, <-done)
		}
		lines = append(lines, line)
	}
	go io.Copy(io.Discard, pr)
	return lines, done
}
