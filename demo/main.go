// Command demo is the arksave falling-sand demo: a window by default, or
// -headless, a scripted run that prints one JSON line of stats.
package main

import (
	"fmt"
	"os"

	"github.com/arksave/arksave/demo/cli"
	"github.com/arksave/arksave/demo/game"

	// Runs -headless before Ebiten initializes (Ebiten needs a display to
	// initialize at all); keep this import.
	_ "github.com/arksave/arksave/demo/internal/early"
)

func main() {
	o, err := cli.Parse(os.Args[1:], os.Stderr)
	if cli.IsHelp(err) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if o.Headless { // normally already run by package early
		os.Exit(cli.Headless(o, os.Stdout, os.Stderr))
	}
	if err := game.Run(o); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}
