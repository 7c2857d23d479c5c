package sim

import (
	"errors"
	"strings"
	"testing"

	"github.com/arksave/arksave/autosave"
)

// saveWatch says once that saving stopped, at the first failure after a
// committed save (or at the session's first save), and once that it
// resumed, at the first committed save after failures; every other
// result says nothing.
func TestSaveWatchTransitions(t *testing.T) {
	ok := func(g uint64) *autosave.Result { return &autosave.Result{Generation: g, Dir: "w"} }
	bad := func(g uint64) *autosave.Result {
		return &autosave.Result{Generation: g, Dir: "w", Err: errors.New("no leader")}
	}
	steps := []struct {
		r    *autosave.Result
		want string // the line's start, "" for none
	}{
		{ok(1), ""},
		{ok(2), ""},
		{bad(2), "saving stopped: the save after generation 2 of w failed; "},
		{bad(2), ""},
		{bad(2), ""},
		{ok(3), "saving resumed: generation 3 of w committed, after 3 failed saves"},
		{ok(4), ""},
		{bad(4), "saving stopped: "},
		{ok(5), "saving resumed: generation 5 of w committed, after 1 failed saves"},
	}
	var w saveWatch
	for i, s := range steps {
		got := w.see(s.r)
		if s.want == "" && got != "" || !strings.HasPrefix(got, s.want) {
			t.Fatalf("result %d (err %v): said %q, want %q", i, s.r.Err, got, s.want)
		}
	}
	var first saveWatch
	if got := first.see(bad(0)); !strings.HasPrefix(got, "saving stopped: ") || !strings.HasSuffix(got, "no leader") {
		t.Fatalf("the session's first save failed: said %q", got)
	}
}
