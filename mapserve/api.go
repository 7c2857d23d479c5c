package mapserve

import (
	"cmp"
	"encoding/json"
	"fmt"
	"image"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/pecs"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/storetool"
)

// route checks a request and hands it to its handler. Only GET and HEAD
// are served; a path that is not clean, names nothing, or a parameter the
// endpoint does not take is refused before anything is read.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		httpError(w, http.StatusMethodNotAllowed, "mapserve: only GET and HEAD are served")
		return
	}
	p := r.URL.Path
	if p == "" || p[0] != '/' || path.Clean(p) != p || strings.ContainsAny(p, "\\\x00") || strings.Contains(p, "..") {
		httpError(w, http.StatusBadRequest, fmt.Sprintf("mapserve: %q is not a clean path", p))
		return
	}
	if f, ok := staticFiles[p]; ok {
		if _, err := query(r); err != nil {
			httpError(w, http.StatusBadRequest, err.Error())
			return
		}
		serveBytes(w, r, f.contentType, f.etag, f.data)
		return
	}
	type endpoint struct {
		params []string
		fn     func(http.ResponseWriter, *http.Request, *view, url.Values)
	}
	var ep endpoint
	switch {
	case p == "/api/world":
		ep = endpoint{[]string{"gen"}, s.serveWorld}
	case strings.HasPrefix(p, "/api/tiles/"):
		ep = endpoint{[]string{"g", "gen"}, s.serveTile}
	case p == "/api/chunk":
		ep = endpoint{[]string{"x", "y", "gen"}, s.serveChunk}
	case p == "/api/entities":
		ep = endpoint{[]string{"gen"}, s.serveEntities}
	case p == "/api/entity":
		ep = endpoint{[]string{"kind", "id", "gen"}, s.serveEntity}
	case p == "/api/diff":
		ep = endpoint{[]string{"a", "b"}, s.serveDiff}
	case p == "/api/generations":
		ep = endpoint{nil, s.serveGenerations}
	case p == "/api/check":
		ep = endpoint{[]string{"fresh"}, s.serveCheck}
	case p == "/api/events":
		if _, err := query(r); err != nil {
			httpError(w, http.StatusBadRequest, err.Error())
			return
		}
		s.serveEvents(w, r)
		return
	default:
		httpError(w, http.StatusNotFound, fmt.Sprintf("mapserve: %s: no such page", p))
		return
	}
	q, err := query(r, ep.params...)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	live := s.acquire()
	if live == nil {
		httpError(w, http.StatusServiceUnavailable, errClosed.Error())
		return
	}
	defer live.release()
	v := s.viewOf(w, live, q)
	if v == nil {
		return
	}
	defer v.release()
	ep.fn(w, r, v, q)
}

// query parses a request's parameters, refusing any but those allowed and
// any given twice.
func query(r *http.Request, allowed ...string) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, fmt.Errorf("mapserve: bad query: %w", err)
	}
	for k, vs := range q {
		if !slices.Contains(allowed, k) {
			return nil, fmt.Errorf("mapserve: %s takes no parameter %q", r.URL.Path, k)
		}
		if len(vs) > 1 {
			return nil, fmt.Errorf("mapserve: parameter %q given %d times", k, len(vs))
		}
	}
	return q, nil
}

// intParam parses an integer parameter within [lo, hi].
func intParam(name, s string, lo, hi int64) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("mapserve: %s %q: want a whole number from %d to %d", name, s, lo, hi)
	}
	return n, nil
}

func httpError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, struct {
		Error string `json:"error"`
	}{msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status, data = http.StatusInternalServerError, []byte(`{"error":"mapserve: cannot encode the answer"}`)
	}
	writeJSONBytes(w, status, data)
}

func writeJSONBytes(w http.ResponseWriter, status int, data []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "no-store")
	}
	h.Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(status)
	w.Write(data)
}

