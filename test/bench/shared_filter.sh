#!/usr/bin/env bash
#
# test/bench/shared_filter.sh: a shared filter without its keys
# (bloom_filter_*, docs/shared-filters.md) against a table of the keys with a
# primary key, in one run, as ratios.
#
#   bash test/bench/shared_filter.sh [--secs N] [--clients "1 8"]
#                                    [--keys N] [--batch N]
#
# Runs against the server that the libpq environment names (PGHOST, PGPORT,
# PGDATABASE, PGUSER), which must have the extension installable; pgbench
# and psql are taken from PATH or from $PGBIN.  For example, on a private
# PostgreSQL 18 kept by test/matrix.sh --keep:
#
#   PGBIN=/tmp/w/pg-18/bin PGHOST=/tmp/w/sock PGPORT=5488 PGUSER=postgres \
#       bash test/bench/shared_filter.sh
#
# Workloads (synchronous_commit = off in every pgbench session, so that the
# work, not the commit's flush, is compared):
#   1. adds, pgbench -M prepared, each of --clients for --secs seconds, random
#      bigint keys: SELECT bloom_filter_add(f, :k) on a filter of capacity
#      10 x --keys, against INSERT ... ON CONFLICT DO NOTHING into a table
#      with a bigint primary key.  Transactions per second, and WAL bytes per
#      transaction (pg_current_wal_lsn around the run; the run follows an
#      unmeasured one of the same length after a CHECKPOINT, so that most
#      full page images are written before it).
#   2. probes, pgbench -M prepared, the same clients: bloom_filter_contains
#      against SELECT EXISTS (... WHERE k = :k) on the primary key, both
#      holding --keys keys, half the probes of keys held.
#   3. bulk, from an array of --batch keys stored in a table beforehand:
#      bloom_filter_contains(f, array) against SELECT count(*) FROM
#      unnest(array) WHERE EXISTS (...) on the btree; and one
#      bloom_filter_add of the array into an empty filter of that capacity
#      against bloom_agg(k, batch, 0.01) over its elements.  Wall time of
#      the psql call (a few ms of connection included).
#
set -euo pipefail
secs=5
clients="1 8"
keys=1000000
batch=1000000
while [ $# -gt 0 ]; do
	case "$1" in
		--secs) secs=$2; shift 2 ;;
		--clients) clients=$2; shift 2 ;;
		--keys) keys=$2; shift 2 ;;
		--batch) batch=$2; shift 2 ;;
		*) echo "unknown option $1" >&2; exit 2 ;;
	esac
