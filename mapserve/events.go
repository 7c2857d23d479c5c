package mapserve

import (
	"encoding/json"
	"fmt"
	"image"
	"net/http"
	"sync"
	"time"
)

// event tells the pages that a generation was committed, and what to
// redraw.
type event struct {
	Generation uint64 `json:"generation"`
	Previous   uint64 `json:"previous"` // the generation the map showed before
	// All says to redraw everything (another save, or too much changed);
	// else Changed lists the world rectangles to redraw, [x0, y0, x1, y1).
	All      bool     `json:"all,omitempty"`
	Changed  [][4]int `json:"changed"`
	Entities bool     `json:"entities,omitempty"` // the entities changed: list them again
}

// maxChanged is how many rectangles an event lists before it says all.
const maxChanged = 1024

func newEvent(gen, prev uint64, rects []image.Rectangle, all, entities bool) event {
	ev := event{Generation: gen, Previous: prev, All: all || len(rects) > maxChanged, Entities: entities, Changed: [][4]int{}}
	if !ev.All {
		for _, r := range rects {
			ev.Changed = append(ev.Changed, [4]int{r.Min.X, r.Min.Y, r.Max.X, r.Max.Y})
		}
	}
	return ev
}

// broker hands events to the streams of the pages.
type broker struct {
	mu     sync.Mutex
	subs   map[*subscriber]struct{}
	closed chan struct{}
}

// subscriber is one page's stream. Events it cannot take at once are
// dropped and it is told to redraw everything instead.
type subscriber struct {
	ch   chan event
	lost bool // under broker.mu
}

func newBroker() *broker {
	return &broker{subs: map[*subscriber]struct{}{}, closed: make(chan struct{})}
}

func (b *broker) subscribe() *subscriber {
	sub := &subscriber{ch: make(chan event, 16)}
	b.mu.Lock()
	b.subs[sub] = struct{}{}
	b.mu.Unlock()
	return sub
}

func (b *broker) unsubscribe(sub *subscriber) {
	b.mu.Lock()
	delete(b.subs, sub)
	b.mu.Unlock()
}

func (b *broker) publish(ev event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for sub := range b.subs {
		if sub.lost {
			ev := ev
			ev.All, ev.Changed = true, [][4]int{}
			select {
			case sub.ch <- ev:
				sub.lost = false
			default:
			}
			continue
		}
		select {
		case sub.ch <- ev:
		default:
			sub.lost = true
		}
	}
}

// close ends every stream.
func (b *broker) close() { close(b.closed) }

// keepAlive is how often an idle stream sends a comment, so that a page
// that went away is noticed.
const keepAlive = 15 * time.Second

// serveEvents streams events: first "hello" with the generation shown,
// then a "generation" event per commit, until the page goes away or the
// server closes.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		httpError(w, http.StatusInternalServerError, "mapserve: the connection cannot stream events")
		return
	}
	sub := s.events.subscribe()
	defer s.events.unsubscribe(sub)
	gen := s.Generation()
	if gen == 0 {
		httpError(w, http.StatusServiceUnavailable, "mapserve: the server is closed")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	send := func(name string, v any) bool {
		data, err := json.Marshal(v)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data); err != nil {
			return false
		}
		fl.Flush()
		return true
	}
	if _, err := fmt.Fprint(w, "retry: 1000\n\n"); err != nil || !send("hello", struct {
		Generation uint64 `json:"generation"`
	}{gen}) {
		return
	}
	t := time.NewTicker(keepAlive)
	defer t.Stop()
	for {
		select {
		case ev := <-sub.ch:
			if !send("generation", ev) {
				return
			}
		case <-t.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		case <-r.Context().Done():
			return
		case <-s.events.closed:
			return
		}
	}
}

// memo keeps the result of a costly request (a check, an inspection) for
// the generation it was made for, one computation at a time.
type memo struct {
	mu   sync.Mutex
	gen  uint64
	at   time.Time
	data []byte
}

// get returns the result for generation gen: the one kept, unless fresh
// asks for one made after since; else it calls compute.
func (m *memo) get(gen uint64, fresh bool, since time.Time, compute func() ([]byte, error)) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.data != nil && m.gen == gen && (!fresh || m.at.After(since)) {
		return m.data, nil
	}
	data, err := compute()
	if err != nil {
		return nil, err
	}
	m.gen, m.at, m.data = gen, time.Now(), data
	return data, nil
}
