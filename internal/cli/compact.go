package cli

import (
	"flag"
	"fmt"
	"io"

	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/words"
)

func init() {
	register(&command{
		name:    "compact",
		args:    "[--whole] [--zstd] [--backups N] [-q] DIR",
		summary: "reclaim the chunk store's dead space, data file by data file (or --whole: into a new store), as a new generation (the same world)",
		run:     runCompact,
		flags:   func() *flag.FlagSet { return compactFlags(new(int), new(bool), new(bool), new(bool)) },
	})
}

func compactFlags(backups *int, whole, zstd, quiet *bool) *flag.FlagSet {
	fs := flag.NewFlagSet("compact", flag.ContinueOnError)
	fs.IntVar(backups, "backups", -1, "keep `N` older generations afterwards (-1: as many as now); a backup keeps the files its generation uses")
	fs.BoolVar(whole, "whole", false, "write the whole store into a new store file and data files (also brings a store of format 1 to the current one)")
	fs.BoolVar(zstd, "zstd", false, "store every record the compaction moves with zstd where that is smaller, and move every record (archival; a save with zstd records needs this version of arksave or a later one)")
	quietFlag(fs, quiet)
	return fs
}

func runCompact(args []string, stdout, stderr io.Writer) error {
	var backups int
	var whole, zstd, quiet bool
	dir, err := pathArg(compactFlags(&backups, &whole, &zstd, &quiet), args, dirArg)
	if err != nil {
		return err
	}
	b := newBar(stderr, quiet)
	loc, err := openLocation(dir)
	if err != nil {
		return err
	}
	defer loc.Close()
	r, err := savetool.Compact(loc.Path, savetool.CompactOptions{Options: savetool.Options{FS: loc.FS, Progress: b.progress()}, MaxBackups: backups, Whole: whole, Zstd: zstd})
	b.clear()
	if err != nil {
		return err
	}
	if r.NewStore != r.OldStore {
		fmt.Fprintf(stdout, "compacted %s (%s, %s dead) into %s (%s) as generation %d\n",
			r.OldStore, bytesStr(r.Before), bytesStr(r.DeadBefore), r.NewStore, bytesStr(r.After), r.Generation)
	} else {
		fmt.Fprintf(stdout, "compacted %s data file by data file (%s, %s dead before; %s, %s dead after; %d emptied) as generation %d\n",
			r.OldStore, bytesStr(r.Before), bytesStr(r.DeadBefore), bytesStr(r.After), bytesStr(r.DeadAfter), len(r.Emptied), r.Generation)
	}
	if r.Zstd > 0 {
		fmt.Fprintf(stdout, "%s stored as zstd\n", words.Count(r.Zstd, "record", "records"))
	}
	fmt.Fprintf(stdout, "save directory: %s before, %s after\n", bytesStr(r.DirBefore), bytesStr(r.DirAfter))
	if r.OldKept {
		fmt.Fprintf(stdout, "the files the old generation used stay while backups use them (%d kept); compact --backups 0 %s drops them and frees their space\n", r.BackupsKept, dir)
	}
	return nil
}
