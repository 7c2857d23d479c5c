package mapserve

import (
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
)

// multi serves the maps of several saves under one handler: each
// [Server] at /w/NAME/, NAME being its save directory's name; / leads to
// the first. A name in an address only selects among the servers given,
// never names a file.
type multi struct {
	names   []string
	servers map[string]*Server
}

// NewMulti serves several saves' maps under one handler, each at /w/NAME/
// (NAME: the base name of the directory its server was opened on), in the
// order given, with a switcher on the page; / leads to the first. A name
// in an address only selects among the servers given, never names a file.
// The servers stay the caller's to close. Call it before they serve a
// request. It fails with an error matching fs.ErrInvalid when given none,
// and with one matching fs.ErrExist when two saves have the same name.
func NewMulti(servers ...*Server) (http.Handler, error) {
	if len(servers) == 0 {
		return nil, fmt.Errorf("mapserve: %w: no saves to serve: give at least one server", fs.ErrInvalid)
	}
	m := &multi{servers: make(map[string]*Server, len(servers))}
	for _, s := range servers {
		name := filepath.Base(s.dir)
		if prev, ok := m.servers[name]; ok {
			return nil, fmt.Errorf("mapserve: %w: saves %s and %s are both named %q, and a save's name selects it in the map's address: serve one of them from a directory of another name", fs.ErrExist, prev.dir, s.dir, name)
		}
		m.servers[name] = s
		m.names = append(m.names, name)
	}
	for _, s := range servers {
		s.saves = m.names
	}
	return m, nil
}

// multiPrefix starts the address of each save's map.
const multiPrefix = "/w/"

// ServeHTTP serves each save's page and API under /w/NAME/; / and /w/NAME
// redirect to the first save's page and to /w/NAME/.
func (m *multi) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == "/" || p == "/w" || p == multiPrefix:
		http.Redirect(w, r, multiPrefix+url.PathEscape(m.names[0])+"/", http.StatusFound)
		return
	case !strings.HasPrefix(p, multiPrefix):
		httpError(w, http.StatusNotFound, fmt.Sprintf("mapserve: %s: no such page; the saves are at %s", p, m.list()))
		return
	}
	name, rest, slash := strings.Cut(p[len(multiPrefix):], "/")
	s, ok := m.servers[name]
	if !ok {
		httpError(w, http.StatusNotFound, fmt.Sprintf("mapserve: no save named %q is served; the saves are at %s", name, m.list()))
		return
	}
	if !slash {
		http.Redirect(w, r, multiPrefix+url.PathEscape(name)+"/", http.StatusFound)
		return
	}
	r2 := new(http.Request)
	*r2 = *r
	u := *r.URL
	u.Path, u.RawPath = "/"+rest, ""
	r2.URL = &u
	s.ServeHTTP(w, r2)
}

// list names the addresses of the saves for a message.
func (m *multi) list() string {
	out := make([]string, len(m.names))
	for i, n := range m.names {
		out[i] = multiPrefix + n + "/"
	}
	return strings.Join(out, ", ")
}
