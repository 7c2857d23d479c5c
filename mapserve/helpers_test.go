package mapserve_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/arksave/arksave/internal/testkit"
	"github.com/arksave/arksave/internal/testkit/savetest"
	"github.com/arksave/arksave/mapserve"
	"github.com/arksave/arksave/vfs"
)

// base is a save built once for the package's tests (chunks of 32 pixels:
// Delta, Full and Empty chunks, two pixel bodies, three generations);
// fresh copies it.
var base string

func TestMain(m *testing.M) { os.Exit(savetest.Main(m, &base)) }

func fresh(t testing.TB) string { return savetest.Fresh(t, base) }

var expect, must = testkit.Expect, testkit.Must

// watchedFS is the real file system, recording every call the server
// makes and counting the files it holds open.
type watchedFS struct {
	vfs.FS
	mu    sync.Mutex
	calls []fsCall
	open  int
}

type fsCall struct {
	op   vfs.Op
	name string
}

func newWatchedFS() *watchedFS { return &watchedFS{FS: vfs.OS} }

func (w *watchedFS) record(op vfs.Op, name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, fsCall{op, name})
}

func (w *watchedFS) opened(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	w.open++
	w.mu.Unlock()
	return &watchedFile{File: f, w: w}, nil
}

func (w *watchedFS) Open(name string) (vfs.File, error) {
	w.record(vfs.OpOpen, name)
	return w.opened(w.FS.Open(name))
}

func (w *watchedFS) OpenRW(name string) (vfs.File, error) {
	w.record(vfs.OpOpenRW, name)
	return w.opened(w.FS.OpenRW(name))
}

func (w *watchedFS) Create(name string) (vfs.File, error) {
	w.record(vfs.OpCreate, name)
	return w.opened(w.FS.Create(name))
}

func (w *watchedFS) Lock(name string) (vfs.File, error) {
	w.record(vfs.OpLock, name)
	return w.opened(w.FS.Lock(name))
}

func (w *watchedFS) Rename(from, to string) error {
	w.record(vfs.OpRename, from)
	w.record(vfs.OpRename, to)
	return w.FS.Rename(from, to)
}

func (w *watchedFS) Remove(name string) error {
	w.record(vfs.OpRemove, name)
	return w.FS.Remove(name)
}

func (w *watchedFS) RemoveAll(name string) error {
	w.record(vfs.OpRemoveAll, name)
	return w.FS.RemoveAll(name)
}

func (w *watchedFS) MkdirAll(name string) error {
	w.record(vfs.OpMkdirAll, name)
	return w.FS.MkdirAll(name)
}

func (w *watchedFS) ReadDir(name string) ([]string, error) {
	w.record(vfs.OpReadDir, name)
	return w.FS.ReadDir(name)
}

func (w *watchedFS) SyncDir(name string) error {
	w.record(vfs.OpSyncDir, name)
	return w.FS.SyncDir(name)
}

func (w *watchedFS) Stat(name string) (fs.FileInfo, error) {
	w.record(vfs.OpStat, name)
	return w.FS.Stat(name)
}

func (w *watchedFS) Lstat(name string) (fs.FileInfo, error) {
	w.record(vfs.OpLstat, name)
	return w.FS.Lstat(name)
}

type watchedFile struct {
	vfs.File
	w      *watchedFS
	closed sync.Once
}

func (f *watchedFile) WriteAt(p []byte, off int64) (int, error) {
	f.w.record(vfs.OpWrite, f.Name())
	return f.File.WriteAt(p, off)
}

func (f *watchedFile) Truncate(n int64) error {
	f.w.record(vfs.OpTruncate, f.Name())
	return f.File.Truncate(n)
}

func (f *watchedFile) Sync() error {
	f.w.record(vfs.OpSync, f.Name())
	return f.File.Sync()
}

func (f *watchedFile) Close() error {
	f.closed.Do(func() {
		f.w.mu.Lock()
		f.w.open--
		f.w.mu.Unlock()
	})
	return f.File.Close()
}

// expectInside checks that the server read the save, every call naming a
// file inside dir, none that could change anything or take a lock.
func (w *watchedFS) expectInside(t testing.TB, dir string) {
	t.Helper()
	w.mu.Lock()
	n := len(w.calls)
	w.mu.Unlock()
	expect(t, n > 0, "no file-system call recorded")
	w.expectInsideOrNone(t, dir)
}

// expectInsideOrNone is expectInside when the server may not have read
// anything.
func (w *watchedFS) expectInsideOrNone(t testing.TB, dir string) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
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

// reset forgets the calls recorded.
func (w *watchedFS) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = w.calls[:0]
}

// openFiles returns how many files the server holds open.
func (w *watchedFS) openFiles() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.open
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

// shut closes the server, then waits for the requests under way (whose
// references keep a generation's store open until they end).
func shut(t testing.TB, s *mapserve.Server, ts *httptest.Server) {
	t.Helper()
	must(t, s.Close())
	ts.Close()
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
