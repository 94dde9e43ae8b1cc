#!/usr/bin/env bash
#
# test/bench/index.sh: the bloomfilter index against a btree on the same
# column and against no index, in one run, as ratios side by side.
#
#   bash test/bench/index.sh [--rows N] [--prefill N] [--clients N] [--secs N]
#                            [--rounds N] [--out FILE]
#
# Runs against the server that the libpq environment names (PGHOST, PGPORT,
# PGDATABASE, PGUSER), which must have the extension installed and let the
# user be superuser (COPY from a server file); pgbench is taken from PATH or
# from $PGBIN.  For example, on a private PostgreSQL 18 kept by
# test/matrix.sh --keep:
#
#   PGBIN=/tmp/w/pg-18/bin PGHOST=/tmp/w/sock PGPORT=5488 PGUSER=postgres \
#       bash test/bench/index.sh
#
# Workloads (each measured in every round, the three variants alternately,
# which goes first rotating; the report gives medians):
#   1. single-row INSERTs, pgbench -M prepared, --clients clients for --secs
#      seconds, random bigint keys, into a table of --prefill rows: no index,
#      btree, bloomfilter (capacity: twice the rows it will hold).  Inserts
#      per second, and WAL bytes per insert (pg_current_wal_lsn around the
#      run, a CHECKPOINT before each run: first touches of pages write full
#      images, for every variant alike).  synchronous_commit = off, so that
#      the index's work, not the commit's flush, is what is compared.
#   2. COPY of --rows random bigint keys from a server file into an empty
#      table: no index, btree, bloomfilter (default capacity: it grows by
#      layers from 1,000 keys) and bloomfilter WITH (capacity = rows).
#   3. CREATE INDEX over --rows rows: btree vs bloomfilter (default
#      capacity and WITH (capacity = rows)), maintenance_work_mem 256MB.
#   4. Size: the bloomfilter index (capacity = rows, 1%) against the btree,
#      and against bloom_size(rows, 0.01), a stored bloom value of the keys.
#
# Timings are reported, never asserted.  Needs: psql, pgbench.

set -euo pipefail

rows=2000000
prefill=1000000
clients=8
secs=20
rounds=3
out=
while [ $# -gt 0 ]; do
	case "$1" in
		--rows) rows=$2; shift 2 ;;
		--prefill) prefill=$2; shift 2 ;;
		--clients) clients=$2; shift 2 ;;
		--secs) secs=$2; shift 2 ;;
		--rounds) rounds=$2; shift 2 ;;
		--out) out=$2; shift 2 ;;
		-h | --help) sed -n '3,35p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "index.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
[ -n "${PGBIN:-}" ] && export PATH="$PGBIN:$PATH"
T0=$(date +%s)
log() { printf '[index bench %4ds] %s\n' $(($(date +%s) - T0)) "$*" >&2; }
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

log "server: $(q -c 'SELECT version()')"
q -c "CREATE EXTENSION IF NOT EXISTS bloomfilter"
q <<'SQL'
CREATE OR REPLACE FUNCTION pg_temp.noop() RETURNS void LANGUAGE sql AS 'SELECT';
DROP TABLE IF EXISTS bench_ins_none, bench_ins_btree, bench_ins_bf,
	bench_copy_none, bench_copy_btree, bench_copy_bf, bench_copy_bfcap, bench_build;
