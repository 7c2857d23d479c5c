package savedir

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arksave/arksave/autosave"
)

// TestRetained: which generations a policy keeps, from their save times
// alone.
func TestRetained(t *testing.T) {
	// base is a span boundary of every Every below (a multiple of a day
	// since the epoch), so that the spans are easy to read.
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return base.Add(d) }
	min, hour, day := time.Minute, time.Hour, 24*time.Hour
	def := autosave.DefaultConfig().Retention
	// every5 is a save every 5 minutes for 3 days, newest first, ending at
	// base+3 days.
	var every5 []time.Time
	for d := 3 * day; d >= 0; d -= 5 * min {
		every5 = append(every5, at(d))
	}
	for _, tc := range []struct {
		name  string
		times []time.Time // newest first
		now   time.Time
		p     keepPolicy
		want  []time.Time // the kept ones
	}{
		{name: "count only, as before retention", now: at(10 * min),
			times: []time.Time{at(9 * min), at(8 * min), at(7 * min)},
			p:     keepPolicy{max: 2}, want: []time.Time{at(9 * min), at(8 * min)}},
		{name: "keep all", now: at(10 * day),
			times: []time.Time{at(9 * min), at(8 * min), at(7 * min)},
			p:     keepPolicy{max: -1}, want: []time.Time{at(9 * min), at(8 * min), at(7 * min)}},
		{name: "nothing", now: at(10 * min),
			times: []time.Time{at(9 * min), at(8 * min)}, p: keepPolicy{}},
		{name: "All keeps its window, the boundary included", now: at(2 * hour),
			times: []time.Time{at(2*hour - min), at(hour), at(hour - time.Millisecond)},
			p:     keepPolicy{retention: autosave.Retention{All: hour}},
			want:  []time.Time{at(2*hour - min), at(hour)}},
		{name: "a clock set back keeps", now: at(0),
			times: []time.Time{at(hour)}, p: keepPolicy{}, want: []time.Time{at(hour)}},
		{name: "MaxBackups on top of the policy", now: at(10 * day),
			times: []time.Time{at(3 * day), at(2 * day)},
			p:     keepPolicy{max: 1, retention: autosave.Retention{All: hour}}, want: []time.Time{at(3 * day)}},
		{name: "thinning keeps the oldest of each span", now: at(hour),
			times: []time.Time{at(25 * min), at(21 * min), at(19 * min), at(12 * min), at(10 * min), at(3 * min)},
			p:     keepPolicy{retention: autosave.Retention{Thin: []autosave.Keep{{Every: 10 * min, For: day}}}},
			want:  []time.Time{at(21 * min), at(10 * min), at(3 * min)}},
		{name: "thinning stops at For", now: at(day + 15*min),
			times: []time.Time{at(day), at(20 * min), at(10 * min)},
			p:     keepPolicy{retention: autosave.Retention{Thin: []autosave.Keep{{Every: 10 * min, For: day}}}},
			want:  []time.Time{at(day), at(20 * min)}},
		{name: "zero and negative steps keep nothing", now: at(hour),
			times: []time.Time{at(30 * min)},
			p: keepPolicy{retention: autosave.Retention{All: -hour, Thin: []autosave.Keep{
				{Every: 0, For: day}, {Every: -min, For: day}, {Every: min, For: 0}, {Every: min, For: -day}}}}},
		{name: "before the epoch", now: time.UnixMilli(0),
			times: []time.Time{time.UnixMilli(-1), time.UnixMilli(-10 * 60 * 1000), time.UnixMilli(-10*60*1000 - 1)},
			p:     keepPolicy{retention: autosave.Retention{Thin: []autosave.Keep{{Every: 10 * min, For: day}}}},
			want:  []time.Time{time.UnixMilli(-10 * 60 * 1000), time.UnixMilli(-10*60*1000 - 1)}},
		{name: "the default over 3 days of saves every 5 minutes", now: at(3 * day), times: every5,
			p: keepPolicy{max: 1, retention: def}, want: defaultKept(base)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keep := retained(tc.times, tc.now, tc.p)
			var got []time.Time
			for i, k := range keep {
				if k {
					got = append(got, tc.times[i])
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("kept %s\nwant %s", stamps(got, base), stamps(tc.want, base))
			}
		})
	}
}

