// Package display tells whether there is a display to open the demo's
// window on, and what to do without one. Package display/require stops the
// windowed demo with that message before Ebiten's packages initialize
// (Ebiten panics in its own initialization without a display).
package display

import "runtime"

// Missing reports whether the process has no display to open a window on:
// on Linux and the BSDs, neither DISPLAY (X11) nor WAYLAND_DISPLAY is set.
// Other systems always have one.
func Missing(getenv func(string) string) bool {
	switch runtime.GOOS {
	case "linux", "freebsd", "openbsd", "netbsd", "dragonfly":
		return getenv("DISPLAY") == "" && getenv("WAYLAND_DISPLAY") == ""
	}
	return false
}

// Hint is what the demo prints when there is no display.
const Hint = `demo: no display to open a window on (DISPLAY and WAYLAND_DISPLAY are unset).
Run it under a virtual display:   xvfb-run -a go run ./demo
or headless, with the same flags: go run ./demo/headless -ticks 600`
