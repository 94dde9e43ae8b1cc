#!/usr/bin/env bash
#
# test/load/run.sh: concurrent writers under pgbench, then a check that no
# committed key was lost.
#
#   bash test/load/run.sh [-T seconds] [-c clients] [-j threads]
#
# Defaults: -T 20 -c 8 -j 2.  Needs the extension installed (make && sudo
# make install) and runs in a throwaway cluster (pg_virtualenv -t), so it
# works as root or as any user.
#
# 16 filters (8 small ones stored in line, 8 of 24 KB stored out of line)
# take random keys from the clients for the given time, through four
# pgbench scripts, each logging its keys in the same transaction:
#   add.sql      UPDATE ... SET f = bloom_add(f, key), no explicit lock (weight 6)
#   add_two.sql  the same key into two rows in one transaction (weight 2)
#   add_new.sql  SELECT ... FOR UPDATE, then bloom_add_new via UPDATE ... FROM
#                ... LATERAL, the README's pattern (weight 1)
#   merge.sql    ten keys built by bloom_agg and OR-ed in with | (weight 1)
# check.sql then asserts that every logged key is in its filter, that every
# filter reads back through its text form, and that every filter equals,
# bit for bit, the sized bloom_agg of exactly its logged keys.  The script
# exits non-zero if pgbench failed or any of that does not hold.

set -euo pipefail

usage() {
	sed -n '3,23p' "$0" | sed 's/^# \{0,1\}//'
}

duration=20
clients=8
threads=2
while getopts 'T:c:j:h' opt; do
	case "$opt" in
		T) duration=$OPTARG ;;
		c) clients=$OPTARG ;;
		j) threads=$OPTARG ;;
		h) usage; exit 0 ;;
		*) usage >&2; exit 2 ;;
	esac
done
for n in "$duration" "$clients" "$threads"; do
	case "$n" in
		'' | *[!0-9]* | 0) echo "run.sh: -T, -c and -j take positive integers" >&2; exit 2 ;;
	esac
done

here=$(cd "$(dirname "$0")" && pwd)

# Re-run inside a throwaway cluster.
if [ -z "${BLOOM_LOAD_IN_VIRTUALENV:-}" ]; then
	pg_major=$(${PG_CONFIG:-pg_config} --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
	export BLOOM_LOAD_IN_VIRTUALENV=1
	exec pg_virtualenv -t -v "$pg_major" bash "$here/run.sh" "$@"
fi

psql=(psql -X -q -v ON_ERROR_STOP=1)

echo "== setup"
"${psql[@]}" -f "$here/setup.sql"

echo "== pgbench: $clients clients, $threads threads, $duration s"
# pgbench exits non-zero when a client aborts on an error; the timeout only
# guards against a hang (pgbench stops by itself after -T).
pgbench_rc=0
timeout $((duration + 300)) pgbench -n -c "$clients" -j "$threads" -T "$duration" \
	-f "$here/add.sql@6" -f "$here/add_two.sql@2" \
	-f "$here/add_new.sql@1" -f "$here/merge.sql@1" || pgbench_rc=$?
if [ "$pgbench_rc" -ne 0 ]; then
	echo "load check: FAILED (pgbench exited with $pgbench_rc)" >&2
fi

echo "== check"
out=$("${psql[@]}" -f "$here/check.sql")
echo "$out"
if [ "$pgbench_rc" -ne 0 ] || ! grep -qx 'load check: ok' <<<"$out"; then
	exit 1
fi