DROP FUNCTION IF EXISTS bench_ms(text);
CREATE FUNCTION bench_ms(stmt text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
	t0 timestamptz := clock_timestamp();
BEGIN
	EXECUTE stmt;
	RETURN extract(epoch FROM clock_timestamp() - t0) * 1000;
END $$;
SQL

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A res

# ---------------------------------------------------------------------------
# 1. single-row INSERTs
# ---------------------------------------------------------------------------
log "1. INSERT: $clients clients, $secs s per run, $rounds rounds, tables of $prefill rows"
cap=$((prefill * 2 + 40000 * secs * rounds))
q <<SQL
CREATE TABLE bench_ins_none (k bigint);
INSERT INTO bench_ins_none SELECT hashint8(g) FROM generate_series(1, $prefill) g;
CREATE TABLE bench_ins_btree AS SELECT * FROM bench_ins_none;
CREATE TABLE bench_ins_bf AS SELECT * FROM bench_ins_none;
CREATE INDEX ON bench_ins_btree (k);
CREATE INDEX bench_ins_bf_k ON bench_ins_bf USING bloomfilter (k) WITH (capacity = $cap);
VACUUM ANALYZE bench_ins_none, bench_ins_btree, bench_ins_bf;
SQL
variants=(none btree bf)
for r in $(seq 1 "$rounds"); do
	for i in 0 1 2; do
		v=${variants[$(((i + r) % 3))]}
		printf '\\set k random(1, 9000000000000000000)\nINSERT INTO bench_ins_%s VALUES (:k);\n' "$v" >"$tmp/ins.sql"
		q -c CHECKPOINT
		lsn0=$(q -c 'SELECT pg_current_wal_lsn()')
		out1=$(PGOPTIONS='-c synchronous_commit=off' pgbench -n -M prepared -c "$clients" -j "$clients" \
			-T "$secs" -f "$tmp/ins.sql" 2>&1)
		lsn1=$(q -c 'SELECT pg_current_wal_lsn()')
		tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out1" | head -1)
		n=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out1")
		wal=$(q -c "SELECT round(pg_wal_lsn_diff('$lsn1', '$lsn0') / $n)")
		log "   round $r $v: $tps inserts/s, $wal WAL bytes/insert"
		echo "$tps" >>"$tmp/tps_$v"
		echo "$wal" >>"$tmp/wal_$v"
	done
done
for v in "${variants[@]}"; do
	res[tps_$v]=$(median <"$tmp/tps_$v")
	res[wal_$v]=$(median <"$tmp/wal_$v")
done
res[bf_layers]=$(q -c "SELECT layers FROM bloom_index_info('bench_ins_bf_k')")
res[bf_missing]=$(q -c "SELECT bloom_index_verify('bench_ins_bf_k')")
q -c "DROP TABLE bench_ins_none, bench_ins_btree, bench_ins_bf"

# ---------------------------------------------------------------------------
# 2. COPY and 3. CREATE INDEX, 4. size
# ---------------------------------------------------------------------------
log "2-4. COPY, CREATE INDEX and size over $rows rows"
keyfile=$(q -c "SHOW data_directory")/bench_keys.txt
q -c "COPY (SELECT hashint8(g) FROM generate_series(1, $rows) g) TO '$keyfile'"
q <<SQL
CREATE TABLE bench_copy_none (k bigint);
CREATE TABLE bench_copy_btree (k bigint);
CREATE INDEX ON bench_copy_btree (k);
CREATE TABLE bench_copy_bf (k bigint);
CREATE INDEX bench_copy_bf_k ON bench_copy_bf USING bloomfilter (k);
CREATE TABLE bench_copy_bfcap (k bigint);
CREATE INDEX ON bench_copy_bfcap USING bloomfilter (k) WITH (capacity = $rows);
CREATE TABLE bench_build (k bigint);
COPY bench_build FROM '$keyfile';
VACUUM ANALYZE bench_build;
SQL
for r in $(seq 1 "$rounds"); do
	copy_variants=(none btree bf bfcap)
	for i in 0 1 2 3; do
		v=${copy_variants[$(((i + r) % 4))]}
		q -c "TRUNCATE bench_copy_$v" -c CHECKPOINT
		ms=$(q -c "SELECT round(bench_ms('COPY bench_copy_$v FROM ''$keyfile'''))")
		log "   round $r COPY $v: $ms ms"
		echo "$ms" >>"$tmp/copy_$v"
	done
	for v in btree bf bfcap; do
		case $v in
			btree) using="(k)" ;;
			bf) using="USING bloomfilter (k)" ;;
			bfcap) using="USING bloomfilter (k) WITH (capacity = $rows)" ;;
		esac
		ms=$(q -c "SET maintenance_work_mem = '256MB'" -c "DROP INDEX IF EXISTS bench_build_$v" \
			-c "SELECT round(bench_ms('CREATE INDEX bench_build_$v ON bench_build $using'))" | tail -1)
		log "   round $r CREATE INDEX $v: $ms ms"
		echo "$ms" >>"$tmp/build_$v"
	done
