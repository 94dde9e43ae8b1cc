#!/usr/bin/env bash
#
# test/limits/run.sh: the limit cases too slow for the regression suite.
#
#   pg_virtualenv -t bash test/limits/run.sh            # in a throwaway cluster
#   PGDATABASE=mydb bash test/limits/run.sh             # against a server at hand
#
# For each case it prints the statement, its result (or error), the time
# psql measured and the backend's resident memory at the start and at its
# peak (VmRSS and VmHWM, read from /proc, so run it on the server's machine
# as root or as the server's user; both count the shared buffers the backend
# touched).  Each case runs in a new session, so that VmHWM is that case's
# own peak.
#
#  1. bloom_agg over ROWS rows (default 100 million distinct integers) with
#     work_mem at its minimum (64kB): unsized and sized.
#  2. The same rows in GROUP_ROWS-row groups (default 100 groups) through a
#     hash aggregate that has to spill (enable_sort = off), unsized and
#     sized; then 1000 keys per group are looked up in their group's filter.
#  3. How soon a cancel takes effect: statement_timeout = 100ms on the
#     largest filter (bloom_create, its text form, bloom_info, a union) and
#     on the final phase of a big unsized bloom_agg.  "time" is then the
#     cancel latency plus 0.1 s.
#
# Environment: ROWS (default 100000000), NGROUPS (default 100), and the usual
# PGHOST, PGPORT, PGDATABASE, PGUSER.

set -uo pipefail

ROWS=${ROWS:-100000000}
NGROUPS=${NGROUPS:-100}
OUTER=$(( ROWS / 10000 ))	# rows come from OUTER x 10000, a cross join of
							# two small series, so that nothing is materialized

psql_case() {
	local title=$1 sql=$2
	printf '\n### %s\n\n' "$title"
	printf '%s\n' "$sql" | sed -e 's/^[[:space:]]*/    /'
	echo
	psql -X -q -v ON_ERROR_STOP=0 <<EOSQL 2>&1 | sed -e 's/^/    /'
SELECT pg_backend_pid() AS pid \gset
\setenv BACKEND_PID :pid
\! awk '/VmRSS/ { printf "memory of the backend at the start: %.0f MB\n", \$2 / 1024 }' /proc/\$BACKEND_PID/status
SET work_mem = '64kB';
\timing on
$sql
\timing off
\! awk '/VmHWM/ { printf "peak memory of the backend: %.0f MB\n", \$2 / 1024 }' /proc/\$BACKEND_PID/status
EOSQL
}

psql -X -q -c "CREATE EXTENSION IF NOT EXISTS bloomfilter" >/dev/null

echo "bloomfilter limits: ROWS=$ROWS NGROUPS=$NGROUPS, $(psql -X -At -c 'SELECT version()')"
echo "host: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"

keys="generate_series(1, $OUTER) a, generate_series(1, 10000) b"

# 1. one aggregate over all rows
psql_case "unsized bloom_agg over $ROWS distinct keys, work_mem 64kB" \
	"SELECT nbytes, nhashes, round(estimated_keys) AS estimated_keys
	 FROM bloom_info((SELECT bloom_agg(a::bigint * 10000 + b) FROM $keys));"
psql_case "sized bloom_agg($ROWS, 0.01) over $ROWS distinct keys, work_mem 64kB" \
	"SELECT nbytes, nhashes, round(estimated_keys) AS estimated_keys
	 FROM bloom_info((SELECT bloom_agg(a::bigint * 10000 + b, $ROWS, 0.01) FROM $keys));"

