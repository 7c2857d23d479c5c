#!/usr/bin/env bash
# Counts the public surface of the core module: the declarations and methods
# `go doc -all` shows for each importable package (a const or var block
# counts once), and fails when the total passes MAX (default 350).
set -euo pipefail
GO=${GO:-go}
MAX=${MAX:-350}
total=0
for p in $(GOWORK=off $GO list ./... | grep -v -e /internal/ -e /internal$ -e /cmd/); do
	n=$(GOWORK=off $GO doc -all "$p" 2>/dev/null | grep -cE '^(func|type|var|const) |^    func |^func \(' || true)
	printf '%4d %s\n' "$n" "$p"
	total=$((total + n))
done
printf '%4d total (at most %d)\n' "$total" "$MAX"
if [ "$total" -gt "$MAX" ]; then
	echo "the public API has $total declarations and methods, over $MAX: move what only the module uses to internal/" >&2
	exit 1
fi
