package mapserve_test

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
	"github.com/arksave/arksave/mapserve"
)

// A save for the benchmarks: 16 stored chunks of 512x512 terrain pixels,
// three in four deltas of about 3% of their pixels, one in four Full.
const (
	benchChunks = 16
	benchSize   = 512
)

var (
	benchOnce sync.Once
	benchDir  string
	benchErr  error
)

func benchSave(b *testing.B) string {
	b.Helper()
	benchOnce.Do(func() {
		benchDir = filepath.Join(filepath.Dir(base), "bench") // removed with the small save
		benchErr = savetest.BuildLarge(benchDir, benchChunks, benchSize)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDir
}

// benchTiles are the level-0 tiles over the stored chunks: two by two a
// chunk, the chunks at -2..1 on both axes.
func benchTiles() []string {
	var out []string
	for ty := -4; ty < 4; ty++ {
		for tx := -4; tx < 4; tx++ {
			out = append(out, fmt.Sprintf("/api/tiles/0/%d/%d.png", tx, ty))
		}
	}
	return out
}

func serveTile(b *testing.B, h http.Handler, path string, headers ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK && rec.Code != http.StatusNotModified {
		b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
	}
	return rec
}

// A tile at full zoom from stored chunks (with the game's generator under
// the deltas), rendered and encoded as the server sends it; each request
// misses the cache. Beside it: the same tile from the cache, a
// revalidation (304), and what arksave render does for the same 256x256
// region (savetool.RenderStore and png.Encode at its default level).
func BenchmarkTile(b *testing.B) {
	dir := benchSave(b)
	tiles := benchTiles()
	cold := func(b *testing.B, o mapserve.Options) {
		o.Poll, o.CacheBytes = -1, 1 // a cache of one tile: cycling through 64 always misses
		s, err := mapserve.New(dir, o)
		must(b, err)
		defer s.Close()
		b.ReportAllocs()
		i, size := 0, 0
		for b.Loop() {
			size += serveTile(b, s, tiles[i%len(tiles)]).Body.Len()
			i++
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/tile")
		b.ReportMetric(float64(size)/float64(b.N), "B/tile")
	}
	b.Run("FullZoom_Stored_Generator", func(b *testing.B) { cold(b, mapserve.Options{Generator: savetest.Generator}) })
	b.Run("FullZoom_Stored_NoGenerator", func(b *testing.B) { cold(b, mapserve.Options{}) })
	b.Run("Cached", func(b *testing.B) {
		s, err := mapserve.New(dir, mapserve.Options{Poll: -1, Generator: savetest.Generator})
		must(b, err)
		defer s.Close()
		serveTile(b, s, tiles[9])
		b.ReportAllocs()
		for b.Loop() {
			serveTile(b, s, tiles[9])
		}
	})
	b.Run("Revalidated", func(b *testing.B) {
		s, err := mapserve.New(dir, mapserve.Options{Poll: -1, Generator: savetest.Generator})
		must(b, err)
		defer s.Close()
		etag := serveTile(b, s, tiles[9]).Header().Get("ETag")
		b.ReportAllocs()
		for b.Loop() {
			if rec := serveTile(b, s, tiles[9], "If-None-Match", etag); rec.Code != http.StatusNotModified {
				b.Fatalf("revalidation: %d", rec.Code)
			}
		}
	})
	b.Run("Peer_RenderStore_PNG", func(b *testing.B) {
		st, _, err := savetool.OpenStore(dir, 0, savetool.Options{})
		must(b, err)
		defer st.Close()
		pal := savetool.DefaultPalette()
		b.ReportAllocs()
		i, size := 0, 0
		for b.Loop() {
			tx, ty := i%8-4, i/8%8-4
			img, _, err := savetool.RenderStore(st, savetool.RenderOptions{Generator: savetest.Generator, Palette: pal,
				Region: image.Rect(tx*256, ty*256, tx*256+256, ty*256+256)})
			must(b, err)
			var buf bytes.Buffer
			must(b, png.Encode(&buf, img))
			size += buf.Len()
			i++
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/tile")
		b.ReportMetric(float64(size)/float64(b.N), "B/tile")
	})
}
