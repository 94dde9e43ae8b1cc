#!/usr/bin/env bash
#
# test/citus/run.sh: bloomfilter on a real Citus cluster (a coordinator and
# two workers), from the prebuilt PostgreSQL 18 + Citus tarball.
#
#   bash test/citus/run.sh [TARBALL] [--port N] [--workdir DIR] [--keep]
#
# TARBALL defaults to $MATRIX_DIR/pg-18.tar.gz, or without MATRIX_DIR to
# ../shared/pg/pg-18.tar.gz (next to the repository); if it is absent, prints
# "skipped: ..." and exits 0.  Otherwise:
# 1. unpacks it into DIR (default: a fresh temporary folder), builds the
#    extension with PG_CFLAGS=-Werror against it and installs it there,
# 2. starts three nodes on ports N, N+1, N+2 (default $CITUS_PORT, or 5881):
#    citus in shared_preload_libraries, the first one the coordinator,
# 3. runs test/citus/setup.sql (tables distributed by id, the same rows in
#    plain local tables, check helpers), then aggregates.sql, probes.sql and
#    explain.sql once per aggregation mode: "pushdown" (Citus 15 and later
#    run aggregates with an internal state on the workers) and "gather"
#    (citus.allow_aggregate_worker_combine_on_internal_types off: rows are
#    gathered to the coordinator, as on Citus up to 14.0), then index.sql
#    (the bloomfilter index on a distributed table, probed from the
#    coordinator) once,
# 4. prints one line per check and "N passed, N failed"; exits non-zero if
#    any check failed or a step broke.
#
# As root, the nodes run as the postgres user (runuser), on files it owns.

set -uo pipefail

cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
tarball=
port=${CITUS_PORT:-5881}
workdir=
keep=0
while [ $# -gt 0 ]; do
	case "$1" in
		--port) port=$2; shift 2 ;;
		--workdir) workdir=$2; shift 2 ;;
		--keep) keep=1; shift ;;
		-h | --help) sed -n '3,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) tarball=$1; shift ;;
	esac
done
[ -n "${tarball:-}" ] || tarball=${MATRIX_DIR:-$ROOT/../shared/pg}/pg-18.tar.gz
if [ ! -f "$tarball" ]; then
	echo "skipped: no PostgreSQL with Citus at $tarball"
	exit 0
fi
tarball=$(readlink -f "$tarball")

passed=0
failed=0
[ -n "$workdir" ] || workdir=$(mktemp -d "${TMPDIR:-/tmp}/bloomfilter-citus.XXXXXX")
mkdir -p "$workdir"
workdir=$(readlink -f "$workdir")
user=
if [ "$(id -u)" -eq 0 ]; then
	user=postgres
	chmod 755 "$workdir"
fi
as_user() {
	if [ -n "$user" ]; then
		runuser -u "$user" -- env HOME="$workdir" "$@"
	else
		"$@"
	fi
}

name=$(basename "$tarball" .tar.gz)
pgdir="$workdir/$name"
bin="$pgdir/bin"
sock="$workdir/sock"
ports=("$port" $((port + 1)) $((port + 2)))

finish() {
	for p in "${ports[@]}"; do
		[ -d "$workdir/n$p" ] && as_user "$bin/pg_ctl" -D "$workdir/n$p" -m immediate stop >/dev/null 2>&1
	done
	[ "$keep" -eq 1 ] || rm -rf "$workdir"
	echo "$passed passed, $failed failed"
}
trap finish EXIT

broken() {
	echo "citus/run.sh: $*" >&2
	failed=$((failed + 1))
	keep=1
	echo "citus/run.sh: files kept in $workdir" >&2
	exit 1
}

# 1. server tree and extension
if [ ! -x "$bin/pg_config" ]; then
	tar xzf "$tarball" -C "$workdir" || broken "cannot unpack $tarball"
fi
[ -f "$pgdir/lib/postgresql/citus.so" ] || { echo "skipped: $tarball has no Citus"; exit 0; }
src="$workdir/src"
rm -rf "$src"
mkdir -p "$src" "$sock"
tar -C "$ROOT" --exclude=./.git --exclude=./results --exclude=./tmp_check \
	--exclude=./output_iso --exclude='*.o' --exclude='*.so' --exclude='*.bc' -cf - . |
	tar -C "$src" -xf -
