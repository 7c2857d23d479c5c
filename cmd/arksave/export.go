package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/arksave/arksave/archetype"
)

func init() {
	register(&command{
		name:    "export",
		args:    "--json FILE.pecs",
		summary: "write the world of a PECS file as JSON to standard output, without the game's types",
		run:     runExport,
	})
}

func runExport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "write JSON (the only format so far)")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if !*asJSON {
		return usagef("choose an output format: --json")
	}
	path, err := oneFile(rest)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w; check the path", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory; give the path of a .pecs file", path)
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
