package savedir

import (
	"fmt"
	"time"

	"github.com/arksave/arksave/autosave"
)

// Retention: which backed-up generations a save keeps (autosave.Retention
// and Config.MaxBackups). The choice is a pure function of the
// generations' save times, measured from the committed generation's: the
// same directory keeps the same generations whenever it is looked at.

// keepPolicy is what a commit keeps of the older generations: the newest
// max (max < 0 keeps all), and those the retention keeps.
type keepPolicy struct {
	max       int
	retention autosave.Retention
}

// keepsAny reports whether the policy may keep a generation the commit
// retires: then it moves to backups/ (and the cleanup decides).
func (p keepPolicy) keepsAny() bool {
	return p.max != 0 || p.retention.All > 0 || len(p.retention.Thin) > 0
}

// retained reports, for generations saved at times (newest first), which
// ones the policy keeps when the committed generation was saved at now:
// the newest p.max (all when p.max < 0); every one saved within
// p.retention.All of now (or after now: a clock set back keeps rather than
// drops); and for each step of p.retention.Thin, the oldest of those saved
// within the same Every-long span of time since the Unix epoch, when it is
// younger than For. A negative or zero duration keeps nothing by itself.
func retained(times []time.Time, now time.Time, p keepPolicy) []bool {
	keep := make([]bool, len(times))
	for i, t := range times {
		age := now.Sub(t)
		keep[i] = p.max < 0 || i < p.max || age < 0 || age <= p.retention.All
	}
	for _, k := range p.retention.Thin {
		if k.Every <= 0 || k.For <= 0 {
			continue
		}
		// Newest first: the last one seen in a span is its oldest.
		oldest := map[int64]int{}
		for i, t := range times {
			oldest[spanOf(t, k.Every)] = i
		}
		for _, i := range oldest {
			if now.Sub(times[i]) < k.For {
				keep[i] = true
			}
		}
	}
	return keep
}

// spanOf numbers the span of length every since the Unix epoch that t is in
// (floor division, so that times before the epoch number correctly too).
func spanOf(t time.Time, every time.Duration) int64 {
	ms, e := t.UnixMilli(), every.Milliseconds()
	if e <= 0 {
		e = 1
	}
	n := ms / e
	if ms%e < 0 {
		n--
	}
	return n
}

// CheckRetention returns nil when r can be used, else an error matching
// autosave.ErrInvalidConfig that names the negative field.
func CheckRetention(r autosave.Retention) error {
	if r.All < 0 {
		return fmt.Errorf("%w: Retention.All is %v: want 0 (keep no generation by age) or more", autosave.ErrInvalidConfig, r.All)
	}
	for i, k := range r.Thin {
		if k.Every < 0 {
			return fmt.Errorf("%w: Retention.Thin[%d].Every is %v: want 0 (this step keeps nothing) or more", autosave.ErrInvalidConfig, i, k.Every)
		}
		if k.For < 0 {
			return fmt.Errorf("%w: Retention.Thin[%d].For is %v: want 0 (this step keeps nothing) or more", autosave.ErrInvalidConfig, i, k.For)
		}
	}
	return nil
}
