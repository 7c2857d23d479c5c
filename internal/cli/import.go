package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/internal/savetool"
)

func init() {
	register(&command{
		name:    "import",
		args:    "[--out FILE.pecs | --into DIR] [--force] FILE.json|-",
		summary: "turn the JSON of arksave export back into a world file, or commit its world to a save directory as a new generation",
		run:     runImport,
		flags:   func() *flag.FlagSet { return importFlags(new(importArgs)) },
	})
}

// stdin is where "-" reads from.
var stdin io.Reader = os.Stdin

type importArgs struct {
	out, into string
	force     bool
}

func importFlags(a *importArgs) *flag.FlagSet {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.StringVar(&a.out, "out", "", "the world file to write, `FILE.pecs` (default: FILE.json's name ending in .pecs)")
	fs.StringVar(&a.into, "into", "", "the save directory `DIR` to commit the world to, as a new generation beside its committed chunks")
	fs.BoolVar(&a.force, "force", false, "overwrite the --out file; with --into, import an export of another generation than the committed one")
	return fs
}

func runImport(args []string, stdout, stderr io.Writer) error {
	var a importArgs
	path, err := pathArg(importFlags(&a), args, "JSON file (or - for standard input)")
	if err != nil {
		return err
	}
	if a.out != "" && a.into != "" {
		return usagef("give --out or --into, not both")
	}
	if a.out == "" && a.into == "" {
		if path == "-" {
			return usagef("give --out FILE.pecs or --into DIR to import standard input")
		}
		a.out = strings.TrimSuffix(path, filepath.Ext(path)) + ".pecs"
	}
	in := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("%w; check the path", err)
		}
		defer f.Close()
		in = f
	}
	if a.into != "" {
		loc, err := openLocation(a.into)
		if err != nil {
			return err
		}
		defer loc.Close()
		r, err := savetool.ImportInto(loc.Path, in, savetool.ImportOptions{Options: savetool.Options{FS: loc.FS}, AnyGeneration: a.force})
		if err != nil {
			return importError(stderr, path, err)
		}
		fmt.Fprintf(stdout, "imported %s into %s as generation %d (%d entities); generation %d is now a backup\n",
			exportOf(r), a.into, r.Generation, r.Entities, r.Previous)
		return nil
	}
	if !a.force {
		if _, err := os.Lstat(a.out); err == nil {
			return fmt.Errorf("%s exists; --force overwrites it, --out names another file", a.out)
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(a.out), "."+filepath.Base(a.out)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone once renamed
	r, err := savetool.ImportJSON(tmp, in)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return importError(stderr, path, err)
	}
	if err := os.Rename(tmp.Name(), a.out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s from %s: %d entities, %s\n", a.out, exportOf(r), r.Entities, bytesStr(int64(r.Bytes)))
	return nil
}

// exportOf names what kind of export was imported.
func exportOf(r *savetool.ImportReport) string {
	if r.From != 0 {
		return fmt.Sprintf("the export of generation %d", r.From)
	}
	return "the export of a world file"
}

// importError prints what went wrong and what to do.
func importError(stderr io.Writer, path string, err error) error {
	switch {
	case errors.Is(err, archetype.ErrBadJSON):
		fmt.Fprintf(stderr, "arksave import: %s: %v\n", path, err)
		fmt.Fprintln(stderr, "the JSON is not what arksave export writes, or an edit broke it there; nothing was written")
	case errors.Is(err, savetool.ErrOtherGeneration):
		fmt.Fprintf(stderr, "arksave import: %v\n", err)
		fmt.Fprintln(stderr, "--force imports it anyway; nothing was written")
	default:
		return err
	}
	return errReported
}