// serveBytes serves content with its ETag, answering 304 to a request that
// has it.
func serveBytes(w http.ResponseWriter, r *http.Request, contentType, etag string, data []byte) {
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "no-cache")
	if matchETag(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(data)
	}
}

// matchETag reports whether an If-None-Match header names etag.
func matchETag(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}

// rect4 is a rectangle as JSON: [x0, y0, x1, y1).
func rect4(r image.Rectangle) [4]int { return [4]int{r.Min.X, r.Min.Y, r.Max.X, r.Max.Y} }

// maxListed bounds the chunks /api/world lists and the entities
// /api/entities lists.
const maxListed = 50000

type storedJSON struct {
	X      int32  `json:"x"`
	Y      int32  `json:"y"`
	Kind   string `json:"kind"` // "empty", "delta", "full"; "none" when only bodies are stored
	Bodies int    `json:"bodies,omitempty"`
}

// worldJSON is /api/world.
type worldJSON struct {
	Save             string       `json:"save"`            // the directory's name
	Saves            []string     `json:"saves,omitempty"` // the saves served with it (NewMulti), each at /w/NAME/
	Generation       uint64       `json:"generation"`
	Live             uint64       `json:"live"` // the committed generation the map follows
	Modified         time.Time    `json:"modified"`
	Created          time.Time    `json:"created"`
	Store            string       `json:"store"`
	ChunkSize        int          `json:"chunk_size"`
	TileSize         int          `json:"tile_size"`
	MaxLevel         int          `json:"max_level"`
	Seed             uint64       `json:"seed"`
	Generator        bool         `json:"generator"` // unstored chunks are drawn as generated
	GeneratorVersion uint32       `json:"generator_version"`
	Extent           [4]int       `json:"extent"` // the map: stored chunks and a chunk around them
	Bounds           [4]int       `json:"bounds"` // the stored chunks
	Chunks           []storedJSON `json:"chunks"` // by (y, x)
	ChunksTruncated  bool         `json:"chunks_truncated,omitempty"`
	Bodies           int          `json:"bodies"`
	Entities         int          `json:"entities"` // regional entities that are not pixel bodies
	Players          int          `json:"players"`  // players on the map: those with a position
	Warnings         []string     `json:"warnings,omitempty"`
	Error            string       `json:"error,omitempty"` // why the newest generation does not show
	Cache            struct {
		Hits   int64 `json:"hits"`
		Misses int64 `json:"misses"`
		Bytes  int64 `json:"bytes"`
	} `json:"cache"`
}

func (s *Server) serveWorld(w http.ResponseWriter, r *http.Request, v *view, _ url.Values) {
	out := worldJSON{
		Save: filepath.Base(s.dir), Generation: v.man.Generation,
		Modified: time.UnixMilli(v.man.ModifiedMS).UTC(), Created: time.UnixMilli(v.man.CreatedMS).UTC(),
		Store: v.man.Chunks.Name, ChunkSize: v.size, TileSize: tileSize, MaxLevel: maxLevel,
		Seed: v.store.Options().Seed, Generator: s.opts.Generator != nil, GeneratorVersion: v.store.GeneratorVersion(),
		Extent: rect4(v.extent), Bounds: rect4(v.bounds), Chunks: []storedJSON{}, Bodies: len(v.bodies), Entities: len(v.regionals), Players: len(v.players), Warnings: v.warnings,
		Saves: s.saves,
	}
	if err := s.refreshErr(); err != nil {
		out.Error = err.Error()
	}
	out.Live = s.Generation()
	out.Cache.Hits, out.Cache.Misses, out.Cache.Bytes = s.cache.stats()
	out.Chunks = v.listing()
	out.ChunksTruncated = len(out.Chunks) < len(v.chunks)
	writeJSON(w, http.StatusOK, out)
}

