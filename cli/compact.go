package cli

import (
	"flag"
	"fmt"
	"io"

	"github.com/arksave/arksave/savetool"
)

func init() {
	register(&command{
		name:    "compact",
		args:    "[--backups N] [-q] DIR",
		summary: "write the chunk store without dead space to a new file and commit it as a new generation (the same world)",
		run:     runCompact,
		flags:   func() *flag.FlagSet { return compactFlags(new(int), new(bool)) },
	})
}

func compactFlags(backups *int, quiet *bool) *flag.FlagSet {
	fs := flag.NewFlagSet("compact", flag.ContinueOnError)
	fs.IntVar(backups, "backups", -1, "keep `N` older generations afterwards (-1: as many as now); a backup keeps the old store file")
	quietFlag(fs, quiet)
	return fs
}

func runCompact(args []string, stdout, stderr io.Writer) error {
	var backups int
	var quiet bool
	dir, err := pathArg(compactFlags(&backups, &quiet), args, dirArg)
	if err != nil {
		return err
	}
	b := newBar(stderr, quiet)
	loc, err := openLocation(dir)
	if err != nil {
		return err
	}
	defer loc.Close()
	r, err := savetool.Compact(loc.Path, savetool.CompactOptions{Options: savetool.Options{FS: loc.FS, Progress: b.progress()}, MaxBackups: backups})
	b.clear()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "compacted %s (%s, %s dead) into %s (%s) as generation %d\n",
		r.OldStore, bytesStr(r.Before), bytesStr(r.DeadBefore), r.NewStore, bytesStr(r.After), r.Generation)
	fmt.Fprintf(stdout, "save directory: %s before, %s after\n", bytesStr(r.DirBefore), bytesStr(r.DirAfter))
	if r.OldKept {
		fmt.Fprintf(stdout, "%s stays while backups use it (%d kept); compact --backups 0 %s drops them and frees its space\n", r.OldStore, r.BackupsKept, dir)
	}
	return nil
}
