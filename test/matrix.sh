#!/usr/bin/env bash
#
# test/matrix.sh: build and test bloomfilter against a prebuilt PostgreSQL
# tarball (../shared/pg/pg-NN.tar.gz, see its README), in a private server.
#
#   bash test/matrix.sh TARBALL [--tap] [--workdir DIR] [--port N] [--keep]
#                               [MAKEVAR=VALUE ...]
#
# 1. unpacks TARBALL into DIR (default: a fresh temporary folder),
# 2. copies this tree there and builds it with PG_CFLAGS=-Werror against the
#    tarball's pg_config, installs it into the unpacked server,
# 3. with --tap, starts the TAP tests (make tap: test/t/*.pl, each with
#    clusters of its own) in the background; the tarballs carry no
#    PostgreSQL::Test modules, so the distribution's drive their binaries
#    (see the Makefile's TAP_PERL_DIR),
# 4. initdb's a cluster, starts it with fsync off (a throwaway cluster, as
#    pg_regress's and the TAP tests' are) on PORT (default 5870 + major;
#    it need not be free: the server listens on no TCP port, only on a
#    socket in DIR, so runs on one port side by side do not meet),
# 5. runs `make installcheck` (regression and isolation suites), with any
#    MAKEVAR given (e.g. REGRESS=bloom_agg),
# 6. stops the server; with --tap, waits for the TAP tests and prints their
#    output after a line "==== TAP tests on PostgreSQL N (make tap)"
#    (PROVE_FLAGS, PROVE_TESTS from the environment); removes DIR unless
#    --keep (or a TAP test failed: its logs stay in DIR/src/tmp_check/log).
#
# initdb refuses to run as root: as root, every step that touches the server
# runs as the postgres user (runuser), on files that user owns.
# Exit status: 0 if make installcheck and the TAP tests passed (1 on a failed
# setup step).

set -uo pipefail

tarball=
workdir=
port=
keep=0
tap=0
makevars=()
while [ $# -gt 0 ]; do
	case "$1" in
		--workdir) workdir=$2; shift 2 ;;
		--port) port=$2; shift 2 ;;
		--keep) keep=1; shift ;;
		--tap) tap=1; shift ;;
		*=*) makevars+=("$1"); shift ;;
		-h | --help) sed -n '3,31p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) tarball=$1; shift ;;
	esac
done
[ -n "$tarball" ] && [ -f "$tarball" ] || { echo "matrix.sh: no tarball: '$tarball'" >&2; exit 1; }
tarball=$(readlink -f "$tarball")

cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
name=$(basename "$tarball" .tar.gz)			# pg-16
major=${name#pg-}
port=${port:-$((5870 + major))}
[ -n "$workdir" ] || workdir=$(mktemp -d "${TMPDIR:-/tmp}/bloomfilter-$name.XXXXXX")
mkdir -p "$workdir"
workdir=$(readlink -f "$workdir")
# a setup step that fails (unpacking, building) leaves nothing behind either
trap '[ "$keep" -eq 1 ] || rm -rf "$workdir"' EXIT

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

pgdir="$workdir/$name"
if [ ! -x "$pgdir/bin/pg_config" ]; then
	tar xzf "$tarball" -C "$workdir" || { echo "matrix.sh: cannot unpack $tarball" >&2; exit 1; }
fi
src="$workdir/src"
rm -rf "$src"
mkdir -p "$src"
tar -C "$ROOT" --exclude=./.git --exclude=./results --exclude=./tmp_check \
	--exclude=./output_iso --exclude='*.o' --exclude='*.so' --exclude='*.bc' -cf - . |
	tar -C "$src" -xf -
[ -n "$user" ] && chown -R "$user": "$workdir"

pgc="$pgdir/bin/pg_config"
echo "matrix.sh: $("$pgc" --version) in $pgdir, port $port"
as_user make -C "$src" -s -j"$(nproc 2>/dev/null || echo 2)" PG_CONFIG="$pgc" PG_CFLAGS=-Werror ||
	{ echo "matrix.sh: build failed against $name" >&2; exit 1; }
bash "$src/test/symbols.sh" "$src/bloomfilter.so" ||
	{ echo "matrix.sh: the module built against $name exports the wrong symbols" >&2; exit 1; }
as_user make -C "$src" -s PG_CONFIG="$pgc" install >/dev/null ||
	{ echo "matrix.sh: install failed into $name" >&2; exit 1; }

# The TAP tests start their own clusters: they run beside the steps below
# (mostly waiting for their servers), in a process group of their own so
# that an early exit can end them.
tap_pid=
if [ "$tap" -eq 1 ]; then
	tap_args=(PG_CONFIG="$pgc" PROVE_FLAGS="--timer${PROVE_FLAGS:+ $PROVE_FLAGS}"
		TAP_JOBS="${TAP_JOBS:-1}")
	[ -n "${PROVE_TESTS:-}" ] && tap_args+=(PROVE_TESTS="$PROVE_TESTS")
	set -m
	as_user make -C "$src" "${tap_args[@]}" tap >"$workdir/tap.log" 2>&1 </dev/null &
	tap_pid=$!
	set +m
fi

data="$workdir/data"
sock="$workdir/sock"
stop() {
	[ -n "$tap_pid" ] && kill -- -"$tap_pid" 2>/dev/null
	as_user "$pgdir/bin/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1
	[ "$keep" -eq 1 ] || rm -rf "$workdir"
}
trap stop EXIT
trap 'exit 1' INT TERM
if [ ! -d "$data" ]; then
	# (the prebuilt servers' bootstrap is chatty on stderr: keep it in a log)
	as_user "$pgdir/bin/initdb" -D "$data" -A trust -E UTF8 --locale=C.UTF-8 \
		>"$workdir/initdb.log" 2>&1 ||
		{ echo "matrix.sh: initdb failed" >&2; cat "$workdir/initdb.log" >&2; exit 1; }
fi
as_user mkdir -p "$sock"
# PGHOST in the server's environment: libpq inside a backend (postgres_fdw's
# loopback server in bloom_fdw) finds the private socket, not /tmp's.
as_user env PGHOST="$sock" "$pgdir/bin/pg_ctl" -D "$data" -w -l "$workdir/server.log" \
	-o "-p $port -k $sock -c listen_addresses='' -c fsync=off" start >/dev/null ||
	{ echo "matrix.sh: server did not start (log: $workdir/server.log)" >&2; cat "$workdir/server.log" >&2; keep=1; exit 1; }

as_user env PGHOST="$sock" PGPORT="$port" \
	make -C "$src" PG_CONFIG="$pgc" TAP_TESTS= installcheck "${makevars[@]}"
rc=$?
if [ "$rc" -ne 0 ]; then
	for d in "$src/regression.diffs" "$src/output_iso/regression.diffs"; do
		[ -s "$d" ] && { echo "==== $d"; cat "$d"; }
	done
fi
if [ -n "$tap_pid" ]; then
	wait "$tap_pid"
	tap_rc=$?
	tap_pid=
	echo "==== TAP tests on PostgreSQL $major (make tap)"
	cat "$workdir/tap.log"
	if [ "$tap_rc" -ne 0 ]; then
		keep=1
		echo "matrix.sh: TAP logs kept in $src/tmp_check/log"
		bash "$src/test/tap-failures.sh" "$workdir/tap.log" "$src/tmp_check/log"
		[ "$rc" -ne 0 ] || rc=$tap_rc
	fi
fi
exit "$rc"
