#!/usr/bin/env bash
#
# test/bench/join.sh: plain anti and semi joins (NOT EXISTS, LEFT JOIN ...
# IS NULL, EXISTS) against a table with a btree and a bloomfilter index on
# the key, with bloomfilter.join_filter on against off (issue 32).
#
#   bash test/bench/join.sh [--rows N] [--batch N] [--pcts "1 10 100"]
#                           [--tiny N] [--runs R] [--keep] [--out FILE]
#
# Against the server the libpq environment names (PGHOST, PGPORT, PGUSER,
# PGDATABASE), with bloomfilter installable there; its tables are UNLOGGED,
# in schema bench_join, dropped at the end unless --keep.
#
# The existing table holds the even keys 2 .. 2 × ROWS (default 4,000,000)
# with a btree and a bloomfilter index (default options); each incoming
# batch BATCH keys (default 200,000), PCT % of them existing, the rest new,
# spread over the whole range, in random order.  For each case, serial, in
# every round (R, default 5, after a warm-up whose counts must agree; the
# order reversed every other round), timed by CPU time (the backend's, from
# /proc/self/schedstat: a busy machine's wait for a CPU left out) and by
# Execution Time:
#
#   on        the plain query, bloomfilter.join_filter on: PostgreSQL's choice
#   off       the same with it off: PostgreSQL's own plan (the baseline)
#   hash, merge, nestloop   it off, each join forced with enable_*: the
#             fastest is the stronger baseline
#   forced    it on, every other join disabled: the node where the planner
#             would not have chosen it (how much a wrong estimate costs)
#
# The cases: NOT EXISTS at each percent; LEFT JOIN ... IS NULL at the first
# percent; EXISTS at the first and last; NOT EXISTS into a tiny table (TINY
# rows, default 1,000: fewer than the batch) and into a table whose filter
# runs at a false-positive rate of 0.5.  Times are the Execution Time of
# EXPLAIN (ANALYZE, TIMING OFF); the report gives medians and the ratios
# off / on and fastest forced / on (above 1: the filter's plan is faster).
# Larger regimes: --rows 10000000 --batch 1000000, --rows 50000000.

set -euo pipefail

rows=4000000
batch=200000
pcts="1 10 100"
tiny=1000
runs=5
keep=0
out=
while [ $# -gt 0 ]; do
	case "$1" in
		--rows) rows=$2; shift 2 ;;
		--batch) batch=$2; shift 2 ;;
		--pcts) pcts=$2; shift 2 ;;
		--tiny) tiny=$2; shift 2 ;;
		--runs) runs=$2; shift 2 ;;
		--keep) keep=1; shift ;;
		--out) out=$2; shift 2 ;;
		-h | --help) sed -n '3,34p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "join.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
for n in "$rows" "$batch" "$tiny" "$runs"; do
	[[ "$n" =~ ^[0-9]+$ ]] || { echo "join.sh: not a number: $n" >&2; exit 2; }
done

BENCH=$(cd "$(dirname "$0")" && pwd)
q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
log() { echo "[join $(date +%H:%M:%S)] $*" >&2; }
cleanup() {
	[ "$keep" -eq 1 ] || q -c "DROP SCHEMA IF EXISTS bench_join CASCADE" >/dev/null 2>&1 || true
}
trap cleanup EXIT

t0=$SECONDS
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
log "rows $rows, batch $batch, percents $pcts, $runs rounds"
q -v rows="$rows" -v batch="$batch" -v pcts="$pcts" -v tiny="$tiny" -v runs="$runs" \
	-f "$BENCH/join.sql" >/dev/null
# by CPU time ("cpu_ms") and by Execution Time ("ms")
report_by() {
	q -At <<SQL
WITH med AS (
    SELECT ord, kind, percentile_cont(0.5) WITHIN GROUP (ORDER BY $1) AS ms,
           min(plan) AS plan
    FROM bench_join.runs GROUP BY ord, kind
), w AS (
    SELECT c.ord, c.label,
           max(m.ms) FILTER (WHERE kind = 'on') AS on_ms,
           max(m.ms) FILTER (WHERE kind = 'off') AS off_ms,
           least(max(m.ms) FILTER (WHERE kind = 'hash'), max(m.ms) FILTER (WHERE kind = 'merge'),
                 max(m.ms) FILTER (WHERE kind = 'nestloop')) AS best_ms,
           (array_agg(kind ORDER BY m.ms) FILTER (WHERE kind IN ('hash', 'merge', 'nestloop')))[1] AS best,
           max(m.ms) FILTER (WHERE kind = 'forced') AS forced_ms,
           max(m.plan) FILTER (WHERE kind = 'on') AS on_plan,
           max(m.plan) FILTER (WHERE kind = 'off') AS off_plan
    FROM bench_join.cases c JOIN med m USING (ord) GROUP BY c.ord, c.label
)
SELECT format('| %s | %s | %s | %s (%s) | **%s ×** | %s × | %s | %s × | %s | %s |', label,
              round(on_ms::numeric, 1), round(off_ms::numeric, 1), round(best_ms::numeric, 1), best,
              round((off_ms / on_ms)::numeric, 2), round((best_ms / on_ms)::numeric, 2),
              round(forced_ms::numeric, 1), round((off_ms / forced_ms)::numeric, 2),
              replace(on_plan, 'Aggregate > ', ''), replace(off_plan, 'Aggregate > ', ''))
FROM w ORDER BY ord;
SQL
}
report_cpu=$(report_by cpu_ms)
report_ms=$(report_by ms)
header() {
	echo "| case | on (ms) | off (ms) | fastest forced (ms) | off / on | fastest forced / on | node forced (ms) | off / node forced | plan with it on | plan with it off |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---|---|"
}
{
	echo "CPU time of the backend (medians):"
	echo
	header
	echo "$report_cpu"
	echo
	echo "Execution Time (medians, wall clock):"
	echo
	header
	echo "$report_ms"
	echo
	echo "- $(psql -XAtq -c 'SELECT version()')"
	echo "- medians of $runs rounds after a warm-up, alternating; Execution Time of EXPLAIN (ANALYZE, TIMING OFF), serial; run time $(((SECONDS - t0) / 60)) min $(((SECONDS - t0) % 60)) s"
	echo "- load average (1, 5, 15 min) at start: $load_start; at end: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "- command: test/bench/join.sh --rows $rows --batch $batch --pcts \"$pcts\" --tiny $tiny --runs $runs"
} >"${out:-/dev/stdout}"
[ -n "$out" ] && log "written to $out"
log "done"