// defaultKept is what the default policy keeps of saves every 5 minutes
// from base to base+3 days, at base+3 days: every save of the last hour
// (13 of them, the committed one's own time included), the oldest of each
// 10 minutes younger than a day (at :00, :10, ...; base+2 days itself is
// exactly a day old: not kept by it), and the first of each day
// (base, base+1 day, base+2 days; base+3 days is the newest, kept by All).
func defaultKept(base time.Time) []time.Time {
	var out []time.Time
	for d := 3 * 24 * time.Hour; d >= 0; d -= 5 * time.Minute {
		age := 3*24*time.Hour - d
		switch {
		case age <= time.Hour,
			age < 24*time.Hour && d%(10*time.Minute) == 0,
			d%(24*time.Hour) == 0:
			out = append(out, base.Add(d))
		}
	}
	return out
}

func stamps(ts []time.Time, base time.Time) string {
	var b strings.Builder
	for _, t := range ts {
		fmt.Fprintf(&b, "%v ", t.Sub(base))
	}
	return fmt.Sprintf("%d: %s", len(ts), b.String())
}

// TestRetainedStable: a generation the default policy drops is never one
// it would keep later, so that what a directory keeps is what the policy
// says at every moment, although dropped generations never come back.
func TestRetainedStable(t *testing.T) {
	base := time.Date(2026, 3, 1, 0, 7, 0, 0, time.UTC)
	p := keepPolicy{max: 1, retention: autosave.DefaultConfig().Retention}
	var kept []time.Time // newest first
	dropped := map[time.Time]bool{}
	for i := range 9 * 24 * 60 / 7 { // a save every 7 minutes for 9 days
		now := base.Add(time.Duration(i) * 7 * time.Minute)
		all := append(slices.Clone(kept), timesOf(dropped)...)
		slices.SortFunc(all, func(a, b time.Time) int { return b.Compare(a) })
		// What the policy keeps of every save ever made, dropped ones included.
		ideal := retained(all, now, p)
		for j, g := range all {
			if ideal[j] && dropped[g] {
				t.Fatalf("at %v the policy keeps %v, which it dropped before", now.Sub(base), g.Sub(base))
			}
		}
		keep := retained(kept, now, p)
		var next []time.Time
		for j, g := range kept {
			if keep[j] {
				next = append(next, g)
			} else {
				dropped[g] = true
			}
		}
		kept = append([]time.Time{now}, next...)
	}
	// A week of history, thinned: bounded, whatever the number of saves.
	t.Logf("%d generations kept of %d saves", len(kept), 9*24*60/7)
	if len(kept) > 13+6*24+8+2 {
		t.Fatalf("kept %d generations after 9 days", len(kept))
	}
}

func timesOf(m map[time.Time]bool) []time.Time {
	out := make([]time.Time, 0, len(m))
	for t := range m {
		out = append(out, t)
	}
	return out
}

// TestCheckRetention: a negative duration is refused, naming the field.
func TestCheckRetention(t *testing.T) {
	if err := CheckRetention(autosave.DefaultConfig().Retention); err != nil {
		t.Fatal(err)
	}
	if err := CheckRetention(autosave.Retention{}); err != nil {
		t.Fatal(err)
	}
	for field, r := range map[string]autosave.Retention{
		"Retention.All":           {All: -time.Second},
		"Retention.Thin[1].Every": {Thin: []autosave.Keep{{Every: time.Minute, For: time.Hour}, {Every: -time.Minute, For: time.Hour}}},
		"Retention.Thin[0].For":   {Thin: []autosave.Keep{{Every: time.Minute, For: -time.Hour}}},
	} {
		err := CheckRetention(r)
		if !errors.Is(err, autosave.ErrInvalidConfig) || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v", field, err)
		}
	}
}