// listing returns what the view stores by position, (y, x), at most
// maxListed positions; made once.
func (v *view) listing() []storedJSON {
	v.listOnce.Do(func() {
		positions := make([]chunkPos, 0, len(v.chunks))
		for p := range v.chunks {
			positions = append(positions, p)
		}
		slices.SortFunc(positions, comparePos)
		v.list = make([]storedJSON, 0, min(len(positions), maxListed))
		for _, p := range positions[:min(len(positions), maxListed)] {
			c := v.chunks[p]
			v.list = append(v.list, storedJSON{X: p.X, Y: p.Y, Kind: c.kind(), Bodies: len(c.bodies)})
		}
	})
	return v.list
}

// kind names what is stored at a position, as the export does.
func (c *chunkRec) kind() string {
	if c.damaged != nil {
		return "damaged"
	}
	if !c.hasChunk {
		return "none"
	}
	return c.typ.String()
}

// serveTile serves /api/tiles/{z}/{x}/{y}.png.
func (s *Server) serveTile(w http.ResponseWriter, r *http.Request, v *view, q url.Values) {
	z, x, y, err := parseTile(strings.TrimPrefix(r.URL.Path, "/api/tiles/"))
	if err == nil && q.Has("g") {
		_, err = intParam("g", q.Get("g"), 0, 1<<62)
	}
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	if !tileRect(z, x, y).Overlaps(v.extent) {
		httpError(w, http.StatusNotFound, fmt.Sprintf("mapserve: tile %d/%d/%d lies outside the map %v", z, x, y, v.extent))
		return
	}
	key := s.keyOf(v, z, x, y)
	etag := fmt.Sprintf(`"%d.%d.%d.%016x"`, z, x, y, key.sum)
	if matchETag(r.Header.Get("If-None-Match"), etag) {
		w.Header().Set("ETag", etag)
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	data, err := s.pngOf(v, z, x, y, key)
	if err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	serveBytes(w, r, "image/png", etag, data)
}

// parseTile parses "{z}/{x}/{y}.png".
func parseTile(rest string) (z, x, y int, err error) {
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || !strings.HasSuffix(parts[2], ".png") {
		return 0, 0, 0, fmt.Errorf("mapserve: a tile is /api/tiles/{z}/{x}/{y}.png, not %q", rest)
	}
	zz, err := intParam("zoom level", parts[0], 0, maxLevel)
	if err != nil {
		return 0, 0, 0, err
	}
	xx, err := intParam("tile x", parts[1], -maxTileCoord, maxTileCoord)
	if err != nil {
		return 0, 0, 0, err
	}
	yy, err := intParam("tile y", strings.TrimSuffix(parts[2], ".png"), -maxTileCoord, maxTileCoord)
	if err != nil {
		return 0, 0, 0, err
	}
	return int(zz), int(xx), int(yy), nil
}

// recordJSON describes a record of the store.
type recordJSON struct {
	Offset     int64  `json:"offset"`
	Length     uint32 `json:"length"` // header included
	Stored     uint32 `json:"stored"` // payload bytes in the file
	Raw        uint32 `json:"raw"`    // payload bytes decoded
	Compressed bool   `json:"compressed"`
}

// chunkJSON is /api/chunk.
type chunkJSON struct {
	X          int32  `json:"x"`
	Y          int32  `json:"y"`
	Generation uint64 `json:"generation"`
	// Kind is what the store holds: "full", "delta", "empty", or "not
	// stored"; Drawn says how the map draws it.
	Kind  string `json:"kind"`
	Drawn string `json:"drawn"`
	// Version names the version of the chunk stored: its record's offset
	// (a store only appends, so each version of a chunk is a new record).
	Version string      `json:"version,omitempty"`
	Record  *recordJSON `json:"record,omitempty"`
	// ChangedIn is the generation in which the server saw the chunk's
	// record change (0: not since it started).
	ChangedIn     uint64      `json:"changed_in,omitempty"`
	ChangedPixels int         `json:"changed_pixels,omitempty"` // a delta's pixels that differ from the generator's
	Bodies        int         `json:"bodies"`
	BodyIDs       []string    `json:"body_ids,omitempty"`
	BodyRecord    *recordJSON `json:"body_record,omitempty"`
	// Entities counts the chunk's regional entities that are not pixel
	// bodies; EntityIDs are their stable ids.
	Entities  int      `json:"entities"`
	EntityIDs []string `json:"entity_ids,omitempty"`
	Error     string   `json:"error,omitempty"`
}

func (s *Server) serveChunk(w http.ResponseWriter, r *http.Request, v *view, q url.Values) {
	var xy [2]int64
	for i, name := range []string{"x", "y"} {
		if !q.Has(name) {
			httpError(w, http.StatusBadRequest, "mapserve: /api/chunk takes the chunk's x and y")
			return
		}
		n, err := intParam("chunk "+name, q.Get(name), -1<<31, 1<<31-1)
		if err != nil {
			httpError(w, http.StatusBadRequest, err.Error())
			return
		}
		xy[i] = n
	}
	pos := chunkPos{X: int32(xy[0]), Y: int32(xy[1])}
	if !v.chunkRect(pos).Overlaps(v.extent) {
		httpError(w, http.StatusNotFound, fmt.Sprintf("mapserve: chunk %v lies outside the map %v", pos, v.extent))
		return
	}
	writeJSON(w, http.StatusOK, s.describeChunk(v, pos))
}

// describeChunk describes the chunk at pos of view v.
func (s *Server) describeChunk(v *view, pos chunkPos) chunkJSON {
	out := chunkJSON{X: pos.X, Y: pos.Y, Generation: v.man.Generation, Kind: "not stored", Drawn: "hatched: not stored (no generator)"}
	if s.opts.Generator != nil {
		out.Drawn = "generated"
	}
	c := v.chunks[pos]
	if c == nil {
		return out
	}
	record := func(h storetool.Handle) (*recordJSON, error) {
		ri, err := storetool.Tool.RecordInfo(v.store, h)
		if err != nil {
			return nil, err
		}
		return &recordJSON{Offset: h.Offset, Length: h.Length, Stored: ri.Stored, Raw: ri.Raw, Compressed: ri.Compressed}, nil
	}
	var errs []string
	if c.hasChunk {
		out.Kind, out.ChangedIn = c.typ.String(), c.changedIn
		switch c.typ {
		case chunkstore.Empty:
			out.Drawn, out.Version = "as stored: all air", "empty"
		case chunkstore.Full:
			out.Drawn = "as stored"
		default:
			out.Drawn = "its changed pixels over flat grey (no generator)"
			if s.opts.Generator != nil {
				out.Drawn = "its changed pixels over the generated chunk"
			}
		}
		if !c.handle.IsZero() {
			out.Version = strconv.FormatInt(c.handle.Offset, 10)
			rec, err := record(c.handle)
			out.Record = rec
			if err == nil && c.typ == chunkstore.Delta {
				var raw storetool.RawChunk
				if raw, _, err = storetool.Tool.ReadRawKey(v.store, v.key(pos)); err == nil {
					out.ChangedPixels = len(raw.Delta)
				}
			}
			if err != nil {
				out.Drawn = "hatched red: the record does not read"
				errs = append(errs, err.Error())
			}
		}
	}
	if c.damaged != nil {
		// Its newest record was cut: whatever older one still reads is
		// not the generation's.
		out.Kind, out.Drawn = "damaged", "hatched red: the record does not read"
		errs = append(errs, c.damaged.Error())
	}
	if !c.bodyBlock.IsZero() {
		out.Bodies = len(c.bodies)
		for _, b := range c.bodies {
			out.BodyIDs = append(out.BodyIDs, b.ID)
		}
		out.Entities = len(c.regionals)
		for _, r := range c.regionals {
			out.EntityIDs = append(out.EntityIDs, r.ID)
		}
		rec, err := record(c.bodyBlock)
		out.BodyRecord = rec
		if err == nil {
			err = c.bodyErr
		}
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	out.Error = strings.Join(errs, "; ")
	return out
}

// entitiesJSON is /api/entities.
type entitiesJSON struct {
	Generation uint64   `json:"generation"`
	Entities   []entity `json:"entities"`
	Truncated  bool     `json:"truncated,omitempty"`
}

func (s *Server) serveEntities(w http.ResponseWriter, r *http.Request, v *view, _ url.Values) {
	n := len(v.bodies) + len(v.regionals) + len(v.players)
	out := entitiesJSON{Generation: v.man.Generation, Entities: make([]entity, 0, min(n, maxListed)), Truncated: n > maxListed}
	for _, b := range v.bodies[:min(len(v.bodies), maxListed)] {
		out.Entities = append(out.Entities, b.entity)
	}
	for _, e := range v.regionals[:min(len(v.regionals), maxListed-len(out.Entities))] {
		out.Entities = append(out.Entities, e.listed())
	}
	for _, p := range v.players[:min(len(v.players), maxListed-len(out.Entities))] {
		out.Entities = append(out.Entities, p.listed())
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) serveEntity(w http.ResponseWriter, r *http.Request, v *view, q url.Values) {
	kind, id := q.Get("kind"), q.Get("id")
	if kind == "" {
		kind = kindBody
	}
	if kind != kindBody && kind != kindEntity && kind != kindPlayer {
		httpError(w, http.StatusBadRequest, fmt.Sprintf("mapserve: no entities of kind %q; the map has %q, %q and %q", kind, kindBody, kindEntity, kindPlayer))
		return
	}
	if kind == kindPlayer {
		if id == "" || len(id) > maxPlayerID {
			httpError(w, http.StatusBadRequest, fmt.Sprintf("mapserve: a player's id has 1 to %d bytes, not %d", maxPlayerID, len(id)))
			return
		}
		p, ok := v.findPlayer(id)
		if !ok {
			httpError(w, http.StatusNotFound, fmt.Sprintf("mapserve: generation %d has no player %q on the map", v.man.Generation, id))
			return
		}
		writeEntity(w, v, p.entity)
		return
	}
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		httpError(w, http.StatusBadRequest, fmt.Sprintf("mapserve: entity id %q: want a whole number, a body's id or a regional entity's stable id", id))
		return
	}
	var e entity
	if kind == kindBody {
		i, found := slices.BinarySearchFunc(v.bodies, n, func(b *body, id uint64) int { return cmp.Compare(b.body.ID, id) })
		if !found {
			httpError(w, http.StatusNotFound, fmt.Sprintf("mapserve: generation %d stores no body %d", v.man.Generation, n))
			return
		}
		if e, err = v.bodies[i].withComponents(); err != nil {
			httpError(w, http.StatusInternalServerError, err.Error())
			return
		}
	} else {
		i, found := slices.BinarySearchFunc(v.regionals, n, func(r *regional, id uint64) int { return cmp.Compare(r.stable, id) })
		if !found {
			httpError(w, http.StatusNotFound, fmt.Sprintf("mapserve: generation %d stores no regional entity %d besides its bodies", v.man.Generation, n))
			return
		}
		e = v.regionals[i].entity
	}
	writeEntity(w, v, e)
}

// maxPlayerID is the longest player id a save holds, in bytes.
const maxPlayerID = 255

// writeEntity answers /api/entity.
func writeEntity(w http.ResponseWriter, v *view, e entity) {
	writeJSON(w, http.StatusOK, struct {
		Generation uint64 `json:"generation"`
		entity
	}{v.man.Generation, e})
}

// worldFileJSON summarises the ECS world file.
type worldFileJSON struct {
	File       string      `json:"file"`
	Format     string      `json:"format"`
	Written    time.Time   `json:"written"`
	Entities   uint64      `json:"entities"`
	Archetypes uint64      `json:"archetypes"`
	Types      uint64      `json:"types"`
	Resources  []string    `json:"resources"`
	Tables     []tableJSON `json:"tables"`
	Checksum   string      `json:"checksum"`
	Error      string      `json:"error,omitempty"`
}

type tableJSON struct {
	Entities   uint32   `json:"entities"`
	Components []string `json:"components"`
	Bytes      uint64   `json:"bytes"`
}

// shortName drops the package path of a type name.
func shortName(name string) string {
	if i := strings.LastIndexByte(strings.SplitN(name, "[", 2)[0], '/'); i >= 0 {
		return name[i+1:]
	}
	return name
}

func newWorldFileJSON(file string, info *pecs.Info, errText string) *worldFileJSON {
	h := info.Header
	out := &worldFileJSON{File: file, Format: fmt.Sprintf("PECS %d.%d", h.VersionMajor, h.VersionMinor),
		Written: time.UnixMilli(h.Timestamp).UTC(), Entities: uint64(h.Entities), Archetypes: uint64(h.Archetypes),
		Types: uint64(h.Types), Resources: []string{}, Tables: []tableJSON{}, Error: errText}
	for _, r := range info.Resources {
		out.Resources = append(out.Resources, shortName(r.Name))
	}
	for _, t := range info.Tables {
		tj := tableJSON{Entities: t.Entities, Components: []string{}, Bytes: t.DataSize}
		for _, c := range t.Components {
			tj.Components = append(tj.Components, shortName(c))
		}
		out.Tables = append(out.Tables, tj)
	}
	out.Checksum = fmt.Sprintf("CRC32C %08x", info.Checksum.Stored)
	if info.Checksum.OK {
		out.Checksum += ": ok"
	} else {
		out.Checksum += fmt.Sprintf(": FAILED, computed %08x", info.Checksum.Computed)
	}
	return out
}

// serveGenerations serves savetool.InspectDir's description of the save
// (generations and backups, chunk stores) with a summary of the world
// file, kept per generation.
func (s *Server) serveGenerations(w http.ResponseWriter, r *http.Request, v *view, _ url.Values) {
	data, err := s.generations.get(v.man.Generation, false, time.Time{}, func() ([]byte, error) {
		info, err := savetool.InspectDir(s.dir, savetool.Options{FS: s.opts.FS, Key: s.opts.Key})
		if err != nil {
			return nil, err
		}
		out := struct {
			*savetool.DirInfo
			World *worldFileJSON `json:"world,omitempty"`
		}{DirInfo: info}
		if info.World != nil {
			out.World = newWorldFileJSON(info.WorldFile, info.World, info.WorldError)
		}
		return json.Marshal(out)
	})
	if err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSONBytes(w, http.StatusOK, data)
}

// serveCheck serves savetool.Check's result for the save, kept per
// generation; fresh=1 checks again.
func (s *Server) serveCheck(w http.ResponseWriter, r *http.Request, v *view, q url.Values) {
	fresh := false
	if q.Has("fresh") {
		n, err := intParam("fresh", q.Get("fresh"), 0, 1)
		if err != nil {
			httpError(w, http.StatusBadRequest, err.Error())
			return
		}
		fresh = n == 1
	}
	asked := time.Now()
	data, err := s.checks.get(v.man.Generation, fresh, asked, func() ([]byte, error) {
		start := time.Now()
		rep, err := savetool.Check(s.dir, savetool.Options{FS: s.opts.FS, Key: s.opts.Key})
		if err != nil {
			return nil, err
		}
		return json.Marshal(struct {
			savetool.CheckJSON
			Checked time.Time `json:"checked"`
			TookMS  float64   `json:"took_ms"`
		}{rep.JSON(filepath.Base(s.dir)), start.UTC(), float64(time.Since(start).Microseconds()) / 1000})
	})
	if err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSONBytes(w, http.StatusOK, data)
}
