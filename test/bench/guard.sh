#!/usr/bin/env bash
#
# test/bench/guard.sh: the guard of a cache or a service, one probe per
# request from many clients: "is this key in the table?" answered by the
# bloomfilter index (bloom_index_contains) against the same question asked
# of a btree (EXISTS), with pgbench -M prepared.
#
#   bash test/bench/guard.sh [--rows N] [--secs S] [--clients "1 8"] [--db NAME]
#
# A table of --rows keys (1..N) with a btree and a bloomfilter index; each
# request draws a key from 1..10N (so 10% of them exist, the guard's case:
# most lookups are of keys that do not exist), and runs one of
#   guard:  SELECT bloom_index_contains('guard_keys_bf', $1::bigint)
#   btree:  SELECT EXISTS (SELECT 1 FROM guard_keys WHERE k = $1::bigint)
# for --secs seconds at each client count (-j as many threads), btree
# first.  Prints each run's transactions per second and the ratio
# guard / btree at each count.  Timings are reported, never asserted.
# Connects where psql and pgbench do by default (PGHOST, PGPORT, PGUSER,
# PGDATABASE; the bin folder of PG_BIN or PATH); the database must allow
# CREATE EXTENSION bloomfilter.

set -euo pipefail

rows=1000000
secs=10
clients="1 8"
while [ $# -gt 0 ]; do
	case "$1" in
		--rows) rows=$2; shift 2 ;;
		--secs) secs=$2; shift 2 ;;
		--clients) clients=$2; shift 2 ;;
		--db) export PGDATABASE=$2; shift 2 ;;
		-h | --help) sed -n '3,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "guard.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
bin=${PG_BIN:+$PG_BIN/}
dir=$(mktemp -d "${TMPDIR:-/tmp}/bloomfilter-guard.XXXXXX")
trap 'rm -rf "$dir"' EXIT

"${bin}psql" -X -q -v ON_ERROR_STOP=1 <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomfilter;
DROP TABLE IF EXISTS guard_keys;
CREATE TABLE guard_keys (k bigint NOT NULL);
INSERT INTO guard_keys SELECT generate_series(1, $rows);
CREATE INDEX guard_keys_k ON guard_keys (k);
CREATE INDEX guard_keys_bf ON guard_keys USING bloomfilter (k);
VACUUM ANALYZE guard_keys;
SQL

cat >"$dir/guard.sql" <<EOF2
\set key random(1, $((rows * 10)))
SELECT bloom_index_contains('guard_keys_bf', :key::bigint);
EOF2
cat >"$dir/btree.sql" <<EOF2
\set key random(1, $((rows * 10)))
SELECT EXISTS (SELECT 1 FROM guard_keys WHERE k = :key::bigint);
EOF2

tps() {
	"${bin}pgbench" -n -M prepared -c "$2" -j "$2" -T "$secs" -f "$dir/$1.sql" 2>&1 |
		sed -n 's/^tps = \([0-9.]*\) .*/\1/p' | head -1
}

echo "rows $rows, ${secs} s per run, pgbench -M prepared"
printf '%8s %12s %12s %8s\n' clients "btree tps" "guard tps" ratio
for c in $clients; do
	b=$(tps btree "$c")
	g=$(tps guard "$c")
	printf '%8s %12s %12s %8s\n' "$c" "$b" "$g" "$(awk -v g="$g" -v b="$b" 'BEGIN { printf "%.2f", g / b }')"
done
"${bin}psql" -X -q -c 'DROP TABLE guard_keys'
