package cli

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/savetool"
)

func init() {
	register(&command{
		name:    "export",
		args:    "--json [--generation G] DIR|FILE.pecs",
		summary: "write a save's ECS world and chunk index (or a PECS file's world) as JSON to standard output, without the game's types",
		run:     runExport,
		flags:   func() *flag.FlagSet { return exportFlags(new(bool), new(uint64)) },
	})
}

func exportFlags(asJSON *bool, gen *uint64) *flag.FlagSet {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.BoolVar(asJSON, "json", false, "write JSON (the only format so far)")
	fs.Uint64Var(gen, "generation", 0, "export backed-up generation `G` of a save directory")
	return fs
}

func runExport(args []string, stdout, stderr io.Writer) error {
	var asJSON bool
	var gen uint64
	path, err := pathArg(exportFlags(&asJSON, &gen), args, anyPath)
	if err != nil {
		return err
	}
	if !asJSON {
		return usagef("choose an output format: --json")
	}
	if remote(path) {
		return exportSave(path, gen, stdout, stderr)
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w; check the path", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return exportSave(path, gen, stdout, stderr)
	}
	out := bufio.NewWriterSize(stdout, 1<<16)
	if err := archetype.ExportJSON(out, bufio.NewReaderSize(f, 1<<16)); err != nil {
		_ = out.Flush()
		reportReadError(stderr, "export", path, err)
		fmt.Fprintln(stderr, "the JSON written so far is incomplete; `arksave inspect` shows what the file still holds")
		return errReported
	}
	return out.Flush()
}

// exportSave writes the JSON of a save's generation gen (0: the committed one).
func exportSave(path string, gen uint64, stdout, stderr io.Writer) error {
	loc, err := openLocation(path)
	if err != nil {
		return err
	}
	defer loc.Close()
	if err := savetool.ExportJSON(stdout, loc.Path, gen, savetool.Options{FS: loc.FS}); err != nil {
		fmt.Fprintf(stderr, "arksave export: %v\n", err)
		fmt.Fprintf(stderr, "the JSON written so far is incomplete; arksave check %s lists the damage\n", path)
		return errReported
	}
	return nil
}
