#!/usr/bin/env bash
#
# test/bench/planning.sh: what the join pre-check costs where it does not
# help (issue 36, items 2 to 4), bloomfilter.join_filter on against off in
# the same run, as ratios:
#
#   1. a one-row NOT EXISTS through the simple protocol (pgbench -M simple,
#      planned at every execution), into a plain table and into one of
#      PARTS_HASH hash partitions (default 64): tps on / off (target ≥ 0.95);
#   2. a join whose inner side is pruned to one of PARTS (default 1,500)
#      range partitions: the locks the planning transaction holds, on − off
#      (target ≤ 10), and the median planning time, on / off (≤ 1.5);
#   3. NOT EXISTS of BATCH incoming keys (default 100,000), 1 % present,
#      into ROWS keys (default 600,000) hash partitioned PARTS_HASH ways:
#      the median execution time, off / on (≥ 1.0: never slower).
#
#   bash test/bench/planning.sh [--parts N] [--parts-hash N] [--rows N]
#                               [--batch N] [--runs R] [--secs S] [--keep]
#
# Against the server the libpq environment names (PGHOST, PGPORT, PGUSER,
# PGDATABASE), with bloomfilter installable there; its plain tables are UNLOGGED,
# in schema bench_plan, dropped at the end unless --keep.  pgbench runs one
# client for S seconds (default 5) per round, R rounds (default 3), on and
# off alternating, the order reversed every other round.  About a minute and
# a half at the defaults on two busy cores.

set -euo pipefail

parts=1500
parts_hash=64
rows=600000
batch=100000
runs=3
secs=5
keep=0
while [ $# -gt 0 ]; do
	case "$1" in
		--parts) parts=$2; shift 2 ;;
		--parts-hash) parts_hash=$2; shift 2 ;;
		--rows) rows=$2; shift 2 ;;
		--batch) batch=$2; shift 2 ;;
		--runs) runs=$2; shift 2 ;;
		--secs) secs=$2; shift 2 ;;
		--keep) keep=1; shift ;;
		-h | --help) sed -n '3,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "planning.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
for n in "$parts" "$parts_hash" "$rows" "$batch" "$runs" "$secs"; do
	[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "planning.sh: not a positive integer: $n" >&2; exit 2; }
done

PSQL=(psql -X -q -v ON_ERROR_STOP=1 -At)
tmp=$(mktemp -d)
cleanup() {
	[ "$keep" -eq 1 ] || "${PSQL[@]}" -c 'DROP SCHEMA IF EXISTS bench_plan CASCADE' >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT

echo "planning.sh: setting up (parts $parts, hash parts $parts_hash, rows $rows, batch $batch)" >&2
"${PSQL[@]}" <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomfilter;
DROP SCHEMA IF EXISTS bench_plan CASCADE;
CREATE SCHEMA bench_plan;
SET search_path = bench_plan, public;
-- the outer side: BATCH keys, 1 % of them present (multiples of 100)
CREATE UNLOGGED TABLE incoming (id int PRIMARY KEY, k int);
INSERT INTO incoming
SELECT g, CASE WHEN g % 100 = 0 THEN (g * 7919 % $rows) * 2 ELSE (g * 7919 % $rows) * 2 + 1 END
FROM generate_series(1, $batch) g;
-- the inner sides: ROWS even keys, plain and hash partitioned
CREATE UNLOGGED TABLE seen (k int);
INSERT INTO seen SELECT g * 2 FROM generate_series(0, $rows - 1) g;
CREATE TABLE seen_h (k int) PARTITION BY HASH (k);
DO \$\$
BEGIN
    FOR i IN 0 .. $parts_hash - 1 LOOP
        EXECUTE format('CREATE TABLE seen_h_%s PARTITION OF seen_h FOR VALUES WITH (MODULUS %s, REMAINDER %s)',
                       i, $parts_hash, i);
    END LOOP;
END
\$\$;
INSERT INTO seen_h SELECT k FROM seen;
-- PARTS small range partitions of 100 keys each
CREATE TABLE seen_r (k int) PARTITION BY RANGE (k);
DO \$\$
BEGIN
    FOR i IN 0 .. $parts - 1 LOOP
        EXECUTE format('CREATE TABLE seen_r_%s PARTITION OF seen_r FOR VALUES FROM (%s) TO (%s)',
                       i, i * 100, (i + 1) * 100);
    END LOOP;
END
\$\$;
INSERT INTO seen_r SELECT k FROM seen WHERE k < $parts * 100;
CREATE INDEX ON seen (k);
CREATE INDEX seen_bf ON seen USING bloomfilter (k);
CREATE INDEX ON seen_h (k);
CREATE INDEX seen_h_bf ON seen_h USING bloomfilter (k);
CREATE INDEX ON seen_r (k);
CREATE INDEX seen_r_bf ON seen_r USING bloomfilter (k) WITH (capacity = 1000);
VACUUM ANALYZE incoming, seen, seen_h, seen_r;
SQL

median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "NaN"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}'; }

