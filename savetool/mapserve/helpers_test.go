package mapserve_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/arksave/arksave/internal/savetest"
	"github.com/arksave/arksave/savetool/mapserve"
	"github.com/arksave/arksave/vfs"
)

// base is a save built once for the package's tests (chunks of 32 pixels:
// Delta, Full and Empty chunks, two pixel bodies, three generations);
// fresh copies it.
var base string

func TestMain(m *testing.M) { os.Exit(savetest.Main(m, &base)) }

func fresh(t testing.TB) string { return savetest.Fresh(t, base) }

func expect(t testing.TB, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Fatalf(format, args...)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// watchedFS records every file-system call the server makes.
type watchedFS struct {
	mu    sync.Mutex
	calls []fsCall
	opens int // files opened
	shuts int // files closed
}

type fsCall struct {
	op   vfs.Op
	name string
}

func (w *watchedFS) Inject(op vfs.Op, name string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, fsCall{op, name})
	switch op {
	case vfs.OpOpen, vfs.OpOpenRW, vfs.OpCreate, vfs.OpLock:
		w.opens++
	case vfs.OpClose:
		w.shuts++
	}
	return nil
}

// expectInside checks that every call read a name inside dir and that
// none could change anything or take a lock.
func (w *watchedFS) expectInside(t testing.TB, dir string) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	expect(t, len(w.calls) > 0, "no file-system call recorded")
	for _, c := range w.calls {
		rel, err := filepath.Rel(dir, c.name)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			t.Fatalf("%s of %s: outside the save %s", c.op, c.name, dir)
		}
		if c.op.Mutating() || c.op == vfs.OpOpenRW {
			t.Fatalf("%s of %s: the server must only read", c.op, c.name)
		}
	}
}

func (w *watchedFS) openFiles() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.opens - w.shuts
}

// newServer serves dir with o; the test's end closes both servers.
func newServer(t testing.TB, dir string, o mapserve.Options) (*mapserve.Server, *httptest.Server) {
	t.Helper()
	s, err := mapserve.New(dir, o)
	must(t, err)
	ts := httptest.NewServer(s)
	t.Cleanup(func() {
		s.Close() // ends the event streams first, so that ts.Close need not wait
		ts.Close()
	})
	return s, ts
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// get requests path of the test server, with headers given as pairs.
func get(t testing.TB, ts *httptest.Server, path string, headers ...string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, ts.URL+path, nil)
	must(t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := ts.Client().Do(req)
	must(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	must(t, err)
	return response{res.StatusCode, res.Header, body}
}

// getJSON requests path, expects 200 and decodes the JSON into v.
func getJSON(t testing.TB, ts *httptest.Server, path string, v any) {
	t.Helper()
	r := get(t, ts, path)
	expect(t, r.status == http.StatusOK, "GET %s: %d %s", path, r.status, r.body)
	expect(t, strings.HasPrefix(r.header.Get("Content-Type"), "application/json"), "GET %s: content type %q", path, r.header.Get("Content-Type"))
	must(t, json.Unmarshal(r.body, v))
}

// getTile requests a tile, expects a PNG and decodes it.
func getTile(t testing.TB, ts *httptest.Server, path string) (*image.RGBA, response) {
	t.Helper()
	r := get(t, ts, path)
	expect(t, r.status == http.StatusOK && r.header.Get("Content-Type") == "image/png", "GET %s: %d %s %s", path, r.status, r.header.Get("Content-Type"), r.body)
	img, err := png.Decode(bytes.NewReader(r.body))
	must(t, err)
	return toRGBA(img), r
}

func toRGBA(img image.Image) *image.RGBA {
	if rgba, ok := img.(*image.RGBA); ok {
		return rgba
	}
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			r, g, bl, a := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
			out.Pix[out.PixOffset(x, y)+0] = uint8(r >> 8)
			out.Pix[out.PixOffset(x, y)+1] = uint8(g >> 8)
			out.Pix[out.PixOffset(x, y)+2] = uint8(bl >> 8)
			out.Pix[out.PixOffset(x, y)+3] = uint8(a >> 8)
		}
	}
	return out
}
