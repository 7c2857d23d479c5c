#!/usr/bin/env bash
# bench-compare: the headline benchmarks of a reference commit and of the working
# tree, run interleaved on the same machine, then one benchstat table.
#
#   make bench-compare REF=<commit> [ROUNDS=5] [ONLY=regexp]
#
# REF is checked out into a temporary worktree (removed at the end); the working
# tree is measured as it is, uncommitted changes included. Each round runs every
# benchmark once in REF and once here, alternately, so that a noisy neighbour on
# a shared machine weighs on both sides alike. ONLY keeps the benchmarks whose
# label matches (for example ONLY=commit). A benchmark that REF does not have
# shows on one side only.
set -euo pipefail

ref=${REF:-}
rounds=${ROUNDS:-5}
only=${ONLY:-.}
go=${GO:-go}
if [ -z "$ref" ]; then
  echo "bench-compare: say which commit to compare with: make bench-compare REF=<commit>" >&2
  exit 2
fi
root=$(git rev-parse --show-toplevel)
cd "$root"
sha=$(git rev-parse --verify --quiet "$ref^{commit}") || {
  echo "bench-compare: $ref is not a commit of this repository (git fetch it first?)" >&2
  exit 2
}

# label | package | -bench pattern | -benchtime: the headline figures of docs/benchmarks.md.
# A benchmark REF does not have (load, before 2026-11-27) shows on the working tree's side only.
benchmarks=(
  "commit|.|^BenchmarkCommitLatency$/arksave|30x"
  "load|.|^BenchmarkLoadLatency$|10x"
  "stall|.|^BenchmarkSaveStall$|20x"
  "codec|./bench|^BenchmarkAcceptance$|1s"
  "tick|./demo/sim|^BenchmarkAutosaveP99$|30x"
  "tile|./mapserve|^BenchmarkTile$|1s"
)

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-compare.XXXXXX")
cleanup() {
  git worktree remove --force "$work/ref" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
git worktree add --detach --quiet "$work/ref" "$sha"

benchstat=("$go" run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da)
"${benchstat[@]}" -h >/dev/null 2>&1 || true # fetch it before the first round

run() { # tree label pkg pattern benchtime out
  local tree=$1 label=$2 pkg=$3 pattern=$4 benchtime=$5 out=$6
  if ! (cd "$tree" && "$go" test -run '^$' -bench "$pattern" -benchtime "$benchtime" -count 1 -timeout 30m "$pkg") >"$work/last" 2>&1; then
    echo "bench-compare: $label failed in $tree:" >&2
    tail -20 "$work/last" >&2
    return 1
  fi
  grep -E '^(Benchmark|goos|goarch|pkg|cpu)' "$work/last" >>"$out"
}

echo "bench-compare: $ref ($sha) against the working tree, $rounds rounds"
for ((i = 1; i <= rounds; i++)); do
  for b in "${benchmarks[@]}"; do
    IFS='|' read -r label pkg pattern benchtime <<<"$b"
    [[ $label =~ $only ]] || continue
    echo "  round $i/$rounds: $label"
    run "$work/ref" "$label" "$pkg" "$pattern" "$benchtime" "$work/ref.txt" || true
    run "$root" "$label" "$pkg" "$pattern" "$benchtime" "$work/head.txt"
  done
done

touch "$work/ref.txt"
"${benchstat[@]}" "ref=$work/ref.txt" "head=$work/head.txt"
