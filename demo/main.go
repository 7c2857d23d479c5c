// Command demo is the arksave falling-sand demo in a window. Without a
// display, run the same world headless with demo/headless (a separate
// command: Ebiten needs a display as soon as its packages initialize, so
// without one this command stops with that hint before they do).
package main

import (
	"fmt"
	"os"

	_ "github.com/arksave/arksave/demo/internal/display/require" // first: stops without a display

	"github.com/arksave/arksave/demo/cli"
	"github.com/arksave/arksave/demo/game"
)

func main() {
	o, err := cli.Parse(os.Args[1:], os.Stderr)
	switch {
	case cli.IsHelp(err):
		os.Exit(0)
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	case o.Headless:
		// A display is there (Ebiten initialized): the headless run works here too.
		os.Exit(cli.Headless(o, os.Stdout, os.Stderr))
	}
	if err := game.Run(o); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}
