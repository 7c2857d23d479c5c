package gametest

import (
	"context"
	"log/slog"
	"sync"
)

// Records is a slog.Handler that keeps every record, for tests.
type Records struct {
	mu   sync.Mutex
	list []slog.Record
}

// Enabled is true: Records keeps every level.
func (r *Records) Enabled(context.Context, slog.Level) bool { return true }

// Handle keeps rec.
func (r *Records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	r.list = append(r.list, rec.Clone())
	r.mu.Unlock()
	return nil
}

// WithAttrs returns r: Records keeps no attributes of its own.
func (r *Records) WithAttrs([]slog.Attr) slog.Handler { return r }

// WithGroup returns r.
func (r *Records) WithGroup(string) slog.Handler { return r }

// Find returns the attributes of the last record with message msg at
// level, and whether there is one.
func (r *Records) Find(level slog.Level, msg string) (map[string]slog.Value, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.list) - 1; i >= 0; i-- {
		if rec := r.list[i]; rec.Level == level && rec.Message == msg {
			attrs := map[string]slog.Value{}
			rec.Attrs(func(a slog.Attr) bool {
				attrs[a.Key] = a.Value
				return true
			})
			return attrs, true
		}
	}
	return nil, false
}

// Messages lists the messages logged, in order.
func (r *Records) Messages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rec := range r.list {
		out = append(out, rec.Message)
	}
	return out
}