# 2. grouped, through a spilling hash aggregate
per_group=$(( ROWS / NGROUPS ))
for kind in unsized sized; do
	if [ "$kind" = sized ]; then
		agg="bloom_agg(a::bigint * 10000 + b, $per_group, 0.01)"
	else
		agg="bloom_agg(a::bigint * 10000 + b)"
	fi
	psql_case "$kind bloom_agg in $NGROUPS groups of $per_group keys, hash aggregate, work_mem 64kB" \
		"SET enable_sort = off;
		 EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF)
		 CREATE TEMP TABLE grouped AS
		 SELECT (a::bigint * 10000 + b) % $NGROUPS AS grp, $agg AS f FROM $keys GROUP BY 1;
		 SELECT count(*) AS groups, sum((bloom_info(f)).nbytes) AS total_bytes FROM grouped;
		 SELECT count(*) AS probes, count(*) FILTER (WHERE NOT bloom_contains(f, k)) AS missing
		 FROM (SELECT (random() * ($ROWS - 1))::bigint + 10001 AS k
		       FROM generate_series(1, 1000 * $NGROUPS)) keys
		 JOIN grouped ON grp = k % $NGROUPS;"
done

# 3. cancel latency: each statement once to the end (T), then cancelled by
#    statement_timeout at a quarter, half, three quarters and 95% of T; the
#    latency is how long after the timeout the error came
ms_of() {	# the milliseconds of psql's last "Time:" line
	sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1
}
cancel_latency() {
	local title=$1 sql=$2 full t out
	printf '\n### cancel: %s\n\n    %s\n\n' "$title" "$sql"
	full=$(printf '\\timing on\n%s\n' "$sql" | psql -X -q 2>&1 | ms_of)
	printf '    to the end: %.0f ms\n' "$full"
	for f in 0.25 0.5 0.75 0.95; do
		t=$(awk -v f="$f" -v full="$full" 'BEGIN { printf "%d", f * full }')
		out=$(printf "SET statement_timeout = %d;\n\\\\timing on\n%s\n" "$t" "$sql" | psql -X -q 2>&1)
		if printf '%s' "$out" | grep -q 'canceling statement due to statement timeout'; then
			awk -v t="$t" -v e="$(printf '%s\n' "$out" | ms_of)" \
				'BEGIN { printf "    timeout %6d ms: cancelled after %6.0f ms, %5.0f ms late\n", t, e, e - t }'
		else
			printf '    timeout %6d ms: not cancelled: %s\n' "$t" "$(printf '%s' "$out" | head -3 | tr '\n' ' ')"
		fi
	done
}

cancel_latency "unsized bloom_agg over $ROWS keys" \
	"SELECT bloom_agg(a::bigint * 10000 + b) IS NOT NULL FROM $keys;"
cancel_latency "sized bloom_agg over $ROWS keys" \
	"SELECT bloom_agg(a::bigint * 10000 + b, $ROWS, 0.01) IS NOT NULL FROM $keys;"
cancel_latency "20 times bloom_create of the largest filter (641,692,452 keys at 0.01, 800 MB)" \
	"SELECT count(bloom_create(641692452 - g % 2, 0.01)) FROM generate_series(1, 20) g;"
cancel_latency "the largest filter and its text form (1.07 GB of base64)" \
	"SELECT length(bloom_create(641692452 - g % 2, 0.01)::text) FROM generate_series(1, 1) g;"
cancel_latency "the largest filter and bloom_info (a popcount of 800 MB)" \
	"SELECT bits_set FROM bloom_info((SELECT bloom_create(641692452 - g % 2, 0.01) FROM generate_series(1, 1) g));"
cancel_latency "two largest filters and their union" \
	"SELECT octet_length((bloom_create(641692452 - g % 2, 0.01) | bloom_create(641692452 - g % 2, 0.01))::bytea) FROM generate_series(1, 1) g;"

psql_case "the largest filter, peak memory of its text form" \
	"SELECT length(bloom_create(641692452 - g % 2, 0.01)::text) FROM generate_series(1, 1) g;"
psql_case "the largest filter through its text form and back (what COPY and pg_dump do)" \
	"SELECT f::text::bloom = f AS same FROM (SELECT bloom_create(641692452 - g % 2, 0.01) AS f FROM generate_series(1, 1) g) s;"
psql_case "a text literal longer than that of the largest filter" \
	"SELECT repeat('A', 1066666836)::bloom;"
psql_case "the backend keeps working" \
	"SELECT bloom_contains(bloom_agg(g), 5) FROM generate_series(1, 10) g;"
