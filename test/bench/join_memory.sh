#!/usr/bin/env bash
#
# test/bench/join_memory.sh: the peak memory of a backend running a join
# pre-checked by a bloomfilter index, against the same query with
# bloomfilter.join_filter off, side by side in one run (issue 36, item 1).
#
#   bash test/bench/join_memory.sh [--docs N] [--kb K] [--work-mem 4MB]
#
# Against the server that the libpq environment names (a superuser: the
# peak is read from the backend's /proc/self/status), with bloomfilter
# installable in that database.  Makes N documents (default 3000) of about
# K kB (default 96) that compress to little (TOASTed, each detoasted to K
# kB), half of them already in `bjm_docs` (a btree and a bloomfilter index
# on md5(body)), all of them in `bjm_new`, then runs the dedupe
#
#   SELECT count(*) FROM bjm_new n
#   WHERE NOT EXISTS (SELECT 1 FROM bjm_docs d WHERE md5(d.body) = md5(n.body))
#
# and the same with upper(md5(body)) keys, each in a fresh
# connection with the node (forced with hash and merge joins off, as the
# plan of issue 36's report was) and with bloomfilter.join_filter off
# (the plain plan under the same settings).  "Private peak" is VmHWM less
# the shared and file pages mapped at the end; the bound is the plain
# plan's plus work_mem plus the filter's bits.  The tables are dropped.

set -euo pipefail

docs=3000
kb=96
work_mem=4MB
while [ $# -gt 0 ]; do
	case "$1" in
		--docs) docs=$2; shift 2 ;;
		--kb) kb=$2; shift 2 ;;
		--work-mem) work_mem=$2; shift 2 ;;
		-h | --help) sed -n '3,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "join_memory.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done

q() { psql -XAtq -v ON_ERROR_STOP=1 "$@"; }

q <<SQL
CREATE EXTENSION IF NOT EXISTS bloomfilter;
DROP TABLE IF EXISTS bjm_docs, bjm_new;
CREATE TABLE bjm_new AS
SELECT g AS id, repeat(md5(g::text), $kb * 1024 / 32) AS body
FROM generate_series(1, $docs) g;
CREATE TABLE bjm_docs AS SELECT * FROM bjm_new WHERE id % 2 = 0;
CREATE INDEX ON bjm_docs (md5(body));
CREATE INDEX bjm_docs_bf ON bjm_docs USING bloomfilter (md5(body));
CREATE INDEX ON bjm_docs (upper(md5(body)));
CREATE INDEX bjm_docs_upper_bf ON bjm_docs USING bloomfilter (upper(md5(body)));
VACUUM ANALYZE bjm_docs;
VACUUM ANALYZE bjm_new;
SQL

# one run in a fresh connection: "private peak kB|plan uses the node"
run() {
	local filter=$1 query=$2
	q <<SQL
SET work_mem = '$work_mem';
SET max_parallel_workers_per_gather = 0;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET bloomfilter.join_filter = $filter;
\o /dev/null
$query;
\o
WITH s AS (SELECT pg_read_file('/proc/self/status') AS t),
f AS (SELECT (regexp_match(t, 'VmHWM:\s+(\d+)'))[1]::bigint AS hwm,
             (regexp_match(t, 'RssShmem:\s+(\d+)'))[1]::bigint AS shmem,
             (regexp_match(t, 'RssFile:\s+(\d+)'))[1]::bigint AS file FROM s)
SELECT hwm - shmem - file FROM f;
SQL
}

uses() {
	q -c "SET enable_hashjoin = off" -c "SET enable_mergejoin = off" \
		-c "SET max_parallel_workers_per_gather = 0" \
		-c "EXPLAIN (COSTS OFF) $1" | grep -c 'Bloom\(Anti\|Semi\)Join' || true
}

echo "| key | docs | work_mem | node used | peak with the node (kB) | peak, join_filter off (kB) | difference (kB) | ratio |"
echo "|---|---|---|---|---|---|---|---|"
for key in 'md5(%s.body)' 'upper(md5(%s.body))'; do
	qry="SELECT count(*) FROM bjm_new n WHERE NOT EXISTS (SELECT 1 FROM bjm_docs d WHERE $(printf "$key" d) = $(printf "$key" n))"
	on=$(run on "$qry" | tail -1)
	off=$(run off "$qry" | tail -1)
	echo "| \`$(printf "$key" n)\` | $docs | $work_mem | $(uses "$qry") | $on | $off | $((on - off)) | $(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.2f", a / b }') |"
done
q -c "DROP TABLE bjm_docs, bjm_new"
