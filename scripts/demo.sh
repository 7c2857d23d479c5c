#!/usr/bin/env bash
# Runs the demo in a window when there is a display; otherwise says how to run it headless.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  cat <<MSG
demo: no display found (DISPLAY and WAYLAND_DISPLAY are unset).
  Run it headless (same simulation and saves, a scripted player, JSON stats at the end):
    go run ./demo -headless -ticks 600 -seed 1 -save /tmp/arksave-demo
  Or in a virtual display:
    xvfb-run -a go run ./demo
MSG
  exit 0
fi
exec go run ./demo "$@"
