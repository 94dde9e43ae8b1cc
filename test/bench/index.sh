#!/usr/bin/env bash
#
# test/bench/index.sh: the bloomfilter index against a btree on the same
# column and against no index, in one run, as ratios side by side.
#
#   bash test/bench/index.sh [--rows N] [--prefill N] [--clients N] [--secs N]
#                            [--rounds N] [--probe-keys N] [--probe-rows N]
#                            [--single-capacity N] [--growth-rows N]
#                            [--growth-absent N] [--growth-pgbench-rows N]
#                            [--only WORKLOAD] [--out FILE]
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
#   5. Probes, against a table of --probe-keys random bigint keys (10M):
#      a. bulk probe of --probe-rows rows (2M; half of them keys of the
#         table, half not: hashint8 values, 32 bits, so --probe-keys / 2^32
#         of the others are in the table too), serial
#         (max_parallel_workers_per_gather = 0):
#           SELECT count(*) FROM probe p WHERE bloom_index_contains(idx, p.k)
#         on a bloomfilter index WITH (capacity = probe-keys) against
#           SELECT count(*) FROM probe p, filt WHERE bloom_contains(filt.f, p.k)
#         with filt holding bloom_agg(k, probe-keys, 0.01) of the same keys;
#         the Execution Time of EXPLAIN (ANALYZE, TIMING OFF).
#      b. single-key probe, pgbench -M prepared, 1 client, --secs seconds,
#         SELECT bloom_index_contains(idx, :k) with a random k: the large
#         index (the table's keys, WITH (capacity = --single-capacity),
#         default --probe-keys: a larger capacity gives the size, and the
#         pages per probe, of an index of that many keys) against an index
#         of 1,000 keys.  Mean latency; pgbench and its backend are pinned to
#         one CPU (taskset on the postmaster, as test/bench/run.sh does), as
#         the round trip between them otherwise swings with the scheduler.
#   6. The keep-current recipe, before and after: single-row INSERTs as in
#      1 (pgbench -M prepared, --clients, --secs, synchronous_commit = off)
#      into orders (region text, customer_id bigint) of --prefill rows over
#      8 regions: no filter; the stored filters of docs/scaling.md ("One
#      filter per partition, kept current": its SQL block is read from that
#      file and run as written, per-region filters of capacity 1M, triggers
#      ORing each statement's keys in); a bloomfilter index on customer_id
#      WITH (capacity = 8M, the filters' capacity together).  Inserts per
#      second and WAL bytes per insert; afterwards, the rows that the index
#      misses (bloom_index_verify) and that their region's filter misses.
#      Autovacuum is off on these tables and each run's tables are vacuumed
#      after it, outside the measurement: vacuuming the filters' dead copies
#      would otherwise land in the WAL of whichever run comes next.
#
#   7. Growth: an index that starts small and grows by layers, then VACUUM
#      compacts it, against an index sized for its rows and a btree.  Keys
#      (hashint8(g) << 32) | g for g = 1 .. --growth-rows (1M; the issue's
#      figures are for 10M): distinct, in random order for the btree; the
#      --growth-absent keys (1M) probed are the same for g past the rows, so
#      none is in the table and every "true" is a false positive.
#      a. Default options, empty table: a bloomfilter index (it starts at
#         1,000 keys) against a btree, each loaded in every round, the two
#         alternately: INSERT ... SELECT of the rows, COPY of them from a
#         server file, and --growth-pgbench-rows (rows / 50) single-row
#         INSERTs (pgbench -M prepared, --clients, synchronous_commit off;
#         into a table with no index too, the floor of any index's time);
#         then VACUUM of each, timed on its own.  Load time, and load plus
#         VACUUM, against the btree's.
#      b. Grown 100 times past its capacity: WITH (capacity = rows / 100),
#         INSERT ... SELECT of the rows, then VACUUM.
#      c. WITH (capacity = rows): the rows inserted into it (it keeps one
#         layer).
#      Each index of a and b, after its VACUUM, against CREATE INDEX WITH
#      (capacity = rows) over the same rows (the sized index): size, bulk
#      probe of the absent keys (Execution Time of EXPLAIN (ANALYZE, TIMING
#      OFF) of SELECT count(*) FROM absent a WHERE bloom_index_contains(idx,
#      a.k), serial, the indexes alternately), and the measured false
#      positive rate (absent keys answered true / absent keys) against the
#      requested one (0.01); the grown index also before its VACUUM.  The
#      issue's targets are printed beside each ratio.
#
# --only insert|copy|probe|recipe|growth runs one workload (copy: 2, 3 and 4).
#
# Timings are reported, never asserted.  Needs: psql, pgbench (taskset, from
# util-linux, optional).

set -euo pipefail

rows=2000000
prefill=1000000
clients=8
secs=20
rounds=3
probe_keys=10000000
probe_rows=2000000
single_cap=
grow_rows=1000000
grow_absent=1000000
grow_pg_rows=
only=
out=
while [ $# -gt 0 ]; do
	case "$1" in
		--rows) rows=$2; shift 2 ;;
		--prefill) prefill=$2; shift 2 ;;
		--clients) clients=$2; shift 2 ;;
		--secs) secs=$2; shift 2 ;;
		--rounds) rounds=$2; shift 2 ;;
		--probe-keys) probe_keys=$2; shift 2 ;;
		--probe-rows) probe_rows=$2; shift 2 ;;
		--single-capacity) single_cap=$2; shift 2 ;;
		--growth-rows) grow_rows=$2; shift 2 ;;
		--growth-absent) grow_absent=$2; shift 2 ;;
		--growth-pgbench-rows) grow_pg_rows=$2; shift 2 ;;
		--only) only=$2; shift 2 ;;
		--out) out=$2; shift 2 ;;
		-h | --help) sed -n '3,98p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "index.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
