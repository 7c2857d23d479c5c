#!/usr/bin/env bash
# Builds the demo into bin/ and runs it: in a window when there is a display,
# headless otherwise. Arguments go to the demo: make demo ARGS=-load
# continues the last world, make demo ARGS='-seed 7' starts another.
# The binary runs, not go run: Ctrl-C makes the demo's final save and it
# exits 0, which go run would report as exit status 1.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bin
if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
  echo "demo: building the window demo into bin/demo (the first build compiles Ebiten's cgo parts: about 30 s)..."
  go build -o bin/demo ./demo
  echo "demo: running bin/demo $*"
  echo "demo: F5 saves, F6 saves as, F9 reloads, Esc or Ctrl-C saves and exits; make demo ARGS=-load continues the world next time"
  exec bin/demo "$@"
fi
echo "demo: no display (DISPLAY and WAYLAND_DISPLAY are unset): building the headless demo into bin/demo-headless..."
go build -o bin/demo-headless ./demo/headless
echo "demo: running bin/demo-headless $*: a scripted player (600 ticks unless -ticks says otherwise), then one JSON line of stats"
echo "demo: make demo ARGS=-load continues the world; for the window in a virtual display: xvfb-run -a make demo"
exec bin/demo-headless "$@"
