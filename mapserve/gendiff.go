package mapserve

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
)

// diffJSON is /api/diff: the chunk positions whose stored content differs
// between generations A and B, each list by (y, x).
type diffJSON struct {
	A         uint64     `json:"a"`
	B         uint64     `json:"b"`
	ChunkSize int        `json:"chunk_size"`
	Added     [][2]int32 `json:"added"`   // stored in B, not in A
	Removed   [][2]int32 `json:"removed"` // stored in A, not in B
	Changed   [][2]int32 `json:"changed"` // stored in both, with other pixels or entities
	Truncated bool       `json:"truncated,omitempty"`
}

// serveDiff serves /api/diff?a=G1[&b=G2]: the chunks that differ between
// two kept generations (b absent: the live one).
func (s *Server) serveDiff(w http.ResponseWriter, r *http.Request, live *view, q url.Values) {
	if !q.Has("a") {
		httpError(w, http.StatusBadRequest, "mapserve: /api/diff takes generation a, and b to compare it with (else the live one): /api/generations lists them")
		return
	}
	var views [2]*view
	for i, name := range []string{"a", "b"} {
		g := live.man.Generation
		if q.Has(name) {
			var err error
			if g, err = genParam(name, q.Get(name)); err != nil {
				httpError(w, http.StatusBadRequest, err.Error())
				return
			}
		}
		v, status, err := s.viewAt(live, g)
		if err != nil {
			httpError(w, status, err.Error())
			return
		}
		defer v.release()
		views[i] = v
	}
	a, b := views[0], views[1]
	if a.size != b.size || a.identity != b.identity {
		httpError(w, http.StatusConflict, fmt.Sprintf("mapserve: generations %d and %d are not of the same world (another world was started in the directory): there is nothing to compare; pick two generations of one world",
			a.man.Generation, b.man.Generation))
		return
	}
	writeJSON(w, http.StatusOK, diffViews(a, b))
}

// diffViews compares the stored chunks and entity blocks of two views of
// the same save.
func diffViews(a, b *view) diffJSON {
	out := diffJSON{A: a.man.Generation, B: b.man.Generation, ChunkSize: a.size, Added: [][2]int32{}, Removed: [][2]int32{}, Changed: [][2]int32{}}
	budget := int64(compareBudget)
	var added, removed, changed []chunkPos
	for pos, rb := range b.chunks {
		ra := a.chunks[pos]
		switch {
		case ra == nil:
			added = append(added, pos)
		case !sameRecord(a, b, pos, ra, rb, &budget):
			changed = append(changed, pos)
		}
	}
	for pos := range a.chunks {
		if b.chunks[pos] == nil {
			removed = append(removed, pos)
		}
	}
	n := 0
	for _, l := range []struct {
		from []chunkPos
		to   *[][2]int32
	}{{added, &out.Added}, {removed, &out.Removed}, {changed, &out.Changed}} {
		slices.SortFunc(l.from, comparePos)
		for _, p := range l.from {
			if n == maxListed {
				out.Truncated = true
				break
			}
			*l.to = append(*l.to, [2]int32{p.X, p.Y})
			n++
		}
	}
	return out
}

// sameRecord reports whether a chunk position holds the same in view a
// (record ra) and view b (record rb): the same chunk record, or one that
// reads the same, and the same pixel bodies and regional entities.
func sameRecord(a, b *view, pos chunkPos, ra, rb *chunkRec, budget *int64) bool {
	if ra.hasChunk != rb.hasChunk || ra.typ != rb.typ || (ra.damaged != nil) != (rb.damaged != nil) {
		return false
	}
	if ra.hasChunk && (!ra.handle.IsZero() || !rb.handle.IsZero()) && !sameChunk(a, b, pos, ra.handle, rb.handle, budget) {
		return false
	}
	if ra.bodyBlock.IsZero() != rb.bodyBlock.IsZero() {
		return false
	}
	if ra.bodyBlock == rb.bodyBlock && a.man.Chunks.Name == b.man.Chunks.Name {
		return true
	}
	return ra.bodyErr == nil && rb.bodyErr == nil && len(ra.bodies) == len(rb.bodies) && sameRegionals(ra.regionals, rb.regionals) &&
		slices.EqualFunc(ra.bodies, rb.bodies, func(x, y *body) bool {
			return reflect.DeepEqual(x.body, y.body) && x.section.same(y.section)
		})
}
