// Command arksave looks inside, checks, mends and converts arksave save
// directories and their files.
//
// Usage:
//
//	arksave <command> [arguments]
//
// Commands:
//
//	inspect [--json] DIR|FILE        generations, backups, chunk stores, bodies, the ECS world's types and tables
//	check [--json] DIR|FILE          verify every checksum and cross-reference; list each damaged item
//	repair [flags] DIR               recover everything recoverable into a new generation
//	compact [--backups N] DIR        rewrite the chunk store without dead space, as a new generation
//	restore --generation G DIR       make a backed-up generation current again, as a new generation
//	render -o FILE.png [flags] DIR   draw the saved pixel world as a PNG
//	export --json DIR|FILE.pecs      the ECS world and the chunk index as JSON
//	import [--out F|--into DIR] JSON the JSON of export back into a world file, or into a save
//	migrate [--dry-run] DIR          upgrade older format versions to the current ones
//
// DIR is a save directory; FILE a world file (.pecs) or chunk store (.pxsw).
// Long operations draw a progress bar when standard output is a terminal.
//
// Exit status: 0 on success (check: nothing damaged), 1 when damage was
// found or the command failed, 2 on a usage error.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
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

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches to a command and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return 2
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		printUsage(stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "arksave: unknown command %q\n\n", args[0])
		printUsage(stderr)
		return 2
	}
	err := c.run(args[1:], stdout, stderr)
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stdout, "usage: arksave %s %s\n%s\n", c.name, c.args, c.summary)
		if c.flags != nil {
			fs := c.flags()
			fs.SetOutput(stdout)
			fs.PrintDefaults()
		}
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "arksave %s: %s\nusage: arksave %s %s\n", c.name, ue.msg, c.name, c.args)
		return 2
	case errors.Is(err, errReported):
		return 1
	default:
		fmt.Fprintf(stderr, "arksave %s: %v\n", c.name, err)
		return 1
	}
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
	fmt.Fprintln(w, "Exit status: 0 success, 1 damage found or failure, 2 usage error. `arksave <command> -h` lists its flags.")
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

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
