#!/usr/bin/env bash
#
# test/bench/antijoin.sh: the anti-join pre-check against the fastest plain
# NOT EXISTS, in several regimes, side by side in one run.
#
#   bash test/bench/antijoin.sh [--regimes "EXISTING:BATCH:PERCENT ..."]
#                               [--rounds R] [--keep] [--out FILE]
#
# Against the server that the libpq environment names (PGHOST, PGPORT,
# PGUSER, PGDATABASE), with bloomfilter installable in that database; its
# tables are UNLOGGED, in schema bench_aj, dropped at the end unless --keep.
# run.sh runs it inside its cluster with the regimes of its scale.
#
# A regime is EXISTING keys in a table with a btree, a BATCH of incoming
# keys of which PERCENT % exist (the rest are new), both spread over the
# whole key range; default "10000000:1000000:1 10000000:1000000:10
# 10000000:200000:1 10000000:200000:10" (existing 10 and 50 times the batch,
# 1% and 10% present).  Over the existing keys: a stored filter,
# bloom_agg(key, EXISTING, 0.01), and a bloomfilter index WITH (capacity =
# EXISTING), made after the load.  For each regime, serial, in every round
# (R, default 3, after a warm-up; the order reversed every other round):
#
#   plain     SELECT count(*) FROM incoming i WHERE NOT EXISTS (SELECT 1
#             FROM existing e WHERE e.key = i.key), forced with enable_*
#             into each plan PostgreSQL may choose: hash anti join
#             (work_mem 4MB), merge anti join (256MB), nested loop with a
#             btree probe per key.  The fastest is the baseline.
#   pre       the pre-check, with the stored filter and with the index, in
#             three forms: the README's one pass (NOT probe OR NOT EXISTS
#             (... OFFSET 0)); the "maybe" keys sorted before their exact
#             checks (two scans of the batch); the one pass over the batch
#             sorted by key.  In the first regime also the one pass without
#             OFFSET 0 at work_mem 256MB (the README warns against it).
#
# Every variant's count must be the number of new incoming keys, which the
# data makes known: a run where one differs stops.  Times are the Execution
# Time of EXPLAIN (ANALYZE, TIMING OFF); the report gives medians, ratios to
# the baseline, every run, the plans and settings, and the parts of the
# pre-check measured alone.  10M existing keys take about a minute to make
# and index on 2 cores, 50M about five.

set -euo pipefail

regimes="10000000:1000000:1 10000000:1000000:10 10000000:200000:1 10000000:200000:10"
rounds=3
keep=0
out=
while [ $# -gt 0 ]; do
	case "$1" in
		--regimes) regimes=${2:?--regimes needs EXISTING:BATCH:PERCENT ...}; shift 2 ;;
		--rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
		--keep) keep=1; shift ;;
		--out) out=${2:?--out needs a file name}; shift 2 ;;
		-h | --help) sed -n '3,39p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "antijoin.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
for r in $regimes; do
	if ! [[ "$r" =~ ^[0-9]+:[0-9]+:[0-9]+(\.[0-9]+)?$ ]]; then
		echo "antijoin.sh: a regime is EXISTING:BATCH:PERCENT, e.g. 10000000:1000000:10, not \"$r\"" >&2
		exit 2
	fi
done
if ! [[ "$rounds" =~ ^[0-9]+$ ]] || [ "$rounds" -lt 3 ]; then
	echo "antijoin.sh: --rounds must be 3 or more" >&2
	exit 2
fi

BENCH=$(cd "$(dirname "$0")" && pwd)
q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
log() { echo "[antijoin $(date +%H:%M:%S)] $*" >&2; }
cleanup() {
	[ "$keep" -eq 1 ] || q -c "DROP SCHEMA IF EXISTS bench_aj CASCADE" >/dev/null 2>&1 || true
}
trap cleanup EXIT

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
t0=$SECONDS
log "regimes $regimes, $rounds rounds"
q -At -v regimes="$regimes" -v runs="$rounds" -f "$BENCH/antijoin.sql" | sed 's/^/  /' >&2
report=$(q -At -f "$BENCH/antijoin_report.sql")
{
	echo "$report" | sed -n '1,2p'
	echo "- $(psql -XAtq -c 'SELECT version()'); $rounds rounds after a warm-up, medians; run time $(((SECONDS - t0) / 60)) min $(((SECONDS - t0) % 60)) s"
	echo "- load average (1, 5, 15 min) at start: $load_start; at end: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "- command: test/bench/antijoin.sh --regimes \"$regimes\" --rounds $rounds"
	echo
	echo "$report" | sed '1,2d'
} >"${out:-/dev/stdout}"
[ -n "$out" ] && log "written to $out"
log "done"
