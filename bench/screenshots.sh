#!/usr/bin/env bash
# Screenshots of every operator page, 1280 px wide and as tall as each page, over a fleet of
# real hosts built as the operator's walk builds it (e2e/webui_test.go, TestScreenshots): the
# mesh, the mesh filtered, a node, the rollouts, a rollout, the placements, a placement, the
# modules, a module, its nodes, a revision, a diff, and the sign-in page, one PNG each.
#
#   bench/screenshots.sh OUTDIR        # from anywhere; needs go and chromium
#
# The PNGs are for a person to look at; they are not kept in the repository.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
mkdir -p "$1"
out=$(cd "$1" && pwd)
cd "$(dirname "$0")/.."
if [ ! -x /usr/bin/chromium ]; then
  echo "chromium is not installed at /usr/bin/chromium: apt-get install -y chromium" >&2
  exit 1
fi
log=$(mktemp /tmp/hq-screenshots-XXXXXX.log)
if ! HQ_SCREENSHOTS="$out" go test ./e2e -run '^TestScreenshots$' -count=1 -v >"$log" 2>&1; then
  tail -n 60 "$log" >&2
  echo "the screenshots failed; the whole output is in $log" >&2
  exit 1
fi
grep -E 'screenshot:' "$log" | sed 's/^ *webui_test.go:[0-9]*: //'
rm -f "$log"