done
bin=${PGBIN:+$PGBIN/}
psql() { "${bin}psql" -X -q -v ON_ERROR_STOP=1 "$@"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PGOPTIONS="-c synchronous_commit=off"

psql <<EOF
CREATE EXTENSION IF NOT EXISTS bloomfilter;
DROP TABLE IF EXISTS bench_pk, bench_f, bench_probe_f, bench_probe_pk, bench_batch;
CREATE TABLE bench_pk (k bigint PRIMARY KEY);
CREATE TABLE bench_probe_pk (k bigint PRIMARY KEY);
INSERT INTO bench_probe_pk SELECT g * 2 FROM generate_series(1, $keys) g;
SELECT bloom_filter_create('bench_f', $keys * 10) IS NOT NULL;
SELECT bloom_filter_create('bench_probe_f', $keys) IS NOT NULL;
SELECT bloom_filter_add('bench_probe_f', array_agg(g * 2)) > 0 FROM generate_series(1, $keys) g;
VACUUM ANALYZE;
EOF

cat >"$tmp/add_f.sql" <<'EOF'
\set k random(1, 4000000000)
SELECT bloom_filter_add('bench_f', :k::bigint);
EOF
cat >"$tmp/add_pk.sql" <<'EOF'
\set k random(1, 4000000000)
INSERT INTO bench_pk VALUES (:k) ON CONFLICT DO NOTHING;
EOF
cat >"$tmp/probe_f.sql" <<EOF
\set k random(1, $keys * 4)
SELECT bloom_filter_contains('bench_probe_f', :k::bigint);
EOF
cat >"$tmp/probe_pk.sql" <<EOF
\set k random(1, $keys * 4)
SELECT EXISTS (SELECT 1 FROM bench_probe_pk WHERE k = :k::bigint);
EOF

# run NAME CLIENTS: tps, and WAL bytes per transaction.  A first run of the
# same length, not measured, after a CHECKPOINT: it writes the full page
# images of the pages it touches first, which the measured run then mostly
# does not (a filter of 10 x --keys keys is 4,000 pages per million keys).
run() {
	local name=$1 c=$2 start end out tps
	psql -c 'CHECKPOINT'
	"${bin}pgbench" -n -M prepared -c "$c" -j "$c" -T "$secs" -f "$tmp/$name.sql" >/dev/null 2>&1
	start=$(psql -At -c 'SELECT pg_current_wal_lsn()')
	out=$("${bin}pgbench" -n -M prepared -c "$c" -j "$c" -T "$secs" -f "$tmp/$name.sql" 2>&1)
	end=$(psql -At -c 'SELECT pg_current_wal_lsn()')
	tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out")
	txn=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")
	wal=$(psql -At -c "SELECT round(pg_wal_lsn_diff('$end', '$start') / greatest($txn, 1))")
	echo "$tps $wal"
}

echo "== adds and probes: pgbench -M prepared, $secs s each, synchronous_commit off"
printf '%-8s %-34s %12s %12s %8s %12s\n' clients workload filter_tps btree_tps ratio wal_per_add
for c in $clients; do
	read -r ftps fwal < <(run add_f "$c")
	read -r ptps pwal < <(run add_pk "$c")
	printf '%-8s %-34s %12.0f %12.0f %8.2f %6s/%-6s\n' "$c" "add vs INSERT ON CONFLICT" \
		"$ftps" "$ptps" "$(echo "$ftps / $ptps" | bc -l)" "$fwal" "$pwal"
	read -r ftps _ < <(run probe_f "$c")
	read -r ptps _ < <(run probe_pk "$c")
	printf '%-8s %-34s %12.0f %12.0f %8.2f\n' "$c" "contains vs EXISTS (btree)" \
		"$ftps" "$ptps" "$(echo "$ftps / $ptps" | bc -l)"
done

# timed NAME SQL: seconds of one psql call
timed() {
	local t0 t1
	t0=$(date +%s.%N)
	psql -c "$2" >/dev/null
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l
}
echo "== bulk: $batch keys in one call, from an array stored beforehand"
psql -c "DROP TABLE IF EXISTS bench_arr" -c "CREATE TABLE bench_arr AS SELECT array_agg(g::bigint) AS a FROM generate_series(1, $batch) g"
bf=$(timed probe_f "SELECT count(*) FROM bench_arr, unnest(bloom_filter_contains('bench_probe_f', a)) x WHERE x")
bp=$(timed probe_pk "SELECT count(*) FROM bench_arr, unnest(a) AS u(key) WHERE EXISTS (SELECT 1 FROM bench_probe_pk p WHERE p.k = u.key)")
printf 'bulk probe: filter %.3f s, btree %.3f s, btree/filter %.2f\n' "$bf" "$bp" "$(echo "$bp / $bf" | bc -l)"
psql -c "SELECT bloom_filter_create('bench_batch', $batch) IS NOT NULL" >/dev/null
ba=$(timed batch "SELECT bloom_filter_add('bench_batch', a) FROM bench_arr")
bg=$(timed agg "SELECT bloom_agg(k, $batch, 0.01) IS NOT NULL FROM bench_arr, unnest(a) k")
printf 'batch add: bloom_filter_add %.3f s, bloom_agg %.3f s, ratio %.2f\n' "$ba" "$bg" "$(echo "$ba / $bg" | bc -l)"
psql -c "SELECT size_bytes, layers, keys FROM bloom_filter_info('bench_batch')" -c "SELECT pg_total_relation_size('bench_batch') AS table_bytes, pg_total_relation_size('bench_probe_pk') AS btree_table_bytes_for_keys"
psql -c 'DROP TABLE bench_pk, bench_f, bench_probe_f, bench_probe_pk, bench_batch, bench_arr'
