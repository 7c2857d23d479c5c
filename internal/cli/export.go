package cli

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/arksave/arksave/archetype"
	"github.com/arksave/arksave/internal/errs"
	"github.com/arksave/arksave/internal/savetool"
)

func init() {
	register(&command{
		name:    "export",
		args:    "--json [--generation G] [--key-file FILE] DIR|FILE.pecs",
		summary: "write a save's ECS world and its stored chunks (or a PECS file's world) as JSON to standard output, without the game's types",
		run:     runExport,
		flags:   func() *flag.FlagSet { return keyFileFlag(exportFlags(new(bool), new(uint64)), new(string)) },
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
	var keyFile string
	path, err := pathArg(keyFileFlag(exportFlags(&asJSON, &gen), &keyFile), args, anyPath)
	if err != nil {
		return err
	}
	key, err := readKeyFile(keyFile)
	if err != nil {
		return err
	}
	if !asJSON {
		return usagef("choose an output format: --json")
	}
	if remote(path) {
		return exportSave(path, gen, key, stdout, stderr)
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &savetool.NotASaveError{Path: path, Reason: "it does not exist", Err: err}
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return exportSave(path, gen, key, stdout, stderr)
	}
	var in io.Reader = bufio.NewReaderSize(f, 1<<16)
	if err := exportableFile(path, in.(*bufio.Reader)); err != nil {
		return err
	}
	if key != nil {
		plain, err := readPECSWithKey(in, key)
		if err != nil {
			reportReadError(stderr, "export", path, err)
			return errReported
		}
		in = bytes.NewReader(plain)
	}
	out := &countingWriter{w: bufio.NewWriterSize(stdout, 1<<16)}
	if err := archetype.ExportJSON(out, in); err != nil {
		_ = out.w.(*bufio.Writer).Flush()
		reportReadError(stderr, "export", path, err)
		if out.n > 0 {
			fmt.Fprintln(stderr, "the JSON written so far is incomplete; `arksave inspect` shows what the file still holds")
		}
		return errReported
	}
	return out.w.(*bufio.Writer).Flush()
}

// exportableFile refuses a file export does not read: a chunk store, which
// holds no world and whose index export writes from its save directory,
// and a file that is no world file at all. A world file whose first bytes
// are damaged is left to the decoder, which reports the damage.
func exportableFile(path string, in *bufio.Reader) error {
	magic, _ := in.Peek(4)
	switch {
	case string(magic) == "PXSW" || strings.HasSuffix(path, ".pxsw"):
		return &savetool.NotASaveError{Path: path, Reason: fmt.Sprintf("it is a chunk store (.pxsw), and export takes a save directory or a world file (.pecs): "+
			"give the save directory that holds it (arksave export --json %s) to export its world and stored chunks", filepath.Dir(path))}
	case string(magic) != "PECS" && !strings.HasSuffix(path, ".pecs"):
		return &savetool.NotASaveError{Path: path, Reason: "it is neither a save directory nor a world file (.pecs, starting with PECS); export takes one of those"}
	}
	return nil
}

// exportSave writes the JSON of a save's generation gen (0: the committed one).
func exportSave(path string, gen uint64, key []byte, stdout, stderr io.Writer) error {
	loc, err := openLocation(path)
	if err != nil {
		return err
	}
	defer loc.Close()
	out := &countingWriter{w: stdout}
	err = savetool.ExportJSON(out, loc.Path, gen, savetool.Options{FS: loc.FS, Key: key})
	if err == nil {
		return nil
	}
	fmt.Fprintf(stderr, "arksave export: %v\n", err)
	if out.n > 0 {
		fmt.Fprintln(stderr, "the JSON written so far is incomplete")
	}
	switch {
	case errors.Is(err, fs.ErrPermission):
		fmt.Fprintln(stderr, errs.DeniedHint(err))
	case errors.Is(err, errs.Corrupt):
		fmt.Fprintf(stderr, "the save is damaged: arksave check %s lists the damage, arksave repair %s mends it\n", path, path)
	}
	return errReported
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
