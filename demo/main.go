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
	cli.Main() // already run by package early; returns when a window is wanted
	o, err := cli.Parse(os.Args[1:], os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := game.Run(o); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}