# 1. one-row NOT EXISTS, simple protocol
tps() {	# setting table
	cat >"$tmp/q.sql" <<SQL
\\set id random(1, $batch)
SELECT i.id FROM bench_plan.incoming i WHERE i.id = :id AND NOT EXISTS (SELECT 1 FROM bench_plan.$2 s WHERE s.k = i.k);
SQL
	PGOPTIONS="-c bloomfilter.join_filter=$1" pgbench -n -M simple -c 1 -T "$secs" -f "$tmp/q.sql" 2>/dev/null |
		awk '/^tps/ {print $3; exit}'
}
echo "| case | on | off | ratio | target |"
echo "|---|---|---|---|---|"
for table in seen seen_h; do
	: >"$tmp/on"; : >"$tmp/off"
	for r in $(seq 1 "$runs"); do
		order="on off"; [ $((r % 2)) -eq 0 ] && order="off on"
		for s in $order; do tps "$s" "$table" >>"$tmp/$s"; done
	done
	on=$(median <"$tmp/on"); off=$(median <"$tmp/off")
	label="one-row NOT EXISTS, pgbench -M simple, tps: $table"
	[ "$table" = seen_h ] && label="$label ($parts_hash hash partitions)"
	echo "| $label | $on | $off | $(ratio "$on" "$off") (on / off) | ≥ 0.95 |"
done

# 2. the inner side pruned to one of PARTS partitions: locks and planning time
pruned="SELECT * FROM bench_plan.incoming i WHERE i.id <= 1000 AND NOT EXISTS (SELECT 1 FROM bench_plan.seen_r s WHERE s.k = i.k AND s.k >= 1000 AND s.k < 1100)"
locks() {
	"${PSQL[@]}" <<SQL | tail -1
BEGIN;
SET LOCAL bloomfilter.join_filter = $1;
EXPLAIN (COSTS OFF) $pruned;
SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid();
COMMIT;
SQL
}
lon=$(locks on | tail -1); loff=$(locks off | tail -1)
plan_ms() {	# setting: 21 plannings in one session, the first (cold caches) left out
	{
		echo "SET bloomfilter.join_filter = $1;"
		for _ in $(seq 1 21); do echo "EXPLAIN (SUMMARY ON, COSTS OFF) $pruned;"; done
	} | "${PSQL[@]}" | awk '/Planning Time/ {n++; if (n > 1) print $3}' | median
}
: >"$tmp/pon"; : >"$tmp/poff"
for r in $(seq 1 "$runs"); do
	plan_ms on >>"$tmp/pon"; plan_ms off >>"$tmp/poff"
done
pon=$(median <"$tmp/pon"); poff=$(median <"$tmp/poff")
echo "| inner side pruned to one of $parts partitions: locks held after planning | $lon | $loff | +$((lon - loff)) | ≤ +10 |"
echo "| the same: planning time, ms (median) | $pon | $poff | $(ratio "$pon" "$poff") (on / off) | ≤ 1.5 |"

# 3. NOT EXISTS into the hash-partitioned table: execution time
exec_ms() {
	"${PSQL[@]}" <<SQL | awk '/Execution Time/ {print $3}'
SET bloomfilter.join_filter = $1;
SET max_parallel_workers_per_gather = 0;
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT * FROM bench_plan.incoming i WHERE NOT EXISTS (SELECT 1 FROM bench_plan.seen_h s WHERE s.k = i.k);
SQL
}
exec_ms on >/dev/null; exec_ms off >/dev/null
: >"$tmp/eon"; : >"$tmp/eoff"
for r in $(seq 1 "$runs"); do
	order="on off"; [ $((r % 2)) -eq 0 ] && order="off on"
	for s in $order; do exec_ms "$s" >>"$tmp/e$s"; done
done
eon=$(median <"$tmp/eon"); eoff=$(median <"$tmp/eoff")
uses=$("${PSQL[@]}" -c "EXPLAIN (COSTS OFF) SELECT * FROM bench_plan.incoming i WHERE NOT EXISTS (SELECT 1 FROM bench_plan.seen_h s WHERE s.k = i.k)" | grep -c 'BloomAntiJoin' || true)
echo "| NOT EXISTS, $batch keys (1 % present) into $rows over $parts_hash hash partitions, execution ms (median; BloomAntiJoin chosen: $([ "$uses" -gt 0 ] && echo yes || echo no)) | $eon | $eoff | $(ratio "$eoff" "$eon") (off / on) | ≥ 1.0 |"
