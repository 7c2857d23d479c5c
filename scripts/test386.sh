#!/usr/bin/env bash
# The codecs' tests as a 32-bit x86 program: int is 32 bits there, and alignment differs
# (archetype reads files of 64-bit hosts field by field). Skipped, saying so, where the
# kernel does not run 32-bit x86 programs.
set -euo pipefail
GO=${GO:-go}
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf 'package main\n\nfunc main() {}\n' > "$probe/main.go"
if ! (cd "$probe" && GOWORK=off GOARCH=386 CGO_ENABLED=0 "$GO" build -o probe main.go && ./probe) >/dev/null 2>&1; then
	echo "test-386: skipped: this machine does not run 32-bit x86 programs"
	exit 0
fi
GOWORK=off GOARCH=386 CGO_ENABLED=0 "$GO" test ./archetype ./chunkstore ./components ./internal/... ./snapshot
