// Command headless runs the arksave falling-sand demo without a window: the
// same world and systems, arksave's included, with a scripted player; it
// makes a final save and prints one JSON line of stats. It needs no display
// and imports no Ebiten, so it builds and runs on a machine without X11.
//
//	go run ./demo/headless -ticks 600 -seed 1 -save /tmp/arksave-demo
//
// It takes the window's flags (demo -h lists them; the window-only ones are
// ignored), and -ticks defaults to 600.
package main

import (
	"os"

	"github.com/arksave/arksave/demo/cli"
)

func main() { os.Exit(cli.HeadlessMain(os.Args[1:], os.Stdout, os.Stderr)) }