done
for v in none btree bf bfcap; do res[copy_$v]=$(median <"$tmp/copy_$v"); done
for v in btree bf bfcap; do res[build_$v]=$(median <"$tmp/build_$v"); done
read -r res[size_btree] res[size_bf] res[size_bfcap] res[size_value] res[bf_cap] res[bf_copy_layers] < <(q -F ' ' -c "
SELECT pg_relation_size('bench_build_btree'), pg_relation_size('bench_build_bf'),
	   pg_relation_size('bench_build_bfcap'), (bloom_size($rows, 0.01)).nbytes,
	   (SELECT capacity FROM bloom_index_info('bench_build_bf')),
	   (SELECT layers FROM bloom_index_info('bench_copy_bf_k'))")
res[copy_missing]=$(q -c "SELECT bloom_index_verify('bench_copy_bf_k')")
rm -f "$keyfile"
q -c "DROP TABLE bench_copy_none, bench_copy_btree, bench_copy_bf, bench_copy_bfcap, bench_build" -c "DROP FUNCTION bench_ms(text)"

# ---------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
mb() { awk -v a="$1" 'BEGIN { printf "%.1f MB", a / 1048576 }'; }
report=$(
cat <<EOF
$(q -c 'SELECT version()' | cut -d' ' -f1-2), $(nproc) cores; \`bash test/bench/index.sh --rows $rows --prefill $prefill --clients $clients --secs $secs --rounds $rounds\`; medians of $rounds rounds.

| workload | no index | btree | bloomfilter | bloomfilter / btree | bloomfilter / no index |
|---|---:|---:|---:|---:|---:|
| INSERT, $clients clients, inserts/s | ${res[tps_none]} | ${res[tps_btree]} | ${res[tps_bf]} | $(ratio "${res[tps_bf]}" "${res[tps_btree]}") | $(ratio "${res[tps_bf]}" "${res[tps_none]}") |
| INSERT, WAL bytes per insert | ${res[wal_none]} | ${res[wal_btree]} | ${res[wal_bf]} | $(ratio "${res[wal_bf]}" "${res[wal_btree]}") | $(ratio "${res[wal_bf]}" "${res[wal_none]}") |
| COPY of $rows rows into an empty table, ms (bloomfilter: default capacity, grows) | ${res[copy_none]} | ${res[copy_btree]} | ${res[copy_bf]} | $(ratio "${res[copy_bf]}" "${res[copy_btree]}") | $(ratio "${res[copy_bf]}" "${res[copy_none]}") |
| COPY, bloomfilter WITH (capacity = $rows), ms | ${res[copy_none]} | ${res[copy_btree]} | ${res[copy_bfcap]} | $(ratio "${res[copy_bfcap]}" "${res[copy_btree]}") | $(ratio "${res[copy_bfcap]}" "${res[copy_none]}") |
| CREATE INDEX over $rows rows, ms (default capacity ${res[bf_cap]}) | | ${res[build_btree]} | ${res[build_bf]} | $(ratio "${res[build_bf]}" "${res[build_btree]}") | |
| CREATE INDEX, WITH (capacity = $rows), ms | | ${res[build_btree]} | ${res[build_bfcap]} | $(ratio "${res[build_bfcap]}" "${res[build_btree]}") | |
| size, default capacity | | $(mb "${res[size_btree]}") | $(mb "${res[size_bf]}") | $(ratio "${res[size_bf]}" "${res[size_btree]}") | |
| size, capacity = $rows | | $(mb "${res[size_btree]}") | $(mb "${res[size_bfcap]}") | $(ratio "${res[size_bfcap]}" "${res[size_btree]}") | |

- size of the capacity = $rows index / bloom_size($rows, 0.01): $(ratio "${res[size_bfcap]}" "${res[size_value]}") ($(mb "${res[size_value]}") for the stored value)
- after the INSERT runs the index had ${res[bf_layers]} layer(s), bloom_index_verify = ${res[bf_missing]}; after the COPY runs ${res[bf_copy_layers]} layer(s), bloom_index_verify = ${res[copy_missing]}
EOF
)
echo "$report"
[ -n "$out" ] && echo "$report" >"$out"
log "done"
