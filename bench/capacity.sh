#!/usr/bin/env bash
# The figures docs/database.md's capacity model is built from: a hollow fleet on PostgreSQL and
# on SQLite, phase by phase, each line saying the controller's CPU per node or report and, on
# PostgreSQL, the server's CPU and write-ahead log per node or report.
#
#   bench/capacity.sh 'postgres://user@127.0.0.1:5432/db'   # a server with nothing else on it
#   NODES=10000 RESOURCES=100 RATE=833 bench/capacity.sh 'postgres://…'
#
# Without an argument it starts a throwaway PostgreSQL of Debian's (.ci/postgres), as CI does.
# It builds hq and hq-loadgen into a temporary directory, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
NODES=${NODES:-2000}
RESOURCES=${RESOURCES:-100}
RATE=${RATE:-200}
STEADY=${STEADY:-20s}
tmp=$(mktemp -d)
cleanup() {
  [[ -n "${pgdir:-}" ]] && bash .ci/postgres stop "$pgdir" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
pg=${1:-}
if [[ -z "$pg" ]]; then
  pgdir="$tmp/pg"
  eval "$(bash .ci/postgres start "$pgdir")"
  pg=$HQ_TEST_POSTGRES
fi
go build -o "$tmp/hq" ./cmd/hq
go build -o "$tmp/hq-loadgen" ./cmd/hq-loadgen
for engine in postgres sqlite; do
  echo "== $engine: $NODES nodes × $RESOURCES resources, steady $RATE reports/s for $STEADY"
  args=(-hq "$tmp/hq" -nodes "$NODES" -resources "$RESOURCES" -phases steady,revision -steady-rate "$RATE" -steady-for "$STEADY")
  [[ $engine == postgres ]] && args+=(-postgres "$pg")
  "$tmp/hq-loadgen" "${args[@]}"
done
