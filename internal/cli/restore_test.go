package cli

import (
	"fmt"
	"testing"
	"time"

	"github.com/arksave/arksave/internal/savedir"
)

// generationTimes returns when each kept generation of the save in dir
// was committed.
func generationTimes(t *testing.T, dir string) map[uint64]time.Time {
	t.Helper()
	d, err := savedir.OpenDirReadOnly(nil, dir)
	must(t, err)
	out := map[uint64]time.Time{d.Generation(): time.UnixMilli(d.Manifest().ModifiedMS)}
	for _, b := range d.Backups() {
		out[b.Generation] = time.UnixMilli(b.ModifiedMS)
	}
	return out
}

// restore --at takes a duration ago or an RFC 3339 time, and restores the
// newest generation committed at or before it, which the game then loads.
func TestRestoreAt(t *testing.T) {
	dir := fresh(t)
	times := generationTimes(t, dir)
	at := times[2]
	want := uint64(0) // the newest generation of that time (two saves may share a millisecond)
	for g, tm := range times {
		if !tm.After(at) && g > want {
			want = g
		}
	}
	t.Logf("generation 2 committed at %s: restoring generation %d", at.Format(time.RFC3339Nano), want)
	if want == 3 {
		// Generation 3 committed in the same millisecond: it is the
		// committed one, which restore leaves as it is.
		code, stdout, stderr := arksave("restore", "--at", at.Format(time.RFC3339Nano), dir)
		expectCode(t, 0, code, stderr)
		expectContains(t, stdout, "generation 3 of", "the committed one", "nothing was changed")
		return
	}
	code, stdout, stderr := arksave("restore", "--at", at.Format(time.RFC3339Nano), dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, fmt.Sprintf("restored generation %d as generation 4 (its save of %s)", want, at.UTC().Format(time.RFC3339)), "generation 3 is now a backup")
	if s := loadsScore(t, dir); s != int(want) {
		t.Errorf("the save restored from generation %d scores %d", want, s)
	}

	// A duration ago: nothing that old, then the newest.
	code, stdout, stderr = arksave("restore", "--at", "2h", dir)
	expectCode(t, 1, code, stderr)
	expectNot(t, stdout, "restored")
	expectContains(t, stderr, "no generation committed at or before", fmt.Sprintf("the oldest kept is generation 1 of %s", times[1].UTC().Format(time.RFC3339)), "--generation 1")
	code, stdout, stderr = arksave("restore", "--at", "0s", dir)
	expectCode(t, 0, code, stderr)
	expectContains(t, stdout, "generation 4 of", "the committed one", "nothing was changed")
}

// restore needs exactly one of --generation and --at, and an --at it can
// read.
func TestRestoreAtUsage(t *testing.T) {
	dir := fresh(t)
	before := files(t, dir)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--generation", "2", "--at", "10m"}, "not both"},
		{[]string{}, "--generation G, or a time with --at WHEN"},
		{[]string{"--at", "yesterday"}, "neither a duration ago (10m, 2h) nor an RFC 3339 time"},
		{[]string{"--at", "-5m"}, "a negative duration"},
	} {
		code, _, stderr := arksave(append(append([]string{"restore"}, c.args...), dir)...)
		expectCode(t, 2, code, stderr)
		expectContains(t, stderr, c.want)
	}
	after := files(t, dir)
	for name, b := range before {
		if after[name] != b {
			t.Errorf("%s changed", name)
		}
	}
}
