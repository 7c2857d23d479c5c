package mapserve

import (
	"errors"
	"hash/maphash"
	"image/color"
	"log/slog"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/arksave/arksave/chunkstore"
	"github.com/arksave/arksave/internal/savedir"
	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/vfs"
)

// Options configure a [Server]. The zero value serves the real file system
// with the demo's colours, no generator, polling every 250 ms.
type Options struct {
	// FS is the file system; nil means the real one.
	FS vfs.FS
	// Generator is the game's chunk generator, if at hand: chunks that are
	// not stored are drawn as generated, and Delta chunks as their changed
	// pixels over the generated chunk. Without it unstored chunks are
	// hatched grey ("not stored") and Delta chunks drawn over flat grey, as
	// arksave render draws them, and the page says that the terrain is not
	// generated. demo/map gives the demo's.
	Generator chunkstore.Generator
	// Palette colours the pixels: Color returns the colour of a pixel
	// value (components.Pixel); nil means the demo's colours. It is called
	// from several goroutines at once.
	Palette interface{ Color(pixel uint32) color.RGBA }
	// Position, when set, tells where a regional entity that is not a
	// pixel body stands, in world pixels, from its components in the JSON
	// export's view; PositionFields makes one from a component's fields.
	// Where it is nil or says !ok, the map takes the first component with
	// number fields X and Y (or x and y), else the centre of the entity's
	// chunk ("placed" in /api/entities says which). It is called as a new generation
	// opens, never from two goroutines at once.
	Position func(c Components) (x, y float64, ok bool)
	// Poll is how often the manifest is read to follow new generations;
	// 0 means 250 ms, a negative value never (call Refresh).
	Poll time.Duration
	// CacheBytes bounds the memory of rendered tiles (pixels and PNGs);
	// 0 means 64 MiB.
	CacheBytes int64
	// Workers is how many tiles render at once; 0 means half the CPUs, at
	// least one, so that a game on the same machine keeps its cores.
	Workers int
	// Logger, when set, hears of what goes wrong in the background: a new
	// generation that does not open.
	Logger *slog.Logger
	// At chooses the 2-D slice the map shows of a save whose chunk keys
	// have 3 or 4 axes: the z (At[0]) and w (At[1]) of its chunks; zero
	// shows the slice at 0. A value for an axis the save does not have is
	// an error matching chunkstore.ErrAxes when a generation opens.
	At [2]int32
	// Key is the save's key (Plugin.Key, 32 bytes) when the save is
	// encrypted: its chunk records and world file are read with it.
	// Without it the tiles of an encrypted save fail, naming the key.
	Key []byte
}

// Defaults of Options.
const (
	defaultPoll       = 250 * time.Millisecond
	defaultCacheBytes = 64 << 20
)

func (o Options) withDefaults() Options {
	if o.FS == nil {
		o.FS = vfs.OS
	}
	if o.Palette == nil {
		pal := savetool.DefaultPalette()
		pal.Color(0) // builds its table before goroutines share it
		o.Palette = pal
	}
	if o.Poll == 0 {
		o.Poll = defaultPoll
	}
	if o.CacheBytes <= 0 {
		o.CacheBytes = defaultCacheBytes
	}
	if o.Workers <= 0 {
		o.Workers = max(1, runtime.NumCPU()/2)
	}
	return o
}

// Server serves the map of one save directory; it is an http.Handler.
// Its methods are safe for concurrent use.
type Server struct {
	dir    string
	opts   Options
	seed   maphash.Seed
	cache  *cache
	work   chan struct{} // a slot per tile rendering at once
	events *broker
	gen    chunkstore.Generator // Options.Generator with the chunks it made last kept; nil without one

	mu      sync.RWMutex
	cur     *view // nil once closed
	lastErr error // of the last Refresh that failed, until one succeeds

	refreshMu sync.Mutex // one Refresh at a time
	done      chan struct{}
	polling   sync.WaitGroup
	closeOnce sync.Once

	generations memo // /api/generations by generation
	checks      memo // /api/check by generation

	old oldViews // kept generations the pages asked for (the gen parameter)

	saves []string // the names of the saves a Multi serves with this one, for the switcher; nil alone
}

// New opens the save directory at dir read-only, at its committed
// generation, and returns its server, polling for new generations unless
// o.Poll is negative. It fails for a path that holds no save with an
// error matching arksave.ErrNoSave, and for a save whose committed
// generation does not open with one matching arksave.ErrCorrupt; each
// error names the path and what to do. Close stops it.
func New(dir string, o Options) (*Server, error) {
	o = o.withDefaults()
	s := &Server{dir: dir, opts: o, seed: maphash.MakeSeed(), cache: newCache(o.CacheBytes),
		work: make(chan struct{}, o.Workers), events: newBroker(), done: make(chan struct{})}
	if o.Generator != nil {
		s.gen = &genCache{gen: o.Generator}
	}
	v, err := openView(dir, 0, &s.opts, s.seed, nil)
	if err != nil {
		return nil, err
	}
	s.cur = v
	if o.Poll > 0 {
		s.polling.Add(1)
		go s.poll()
	}
	return s, nil
}

