package cli

import (
	"flag"
	"fmt"
	"io"

	"github.com/arksave/arksave/internal/savetool"
	"github.com/arksave/arksave/internal/words"
	"github.com/arksave/arksave/vfs"
)

func init() {
	register(&command{
		name:    "copy",
		args:    "[-q] SRC DST",
		summary: "copy a save, its committed generation and its backups, to a location that holds none: a directory to a world in NATS JetStream (nats://host:4222/<world>) or back",
		run:     runCopy,
		flags:   func() *flag.FlagSet { return copyFlags(new(bool)) },
	})
}

func copyFlags(quiet *bool) *flag.FlagSet {
	fs := flag.NewFlagSet("copy", flag.ContinueOnError)
	quietFlag(fs, quiet)
	return fs
}

func runCopy(args []string, stdout, stderr io.Writer) error {
	var quiet bool
	rest, err := parseFlags(copyFlags(&quiet), args)
	if err != nil {
		return err
	}
	if len(rest) != 2 {
		return usagef("a source and a destination expected, got %d arguments", len(rest))
	}
	src, err := openLocation(rest[0])
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := openLocation(rest[1])
	if err != nil {
		return err
	}
	defer dst.Close()
	b := newBar(stderr, quiet)
	r, err := savetool.Copy(src.Path, dst.Path, savetool.CopyOptions{
		Options: savetool.Options{FS: src.FS, Progress: b.progress()},
		DstFS:   dst.FS,
	})
	b.clear()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "copied generation %d and %s (%s, %d bytes) from %s to %s\n", r.Generation,
		words.Count(r.Backups, "backup", "backups"), words.Count(r.Files, "file", "files"), r.Bytes, vfs.Redact(src.String), vfs.Redact(dst.String))
	return nil
}
