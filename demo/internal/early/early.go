// Package early runs the headless demo before Ebiten starts.
//
// Ebiten opens the display while its packages initialize (internal/ui's
// init calls glfw.Init) and panics when there is none, before main ever runs.
// The headless demo must run where there is no display, in the same binary
// as the window, so main imports this package first: Go initializes
// packages in dependency order, and among those ready at a step, by import
// path; this one, under github.com/arksave, imports only what the headless
// run needs (no Ebiten) and so initializes before Ebiten's ui. Its init runs
// the whole headless demo when -headless is given and exits; otherwise it
// does nothing. TestHeadlessWithoutDisplay (in demo/internal/e2e) guards
// this order.
package early

import "github.com/arksave/arksave/demo/cli"

func init() { cli.Main() }
