#!/usr/bin/env bash
#
# test/bench/index_build.sh: CREATE INDEX of a bloomfilter index with 0 and
# 2 parallel workers, beside a btree's on the same column, in one run.
#
#   bash test/bench/index_build.sh [--rows N] [--rounds R] [--mwm SIZE] [--out FILE]
#
# Against the server that the libpq environment names (PGHOST, PGPORT,
# PGUSER, PGDATABASE), with bloomfilter installed in that database:
#
#   1. makes bench_ib (k bigint, random: hashint8) of N rows (default
#      10,000,000) unless it has that many, with parallel_workers = 2, and
#      VACUUM ANALYZEs it;
#   2. for R rounds (default 3), each variant in turn, builds and drops:
#      btree serial, btree with 2 workers, bloomfilter serial, bloomfilter
#      with 2 workers (max_parallel_maintenance_workers 0 or 2,
#      maintenance_work_mem SIZE, default 1GB: a parallel build needs the
#      filter to fit in it, and 32 MB per participant), timed by psql;
#   3. prints the medians, each access method's speed-up from 2 workers,
#      and the bloomfilter's over the btree's.
#
# Every parallel bloomfilter build must have the serial build's bits (the
# md5 of bloom_index_filters): the script stops if not.  Timings are
# reported, never asserted.

set -euo pipefail

rows=10000000
rounds=3
mwm=1GB
out=
while [ $# -gt 0 ]; do
	case "$1" in
		--rows) rows=$2; shift 2 ;;
		--rounds) rounds=$2; shift 2 ;;
		--mwm) mwm=$2; shift 2 ;;
		--out) out=$2; shift 2 ;;
		-h | --help) sed -n '3,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "index_build.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done

psql_q() { psql -X -v ON_ERROR_STOP=1 -Atq "$@"; }

have=-1
[ "$(psql_q -c "SELECT to_regclass('bench_ib') IS NOT NULL")" = t ] &&
	have=$(psql_q -c "SELECT count(*) FROM bench_ib")
if [ "$have" != "$rows" ]; then
	echo "index_build.sh: making bench_ib with $rows rows" >&2
	psql_q -c "DROP TABLE IF EXISTS bench_ib" \
		-c "CREATE TABLE bench_ib (k bigint) WITH (parallel_workers = 2, autovacuum_enabled = off)" \
		-c "INSERT INTO bench_ib SELECT hashint8(g) FROM generate_series(1, $rows) g" \
		-c "VACUUM ANALYZE bench_ib"
fi

# build_ms AM WORKERS: milliseconds of one CREATE INDEX (then dropped; the
# bits of a bloomfilter build kept in $bits_file for the comparison)
bits_file=$(mktemp)
trap 'rm -f "$bits_file"' EXIT
build_ms() {
	local am=$1 workers=$2 ms
	ms=$(psql -X -v ON_ERROR_STOP=1 -q <<-SQL | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1
		SET maintenance_work_mem = '$mwm';
		SET max_parallel_maintenance_workers = $workers;
		CHECKPOINT;
		\\timing on
		CREATE INDEX bench_ib_idx ON bench_ib USING $am (k);
		\\timing off
		$([ "$am" = bloomfilter ] && echo "\\o $bits_file.$workers
		SELECT md5(string_agg(filter::bytea::text, '' ORDER BY layer)) FROM bloom_index_filters('bench_ib_idx');
		\\o")
		DROP INDEX bench_ib_idx;
	SQL
	)
	echo "$ms"
}

declare -A times
for ((r = 1; r <= rounds; r++)); do
	for v in btree:0 btree:2 bloomfilter:0 bloomfilter:2; do
		am=${v%:*}
		w=${v#*:}
		t=$(build_ms "$am" "$w")
		times[$v]="${times[$v]:-} $t"
		echo "round $r: $am with $w workers: $t ms" >&2
	done
	if ! cmp -s "$bits_file.0" "$bits_file.2"; then
		echo "index_build.sh: the parallel bloomfilter build's bits differ from the serial build's" >&2
		exit 1
	fi
done
rm -f "$bits_file".*

median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
bs=$(median <<<"${times[btree:0]}")
bp=$(median <<<"${times[btree:2]}")
fs=$(median <<<"${times[bloomfilter:0]}")
fp=$(median <<<"${times[bloomfilter:2]}")
report=$(awk -v rows="$rows" -v rounds="$rounds" -v bs="$bs" -v bp="$bp" -v fs="$fs" -v fp="$fp" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" 'BEGIN {
	printf "CREATE INDEX over %d rows (bigint), medians of %d rounds, load average %s\n\n", rows, rounds, load
	printf "| | serial, ms | 2 workers, ms | speed-up from 2 workers |\n|---|---:|---:|---:|\n"
	printf "| btree | %.0f | %.0f | %.2f |\n", bs, bp, bs / bp
	printf "| bloomfilter | %.0f | %.0f | %.2f |\n", fs, fp, fs / fp
	printf "\nbloomfilter speed-up / btree speed-up: %.2f; bloomfilter / btree time: serial %.2f, 2 workers %.2f\n", (fs / fp) / (bs / bp), fs / bs, fp / bp
}')
echo "$report"
[ -n "$out" ] && echo "$report" >"$out"
exit 0
