// Command arksave inspects and converts arksave files.
//
// Usage:
//
//	arksave <command> [arguments]
//
// Commands:
//
//	inspect [--json] FILE.pecs   header, types, tables and the checksum verdict of a PECS world file
//	export --json FILE.pecs      the world of a PECS file as JSON, without the game's Go types
//
// Exit status: 0 on success, 1 when a file is damaged or cannot be read, 2 on a usage error.
package main

import (
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
		fmt.Fprintf(w, "  %-32s %s\n", c.name+" "+c.args, c.summary)
	}
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
		default:
			positional = append(positional, a)
		}
	}
	if err := fs.Parse(flags); err != nil {
		return nil, usagef("%v", err)
	}
	return positional, nil
}

// oneFile returns the single file argument.
func oneFile(args []string) (string, error) {
	switch len(args) {
	case 0:
		return "", usagef("no file given")
	case 1:
		return args[0], nil
	default:
		return "", usagef("one file expected, got %d arguments", len(args))
	}
}
