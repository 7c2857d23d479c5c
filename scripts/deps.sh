#!/usr/bin/env bash
# Installs what `make demo` and `make test` need on Debian and is missing:
# the headers Ebiten's cgo build links against and xvfb for windowed tests
# (required), and chromium for the browser test of `arksave serve` in
# demo/internal/e2e (optional: without it that test is skipped, saying so).
# As root it installs them with apt-get; otherwise it prints the command to run.
set -euo pipefail

packages=(gcc pkg-config libgl1-mesa-dev libxcursor-dev libxi-dev libxinerama-dev
  libxrandr-dev libxxf86vm-dev libasound2-dev xvfb xauth)
optional=(chromium)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done
missing_optional=()
for p in "${optional[@]}"; do
  installed "$p" || command -v "$p" >/dev/null 2>&1 || missing_optional+=("$p")
done

if ! command -v go >/dev/null 2>&1; then
  echo "deps: Go is not on PATH; install Go 1.24 or newer (https://go.dev/dl/) and run again" >&2
  exit 1
fi

[ ${#missing[@]} -eq 0 ] && [ ${#missing_optional[@]} -eq 0 ] && exit 0

skip_optional() {
  echo "deps: ${missing_optional[*]} is not installed ($1): the browser test of arksave serve will be skipped" >&2
}

if ! command -v apt-get >/dev/null 2>&1; then
  if [ ${#missing[@]} -gt 0 ]; then
    echo "deps: missing packages: ${missing[*]}; this is not a Debian system, install their equivalents" >&2
    exit 1
  fi
  skip_optional "this is not a Debian system"
  exit 0
fi

sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo"
  elif [ ${#missing[@]} -gt 0 ]; then
    echo "deps: missing Debian packages: ${missing[*]} ${missing_optional[*]}" >&2
    echo "deps: run as root: apt-get update && apt-get install -y ${missing[*]} ${missing_optional[*]}" >&2
    exit 1
  else
    skip_optional "run as root: apt-get update && apt-get install -y ${missing_optional[*]}"
    exit 0
  fi
fi

# Another apt-get or dpkg (unattended-upgrades, a second make) may hold the
# dpkg lock: every apt-get call waits for it up to lock_timeout seconds
# instead of failing at once. apt-get update takes the lists lock, which
# DPkg::Lock::Timeout does not cover in every apt version, so apt_update also
# retries while the only failure is a held lock, within the same bound.
lock_timeout=600
apt_get() { $sudo apt-get -o DPkg::Lock::Timeout="$lock_timeout" "$@"; }

apt_update() {
  local waited=0 out
  while :; do
    if out=$(apt_get update -qq 2>&1); then
      [ -z "$out" ] || echo "$out" >&2
      return 0
    fi
    if ! grep -q 'Could not get lock' <<<"$out" || [ "$waited" -ge "$lock_timeout" ]; then
      echo "$out" >&2
      return 1
    fi
    [ "$waited" -gt 0 ] || echo "deps: another apt-get holds the package lists lock; waiting up to ${lock_timeout}s" >&2
    sleep 5
    waited=$((waited + 5))
  done
}

export DEBIAN_FRONTEND=noninteractive
echo "deps: installing ${missing[*]} ${missing_optional[*]}"
apt_update
if [ ${#missing[@]} -gt 0 ]; then
  apt_get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ${#missing_optional[@]} -gt 0 ]; then
  apt_get install -y -qq --no-install-recommends "${missing_optional[@]}" >/dev/null ||
    skip_optional "apt-get could not install it"
fi
