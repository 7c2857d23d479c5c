#!/usr/bin/env bash
# Installs what `make demo` and `make test` need on Debian and is missing:
# the headers Ebiten's cgo build links against, and xvfb for windowed tests.
# As root it installs them with apt-get; otherwise it prints the command to run.
set -euo pipefail

packages=(gcc pkg-config libgl1-mesa-dev libxcursor-dev libxi-dev libxinerama-dev
  libxrandr-dev libxxf86vm-dev libasound2-dev xvfb xauth)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if ! command -v go >/dev/null 2>&1; then
  echo "deps: Go is not on PATH; install Go 1.24 or newer (https://go.dev/dl/) and run again" >&2
  exit 1
fi

[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "deps: missing packages: ${missing[*]}; this is not a Debian system, install their equivalents" >&2
  exit 1
fi

sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo"
  else
    echo "deps: missing Debian packages: ${missing[*]}" >&2
    echo "deps: run as root: apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