[ -n "$user" ] && chown -R "$user": "$workdir"
as_user make -C "$src" -s -j"$(nproc 2>/dev/null || echo 2)" PG_CONFIG="$bin/pg_config" PG_CFLAGS=-Werror ||
	broken "build failed against $name"
as_user make -C "$src" -s PG_CONFIG="$bin/pg_config" install >/dev/null || broken "install failed into $name"
echo "citus/run.sh: $("$bin/pg_config" --version) with Citus, ports ${ports[*]}"

# 2. three nodes
for p in "${ports[@]}"; do
	d="$workdir/n$p"
	as_user "$bin/initdb" -D "$d" -A trust -E UTF8 --locale=C.UTF-8 >/dev/null || broken "initdb failed"
	cat >> "$d/postgresql.conf" <<-CONF
		shared_preload_libraries = 'citus'
		listen_addresses = 'localhost'
		port = $p
		unix_socket_directories = '$sock'
		max_connections = 60
		shared_buffers = 32MB
		fsync = off
		citus.shard_count = 2
	CONF
	as_user "$bin/pg_ctl" -D "$d" -w -l "$workdir/n$p.log" start >/dev/null ||
		{ cat "$workdir/n$p.log" >&2; broken "node $p did not start"; }
done
psql_on() {
	local p=$1
	shift
	as_user "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$sock" -p "$p" -d postgres "$@"
}
for p in "${ports[@]}"; do
	psql_on "$p" -c "CREATE EXTENSION citus" >/dev/null || broken "CREATE EXTENSION citus failed on $p"
done
psql_on "$port" -c "SELECT citus_set_coordinator_host('localhost', $port)" \
	-c "SELECT citus_add_node('localhost', ${ports[1]})" \
	-c "SELECT citus_add_node('localhost', ${ports[2]})" >/dev/null || broken "adding the nodes failed"
# created on the coordinator, Citus creates it on the workers
psql_on "$port" -c "CREATE EXTENSION bloomfilter" >/dev/null || broken "CREATE EXTENSION bloomfilter failed"
for p in "${ports[@]}"; do
	psql_on "$p" -Atc "SELECT extversion FROM pg_extension WHERE extname = 'bloomfilter'" | grep -q . ||
		broken "bloomfilter is missing on node $p"
done

# 3. checks
psql_on "$port" -f test/citus/setup.sql >/dev/null || broken "test/citus/setup.sql failed"
guc=citus.allow_aggregate_worker_combine_on_internal_types
if psql_on "$port" -Atc "SELECT 1 FROM pg_settings WHERE name = '$guc'" | grep -q 1; then
	modes=(pushdown gather)
else
	modes=(gather)			# Citus up to 14.0: rows of internal-state aggregates are gathered
fi
for mode in "${modes[@]}"; do
	opts=
	[ "$mode" = gather ] && [ "${#modes[@]}" -eq 2 ] && opts="-c $guc=off"
	for f in aggregates probes explain; do
		PGOPTIONS="$opts" psql_on "$port" -v mode="$mode" -f "test/citus/$f.sql" >/dev/null ||
			broken "test/citus/$f.sql failed in mode $mode"
	done
done
psql_on "$port" -v mode=index -f test/citus/index.sql >/dev/null ||
	broken "test/citus/index.sql failed"

# 4. report
while IFS='|' read -r ok mode checkname detail; do
	if [ "$ok" = t ]; then
		passed=$((passed + 1))
		echo "ok - $mode: $checkname"
	else
		failed=$((failed + 1))
		echo "not ok - $mode: $checkname"
		[ -n "$detail" ] && printf '%s\n' "$detail" | tr '\036' '\n' | sed 's/^/    /'
	fi
done < <(psql_on "$port" -At -c "SELECT ok, mode, name, translate(coalesce(detail, ''), E'\n|', E'\036/') FROM check_results ORDER BY seq")
[ "$((passed + failed))" -gt 0 ] || broken "no check ran"
[ "$failed" -eq 0 ]