case "$only" in
	'' | insert | copy | probe | recipe | growth) ;;
	*) echo "index.sh: --only takes insert, copy, probe, recipe or growth" >&2; exit 2 ;;
esac
: "${single_cap:=$probe_keys}"
: "${grow_pg_rows:=$((grow_rows / 50))}"
run() { [ -z "$only" ] || [ "$only" = "$1" ]; }
[ -n "${PGBIN:-}" ] && export PATH="$PGBIN:$PATH"
T0=$(date +%s)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
log() { printf '[index bench %4ds] %s\n' $(($(date +%s) - T0)) "$*" >&2; }
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

# One pgbench run of the insert script $1 (--clients, --secs, -M prepared,
# synchronous_commit off, and the server options $2), after a CHECKPOINT so
# that every run starts with the same full-page images to write: prints
# "inserts/s WAL-bytes-per-insert", or fails (with pgbench's output) if
# pgbench did not run.
pgbench_inserts() {
	local lsn0 lsn1 out tps n
	q -c CHECKPOINT
	lsn0=$(q -c 'SELECT pg_current_wal_lsn()')
	out=$(PGOPTIONS="-c synchronous_commit=off $2" \
		pgbench -n -M prepared -c "$clients" -j "$clients" -T "$secs" -f "$1" 2>&1)
	lsn1=$(q -c 'SELECT pg_current_wal_lsn()')
	tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out" | head -1)
	n=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")
	[ -n "$n" ] && [ "$n" -gt 0 ] || { echo "index.sh: pgbench failed:" >&2; echo "$out" >&2; exit 1; }
	echo "$tps $(q -c "SELECT round(pg_wal_lsn_diff('$lsn1', '$lsn0') / $n)")"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

log "server: $(q -c 'SELECT version()')"
q -c "CREATE EXTENSION IF NOT EXISTS bloomfilter"
q <<'SQL'
CREATE OR REPLACE FUNCTION pg_temp.noop() RETURNS void LANGUAGE sql AS 'SELECT';
DROP TABLE IF EXISTS bench_ins_none, bench_ins_btree, bench_ins_bf,
	bench_copy_none, bench_copy_btree, bench_copy_bf, bench_copy_bfcap, bench_build,
	bench_probe_keys, bench_probe_small, bench_probe_rows, bench_probe_filt;
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
if run insert; then
	log "1. INSERT: $clients clients, $secs s per run, $rounds rounds, tables of $prefill rows"
	cap=$((prefill * 2 + 40000 * secs * rounds))
	q <<-SQL
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
			run_out=$(pgbench_inserts "$tmp/ins.sql" "") || exit 1
			read -r tps wal <<<"$run_out"
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
fi

# ---------------------------------------------------------------------------
# 2. COPY and 3. CREATE INDEX, 4. size
# ---------------------------------------------------------------------------
if run copy; then
	log "2-4. COPY, CREATE INDEX and size over $rows rows"
	keyfile=$(q -c "SHOW data_directory")/bench_keys.txt
	q -c "COPY (SELECT hashint8(g) FROM generate_series(1, $rows) g) TO '$keyfile'"
	q <<-SQL
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
	q -c "DROP TABLE bench_copy_none, bench_copy_btree, bench_copy_bf, bench_copy_bfcap, bench_build"
fi

# ---------------------------------------------------------------------------
# 5. probes
# ---------------------------------------------------------------------------
if run probe; then
	log "5. probes: $probe_keys keys, bulk probe of $probe_rows rows, single-key probe ($secs s per run)"
	q <<-SQL
	CREATE TABLE bench_probe_keys (k bigint);
	INSERT INTO bench_probe_keys SELECT hashint8(g) FROM generate_series(1, $probe_keys) g;
	-- half of the probed keys are in the table, half not
	CREATE TABLE bench_probe_rows AS
		SELECT hashint8(g) AS k FROM generate_series($probe_keys - $probe_rows / 2 + 1,
													 $probe_keys + ($probe_rows + 1) / 2) g;
	CREATE TABLE bench_probe_filt AS SELECT bloom_agg(k, $probe_keys, 0.01) AS f FROM bench_probe_keys;
	CREATE INDEX bench_probe_bf ON bench_probe_keys USING bloomfilter (k)
		WITH (capacity = $probe_keys, false_positive_rate = 0.01);
	CREATE TABLE bench_probe_small AS SELECT hashint8(g) AS k FROM generate_series(1, 1000) g;
	CREATE INDEX bench_probe_small_bf ON bench_probe_small USING bloomfilter (k)
		WITH (capacity = 1000, false_positive_rate = 0.01);
	VACUUM ANALYZE bench_probe_keys, bench_probe_rows, bench_probe_filt, bench_probe_small;
	SQL
	big=bench_probe_bf
	if [ "$single_cap" != "$probe_keys" ]; then
		big=bench_probe_bfcap
		q -c "SET maintenance_work_mem = '256MB'" -c "CREATE INDEX $big ON bench_probe_keys USING bloomfilter (k)
			WITH (capacity = $single_cap, false_positive_rate = 0.01)"
	fi
	declare -A probe_sql=(
		[index]="SELECT count(*) FROM bench_probe_rows p WHERE bloom_index_contains('bench_probe_bf', p.k)"
		[value]="SELECT count(*) FROM bench_probe_rows p, bench_probe_filt filt WHERE bloom_contains(filt.f, p.k)"
	)
	explain_ms() {
		q -c "SET max_parallel_workers_per_gather = 0" -c "EXPLAIN (ANALYZE, TIMING OFF) $1" |
			sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p'
	}
	# both must answer alike: every key of the table, and the same false positives
	n_index=$(q -c "SET max_parallel_workers_per_gather = 0" -c "${probe_sql[index]}")
	n_value=$(q -c "SET max_parallel_workers_per_gather = 0" -c "${probe_sql[value]}")
	res[probe_found]="$n_index (index), $n_value (stored value)"
	probe_variants=(index value)
	for r in $(seq 1 "$rounds"); do
		for i in 0 1; do
			v=${probe_variants[$(((i + r) % 2))]}
			ms=$(explain_ms "${probe_sql[$v]}")
			[ -n "$ms" ] || { echo "index.sh: EXPLAIN printed no Execution Time" >&2; exit 1; }
			log "   round $r bulk probe $v: $ms ms"
			echo "$ms" >>"$tmp/bulk_$v"
		done
	done
	for v in index value; do res[bulk_$v]=$(median <"$tmp/bulk_$v"); done

	# single-key probe: pgbench and its backend on one CPU (new backends
	# inherit the postmaster's CPU mask), as in test/bench/run.sh
	pm_pid=$(head -1 "$(q -c 'SHOW data_directory')/postmaster.pid")
	pin_cpu=$(($(nproc) - 1))
	pin=()
	if command -v taskset >/dev/null && taskset -p -c "$pin_cpu" "$pm_pid" >/dev/null 2>&1; then
		pin=(taskset -c "$pin_cpu")
	fi
	latency() {		# index, seconds -> mean latency in ms (1 client: 1000 / tps)
		local res1
		printf '\\set k random(1, 9000000000000000000)\nSELECT bloom_index_contains(%s, :k::bigint);\n' \
			"'$1'" >"$tmp/single.sql"
		res1=$("${pin[@]}" pgbench -n -M prepared -c 1 -j 1 -T "$2" -f "$tmp/single.sql" 2>&1)
		if ! grep -q '^number of failed transactions: 0 ' <<<"$res1"; then
			echo "index.sh: pgbench failed:" >&2
			echo "$res1" >&2
			return 1
		fi
		# from tps, which pgbench prints with more digits than the latency
		sed -n 's/^tps = \([0-9.]*\) .*/\1/p' <<<"$res1" | head -1 | awk '{ printf "%.4f\n", 1000 / $1 }'
	}
	latency "$big" 1 >/dev/null		# warm-up
	latency bench_probe_small_bf 1 >/dev/null
	single_variants=("$big" bench_probe_small_bf)
	for r in $(seq 1 "$rounds"); do
		for i in 0 1; do
			v=${single_variants[$(((i + r) % 2))]}
			ms=$(latency "$v" "$secs")
			log "   round $r single-key probe $v: $ms ms"
			echo "$ms" >>"$tmp/single_$v"
		done
	done
	[ ${#pin[@]} -gt 0 ] && taskset -p -c "0-$pin_cpu" "$pm_pid" >/dev/null
	res[single_pin]=$([ ${#pin[@]} -gt 0 ] && echo "pinned to CPU $pin_cpu" || echo "not pinned (no taskset)")
	res[single_big]=$(median <"$tmp/single_$big")
	res[single_small]=$(median <"$tmp/single_bench_probe_small_bf")
	read -r res[probe_size] res[probe_value_size] res[single_size] res[single_layers] < <(q -F ' ' -c "
		SELECT pg_relation_size('bench_probe_bf'), (SELECT (bloom_info(f)).nbytes FROM bench_probe_filt),
			   pg_relation_size('$big'), (SELECT layers FROM bloom_index_info('$big'))")
	q -c "DROP TABLE bench_probe_keys, bench_probe_small, bench_probe_rows, bench_probe_filt"
fi
# ---------------------------------------------------------------------------
# 6. the keep-current recipe, before and after
# ---------------------------------------------------------------------------
if run recipe; then
	regions=(eu us asia africa oceania latam mena india)
	nreg=${#regions[@]}
	rec_cap=$((nreg * 1000000))
	log "6. keep-current recipe: $clients clients, $secs s per run, $rounds rounds, orders of $prefill rows, $nreg regions"
	# The SQL block of docs/scaling.md's recipe, run as the doc writes it.
	# Each variant has a schema of its own, so that the doc's names (orders,
	# order_filters) stand unqualified; pgbench's sessions set search_path.
	doc="$(dirname "$0")/../../docs/scaling.md"
	recipe_sql=$(awk '/^### One filter per partition, kept current/ { s = 1 }
		s && /^```sql$/ { p = 1; next } p && /^```$/ { exit } p' "$doc")
	grep -q 'FUNCTION order_filters_add' <<<"$recipe_sql" ||
		{ echo "index.sh: no recipe SQL block found in $doc" >&2; exit 1; }
	reg_array="ARRAY['$(IFS=,; echo "${regions[*]}" | sed "s/,/','/g")']"
	q <<-SQL
	SET client_min_messages = warning;
	DROP SCHEMA IF EXISTS bench_recipe_none, bench_recipe_filters, bench_recipe_bf CASCADE;
	CREATE SCHEMA bench_recipe_none;
	CREATE SCHEMA bench_recipe_filters;
	CREATE SCHEMA bench_recipe_bf;
	CREATE TABLE bench_recipe_none.orders (region text, customer_id bigint);
	INSERT INTO bench_recipe_none.orders
		SELECT ($reg_array)[g % $nreg + 1], hashint8(g) FROM generate_series(1, $prefill) g;
	CREATE TABLE bench_recipe_filters.orders AS SELECT * FROM bench_recipe_none.orders;
	CREATE TABLE bench_recipe_bf.orders AS SELECT * FROM bench_recipe_none.orders;
	CREATE INDEX orders_customer_bf ON bench_recipe_bf.orders USING bloomfilter (customer_id)
		WITH (capacity = $rec_cap, false_positive_rate = 0.01);
	SET search_path = bench_recipe_filters, public;
	$recipe_sql
	SELECT refresh_order_filters($reg_array);		-- every region, not only the doc's three
	RESET search_path;
	-- autovacuum off, a VACUUM after each run instead: the WAL of vacuuming
	-- one variant's tables must not be counted in the next one's run
	ALTER TABLE bench_recipe_none.orders SET (autovacuum_enabled = off);
	ALTER TABLE bench_recipe_filters.orders SET (autovacuum_enabled = off);
	ALTER TABLE bench_recipe_filters.order_filters SET (autovacuum_enabled = off,
		toast.autovacuum_enabled = off);
	ALTER TABLE bench_recipe_bf.orders SET (autovacuum_enabled = off);
	VACUUM ANALYZE bench_recipe_none.orders, bench_recipe_filters.orders,
		bench_recipe_filters.order_filters, bench_recipe_bf.orders;
	SQL
	printf '\\set k random(1, 9000000000000000000)\n\\set r random(1, %d)\nINSERT INTO orders VALUES ((%s)[:r], :k);\n' \
		"$nreg" "$reg_array" >"$tmp/recipe.sql"
	recipe_variants=(none filters bf)
	for r in $(seq 1 "$rounds"); do
		for i in 0 1 2; do
			v=${recipe_variants[$(((i + r) % 3))]}
			run_out=$(pgbench_inserts "$tmp/recipe.sql" "-c search_path=bench_recipe_$v,public") || exit 1
			read -r tps wal <<<"$run_out"
			log "   round $r recipe $v: $tps inserts/s, $wal WAL bytes/insert"
			q -c "VACUUM bench_recipe_$v.orders"
			[ "$v" = filters ] && q -c "VACUUM bench_recipe_filters.order_filters"
			echo "$tps" >>"$tmp/rtps_$v"
			echo "$wal" >>"$tmp/rwal_$v"
		done
	done
	for v in "${recipe_variants[@]}"; do
		res[rtps_$v]=$(median <"$tmp/rtps_$v")
		res[rwal_$v]=$(median <"$tmp/rwal_$v")
	done
	# every inserted key must be found: by the index, and by its region's filter
	read -r res[rrows_filters] res[rmiss_filters] res[rsize_filters] \
		res[rrows_bf] res[rmiss_bf] res[rsize_bf] res[rlayers_bf] < <(q -F ' ' -c "
		SELECT (SELECT count(*) FROM bench_recipe_filters.orders),
			   (SELECT count(*) FROM bench_recipe_filters.orders x
					LEFT JOIN bench_recipe_filters.order_filters o USING (region)
				WHERE o.f IS NULL OR NOT bloom_contains(o.f, x.customer_id)),
			   pg_total_relation_size('bench_recipe_filters.order_filters'),
			   (SELECT count(*) FROM bench_recipe_bf.orders),
			   bloom_index_verify('bench_recipe_bf.orders_customer_bf'),
			   pg_relation_size('bench_recipe_bf.orders_customer_bf'),
			   (SELECT layers FROM bloom_index_info('bench_recipe_bf.orders_customer_bf'))")
	q -c "SET client_min_messages = warning" \
		-c "DROP SCHEMA bench_recipe_none, bench_recipe_filters, bench_recipe_bf CASCADE"
fi
# ---------------------------------------------------------------------------
# 7. growth: loaded into a small index, then VACUUM, against a sized one
# ---------------------------------------------------------------------------
if run growth; then
	log "7. growth: $grow_rows rows, $grow_absent absent keys probed, $grow_pg_rows single-row inserts ($clients clients), $rounds rounds"
	grow_cap=$((grow_rows / 100))
	q <<-SQL
	DROP TABLE IF EXISTS bench_grow_bf, bench_grow_btree, bench_grow_pg_bf, bench_grow_pg_btree, bench_grow_pg_none,
		bench_grow_big, bench_grow_cap, bench_grow_absent;
	CREATE OR REPLACE FUNCTION bench_gkey(g bigint) RETURNS bigint
		LANGUAGE sql IMMUTABLE AS 'SELECT (hashint8(g)::bigint << 32) | g';
	CREATE TABLE bench_grow_absent AS
		SELECT bench_gkey(g) AS k FROM generate_series($grow_rows + 1, $grow_rows + $grow_absent) g;
	VACUUM ANALYZE bench_grow_absent;
	SQL
	gkeyfile=$(q -c "SHOW data_directory")/bench_grow_keys.txt
	q -c "COPY (SELECT bench_gkey(g) FROM generate_series(1, $grow_rows) g) TO '$gkeyfile'"
	# milliseconds of one statement, timed by the client (VACUUM cannot run in bench_ms)
	client_ms() {
		local t0 t1
		t0=$(date +%s%N)
		q -c "$1" >/dev/null
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000000))
	}
	grow_probe_ms() {
		q -c "SET max_parallel_workers_per_gather = 0" -c "EXPLAIN (ANALYZE, TIMING OFF)
			SELECT count(*) FROM bench_grow_absent a WHERE bloom_index_contains('$1', a.k)" |
			sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p'
	}
	grow_fp() {
		q -c "SET max_parallel_workers_per_gather = 0" -c "
			SELECT count(*) FROM bench_grow_absent a WHERE bloom_index_contains('$1', a.k)"
	}
	grow_info() {		# index -> "layers size"
		q -F ' ' -c "SELECT layers, size_bytes FROM bloom_index_info('$1')"
	}
	# a: default options, empty table, then VACUUM; btree alongside
	for v in bf btree none; do
		printf '\\set g random(1, 2000000000)\nINSERT INTO bench_grow_pg_%s VALUES ((hashint8(:g::bigint)::bigint << 32) | :g);\n' \
			"$v" >"$tmp/grow_pg_$v.sql"
	done
	for r in $(seq 1 "$rounds"); do
		for m in insert copy pgbench; do
			# single-row INSERTs cost mostly round trips and commits: no
			# index is measured too, the floor of any index's time
			grow_variants=(bf btree)
			[ "$m" = pgbench ] && grow_variants=(bf btree none)
			nv=${#grow_variants[@]}
			for i in $(seq 0 $((nv - 1))); do
				v=${grow_variants[$(((i + r) % nv))]}
				tbl=bench_grow_$v
				[ "$m" = pgbench ] && tbl=bench_grow_pg_$v
				using="(k)"
				[ "$v" = bf ] && using="USING bloomfilter (k)"
				mkindex="CREATE INDEX ${tbl}_k ON $tbl $using"
				[ "$v" = none ] && mkindex="SELECT 1"
				q -c "DROP TABLE IF EXISTS $tbl" -c "CREATE TABLE $tbl (k bigint)" \
					-c "$mkindex" -c CHECKPOINT
				case $m in
					insert)
						load=$(q -c "SELECT round(bench_ms('INSERT INTO $tbl SELECT bench_gkey(g) FROM generate_series(1, $grow_rows) g'))") ;;
					copy)
						load=$(q -c "SELECT round(bench_ms('COPY $tbl FROM ''$gkeyfile'''))") ;;
					pgbench)
						t0=$(date +%s%N)
						pgout=$(PGOPTIONS="-c synchronous_commit=off" pgbench -n -M prepared -c "$clients" -j "$clients" \
							-t $((grow_pg_rows / clients)) -f "$tmp/grow_pg_$v.sql" 2>&1) ||
							{ echo "index.sh: pgbench failed:" >&2; echo "$pgout" >&2; exit 1; }
						t1=$(date +%s%N)
						load=$(((t1 - t0) / 1000000)) ;;
				esac
				[ "$v" = bf ] && read -r layers_before _ < <(grow_info "${tbl}_k")
				vac=$(client_ms "VACUUM $tbl")
				log "   round $r $m $v: load $load ms, VACUUM $vac ms"
				echo "$load" >>"$tmp/gload_${m}_$v"
				echo "$vac" >>"$tmp/gvac_${m}_$v"
				echo $((load + vac)) >>"$tmp/gboth_${m}_$v"
				if [ "$v" = bf ]; then
					read -r layers_after size < <(grow_info "${tbl}_k")
					res[glayers_$m]="$layers_before before VACUUM, $layers_after after"
					echo "$size" >>"$tmp/gsize_$m"
				elif [ "$v" = btree ]; then
					q -c "SELECT pg_relation_size('${tbl}_k')" >>"$tmp/gsize_${m}_btree"
				fi
			done
		done
	done
	for m in insert copy pgbench; do
		for v in bf btree; do
			res[gload_${m}_$v]=$(median <"$tmp/gload_${m}_$v")
			res[gvac_${m}_$v]=$(median <"$tmp/gvac_${m}_$v")
			res[gboth_${m}_$v]=$(median <"$tmp/gboth_${m}_$v")
		done
		res[gsize_$m]=$(median <"$tmp/gsize_$m")
		res[gsize_${m}_btree]=$(median <"$tmp/gsize_${m}_btree")
	done
	res[gload_pgbench_none]=$(median <"$tmp/gload_pgbench_none")
	res[gboth_pgbench_none]=$(median <"$tmp/gboth_pgbench_none")
	res[gmissing_default]=$(q -c "SELECT bloom_index_verify('bench_grow_bf_k')")
	q -c "DROP TABLE bench_grow_btree, bench_grow_pg_bf, bench_grow_pg_btree, bench_grow_pg_none"

	# b: grown 100 times past its capacity; the sized index on the same rows
	q -c "CREATE TABLE bench_grow_big (k bigint)" \
		-c "CREATE INDEX bench_grow_big_k ON bench_grow_big USING bloomfilter (k) WITH (capacity = $grow_cap)"
	res[gbig_load]=$(q -c "SELECT round(bench_ms('INSERT INTO bench_grow_big SELECT bench_gkey(g) FROM generate_series(1, $grow_rows) g'))")
	read -r res[gbig_layers0] res[gbig_size0] < <(grow_info bench_grow_big_k)
	res[gbig_fp0]=$(grow_fp bench_grow_big_k)
	ms=$(q -c "SET maintenance_work_mem = '256MB'" -c "SELECT round(bench_ms('CREATE INDEX bench_grow_sized ON bench_grow_big USING bloomfilter (k) WITH (capacity = $grow_rows)'))" | tail -1)
	log "   grown index: $grow_rows rows inserted in ${res[gbig_load]} ms, ${res[gbig_layers0]} layers; sized index built in $ms ms"
	read -r _ res[gsized_size] < <(grow_info bench_grow_sized)
	res[gsized_fp]=$(grow_fp bench_grow_sized)
	# probes before the VACUUM: the grown index against the sized one
	pv=(bench_grow_big_k bench_grow_sized)
	for r in $(seq 1 "$rounds"); do
		for i in 0 1; do
			v=${pv[$(((i + r) % 2))]}
			ms=$(grow_probe_ms "$v")
			log "   round $r probe before VACUUM $v: $ms ms"
			echo "$ms" >>"$tmp/gp0_$v"
		done
	done
	res[gp0_big]=$(median <"$tmp/gp0_bench_grow_big_k")
	res[gp0_sized]=$(median <"$tmp/gp0_bench_grow_sized")
	res[gbig_vac]=$(client_ms "VACUUM bench_grow_big")
	read -r res[gbig_layers] res[gbig_size] < <(grow_info bench_grow_big_k)
	res[gbig_fp]=$(grow_fp bench_grow_big_k)
	res[gdef_fp]=$(grow_fp bench_grow_bf_k)
	res[gdef_size]=$(q -c "SELECT pg_relation_size('bench_grow_bf_k')")
	res[gmissing_big]=$(q -c "SELECT bloom_index_verify('bench_grow_big_k')")
	# probes after the VACUUM: the default-options index (a, its last COPY
	# round), the grown one and the sized one
	pv=(bench_grow_bf_k bench_grow_big_k bench_grow_sized)
	for r in $(seq 1 "$rounds"); do
		for i in 0 1 2; do
			v=${pv[$(((i + r) % 3))]}
			ms=$(grow_probe_ms "$v")
			log "   round $r probe after VACUUM $v: $ms ms"
			echo "$ms" >>"$tmp/gp_$v"
		done
	done
	res[gp_def]=$(median <"$tmp/gp_bench_grow_bf_k")
	res[gp_big]=$(median <"$tmp/gp_bench_grow_big_k")
	res[gp_sized]=$(median <"$tmp/gp_bench_grow_sized")

	# c: capacity = the keys it gets
	q -c "CREATE TABLE bench_grow_cap (k bigint)" \
		-c "CREATE INDEX bench_grow_cap_k ON bench_grow_cap USING bloomfilter (k) WITH (capacity = $grow_rows)"
	res[gcap_load]=$(q -c "SELECT round(bench_ms('INSERT INTO bench_grow_cap SELECT bench_gkey(g) FROM generate_series(1, $grow_rows) g'))")
	read -r res[gcap_layers] res[gcap_size] < <(grow_info bench_grow_cap_k)
	res[gcap_fp]=$(grow_fp bench_grow_cap_k)
	res[gcap_missing]=$(q -c "SELECT bloom_index_verify('bench_grow_cap_k')")
	rm -f "$gkeyfile"
	q -c "DROP TABLE bench_grow_bf, bench_grow_big, bench_grow_cap, bench_grow_absent" \
		-c "DROP FUNCTION bench_gkey(bigint)"
fi
q -c "DROP FUNCTION bench_ms(text)"

# ---------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# the same, as 1/N below 0.1 (WAL of the index against the stored filters')
ratio_frac() { awk -v a="$1" -v b="$2" 'BEGIN { if (a / b < 0.1) printf "1/%.0f", b / a; else printf "%.2f", a / b }'; }
mb() { awk -v a="$1" 'BEGIN { printf "%.1f MB", a / 1048576 }'; }
args="--rows $rows --prefill $prefill --clients $clients --secs $secs --rounds $rounds"
args+=" --probe-keys $probe_keys --probe-rows $probe_rows --single-capacity $single_cap"
args+=" --growth-rows $grow_rows --growth-absent $grow_absent --growth-pgbench-rows $grow_pg_rows"
[ -n "$only" ] && args+=" --only $only"
report=$(
	echo "$(q -c 'SELECT version()' | cut -d' ' -f1-2), $(nproc) cores; \`bash test/bench/index.sh $args\`; medians of $rounds rounds; load average (1, 5, 15 min) $load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end."
	if run insert || run copy; then
		cat <<-EOF

		| workload | no index | btree | bloomfilter | bloomfilter / btree | bloomfilter / no index |
		|---|---:|---:|---:|---:|---:|
		EOF
	fi
	if run insert; then
		cat <<-EOF
		| INSERT, $clients clients, inserts/s | ${res[tps_none]} | ${res[tps_btree]} | ${res[tps_bf]} | $(ratio "${res[tps_bf]}" "${res[tps_btree]}") | $(ratio "${res[tps_bf]}" "${res[tps_none]}") |
		| INSERT, WAL bytes per insert | ${res[wal_none]} | ${res[wal_btree]} | ${res[wal_bf]} | $(ratio "${res[wal_bf]}" "${res[wal_btree]}") | $(ratio "${res[wal_bf]}" "${res[wal_none]}") |
		EOF
	fi
	if run copy; then
		cat <<-EOF
		| COPY of $rows rows into an empty table, ms (bloomfilter: default capacity, grows) | ${res[copy_none]} | ${res[copy_btree]} | ${res[copy_bf]} | $(ratio "${res[copy_bf]}" "${res[copy_btree]}") | $(ratio "${res[copy_bf]}" "${res[copy_none]}") |
		| COPY, bloomfilter WITH (capacity = $rows), ms | ${res[copy_none]} | ${res[copy_btree]} | ${res[copy_bfcap]} | $(ratio "${res[copy_bfcap]}" "${res[copy_btree]}") | $(ratio "${res[copy_bfcap]}" "${res[copy_none]}") |
		| CREATE INDEX over $rows rows, ms (default capacity ${res[bf_cap]}) | | ${res[build_btree]} | ${res[build_bf]} | $(ratio "${res[build_bf]}" "${res[build_btree]}") | |
		| CREATE INDEX, WITH (capacity = $rows), ms | | ${res[build_btree]} | ${res[build_bfcap]} | $(ratio "${res[build_bfcap]}" "${res[build_btree]}") | |
		| size, default capacity | | $(mb "${res[size_btree]}") | $(mb "${res[size_bf]}") | $(ratio "${res[size_bf]}" "${res[size_btree]}") | |
		| size, capacity = $rows | | $(mb "${res[size_btree]}") | $(mb "${res[size_bfcap]}") | $(ratio "${res[size_bfcap]}" "${res[size_btree]}") | |
		EOF
	fi
	if run insert || run copy; then echo; fi
	if run copy; then
		echo "- size of the capacity = $rows index / bloom_size($rows, 0.01): $(ratio "${res[size_bfcap]}" "${res[size_value]}") ($(mb "${res[size_value]}") for the stored value)"
		echo "- after the COPY runs ${res[bf_copy_layers]} layer(s), bloom_index_verify = ${res[copy_missing]}"
	fi
	if run insert; then
		echo "- after the INSERT runs the index had ${res[bf_layers]} layer(s), bloom_index_verify = ${res[bf_missing]}"
	fi
	if run probe; then
		cat <<-EOF

		| probe | bloomfilter index | baseline | index / baseline |
		|---|---:|---:|---:|
		| bulk probe of $probe_rows rows, $probe_keys keys, ms (baseline: a stored \`bloom\` of the same keys, same capacity and rate) | ${res[bulk_index]} | ${res[bulk_value]} | $(ratio "${res[bulk_index]}" "${res[bulk_value]}") |
		| single-key prepared probe, ms (index: $probe_keys keys, capacity $single_cap; baseline: an index of 1,000 keys) | ${res[single_big]} | ${res[single_small]} | $(ratio "${res[single_big]}" "${res[single_small]}") |

		- rows counted by the bulk probe (of which $((probe_rows / 2)) are keys of the table): ${res[probe_found]}
		- sizes: the bulk probe's index $(mb "${res[probe_size]}"), the stored value $(mb "${res[probe_value_size]}"); the single-key probe's index $(mb "${res[single_size]}"), ${res[single_layers]} layer(s)
		- single-key probe: pgbench and its backend ${res[single_pin]}
		EOF
	fi
	if run recipe; then
		cat <<-EOF

		| keep-current recipe, $clients clients, single-row INSERTs into orders of $prefill rows, 8 regions | no filter | stored filters (docs/scaling.md) | bloomfilter index | index / stored filters | index / no filter |
		|---|---:|---:|---:|---:|---:|
		| inserts/s | ${res[rtps_none]} | ${res[rtps_filters]} | ${res[rtps_bf]} | $(ratio "${res[rtps_bf]}" "${res[rtps_filters]}") | $(ratio "${res[rtps_bf]}" "${res[rtps_none]}") |
		| WAL bytes per insert | ${res[rwal_none]} | ${res[rwal_filters]} | ${res[rwal_bf]} | $(ratio_frac "${res[rwal_bf]}" "${res[rwal_filters]}") | $(ratio "${res[rwal_bf]}" "${res[rwal_none]}") |

		- stored filters: ${res[rrows_filters]} rows, ${res[rmiss_filters]} of them not found by their region's filter; order_filters $(mb "${res[rsize_filters]}") with its TOAST
		- index (capacity $rec_cap): ${res[rrows_bf]} rows, bloom_index_verify = ${res[rmiss_bf]}; $(mb "${res[rsize_bf]}"), ${res[rlayers_bf]} layer(s)
		EOF
	fi
	if run growth; then
		fp() { awk -v a="$1" -v n="$grow_absent" 'BEGIN { printf "%.4f", a / n }'; }
		cat <<-EOF

		| growth: default options, empty table, then VACUUM | bloomfilter | btree | bloomfilter / btree | target |
		|---|---:|---:|---:|---:|
		| INSERT ... SELECT of $grow_rows rows, ms | ${res[gload_insert_bf]} | ${res[gload_insert_btree]} | $(ratio "${res[gload_insert_bf]}" "${res[gload_insert_btree]}") | ≤ 0.5 |
		| INSERT ... SELECT, then VACUUM, ms | ${res[gboth_insert_bf]} | ${res[gboth_insert_btree]} | $(ratio "${res[gboth_insert_bf]}" "${res[gboth_insert_btree]}") | ≤ 1 |
		| COPY of $grow_rows rows, ms | ${res[gload_copy_bf]} | ${res[gload_copy_btree]} | $(ratio "${res[gload_copy_bf]}" "${res[gload_copy_btree]}") | ≤ 0.5 |
		| COPY, then VACUUM, ms | ${res[gboth_copy_bf]} | ${res[gboth_copy_btree]} | $(ratio "${res[gboth_copy_bf]}" "${res[gboth_copy_btree]}") | ≤ 1 |
		| $grow_pg_rows single-row INSERTs, pgbench -M prepared, $clients clients, ms | ${res[gload_pgbench_bf]} | ${res[gload_pgbench_btree]} | $(ratio "${res[gload_pgbench_bf]}" "${res[gload_pgbench_btree]}") | ≤ 0.5 |
		| single-row INSERTs, then VACUUM, ms | ${res[gboth_pgbench_bf]} | ${res[gboth_pgbench_btree]} | $(ratio "${res[gboth_pgbench_bf]}" "${res[gboth_pgbench_btree]}") | ≤ 1 |
		| VACUUM alone after INSERT ... SELECT / COPY / single-row INSERTs, ms | ${res[gvac_insert_bf]} / ${res[gvac_copy_bf]} / ${res[gvac_pgbench_bf]} | ${res[gvac_insert_btree]} / ${res[gvac_copy_btree]} / ${res[gvac_pgbench_btree]} | | |
		| index size after VACUUM, COPY | $(mb "${res[gsize_copy]}") | $(mb "${res[gsize_copy_btree]}") | $(ratio "${res[gsize_copy]}" "${res[gsize_copy_btree]}") | |

		- layers of the bloomfilter index: INSERT ... SELECT ${res[glayers_insert]}; COPY ${res[glayers_copy]}; single-row INSERTs ${res[glayers_pgbench]}
		- the single-row INSERTs into the table with no index: ${res[gload_pgbench_none]} ms (then VACUUM: ${res[gboth_pgbench_none]} ms); bloomfilter / no index $(ratio "${res[gload_pgbench_bf]}" "${res[gload_pgbench_none]}"), btree / no index $(ratio "${res[gload_pgbench_btree]}" "${res[gload_pgbench_none]}")

		| index over the same $grow_rows keys | layers | size | size / sized | target | bulk probe of $grow_absent absent keys, ms | probe / sized | target | false positives / absent keys (requested 0.01) |
		|---|---:|---:|---:|---:|---:|---:|---:|---:|
		| sized: CREATE INDEX WITH (capacity = $grow_rows) | 1 | $(mb "${res[gsized_size]}") | 1 | | ${res[gp_sized]} | 1 | | $(fp "${res[gsized_fp]}") |
		| a. default options, COPY, VACUUM | 1 | $(mb "${res[gdef_size]}") | $(ratio "${res[gdef_size]}" "${res[gsized_size]}") | ≤ 1.3 | ${res[gp_def]} | $(ratio "${res[gp_def]}" "${res[gp_sized]}") | ≤ 1.3 | $(fp "${res[gdef_fp]}") |
		| b. WITH (capacity = $grow_cap), $grow_rows rows inserted, before VACUUM | ${res[gbig_layers0]} | $(mb "${res[gbig_size0]}") | $(ratio "${res[gbig_size0]}" "${res[gsized_size]}") | | ${res[gp0_big]} | $(ratio "${res[gp0_big]}" "${res[gp0_sized]}") | | $(fp "${res[gbig_fp0]}") |
		| b. the same after VACUUM | ${res[gbig_layers]} | $(mb "${res[gbig_size]}") | $(ratio "${res[gbig_size]}" "${res[gsized_size]}") | ≤ 1.5 | ${res[gp_big]} | $(ratio "${res[gp_big]}" "${res[gp_sized]}") | ≤ 1.5 | $(fp "${res[gbig_fp]}") |
		| c. WITH (capacity = $grow_rows), $grow_rows rows inserted | ${res[gcap_layers]} | $(mb "${res[gcap_size]}") | $(ratio "${res[gcap_size]}" "${res[gsized_size]}") | | | | | $(fp "${res[gcap_fp]}") |

		- probes before the VACUUM were timed against the sized index in the same rounds (${res[gp0_sized]} ms for it then)
		- the grown index's VACUUM (its compaction): ${res[gbig_vac]} ms; its INSERT ... SELECT: ${res[gbig_load]} ms; c's INSERT ... SELECT: ${res[gcap_load]} ms
		- bloom_index_verify: a ${res[gmissing_default]}, b ${res[gmissing_big]}, c ${res[gcap_missing]}
		EOF
	fi
)
echo "$report"
[ -n "$out" ] && echo "$report" >"$out"
log "done"
