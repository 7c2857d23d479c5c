package cli

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/arksave/arksave/internal/savetool"
)

func init() {
	register(&command{
		name:    "restore",
		args:    "--generation G|--at WHEN DIR",
		summary: "make a kept generation current again, as a new generation: G, or the newest committed at or before WHEN (10m, 2h: that long ago; or an RFC 3339 time); the current one becomes a backup",
		run:     runRestore,
		flags:   func() *flag.FlagSet { return restoreFlags(new(uint64), new(string)) },
	})
}

func restoreFlags(gen *uint64, at *string) *flag.FlagSet {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.Uint64Var(gen, "generation", 0, "restore backed-up generation `G` (arksave inspect lists them)")
	fs.StringVar(at, "at", "", "restore the newest kept generation committed at or before `WHEN`: a duration ago (10m, 2h) or an RFC 3339 time (2026-11-27T18:00:00Z)")
	return fs
}

func runRestore(args []string, stdout, stderr io.Writer) error {
	var gen uint64
	var when string
	dir, err := pathArg(restoreFlags(&gen, &when), args, dirArg)
	if err != nil {
		return err
	}
	switch {
	case gen != 0 && when != "":
		return usagef("give one of --generation %d and --at %s, not both", gen, when)
	case gen == 0 && when == "":
		return usagef("give the generation to restore with --generation G, or a time with --at WHEN (10m, 2h, or an RFC 3339 time); arksave inspect %s lists the backups", dir)
	}
	var at time.Time
	if when != "" {
		if at, err = parseWhen(when, time.Now()); err != nil {
			return err
		}
	}
	loc, err := openLocation(dir)
	if err != nil {
		return err
	}
	defer loc.Close()
	o := savetool.Options{FS: loc.FS}
	var r *savetool.RestoreReport
	if at.IsZero() {
		r, err = savetool.Restore(loc.Path, gen, o)
	} else {
		r, err = savetool.RestoreAt(loc.Path, at, o)
	}
	if err != nil {
		return err
	}
	of := r.At.UTC().Format(time.RFC3339)
	if r.Generation == r.Restored {
		fmt.Fprintf(stdout, "generation %d of %s is the committed one: nothing to restore, nothing was changed\n", r.Restored, of)
		return nil
	}
	fmt.Fprintf(stdout, "restored generation %d as generation %d (its save of %s); generation %d is now a backup\n", r.Restored, r.Generation, of, r.Previous)
	return nil
}

// parseWhen reads restore's --at: a duration before now (10m, 2h, 1h30m)
// or an RFC 3339 time.
func parseWhen(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, usagef("--at %s: a negative duration; give how long ago, such as 10m or 2h", s)
		}
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, usagef("--at %s: neither a duration ago (10m, 2h) nor an RFC 3339 time (2026-11-27T18:00:00Z)", s)
	}
	return t, nil
}
