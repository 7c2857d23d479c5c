// Package require stops the process with display.Hint when there is no
// display. The windowed demo imports it for that effect alone, before
// anything of Ebiten: Go initializes a package whose imports are all
// initialized in import-path order, and this one needs only the standard
// library and package display, so its init runs before Ebiten's
// (github.com/arksave/... sorts before github.com/hajimehoshi/...), whose
// own initialization panics without a display.
package require

import (
	"fmt"
	"os"

	"github.com/arksave/arksave/demo/internal/display"
)

func init() {
	if display.Missing(os.Getenv) {
		fmt.Fprintln(os.Stderr, display.Hint)
		os.Exit(2)
	}
}
