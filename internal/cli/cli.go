// Package cli is the arksave command line: inspect, check, repair,
// compact, restore, diff, render, export, import, copy, migrate and serve save
// directories and their files. Its Main is the arksave command's; a build
// of the command that should also reach saves in NATS JetStream imports
// the jetstream package beside it (github.com/arksave/arksave/jetstream/cmd/arksave).
//
// Usage:
//
//	arksave <command> [arguments]
//	arksave help <command>
//
// Commands:
//
//	inspect [--json] DIR|FILE        generations, backups, chunk stores, bodies, the ECS world's types and tables
//	check [--json] [-q] DIR|FILE     verify every checksum and cross-reference; list each damaged item
//	repair [flags] DIR               recover everything recoverable into a new generation
//	compact [--backups N] [-q] DIR   rewrite the chunk store without dead space, as a new generation
//	restore --generation G|--at T DIR make a kept generation current again (G, or the newest at or before T), as a new generation
//	diff [--json] [--all] DIR A B    what differs between two generations: chunks, bodies, regional entities, players, world entities
//	render -o FILE.png [flags] DIR   draw the saved pixel world as a PNG
//	export --json DIR|FILE.pecs      the ECS world and the stored chunks as JSON
//	import [--out F|--into DIR] JSON the JSON of export back into a world file, or into a save
//	copy [-q] SRC DST                copy a save with its backups to a new location (a directory or a JetStream world)
//	migrate [--dry-run] DIR          upgrade older format versions to the current ones
//	serve [--addr HOST:PORT] DIR     a live web map and inspector of the save, read-only (default 127.0.0.1:8080)
//	version [--json]                 the module version and the format versions read and written
//
// DIR is a save's location: a save directory, or a location such as
// nats://host:4222/<world> where the command is built with its backend;
// FILE a world file (.pecs) or chunk store (.pxsw).
// Flags may stand before or after the path; a flag of one letter is written
// with one dash (-o, -q), a longer one with two (--json), and either form
// is accepted. Long operations draw a progress bar on standard error when
// it is a terminal; -q leaves it out, and so does --json.
//
// Exit status: 0 on success (check: nothing damaged), 1 when damage was
// found or the command failed, 2 on a usage error.
package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/arksave/arksave/internal/errs"
)

// A command is one subcommand. Each lives in its own file and registers itself in init.
type command struct {
	name    string
	args    string // argument synopsis, e.g. "[--json] FILE.pecs"
	summary string
	// run executes the command; a usageError makes the dispatcher print the usage line and exit 2.
	run func(args []string, stdout, stderr io.Writer) error
	// flags returns the command's flag set, for -h; nil when it has none.
	flags func() *flag.FlagSet
}

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

// usageError is a mistake in the command line.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// errReported means the command already printed what went wrong.
var errReported = errors.New("reported")

// Main runs the command line args (without the program's name) on the
// process's standard output and error and returns the exit status.
func Main(args []string) int { return Run(args, os.Stdout, os.Stderr) }

// Run runs the command line args with the given outputs and returns the
// exit status.
func Run(args []string, stdout, stderr io.Writer) int { return run(args, stdout, stderr) }

// run dispatches to a command and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return 2
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			c, code := lookup(args[1], stderr)
			if c == nil {
				return code
			}
			printHelp(stdout, c)
			return 0
		}
		printUsage(stdout)
		return 0
	case "--version", "-version":
		args = []string{"version"}
	}
	c, code := lookup(args[0], stderr)
	if c == nil {
		return code
	}
	err := c.run(args[1:], stdout, stderr)
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		printHelp(stdout, c)
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "arksave %s: %s\nusage: arksave %s %s\n(arksave help %s lists its flags)\n", c.name, ue.msg, c.name, c.args, c.name)
		return 2
	case errors.Is(err, errReported):
		return 1
	default:
		fmt.Fprintf(stderr, "arksave %s: %v\n", c.name, err)
		if hint := errs.DeniedHint(err); hint != "" && !strings.Contains(err.Error(), hint) {
			fmt.Fprintln(stderr, hint)
		}
		return 1
	}
}