// Close stops polling, ends the event streams and closes the store once
// the requests under way are done. Requests after Close get 503.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		close(s.done)
		s.polling.Wait()
		s.events.close()
		s.refreshMu.Lock()
		s.mu.Lock()
		v := s.cur
		s.cur = nil
		s.mu.Unlock()
		s.refreshMu.Unlock()
		v.release()
		s.old.close()
	})
	return nil
}

// Generation returns the generation the map shows; 0 once closed.
func (s *Server) Generation() uint64 {
	v := s.acquire()
	if v == nil {
		return 0
	}
	defer v.release()
	return v.man.Generation
}

// Warnings returns what the map warns of in the generation it shows, as
// /api/world lists them: a chunk store opened despite damage (naming
// arksave repair), a generator of another version; nil once closed.
func (s *Server) Warnings() []string {
	v := s.acquire()
	if v == nil {
		return nil
	}
	defer v.release()
	return slices.Clone(v.warnings)
}

// acquire returns the current view with a reference, nil once closed.
func (s *Server) acquire() *view {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.cur != nil {
		s.cur.acquire()
	}
	return s.cur
}

// errClosed is Refresh's error after Close.
var errClosed = errors.New("mapserve: the server is closed")

// Refresh reads the manifest and, when a new generation has been
// committed, opens it and tells the pages (an event naming what changed).
// It reports whether the map moved on. An error (the manifest gone or
// damaged, the new generation not opening) leaves the map where it was;
// /api/world reports it until a Refresh succeeds. The server calls it
// every Options.Poll.
func (s *Server) Refresh() (bool, error) {
	s.refreshMu.Lock()
	defer s.refreshMu.Unlock()
	cur := s.acquire()
	if cur == nil {
		return false, errClosed
	}
	defer cur.release()
	d, err := savedir.OpenDirReadOnly(s.opts.FS, s.dir)
	if err == nil {
		if m := d.Manifest(); m == nil {
			err = d.ManifestErr()
		} else if sameManifest(m, cur.man) {
			s.setErr(nil)
			if s.old.held() {
				// A backup may have been dropped since the last commit
				// (the writer drops them after it).
				s.old.keep(keptGenerations(d))
			}
			return false, nil
		}
	}
	if err != nil {
		s.setErr(err)
		return false, err
	}
	nv, err := openView(s.dir, 0, &s.opts, s.seed, cur)
	if err != nil {
		s.setErr(err)
		return false, err
	}
	if sameManifest(nv.man, cur.man) {
		nv.release()
		s.setErr(nil)
		return false, nil
	}
	rects, all, entities := nv.diff(cur)
	// The kept generations as the directory lists them now, not before the
	// new generation opened: a commit may have come in between.
	if d, err := savedir.OpenDirReadOnly(s.opts.FS, s.dir); err == nil {
		s.old.keep(keptGenerations(d))
	}
	s.mu.Lock()
	s.cur, s.lastErr = nv, nil
	s.mu.Unlock()
	cur.release() // the server's reference; the deferred release drops ours
	s.events.publish(newEvent(nv.man.Generation, cur.man.Generation, rects, all, entities))
	return true, nil
}

// sameManifest reports whether two manifests are the same commit.
func sameManifest(a, b *savedir.Manifest) bool {
	return a.Generation == b.Generation && a.Checksum == b.Checksum && a.ModifiedMS == b.ModifiedMS
}

// setErr records the outcome of a Refresh, logging a new error once.
func (s *Server) setErr(err error) {
	s.mu.Lock()
	fresh := err != nil && (s.lastErr == nil || s.lastErr.Error() != err.Error())
	s.lastErr = err
	s.mu.Unlock()
	if fresh && s.opts.Logger != nil {
		s.opts.Logger.Warn("mapserve: the save's new generation does not open; the map stays where it was", "dir", s.dir, "err", err)
	}
}

func (s *Server) refreshErr() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.lastErr
}

// poll refreshes every Options.Poll until Close.
func (s *Server) poll() {
	defer s.polling.Done()
	t := time.NewTicker(s.opts.Poll)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			s.Refresh()
		}
	}
}

// ServeHTTP serves the page and its API; see the package documentation.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.route(w, r) }
