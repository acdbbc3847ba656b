#!/usr/bin/env bash
# What one steady report costs the PostgreSQL server, taken apart: the server's CPU a
# transaction (all its processes, from /proc) for a round trip that reads one row, for
# hq_report_steady called alone in its own transaction as the controller calls it, and for
# ten calls sharing one statement. It needs a database a hollow fleet left behind, whose
# nodes have reported, and a server on this machine with nothing else on it:
#
#   /tmp/hq-loadgen -hq /tmp/hq -postgres URL -nodes 10000 -resources 100 -phases steady -steady-for 30s
#   bench/steady-call.sh URL
#
# The calls repeat each node's last report, so they count repeats in that database.
set -euo pipefail
url=${1:?usage: bench/steady-call.sh POSTGRES_URL}
count=${COUNT:-5000}
pgbench=$(ls /usr/lib/postgresql/*/bin/pgbench | tail -1)
tmp=$(mktemp -d)
trap 'psql -q "$url" -c "DROP TABLE bench_steady_calls" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

# Each node's arguments for a repeat of its last report, numbered for pgbench to pick at random.
psql -q -v ON_ERROR_STOP=1 "$url" <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS bench_steady_calls;
CREATE TABLE bench_steady_calls AS
SELECT row_number() OVER () AS i, n.name, n.token_hash, s.id AS send_id, s.generation, s.digest,
       s.signature, r.outcome_digest, s.resources
FROM nodes n
JOIN LATERAL (SELECT * FROM sends s WHERE s.node = n.name ORDER BY s.id DESC LIMIT 1) s ON true
JOIN reports r ON r.id = n.last_report_id;
CREATE UNIQUE INDEX ON bench_steady_calls (i);
SQL
nodes=$(psql -At "$url" -c "SELECT count(*) FROM bench_steady_calls")
if (( nodes < 10 )); then echo "no reported nodes in that database" >&2; exit 1; fi
# The report's time from the server's clock: pgbench would read a colon in a literal as a variable.
call="hq_report_steady(name, token_hash, NULL, send_id, generation, digest, signature, outcome_digest, resources, hq_time(statement_timestamp()))"
printf '\\set i random(1, %d)\nSELECT name FROM bench_steady_calls WHERE i = :i;\n' "$nodes" >"$tmp/read"
printf '\\set i random(1, %d)\nSELECT %s FROM bench_steady_calls WHERE i = :i;\n' "$nodes" "$call" >"$tmp/alone"
printf '\\set i random(1, %d)\nSELECT count(%s) FROM bench_steady_calls WHERE i BETWEEN :i AND :i + 9;\n' "$((nodes - 9))" "$call" >"$tmp/ten"

server_cpu() { # seconds of CPU of every postgres process and of those that ended
  local ticks=0 f
  for p in $(pgrep -x postgres); do
    read -r -a f <"/proc/$p/stat" 2>/dev/null || continue
    ticks=$((ticks + f[13] + f[14] + f[15] + f[16]))
  done
  echo "$ticks"
}
for what in read alone ten; do
  before=$(server_cpu)
  tps=$("$pgbench" -n -M prepared -c 1 -j 1 -t "$count" -f "$tmp/$what" "$url" | awk '/^tps/ {print $3}')
  after=$(server_cpu)
  calls=$count
  [[ $what == ten ]] && calls=$((count * 10))
  awk -v w="$what" -v t="$tps" -v d=$((after - before)) -v hz="$(getconf CLK_TCK)" -v n="$count" -v c="$calls" \
    'BEGIN { printf "%-6s %8.0f transactions/s, server CPU %.3f ms a transaction, %.3f ms a call\n", w, t, d / hz * 1000 / n, d / hz * 1000 / c }'
done
