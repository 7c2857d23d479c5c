#!/usr/bin/env bash
# Checks that scripts/deps.sh waits for the dpkg lock rather than failing at
# once: every apt-get call carries DPkg::Lock::Timeout, and apt-get update is
# retried while another apt-get holds the package lists lock. Runs deps.sh
# against fake apt-get, dpkg-query, id and sleep commands; touches no package.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"

cat >"$tmp/bin/dpkg-query" <<'F'
#!/usr/bin/env bash
exit 1
F
cat >"$tmp/bin/id" <<'F'
#!/usr/bin/env bash
echo 0
F
cat >"$tmp/bin/sleep" <<'F'
#!/usr/bin/env bash
echo "sleep $*" >>"$LOG"
F
# The first apt-get update finds the lists lock held, as when another
# apt-get runs; the second succeeds.
cat >"$tmp/bin/apt-get" <<'F'
#!/usr/bin/env bash
echo "apt-get $*" >>"$LOG"
if [[ " $* " == *" update "* ]] && [ ! -e "$LOG.updated" ]; then
  touch "$LOG.updated"
  echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)" >&2
  exit 100
fi
F
chmod +x "$tmp/bin"/*

export LOG="$tmp/log"
PATH="$tmp/bin:$PATH" bash "$here/deps.sh" >"$tmp/out" 2>&1 || {
  echo "FAIL: deps.sh failed while the lock was held once:" >&2
  cat "$tmp/out" >&2
  exit 1
}

fail=0
calls=$(grep -c '^apt-get ' "$LOG")
with_timeout=$(grep -c '^apt-get -o DPkg::Lock::Timeout=600 ' "$LOG")
if [ "$calls" -lt 3 ] || [ "$calls" != "$with_timeout" ]; then
  echo "FAIL: $with_timeout of $calls apt-get calls carry -o DPkg::Lock::Timeout=600:" >&2
  fail=1
fi
if [ "$(grep -c '^apt-get .* update' "$LOG")" != 2 ] || ! grep -q '^sleep ' "$LOG"; then
  echo "FAIL: apt-get update was not retried after the held lock:" >&2
  fail=1
fi
if ! grep -q 'waiting up to 600s' "$tmp/out"; then
  echo "FAIL: deps.sh did not say it waits for the lock:" >&2
  fail=1
fi
if [ "$fail" != 0 ]; then
  cat "$LOG" "$tmp/out" >&2
  exit 1
fi
echo "ok: deps.sh waits for the apt and dpkg locks ($calls apt-get calls)"