// lookup finds a command by name; for an unknown one it says so on stderr,
// suggesting the nearest names, and returns the exit status.
func lookup(name string, stderr io.Writer) (*command, int) {
	if c, ok := commands[name]; ok {
		return c, 0
	}
	fmt.Fprintf(stderr, "arksave: unknown command %q\n", name)
	if near := nearest(name); len(near) > 0 {
		fmt.Fprintf(stderr, "\ndid you mean %s?\n", strings.Join(near, " or "))
	}
	fmt.Fprintln(stderr, "\nrun 'arksave help' for the list of commands")
	return nil, 2
}

// nearest returns the command names within an edit distance of 2 of name
// (a transposition counting as one edit), or that start with it, nearest
// first.
func nearest(name string) []string {
	type cand struct {
		name string
		d    int
	}
	var cands []cand
	for n := range commands {
		d := editDistance(name, n)
		if len(name) >= 2 && strings.HasPrefix(n, name) {
			d = min(d, 1)
		}
		if d <= 2 && d < len(n) {
			cands = append(cands, cand{n, d})
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].d != cands[j].d {
			return cands[i].d < cands[j].d
		}
		return cands[i].name < cands[j].name
	})
	var out []string
	for _, c := range cands {
		out = append(out, c.name)
	}
	return out
}

// editDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and transpositions of neighbours.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: arksave <command> [arguments]")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := commands[name]
		fmt.Fprintf(w, "  %s %s\n        %s\n", c.name, c.args, c.summary)
	}
	fmt.Fprintln(w, "\nDIR is a save directory, FILE a world file (.pecs) or chunk store (.pxsw).")
	fmt.Fprintln(w, "Exit status: 0 success, 1 damage found or failure, 2 usage error.")
	fmt.Fprintln(w, "'arksave help <command>' (or 'arksave <command> -h') describes a command and its flags.")
}

// printHelp describes one command: its synopsis, what it does, its flags.
func printHelp(w io.Writer, c *command) {
	fmt.Fprintf(w, "usage: arksave %s %s\n\n%s\n", c.name, c.args, c.summary)
	if c.flags == nil {
		return
	}
	fs := c.flags()
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprintln(w, "\nflags:")
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		line := "  " + flagName(f.Name)
		if name != "" {
			line += " " + name
		}
		fmt.Fprintf(w, "%s\n        %s", line, strings.ReplaceAll(usage, "\n", "\n        "))
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && !strings.Contains(usage, "("+f.DefValue+":") {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}

// flagName writes a flag as the synopses do: one dash for a one-letter
// name, two for a longer one. The flag package accepts both forms.
func flagName(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// parseFlags parses the command's flags wherever they stand among its arguments, and returns
// the positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var flags, positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			positional = append(positional, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "-") && a != "-":
			flags = append(flags, a)
			// A flag that takes a value takes the next argument unless
			// written -name=value.
			name := strings.TrimLeft(a, "-")
			if f := fs.Lookup(name); f != nil && !strings.Contains(name, "=") && !isBoolFlag(f) && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		default:
			positional = append(positional, a)
		}
	}
	if err := fs.Parse(flags); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usagef("%v", err)
	}
	return positional, nil
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// pathArg parses the command's flags, wherever they stand, and returns its
// one positional argument, a path; what says what it should name.
func pathArg(fs *flag.FlagSet, args []string, what string) (string, error) {
	rest, err := parseFlags(fs, args)
	if err != nil {
		return "", err
	}
	switch len(rest) {
	case 0:
		return "", usagef("no %s given", what)
	case 1:
		return rest[0], nil
	default:
		return "", usagef("one %s expected, got %d arguments", what, len(rest))
	}
}

const (
	dirArg  = "save directory"
	anyPath = "save directory or file"
)

// quietFlag adds -q, which leaves the progress bar out.
func quietFlag(fs *flag.FlagSet, quiet *bool) {
	fs.BoolVar(quiet, "q", false, "quiet: no progress bar (it is drawn on standard error, and only when that is a terminal)")
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
