package cli

import (
	"flag"
	"fmt"
	"io"

	"github.com/arksave/arksave/internal/savetool"
)

func init() {
	register(&command{
		name:    "restore",
		args:    "--generation G DIR",
		summary: "make backed-up generation G current again, as a new generation; the current one becomes a backup",
		run:     runRestore,
		flags:   func() *flag.FlagSet { return restoreFlags(new(uint64)) },
	})
}

func restoreFlags(gen *uint64) *flag.FlagSet {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.Uint64Var(gen, "generation", 0, "restore backed-up generation `G` (arksave inspect lists them)")
	return fs
}

func runRestore(args []string, stdout, stderr io.Writer) error {
	var gen uint64
	dir, err := pathArg(restoreFlags(&gen), args, dirArg)
	if err != nil {
		return err
	}
	if gen == 0 {
		return usagef("give the generation to restore with --generation G (arksave inspect %s lists the backups)", dir)
	}
	loc, err := openLocation(dir)
	if err != nil {
		return err
	}
	defer loc.Close()
	r, err := savetool.Restore(loc.Path, gen, savetool.Options{FS: loc.FS})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "restored generation %d as generation %d; generation %d is now a backup\n", r.Restored, r.Generation, r.Previous)
	return nil
}
