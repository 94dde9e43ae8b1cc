#!/usr/bin/env bash
#
# test/soak/suite.sh: the short soak run of the test suite.
#
#   . test/soak/suite.sh && run_soak [PG_CONFIG]     (from test/run-tests.sh)
#   bash test/soak/suite.sh [PG_CONFIG]              (alone)
#
# Runs test/soak/soak.py for SOAK_SECONDS (default 30) seconds of steps with
# seed SOAK_SEED (default: today's date, UTC, as YYYYMMDD: one seed a day,
# the same for every run that day, so a failure in CI replays from its
# date), twice:
#
# 1. against the server of PG_CONFIG (default $PG_CONFIG, else pg_config),
#    which must have the extension installed (the distribution's 15);
# 2. against PostgreSQL SOAK_MAJOR (default 17) from the prebuilt server
#    MATRIX_DIR/pg-SOAK_MAJOR.tar.gz (default ../shared/pg beside the
#    clone, as test/run-tests.sh): unpacked into a temporary directory, the
#    extension built and installed there, the directory removed at the
#    end.  Some defects show only on 17 and later (a statement's keys are
#    set at its end there, before its AFTER triggers on 15 and 16 see
#    them), others only on 15 and 16; skipped, with a message, without the
#    tarball (SOAK_MAJOR=none skips it too).  With SOAK_PG_CONFIG2 (the
#    pg_config of a server that has the extension installed already, as
#    test/run-tests.sh keeps test/matrix.sh's build of 17), against that
#    server instead, with nothing unpacked or built.
#
# Each run begins with the soak's tour (one step of each scenario that looks
# for a defect the random mix finds too seldom: see README.md).  Returns 1
# if a check failed in either run, else 2 if either could not run, else 0.
# The seed is printed first; a failure prints the step, the operation, the
# check and the replay command.  Works as root (the servers and the build
# run as postgres) and as any other user.

# soak_prebuilt TARBALL SEED SECONDS: the soak against a prebuilt server
soak_prebuilt() {
	local tarball=$1 seed=$2 seconds=$3 dir root tmp name user= rc
	dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	root=$(cd "$dir/../.." && pwd)
	name=$(basename "$tarball" .tar.gz)
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/bfsoak-$name.XXXXXX") || return 2
	chmod 755 "$tmp"
	[ "$(id -u)" -eq 0 ] && user=postgres
	as_user() {
		if [ -n "$user" ]; then runuser -u "$user" -- env HOME="$tmp" "$@"; else "$@"; fi
	}
	rc=2
	if tar xzf "$tarball" -C "$tmp" && mkdir "$tmp/src" &&
		tar -C "$root" --exclude=./.git --exclude=./results --exclude=./tmp_check \
			--exclude=./output_iso --exclude='*.o' --exclude='*.so' --exclude='*.bc' -cf - . |
		tar -C "$tmp/src" -xf - &&
		{ [ -z "$user" ] || chown -R "$user": "$tmp"; } &&
		as_user make -C "$tmp/src" -s -j2 PG_CONFIG="$tmp/$name/bin/pg_config" >"$tmp/build.log" 2>&1 &&
		as_user make -C "$tmp/src" -s PG_CONFIG="$tmp/$name/bin/pg_config" install >>"$tmp/build.log" 2>&1; then
		/usr/bin/python3 "$dir/soak.py" --seconds "$seconds" --seed "$seed" \
			--pg-config "$tmp/$name/bin/pg_config" </dev/null
		rc=$?
	else
		echo "soak: could not build the extension against $name:"
		tail -20 "$tmp/build.log" 2>/dev/null
	fi
	rm -rf "$tmp"
	return $rc
}

run_soak() {
	local pg_config=${1:-${PG_CONFIG:-pg_config}}
	local seed=${SOAK_SEED:-$(date -u +%Y%m%d)}
	local seconds=${SOAK_SECONDS:-30}
	local major=${SOAK_MAJOR:-17}
	local dir matrix_dir rc1 rc2=0
	dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	matrix_dir=${MATRIX_DIR:-$dir/../../../shared/pg}
	# Debian's psycopg2 is for Debian's python3, whatever python3 is first on PATH
	/usr/bin/python3 "$dir/soak.py" --seconds "$seconds" --seed "$seed" \
		--pg-config "$pg_config" </dev/null
	rc1=$?
	if [ "$major" = none ]; then
		echo "soak: SOAK_MAJOR=none: no second run"
	elif [ -n "${SOAK_PG_CONFIG2:-}" ]; then
		echo "soak: the same seed on $("$SOAK_PG_CONFIG2" --version) ($SOAK_PG_CONFIG2)"
		/usr/bin/python3 "$dir/soak.py" --seconds "$seconds" --seed "$seed" \
			--pg-config "$SOAK_PG_CONFIG2" </dev/null
		rc2=$?
	elif [ -f "$matrix_dir/pg-$major.tar.gz" ]; then
		echo "soak: the same seed on PostgreSQL $major ($matrix_dir/pg-$major.tar.gz)"
		soak_prebuilt "$matrix_dir/pg-$major.tar.gz" "$seed" "$seconds"
		rc2=$?
	else
		echo "soak: skipped on PostgreSQL $major: no $matrix_dir/pg-$major.tar.gz"
	fi
	if [ "$rc1" -eq 1 ] || [ "$rc2" -eq 1 ]; then
		return 1
	elif [ "$rc1" -ne 0 ] || [ "$rc2" -ne 0 ]; then
		return 2
	fi
	return 0
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -uo pipefail
	run_soak "$@"
fi
