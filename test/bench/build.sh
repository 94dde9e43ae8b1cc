#!/usr/bin/env bash
#
# test/bench/build.sh: bloom_agg builds side by side, in one run.
#
#   bash test/bench/build.sh [--rows N] [--big N] [--runs R] [--out FILE]
#
# Against the server that the libpq environment names (PGHOST, PGPORT,
# PGUSER, PGDATABASE; a superuser: peak memory is read from the backend's
# /proc/self/status), with bloomfilter installed in that database:
#
#   1. makes bench_build_int (bigint) and bench_build_text (md5 text) of N
#      distinct keys (default 10M) unless they are there;
#   2. times bloom_agg(key) and bloom_agg(key, N, 0.01) on both, serial and
#      with 2 workers (R rounds alternating, default 3; medians of EXPLAIN
#      ANALYZE's Execution Time), and prints serial / parallel;
#   3. measures the peak private memory of the unsized build (VmHWM less the
#      shared and file pages mapped at the end: test/bench/README.md) at
#      work_mem 4MB, serial and with 2 workers (the leader), against the size
#      of the filter it returns; with --big M also over M distinct keys
#      (generate_series, not a table).
#
# Also checks that every build gives the same filter serial and parallel
# (md5 of the bytes), and stops if not. Timings are reported, never asserted.

set -euo pipefail

rows=10000000
big=
runs=3
out=
while [ $# -gt 0 ]; do
	case "$1" in
		--rows) rows=$2; shift 2 ;;
		--big) big=$2; shift 2 ;;
		--runs) runs=$2; shift 2 ;;
		--out) out=$2; shift 2 ;;
		-h | --help) sed -n '3,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "build.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done

q() { psql -XAtq -v ON_ERROR_STOP=1 "$@"; }
log() { echo "[build] $*" >&2; }

par="SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;"
ser="SET max_parallel_workers_per_gather = 0;"
common="SET jit = off; SET work_mem = '4MB';"

for t in int text; do
	# (unlogged: empty again after a crash or an immediate shutdown)
	have=$(q -c "SELECT count(*) FROM pg_class WHERE relname = 'bench_build_$t'")
	[ "$have" = 0 ] || have=$(q -c "SELECT count(*) FROM (SELECT 1 FROM bench_build_$t LIMIT 1) s")
	if [ "$have" = 0 ]; then
		q -c "DROP TABLE IF EXISTS bench_build_$t"
		log "making bench_build_$t ($rows keys)"
		if [ $t = int ]; then expr="(2 * g)::bigint"; else expr="md5((2 * g)::text)"; fi
		q -c "CREATE UNLOGGED TABLE bench_build_$t AS SELECT $expr AS key FROM generate_series(1, $rows) g" \
			-c "VACUUM (FREEZE, ANALYZE) bench_build_$t"
	fi
done
rows=$(q -c "SELECT count(*) FROM bench_build_int")

ms() {		# settings, query -> Execution Time (ms)
	q -c "$common $1" -c "EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) $2" |
		tr -d '\n' | sed -E 's/.*"Execution Time": ([0-9.]+).*/\1/'; echo
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

report=$(mktemp)
trap 'rm -f "$report"' EXIT
{
	echo "## bloom_agg builds: $(q -c 'SELECT version()' | cut -d' ' -f1-2), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	echo "### Serial vs 2 workers, $rows rows of distinct keys (median of $runs; work_mem 4MB)"
	echo
	echo "| build | serial (ms) | 2 workers (ms) | speed-up | target |"
	echo "|---|---:|---:|---:|---|"
} >"$report"

for t in int text; do
	for form in "bloom_agg(key)" "bloom_agg(key, $rows, 0.01)"; do
		query="SELECT $form FROM bench_build_$t"
		s1=$(q -c "$common $ser" -c "SELECT md5(($form)::bytea) FROM bench_build_$t")
		p1=$(q -c "$common $par" -c "SELECT md5(($form)::bytea) FROM bench_build_$t")
		if [ "$s1" != "$p1" ]; then
			echo "build.sh: $query: serial and parallel filters differ" >&2
			exit 1
		fi
		: >"$report.s"; : >"$report.p"
		for r in $(seq 1 "$runs"); do
			if [ $((r % 2)) -eq 1 ]; then
				ms "$ser" "$query" >>"$report.s"; ms "$par" "$query" >>"$report.p"
			else
				ms "$par" "$query" >>"$report.p"; ms "$ser" "$query" >>"$report.s"
			fi
		done
		s=$(median <"$report.s"); p=$(median <"$report.p")
		log "$query: serial $s ms, parallel $p ms"
		awk -v n="$query" -v s="$s" -v p="$p" 'BEGIN {
			x = s / p; printf "| `%s` | %.0f | %.0f | %.2f× | ≥ 1.5× %s |\n", n, s, p, x, (x >= 1.5 ? "met" : "**missed**") }' >>"$report"
	done
done
rm -f "$report.s" "$report.p"

peak() {	# settings, from-clause -> "private peak MB, filter MB"
	q <<-EOF
		$common $1
		SELECT octet_length(bloom_agg(key)::bytea) AS fbytes $2 \gset
		SELECT round((bench_vm('VmHWM') - bench_vm('RssShmem') - bench_vm('RssFile')) / 1024.0, 1) || ' ' || round(:fbytes / 1048576.0, 1);
	EOF
}
q -c "CREATE OR REPLACE FUNCTION bench_vm(field text) RETURNS bigint LANGUAGE sql AS \$\$
	SELECT substring(pg_read_file('/proc/self/status') FROM field || ':\s*(\d+) kB')::bigint \$\$"
{
	echo
	echo "### Peak private memory of the unsized bloom_agg(key) (work_mem 4MB; VmHWM less shared and file pages; parallel: the leader only)"
	echo
	echo "| build | private peak (MB) | final filter (MB) | peak / filter | target |"
	echo "|---|---:|---:|---:|---|"
} >>"$report"
cases=("serial|$ser|FROM bench_build_int|bigint, $rows keys"
	"2 workers|$par|FROM bench_build_int|bigint, $rows keys"
	"serial|$ser|FROM bench_build_text|text, $rows keys")
if [ -n "$big" ]; then
	cases+=("serial|$ser|FROM generate_series(1::bigint, $big) key|bigint, $big keys (generate_series)")
fi
for c in "${cases[@]}"; do
	IFS='|' read -r how set from what <<<"$c"
	read -r mb fmb <<<"$(peak "$set" "$from")"
	log "peak $what $how: $mb MB for a $fmb MB filter"
	awk -v w="$what, $how" -v m="$mb" -v f="$fmb" 'BEGIN {
		x = m / f; printf "| %s | %.1f | %.1f | %.2f | ≤ 2 (or work_mem) %s |\n", w, m, f, x, (x <= 2 || m <= 4 ? "met" : "**missed**") }' >>"$report"
done
q -c "DROP FUNCTION bench_vm(text)"

cat "$report"
[ -n "$out" ] && cp "$report" "$out"
exit 0
