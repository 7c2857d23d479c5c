#!/usr/bin/env bash
# Runs every fuzz target in the workspace for FUZZTIME each (default 20000x:
# a count of inputs; see the Makefile for why not a duration).
# Usage: scripts/fuzz.sh [regexp-of-target-names]
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-20000x}"
# The fuzzer minimizes every new interesting input for up to 60 s by default,
# without counting those runs: on 1 KB store files that swallows a short run
# whole. A bounded number of minimization runs keeps it fuzzing.
minimize="${FUZZMINIMIZE:-200x}"
pattern="${1:-.}"

found=0
while IFS= read -r file; do
  dir="./$(dirname "$file")"
  for target in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)\(' "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(/\1/'); do
    [[ "$target" =~ $pattern ]] || continue
    found=$((found + 1))
    echo "fuzz: $dir $target ($fuzztime)"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "$dir"
  done
done < <(git ls-files --cached --others --exclude-standard '*_test.go' | xargs grep -l '^func Fuzz' 2>/dev/null | sort)

echo "fuzz: $found targets ran"
