package mapserve_test

import (
	"encoding/json"
	"fmt"
	"image"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/storetool"
	"github.com/arksave/arksave/internal/testkit/savetest"
	"github.com/arksave/arksave/mapserve"
)

// world is what the tests read of /api/world.
type world struct {
	Generation uint64   `json:"generation"`
	ChunkSize  int      `json:"chunk_size"`
	TileSize   int      `json:"tile_size"`
	MaxLevel   int      `json:"max_level"`
	Generator  bool     `json:"generator"`
	Extent     [4]int   `json:"extent"`
	Bounds     [4]int   `json:"bounds"`
	Bodies     int      `json:"bodies"`
	Warnings   []string `json:"warnings"`
	Error      string   `json:"error"`
	Chunks     []struct {
		X, Y   int32
		Kind   string
		Bodies int
	} `json:"chunks"`
	Cache struct{ Hits, Misses int64 } `json:"cache"`
}

// storeOf opens the committed chunk store of dir for the test to compare.
func storeOf(t testing.TB, dir string) *chunkstore.Store {
	t.Helper()
	s, _, err := savetool.OpenStore(dir, 0, savetool.Options{})
	must(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestWorld(t *testing.T) {
	_, ts := newServer(t, base, mapserve.Options{Poll: -1, Generator: savetest.Generator})
	var w world
	getJSON(t, ts, "/api/world", &w)
	const n = savetest.ChunkSize
	expect(t, w.Generation == 3 && w.ChunkSize == n && w.TileSize == mapserve.TileSize && w.MaxLevel == mapserve.MaxLevel && w.Generator,
		"world %+v", w)
	expect(t, w.Bounds == [4]int{-n, -n, 2 * n, 2 * n} && w.Extent == [4]int{-2 * n, -2 * n, 3 * n, 3 * n}, "bounds %v, extent %v", w.Bounds, w.Extent)
	want, got := storedAt(t, base, 0), listed(w)
	bodies := 0
	for _, c := range w.Chunks {
		bodies += c.Bodies
	}
	expect(t, fmt.Sprint(got) == fmt.Sprint(want) && len(got) == 6, "chunks %v, want %v", got, want)
	expect(t, bodies == 2 && w.Bodies == 2, "%d bodies in chunks, %d in all", bodies, w.Bodies)
}

// A level-0 tile is the world as arksave render draws it, pixel for pixel
// (bodies included), with and without the game's generator; what lies
// outside the map's extent is transparent.
func TestTilesAtFullZoomAreTheRender(t *testing.T) {
	for _, gen := range []chunkstore.Generator{savetest.Generator, nil} {
		t.Run(fmt.Sprintf("generator=%v", gen != nil), func(t *testing.T) {
			_, ts := newServer(t, base, mapserve.Options{Poll: -1, Generator: gen})
			var w world
			getJSON(t, ts, "/api/world", &w)
			extent := image.Rect(w.Extent[0], w.Extent[1], w.Extent[2], w.Extent[3])
			tiles := 0
			for ty := -1; ty <= 0; ty++ {
				for tx := -1; tx <= 0; tx++ {
					img, _ := getTile(t, ts, fmt.Sprintf("/api/tiles/0/%d/%d.png", tx, ty))
					r := image.Rect(tx*256, ty*256, (tx+1)*256, (ty+1)*256)
					clip := r.Intersect(extent)
					want, _, err := savetool.RenderDir(base, savetool.RenderOptions{Generator: gen, Region: clip})
					must(t, err)
					for y := r.Min.Y; y < r.Max.Y; y++ {
						for x := r.Min.X; x < r.Max.X; x++ {
							got := img.RGBAAt(x-r.Min.X, y-r.Min.Y)
							if !(image.Point{x, y}).In(clip) {
								expect(t, got.A == 0, "tile %d,%d: pixel %d,%d outside the map is %v, want transparent", tx, ty, x, y, got)
								continue
							}
							w := want.RGBAAt(x-clip.Min.X, y-clip.Min.Y)
							expect(t, got == w, "tile %d,%d: world pixel %d,%d is %v, render draws %v", tx, ty, x, y, got, w)
						}
					}
					tiles++
				}
			}
			expect(t, tiles == 4, "%d tiles", tiles)
		})
	}
}

// A tile of level z is the four tiles of level z-1 under it at half their
// size, each pixel the mean of four.
func TestTileLevelsHalveTheLevelBelow(t *testing.T) {
	_, ts := newServer(t, base, mapserve.Options{Poll: -1, Generator: savetest.Generator})
	var w world
	getJSON(t, ts, "/api/world", &w)
	extent := image.Rect(w.Extent[0], w.Extent[1], w.Extent[2], w.Extent[3])
	for z := 1; z <= 3; z++ {
		for _, tc := range [][2]int{{-1, -1}, {0, 0}} {
			tx, ty := tc[0], tc[1]
			img, _ := getTile(t, ts, fmt.Sprintf("/api/tiles/%d/%d/%d.png", z, tx, ty))
			for q := range 4 {
				cx, cy := 2*tx+q%2, 2*ty+q/2
				span := 256 << (z - 1)
				var child *image.RGBA
				if image.Rect(cx*span, cy*span, (cx+1)*span, (cy+1)*span).Overlaps(extent) {
					child, _ = getTile(t, ts, fmt.Sprintf("/api/tiles/%d/%d/%d.png", z-1, cx, cy))
				}
				for y := range 128 {
					for x := range 128 {
						got := img.RGBAAt(q%2*128+x, q/2*128+y)
						if child == nil {
							expect(t, got.A == 0, "level %d: outside the map is %v", z, got)
							continue
						}
						var sum [4]int
						for _, d := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
							c := child.RGBAAt(2*x+d[0], 2*y+d[1])
							sum[0], sum[1], sum[2], sum[3] = sum[0]+int(c.R), sum[1]+int(c.G), sum[2]+int(c.B), sum[3]+int(c.A)
						}
						// PNG stores colours unpremultiplied: edge pixels of the
						// map (partly transparent) may be a step or two off.
						tol := 0
						if got.A != 255 {
							tol = 3
						}
						for i, v := range []uint8{got.R, got.G, got.B, got.A} {
							if d := int(v) - sum[i]/4; d > tol || d < -tol {
								t.Fatalf("level %d tile %d,%d pixel %d,%d: %v, want the mean of four below: %v", z, tx, ty, q%2*128+x, q/2*128+y, got, sum)
							}
						}
					}
				}
			}
		}
	}
}

// Tiles carry ETags made from the records drawn in them and revalidate:
// the same tile twice has the same ETag, If-None-Match gets 304, and tiles
// that draw different records differ.
func TestTileCaching(t *testing.T) {
	_, ts := newServer(t, base, mapserve.Options{Poll: -1, Generator: savetest.Generator})
	_, a := getTile(t, ts, "/api/tiles/0/0/0.png")
	etag := a.header.Get("ETag")
	expect(t, strings.HasPrefix(etag, `"`) && a.header.Get("Cache-Control") == "no-cache", "ETag %q, Cache-Control %q", etag, a.header.Get("Cache-Control"))
	_, b := getTile(t, ts, "/api/tiles/0/0/0.png?g=3")
	expect(t, b.header.Get("ETag") == etag, "ETag %q then %q", etag, b.header.Get("ETag"))
	r := get(t, ts, "/api/tiles/0/0/0.png", "If-None-Match", etag)
	expect(t, r.status == http.StatusNotModified && len(r.body) == 0, "revalidation: %d, %d bytes", r.status, len(r.body))
	r = get(t, ts, "/api/tiles/0/0/0.png", "If-None-Match", `"other"`)
	expect(t, r.status == http.StatusOK, "another ETag: %d", r.status)
	_, c := getTile(t, ts, "/api/tiles/0/-1/-1.png")
	expect(t, c.header.Get("ETag") != etag, "two tiles share the ETag %q", etag)
	var w world
	getJSON(t, ts, "/api/world", &w)
	expect(t, w.Cache.Hits > 0, "no cache hit after the same tile twice: %+v", w.Cache)
}

type chunkInfo struct {
	X, Y          int32
	Generation    uint64
	Kind          string
	Drawn         string
	Version       string
	ChangedPixels int    `json:"changed_pixels"`
	ChangedIn     uint64 `json:"changed_in"`
	Bodies        int
	BodyIDs       []string `json:"body_ids"`
	Record        *struct {
		Offset              int64
		Length, Stored, Raw uint32
		Compressed          bool
	}
	BodyRecord *struct{ Offset int64 } `json:"body_record"`
	Error      string
}

// A chunk's info is its record in the store: kind, offset and sizes,
// changed pixels of a delta, its bodies.
func TestChunkInfo(t *testing.T) {
	_, ts := newServer(t, base, mapserve.Options{Poll: -1, Generator: savetest.Generator})
	s := storeOf(t, base)
	seen := map[string]bool{}
	storetool.Tool.Entries(s, func(e storetool.Entry) bool {
		var c chunkInfo
		getJSON(t, ts, fmt.Sprintf("/api/chunk?x=%d&y=%d", e.Pos.X, e.Pos.Y), &c)
		expect(t, c.X == e.Pos.X && c.Y == e.Pos.Y && c.Generation == 3 && c.Error == "", "chunk %v: %+v", e.Pos, c)
		bodies, err := s.Bodies(e.Pos)
		must(t, err)
		var ids []string
		for _, b := range bodies {
			ids = append(ids, strconv.FormatUint(b.ID, 10))
		}
		expect(t, c.Bodies == len(bodies) && slices.Equal(c.BodyIDs, ids), "chunk %v: bodies %v, want %v", e.Pos, c.BodyIDs, ids)
		if e.Type == chunkstore.BodyBlock {
			expect(t, c.BodyRecord != nil && c.BodyRecord.Offset == e.Handle.Offset, "chunk %v: body record %+v, want %+v", e.Pos, c.BodyRecord, e.Handle)
			return true
		}
		seen[e.Type.String()] = true
		expect(t, c.Kind == e.Type.String(), "chunk %v: kind %q, want %v", e.Pos, c.Kind, e.Type)
		switch e.Type {
		case chunkstore.Empty:
			expect(t, c.Record == nil && c.Version == "empty", "empty chunk %v: %+v", e.Pos, c)
		default:
			ri, err := storetool.Tool.RecordInfo(s, e.Handle)
			must(t, err)
			expect(t, c.Record != nil && c.Record.Offset == e.Handle.Offset && c.Record.Length == e.Handle.Length &&
				c.Record.Stored == ri.Stored && c.Record.Raw == ri.Raw && c.Record.Compressed == ri.Compressed &&
				c.Version == strconv.FormatInt(e.Handle.Offset, 10), "chunk %v: record %+v, version %s; want %+v %+v", e.Pos, c.Record, c.Version, e.Handle, ri)
		}
		if e.Type == chunkstore.Delta {
			raw, _, err := storetool.Tool.ReadRaw(s, e.Pos)
			must(t, err)
			expect(t, c.ChangedPixels == len(raw.Delta) && c.ChangedPixels > 0, "delta chunk %v: %d changed pixels, want %d", e.Pos, c.ChangedPixels, len(raw.Delta))
		}
		return true
	})
	expect(t, seen["full"] && seen["delta"] && seen["empty"], "storage types seen: %v", seen)

	// A chunk inside the map that is not stored: generated, or hatched.
	var c chunkInfo
	getJSON(t, ts, "/api/chunk?x=0&y=-1", &c)
	expect(t, c.Kind == "not stored" && c.Drawn == "generated" && c.Record == nil, "unstored chunk: %+v", c)
	_, bare := newServer(t, base, mapserve.Options{Poll: -1})
	getJSON(t, bare, "/api/chunk?x=0&y=-1", &c)
	expect(t, c.Kind == "not stored" && strings.Contains(c.Drawn, "not stored"), "unstored chunk without a generator: %+v", c)
}

// The entity layer lists every pixel body with its id, position and
// bounds; one entity comes with its components, the export's view.
func TestEntities(t *testing.T) {
	_, ts := newServer(t, base, mapserve.Options{Poll: -1})
	var list struct {
		Generation uint64
		Entities   []mapserve.Entity
	}
	getJSON(t, ts, "/api/entities", &list)
	s := storeOf(t, base)
	var want []chunkstore.Body
	s.Entries(func(e chunkstore.Entry) bool {
		if e.Type == chunkstore.BodyBlock {
			bs, err := s.Bodies(e.Pos)
			must(t, err)
			want = append(want, bs...)
		}
		return true
	})
	expect(t, list.Generation == 3 && len(list.Entities) == len(want) && len(want) == 2, "entities %+v, want %d", list.Entities, len(want))
	for _, b := range want {
		i := slices.IndexFunc(list.Entities, func(e mapserve.Entity) bool { return e.ID == strconv.FormatUint(b.ID, 10) })
		expect(t, i >= 0, "body %d not listed", b.ID)
		e := list.Entities[i]
		r := savetool.BodyBounds(&b)
		expect(t, e.Kind == mapserve.KindBody && e.X == float64(b.X) && e.Y == float64(b.Y) && e.Bounds == [4]int{r.Min.X, r.Min.Y, r.Max.X, r.Max.Y} &&
			e.Components == nil, "entity %+v for body %d at %v,%v", e, b.ID, b.X, b.Y)

		var one struct {
			Generation uint64
			mapserve.Entity
		}
		getJSON(t, ts, fmt.Sprintf("/api/entity?kind=body&id=%d", b.ID), &one)
		wantComponents, err := json.Marshal(savetool.NewBodyEntry(&b))
		must(t, err)
		expect(t, one.ID == e.ID && string(one.Components) == string(wantComponents), "entity %d: %s, want %s", b.ID, one.Components, wantComponents)
	}
	r := get(t, ts, "/api/entity?kind=body&id=12345")
	expect(t, r.status == http.StatusNotFound, "a body that is not stored: %d", r.status)
}

func TestGenerationsAndCheck(t *testing.T) {
	_, ts := newServer(t, base, mapserve.Options{Poll: -1})
	var g struct {
		Generations []struct {
			Generation uint64
			Current    bool
		}
		Stores []struct{ Chunks, Bodies int }
		World  *struct {
			File     string
			Entities uint64
			Tables   []struct{ Components []string }
			Checksum string
		}
	}
	getJSON(t, ts, "/api/generations", &g)
	expect(t, len(g.Generations) == 3 && g.Generations[0].Current && g.Generations[0].Generation == 3 && g.Generations[2].Generation == 1,
		"generations %+v", g.Generations)
	expect(t, len(g.Stores) == 1 && g.Stores[0].Chunks == 6 && g.Stores[0].Bodies == 2, "stores %+v", g.Stores)
	expect(t, g.World != nil && g.World.File == "world-3.pecs" && g.World.Entities == 2 && strings.HasSuffix(g.World.Checksum, ": ok"), "world %+v", g.World)

	var c savetool.CheckJSON
	getJSON(t, ts, "/api/check", &c)
	expect(t, c.OK && c.Generation == 3 && c.Backups == 2 && c.Worlds == 3 && len(c.Problems) == 0, "check %+v", c)
}

// A damaged backup does not stop the map; check names it.
func TestCheckOfADamagedSave(t *testing.T) {
	dir := fresh(t)
	must(t, savetest.Flip(dir+"/backups/world-1.pecs", 100))
	_, ts := newServer(t, dir, mapserve.Options{Poll: -1})
	var c savetool.CheckJSON
	getJSON(t, ts, "/api/check?fresh=1", &c)
	expect(t, !c.OK && len(c.Problems) == 1 && strings.Contains(c.Problems[0].File, "world-1.pecs"), "check %+v", c)
	getTile(t, ts, "/api/tiles/0/0/0.png")
}

// Serving reads only files of the save and changes nothing: no write, no
// lock, nothing outside the directory; every file it opens it closes.
func TestServingOnlyReadsTheSave(t *testing.T) {
	dir := fresh(t)
	watch := newWatchedFS()
	s, ts := newServer(t, dir, mapserve.Options{Poll: -1, FS: watch, Generator: savetest.Generator})
	for _, p := range []string{"/", "/app.js", "/style.css", "/api/world", "/api/tiles/0/0/0.png", "/api/tiles/3/0/0.png",
		"/api/chunk?x=1&y=0", "/api/entities", "/api/generations", "/api/check"} {
		r := get(t, ts, p)
		expect(t, r.status == http.StatusOK, "GET %s: %d %s", p, r.status, r.body)
	}
	_, err := s.Refresh()
	must(t, err)
	watch.expectInside(t, dir)
	shut(t, s, ts)
	expect(t, watch.openFiles() == 0, "%d files left open after Close", watch.openFiles())
}
