package mapserve

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"

	"github.com/arksave/arksave/autosave"
	"github.com/arksave/arksave/internal/savedir"
)

// maxOldViews bounds the views of kept generations other than the live
// one that a server holds open: each holds its chunk store open and its
// index, bodies and entities in memory.
const maxOldViews = 4

// oldViews are the views of kept generations the pages asked for (the gen
// parameter), the least recently used first; the one evicted is closed
// once the requests using it are done.
type oldViews struct {
	mu     sync.Mutex
	views  []*view
	kept   map[uint64]bool // the generations the save kept when the server last moved on; nil before
	closed bool
	open   sync.Mutex // one generation opens at a time
}

// find returns the view of generation g with a reference, nil when none
// is held. The caller holds mu.
func (o *oldViews) find(g uint64) *view {
	i := slices.IndexFunc(o.views, func(v *view) bool { return v.man.Generation == g })
	if i < 0 {
		return nil
	}
	v := o.views[i]
	o.views = append(slices.Delete(o.views, i, i+1), v)
	v.acquire()
	return v
}

// get returns the view of kept generation g with a reference, opening it
// with open when none is held.
func (o *oldViews) get(g uint64, open func() (*view, error)) (*view, error) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return nil, errClosed
	}
	if v := o.find(g); v != nil {
		o.mu.Unlock()
		return v, nil
	}
	o.mu.Unlock()
	o.open.Lock()
	defer o.open.Unlock()
	o.mu.Lock()
	if v := o.find(g); v != nil || o.closed {
		o.mu.Unlock()
		if v == nil {
			return nil, errClosed
		}
		return v, nil
	}
	o.mu.Unlock()
	v, err := open()
	if err != nil {
		return nil, err
	}
	if v.man.Generation != g {
		// A commit made g the committed generation while it opened and
		// dropped it meanwhile: not what was asked for.
		v.release()
		return nil, fmt.Errorf("%w: generation %d is no longer kept", autosave.ErrNoGeneration, g)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		v.release()
		return nil, errClosed
	}
	if o.kept != nil && !o.kept[g] {
		// The save dropped g while it opened: this request has it, as it
		// was when asked for, and no other.
		return v, nil
	}
	o.views = append(o.views, v)
	if len(o.views) > maxOldViews {
		o.views[0].release()
		o.views = slices.Delete(o.views, 0, 1)
	}
	v.acquire()
	return v, nil
}

// keep closes the views of generations that kept does not hold (backups
// dropped since they opened).
func (o *oldViews) keep(kept map[uint64]bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.kept = kept
	o.views = slices.DeleteFunc(o.views, func(v *view) bool {
		if kept[v.man.Generation] {
			return false
		}
		v.release()
		return true
	})
}

// held reports whether any view is held.
func (o *oldViews) held() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.views) > 0
}

// close closes every view and takes no more.
func (o *oldViews) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	for _, v := range o.views {
		v.release()
	}
	o.views = nil
}

// keptGenerations returns the generations directory d keeps: the
// committed one and the backups.
func keptGenerations(d *savedir.Dir) map[uint64]bool {
	kept := map[uint64]bool{}
	if m := d.Manifest(); m != nil {
		kept[m.Generation] = true
	}
	for _, b := range d.Backups() {
		kept[b.Generation] = true
	}
	return kept
}

// maxGeneration is the largest generation a request may name.
const maxGeneration = 1 << 62

// genParam parses a generation parameter: a kept generation's number.
func genParam(name, s string) (uint64, error) {
	n, err := intParam(name, s, 1, maxGeneration)
	if err != nil {
		return 0, fmt.Errorf("%w (a kept generation: /api/generations lists them)", err)
	}
	return uint64(n), nil
}

// viewAt returns the view of generation g with a reference: live when it
// is the live one, else a kept generation's, opened read-only through its
// backup manifest (nothing a request says becomes a file name: the
// generation is looked up among the manifests the directory lists). It
// returns the HTTP status of its error: 404 for a generation that is not
// kept (the error names those that are), 503 once closed.
func (s *Server) viewAt(live *view, g uint64) (*view, int, error) {
	if g == live.man.Generation {
		live.acquire()
		return live, 0, nil
	}
	v, err := s.old.get(g, func() (*view, error) { return openView(s.dir, g, &s.opts, s.seed, nil) })
	switch {
	case err == nil:
		return v, 0, nil
	case errors.Is(err, errClosed):
		return nil, http.StatusServiceUnavailable, err
	case errors.Is(err, autosave.ErrNoGeneration):
		return nil, http.StatusNotFound, fmt.Errorf("mapserve: %w", err)
	default:
		return nil, http.StatusInternalServerError, fmt.Errorf("mapserve: generation %d does not open: %w", g, err)
	}
}

// viewOf returns the view a request asks for with a reference: the
// generation its gen parameter names, else live; on failure it has
// answered the request and returns nil.
func (s *Server) viewOf(w http.ResponseWriter, live *view, q url.Values) *view {
	if !q.Has("gen") {
		live.acquire()
		return live
	}
	g, err := genParam("gen", q.Get("gen"))
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return nil
	}
	v, status, err := s.viewAt(live, g)
	if err != nil {
		httpError(w, status, err.Error())
		return nil
	}
	return v
}
