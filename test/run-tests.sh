#!/usr/bin/env bash
#
# test/run-tests.sh: the whole bloomfilter test suite.
#
#   bash test/run-tests.sh [--strict]
#
# 1. installs the build dependencies (test/deps.sh),
# 2. builds (with PG_CFLAGS=-Werror under --strict or CI=true), checks that
#    the module exports only bf_* fmgr symbols (test/symbols.sh) and that
#    the files of src/ stack, none too long (test/shape.py); builds the
#    Debian package (test/deb.sh, in the background from the start), installs
#    it, creates the extension from it in a fresh cluster and removes it
#    again; installs the tree's build,
# 3. runs the pg_regress suite, plus isolation specs if test/isolation/specs
#    holds any, in a throwaway cluster: pg_virtualenv make installcheck,
# 4. runs the TAP tests in test/t, if any, as an unprivileged user
#    (as postgres in a private copy of the tree when invoked as root), in
#    the background beside steps 3 and 5-8 (they mostly wait for servers);
#    their output comes last,
# 5. for PostgreSQL 16, 17, 18 and 19 (and any other pg-NN.tar.gz in
#    MATRIX_DIR): builds with -Werror and runs the isolation suite and the
#    regression suite but for its six slowest tests (QUICK=1; on 16 and 18
#    its smoke set, SMOKE=1) in a private server of that version
#    (test/matrix.sh), and on 19 the TAP scripts that
#    cross the version guards (MATRIX_TAP_TESTS below); 16 and 19 run in the
#    background from the install on (beside the TAP tests), 17 and 18 after step 3;
#    skipped, with a message, where the tarball is absent (a clone without
#    ../shared),
# 6. runs a short load test (test/load/run.sh -T 10: 8 writers, no lost key)
#    and a short soak (test/soak/suite.sh: 30 s on 15 and 30 s on 17 of a seeded random mix of
#    writers, DDL, VACUUM and readers on a primary and a hot standby, every
#    invariant checked after every step),
# 7. replays the fuzzer's inputs (test/fuzz/run.sh --replay),
# 8. runs test/citus/run.sh (a Citus coordinator and two workers from
#    ../shared/pg/pg-18.tar.gz; skipped, with a message, without it), in
#    the background from the install on, like 16 and 19,
# 9. prints "N passed, N failed" (one count per regression test, isolation
#    spec, TAP script and Citus check, on every version, one each for the
#    load test, the soak and the fuzzer replay) and exits non-zero if anything
#    failed.  No test times itself: they may all run side by side on a
#    busy machine.
#
# Environment: PG_CONFIG (default pg_config), PG_CFLAGS (extra compiler flags,
# kept under --strict), PROVE_FLAGS (e.g. --verbose), TAP_JOBS (TAP scripts
# run at a time on each version, then 018_compaction alone; default 2),
# SOAK_SECONDS and SOAK_SEED (test/soak/suite.sh), CI, MATRIX_DIR (where the
# pg-NN.tar.gz are, default ../shared/pg beside the clone; nothing else is
# looked at).

set -uo pipefail

usage() {
	sed -n '3,42p' "$0" | sed 's/^# \{0,1\}//'
}

strict=0
[ "${CI:-}" = true ] && strict=1
for arg in "$@"; do
	case "$arg" in
		--strict) strict=1 ;;
		-h | --help) usage; exit 0 ;;
		*) echo "run-tests.sh: unknown argument: $arg" >&2; usage >&2; exit 2 ;;
	esac
done

cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)
PG_CONFIG=${PG_CONFIG:-pg_config}
JOBS=$(nproc 2>/dev/null || echo 2)
LOGDIR=$(mktemp -d "${TMPDIR:-/tmp}/bloomfilter-tests.XXXXXX")

# The major versions tested besides the distribution's (test/matrix.sh):
# each is built with -Werror and runs the isolation suite and the
# regression suite but for its slowest tests (QUICK=1: REGRESS_SLOW in the
# Makefile, code that no version guard touches; they run on 15).  The TAP
# tests run whole on 15, and on 19 those of MATRIX_TAP_TESTS: the scripts
# that take the other side of the version guards in src/ (PG_VERSION_NUM at
# 160000, 170000 and 190000: the compaction's WAL record, the extension of
# the index's file, the spill file's reads, the parallel build, VACUUM's
# options, the planner's hooks) through crashes, standbys and WAL replay.
# The whole TAP suite on every version took 25 of CI's 31 minutes on 2
# cores; a version guard's other side is what another version can break.
# Those in MATRIX_TAP and MATRIX_BACKGROUND run in the background from the
# install on, beside the TAP tests, so that the steps after the install end
# about when they do.
MATRIX_MAJORS="16 17 18 19"
MATRIX_TAP="19"
MATRIX_TAP_TESTS="test/t/015_index.pl test/t/017_unlogged.pl test/t/019_parallel_build.pl test/t/022_index_standby.pl test/t/034_join_filter.pl test/t/036_index_pending.pl"
MATRIX_BACKGROUND="16"
# Those that run the smoke set of the regression suite (SMOKE=1 in the
# Makefile) instead of QUICK=1: each lies between two versions that run the
# rest, and takes one side or the other of every version guard.
MATRIX_SMOKE="16 18"

# Each version's TAP scripts run TAP_JOBS at a time (prove -j), in name
# order, then 018_compaction alone (make tap, TAP_ALONE in the Makefile):
# beside another script its poll of the VACUUM missed the move it crashes
# in most runs.  (With the slowest started first, 010_crash_recovery also
# found fewer server processes to kill.)
export TAP_JOBS=${TAP_JOBS:-2}

passed=0
failed=0
status=0
tapdir=
tap_pid=
citus_pid=
deb_pid=
soak_workdir=
declare -A matrix_pid=()

# (with the seconds since the start, to keep an eye on the run's length)
heading() {
	printf '\n==== %s ==== [%ds]\n' "$*" "$SECONDS"
}

# Final line, printed on every exit path.
finish() {
	# an early exit: end the TAP tests still running in the background
	[ -n "$tap_pid" ] && kill -- -"$tap_pid" 2>/dev/null
	[ -n "$citus_pid" ] && kill -- -"$citus_pid" 2>/dev/null
	[ -n "$deb_pid" ] && kill -- -"$deb_pid" 2>/dev/null
	for v in "${!matrix_pid[@]}"; do
		kill -- -"${matrix_pid[$v]}" 2>/dev/null
	done
	rm -rf "$LOGDIR"
	[ -n "$soak_workdir" ] && rm -rf "$soak_workdir"
	echo
	echo "run time: ${SECONDS} s"
	echo "$passed passed, $failed failed"
}
trap finish EXIT

# A step that failed before producing any per-test result counts as one failure.
abort() {
	echo "run-tests.sh: $*" >&2
	failed=$((failed + 1))
	exit 1
}

as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo -- "$@"
	else
		echo "run-tests.sh: '$*' needs root and sudo is not installed" >&2
		return 1
	fi
}

# Count pg_regress / pg_isolation_regress results in a log. Handles both the
# PostgreSQL <= 15 format ("test name ... ok   12 ms", "... FAILED") and the
# TAP-like format of 16+ ("ok 1  - name  12 ms", "not ok 2 - name").
count_regress() {
	awk '
		/^(not ok|ok) [0-9]+ /          { if ($1 == "ok") p++; else f++; next }
		/^(test )? *[^ ]+ +\.\.\. /     {
			sub(/^.*\.\.\. +/, "")
			if ($0 ~ /^ok/) p++; else f++
		}
		END { printf "%d %d\n", p, f }
	' "$1"
}

# Count TAP scripts in prove output: "Files=N, Tests=M" for each prove run
# (make tap runs two) plus one "script.pl (Wstat: ...)" line per failed
# script in the summary reports.
count_prove() {
	awk '
		/^Files=[0-9]+, Tests=/ { split($1, a, "="); files += a[2]; seen = 1 }
		/^[^ ]+\.pl +\(Wstat: /  { f++ }
		END { if (!seen) print "-1 -1"; else printf "%d %d\n", files - f, f }
	' "$1"
}

# ---------------------------------------------------------------------------
# TAP tests (make tap).  Most spend their time waiting for the servers they
# start, stop, crash and replicate, so they run in the background from the
# install on, beside the steps after it, and are printed and counted after
# those (report_tap).  None times itself (a busy machine makes a test slow,
# never wrong).

# run_tap LOG TESTS...: prove TESTS, output to LOG, exit code of make
run_tap() {
	local log=$1
	shift
	local tap_args=("${make_args[@]}" PROVE_TESTS="$*" TAP_JOBS="$TAP_JOBS")
	# the Makefile's PROVE_FLAGS assignment would hide the environment's
	tap_args+=(PROVE_FLAGS="--timer${PROVE_FLAGS:+ $PROVE_FLAGS}")
	if [ -n "$tapdir" ]; then
		(cd "$tapdir" && runuser -u postgres -- env HOME="$tapdir" \
			make "${tap_args[@]}" tap) >"$log" 2>&1 </dev/null
	else
		make "${tap_args[@]}" tap >"$log" 2>&1 </dev/null
	fi
}

start_tap() {
	if [ "$(id -u)" -eq 0 ]; then
		# initdb refuses to run as root: run as postgres in a private copy.
		tapdir=$(mktemp -d "${TMPDIR:-/tmp}/bloomfilter-tap.XXXXXX")
		tar -C "$ROOT" --exclude=./.git --exclude=./results --exclude=./tmp_check \
			--exclude=./output_iso -cf - . | tar -C "$tapdir" -xf -
		chown -R postgres: "$tapdir"
		chmod 755 "$tapdir"
	fi
	# a process group of its own (set -m), so that an early exit can end it
	set -m
	(
		t0=$SECONDS
		run_tap "$LOGDIR/tap.log" test/t/*.pl
		echo $? >"$LOGDIR/tap.rc"
		echo "(these TAP tests took $((SECONDS - t0)) s)" >>"$LOGDIR/tap.log"
	) &
	tap_pid=$!
	set +m
}

# count_tap LOG RC: add a prove run's scripts to the totals
count_tap() {
	local p f
	read -r p f < <(count_prove "$1")
	if [ "$p" -lt 0 ]; then
		# prove never got to its summary
		p=0
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	if [ "$2" -ne 0 ]; then
		status=1
		[ "$f" -eq 0 ] && failed=$((failed + 1))
		tap_failed=1
	fi
}

report_tap() {
	tap_failed=0
	if [ -n "$tap_pid" ]; then
		heading "TAP tests (make tap, run in the background since the install)"
		wait "$tap_pid"
		tap_pid=
		cat "$LOGDIR/tap.log"
		count_tap "$LOGDIR/tap.log" "$(cat "$LOGDIR/tap.rc" 2>/dev/null || echo 1)"
	fi
	if [ "$tap_failed" -ne 0 ]; then
		echo "TAP logs kept in ${tapdir:-$ROOT}/tmp_check/log"
		bash test/tap-failures.sh "$LOGDIR/tap.log" "${tapdir:-$ROOT}/tmp_check/log"
	elif [ -n "$tapdir" ]; then
		rm -rf "$tapdir"
	fi
}

# ---------------------------------------------------------------------------
# The other supported major versions: each prebuilt server in MATRIX_DIR
# (../shared/pg, beside the clone in CI; see its README), built with -Werror
# and tested in a private server by test/matrix.sh: the regression and
# isolation suites, and the TAP tests for those in MATRIX_TAP.  A user's
# clone has no ../shared: those versions are skipped, and say so.
matrix_dir=${MATRIX_DIR:-$ROOT/../shared/pg}
matrix_versions=$( (printf '%s\n' $MATRIX_MAJORS
	for t in "$matrix_dir"/pg-*.tar.gz; do
		[ -f "$t" ] && basename "$t" .tar.gz | sed 's/^pg-//'
	done) | sort -n -u)

# has_tap V: whether version V runs the TAP tests too
has_tap() {
	case " $MATRIX_TAP " in *" $1 "*) return 0 ;; esac
	return 1
}

# in_background V: whether version V runs in the background from the install on
in_background() {
	has_tap "$1" && return 0
	case " $MATRIX_BACKGROUND " in *" $1 "*) return 0 ;; esac
	return 1
}

# run_matrix V [ARGS]: test/matrix.sh for version V (and ARGS), its output
# also in LOGDIR/matrix-V.log, its exit code in LOGDIR/matrix-V.rc
run_matrix() {
	local v=$1 args=(QUICK=1)
	case " $MATRIX_SMOKE " in *" $v "*) args=(SMOKE=1) ;; esac
	shift
	args+=("$@")
	has_tap "$v" && args+=(--tap)
	PROVE_TESTS="$MATRIX_TAP_TESTS" \
		bash test/matrix.sh "$matrix_dir/pg-$v.tar.gz" "${args[@]}" </dev/null 2>&1 |
		tee "$LOGDIR/matrix-$v.log"
	echo "${PIPESTATUS[0]}" >"$LOGDIR/matrix-$v.rc"
}

# count_matrix V: add version V's results to the totals: pg_regress's lines
# come before the first "==== " line of its output (the diffs, the TAP
# tests), the TAP tests' summary after "==== TAP tests"
count_matrix() {
	local v=$1 log rc p f tp=0 tf=0
	log=$LOGDIR/matrix-$v.log
	rc=$(cat "$LOGDIR/matrix-$v.rc" 2>/dev/null || echo 1)
	sed '/^==== /,$d' "$log" >"$log.results"
	read -r p f < <(count_regress "$log.results")
	if has_tap "$v"; then
		sed -n '/^==== TAP tests/,$p' "$log" >"$log.tap"
		read -r tp tf < <(count_prove "$log.tap")
		# prove never got to its summary
		[ "$tp" -lt 0 ] && tp=0 && tf=1
	fi
	if [ "$rc" -ne 0 ]; then
		status=1
		# the build, the server or make failed without reporting a failed test
		[ "$((f + tf))" -eq 0 ] && f=1
	fi
	passed=$((passed + p + tp))
	failed=$((failed + f + tf))
	if [ -s "$log.tap" ]; then
		echo "PostgreSQL $v: $p passed, $f failed; TAP scripts: $tp passed, $tf failed"
	else
		echo "PostgreSQL $v: $p passed, $f failed"
	fi
}

# ---------------------------------------------------------------------------
heading "Dependencies"
bash test/deps.sh || abort "installing dependencies failed"
pg_major=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
echo "using $("$PG_CONFIG" --version) via $PG_CONFIG"

# ---------------------------------------------------------------------------
# The Debian package's build (in a copy of the tree), installed before the
# tree's own install below.
echo "test/deb.sh (the Debian package) started in the background; it is installed before the tree's build"
set -m
(
	bash test/deb.sh --no-install --outdir "$LOGDIR/deb" >"$LOGDIR/deb.log" 2>&1 </dev/null
	echo $? >"$LOGDIR/deb.rc"
) &
deb_pid=$!
set +m

# ---------------------------------------------------------------------------
make_args=(PG_CONFIG="$PG_CONFIG")
if [ "$strict" -eq 1 ]; then
	make_args+=(PG_CFLAGS="-Werror${PG_CFLAGS:+ $PG_CFLAGS}")
	heading "Build (strict: PG_CFLAGS=-Werror${PG_CFLAGS:+ $PG_CFLAGS})"
	# Rebuild everything so that -Werror sees every file.
	make "${make_args[@]}" clean >/dev/null || abort "make clean failed"
else
	[ -n "${PG_CFLAGS:-}" ] && make_args+=(PG_CFLAGS="$PG_CFLAGS")
	heading "Build"
fi
make -j"$JOBS" "${make_args[@]}" || abort "build failed"

heading "Exported symbols (test/symbols.sh)"
if bash test/symbols.sh bloomfilter.so; then
	passed=$((passed + 1))
else
	failed=$((failed + 1))
	status=1
fi

heading "Code shape (test/shape.py: the files of src/ stack, none too long)"
if python3 test/shape.py; then
	passed=$((passed + 1))
else
	failed=$((failed + 1))
	status=1
fi

# The package built in the background: installed, CREATE EXTENSION in a
# fresh cluster, removed again (dpkg -r), so that the suite below tests the
# tree's own build.
heading "Debian package (test/deb.sh: dpkg-buildpackage, dpkg -i, CREATE EXTENSION, dpkg -r)"
wait "$deb_pid"
deb_pid=
cat "$LOGDIR/deb.log"
if [ "$(cat "$LOGDIR/deb.rc" 2>/dev/null || echo 1)" -eq 0 ] &&
	as_root bash test/deb.sh --install-only --outdir "$LOGDIR/deb"; then
	passed=$((passed + 1))
else
	failed=$((failed + 1))
	status=1
fi

heading "Install"
as_root make "${make_args[@]}" install || abort "make install failed"
if compgen -G "test/t/*.pl" >/dev/null; then
	echo "TAP tests (test/t) started in the background; their results come last"
	start_tap
fi

# The Citus cluster and the versions in MATRIX_TAP and MATRIX_BACKGROUND,
# in the background from here on (each in its own copy of the tree, built
# against its own server), beside the TAP tests: started before the tree's
# build, their builds made it, and so the TAP tests, start minutes later.
heading "Started in the background: Citus, PostgreSQL ${MATRIX_TAP// / and } with their TAP tests, PostgreSQL ${MATRIX_BACKGROUND// / and }"
echo "test/citus/run.sh started in the background; its results come before the TAP tests"
set -m
(
	bash test/citus/run.sh >"$LOGDIR/citus.log" 2>&1 </dev/null
	echo $? >"$LOGDIR/citus.rc"
) &
citus_pid=$!
set +m
for v in $matrix_versions; do
	in_background "$v" && [ -f "$matrix_dir/pg-$v.tar.gz" ] || continue
	if has_tap "$v"; then
		echo "PostgreSQL $v (test/matrix.sh --tap) started in the background; its results come before the TAP tests"
	else
		echo "PostgreSQL $v (test/matrix.sh) started in the background; its results come before the TAP tests"
	fi
	set -m
	run_matrix "$v" >/dev/null &
	matrix_pid[$v]=$!
	set +m
done

# ---------------------------------------------------------------------------
heading "Regression tests (pg_virtualenv make installcheck, PostgreSQL $pg_major)"
rm -rf results regression.diffs regression.out output_iso
# TAP tests run in their own step below (they need a non-root user).
# pg_virtualenv takes the first port no server listens on; another one
# started on it in the meantime (a test run beside this one) leaves its
# cluster unable to start: it tries again, on a port free by then.
for attempt in 1 2 3; do
	pg_virtualenv -t -v "$pg_major" make "${make_args[@]}" TAP_TESTS= installcheck 2>&1 |
		tee "$LOGDIR/regress.log"
	rc=${PIPESTATUS[0]}
	[ "$rc" -ne 0 ] && grep -q '^Error: Port conflict' "$LOGDIR/regress.log" || break
	echo "run-tests.sh: pg_virtualenv's port was taken before its cluster started; again"
	sleep $((RANDOM % 5 + 1))
done
read -r p f < <(count_regress "$LOGDIR/regress.log")
passed=$((passed + p))
failed=$((failed + f))
if [ "$rc" -ne 0 ]; then
	status=1
	for diffs in regression.diffs output_iso/regression.diffs; do
		if [ -s "$diffs" ]; then
			heading "$diffs"
			cat "$diffs"
		fi
	done
	# make or the cluster failed without reporting a failed test
	[ "$f" -eq 0 ] && failed=$((failed + 1))
fi

# ---------------------------------------------------------------------------
# The other supported major versions (started in the background above for
# those in MATRIX_TAP, run here for the others).
for v in $matrix_versions; do
	if [ ! -f "$matrix_dir/pg-$v.tar.gz" ]; then
		heading "PostgreSQL $v: skipped: no ${MATRIX_DIR:-../shared/pg}/pg-$v.tar.gz"
	elif [ -z "${matrix_pid[$v]:-}" ]; then
		heading "Build (-Werror) and regression tests on PostgreSQL $v (test/matrix.sh)"
		if [ "$v" = "${SOAK_MAJOR:-17}" ]; then
			# its build stays for the soak's second run (SOAK_PG_CONFIG2)
			soak_workdir=$(mktemp -d "${TMPDIR:-/tmp}/bloomfilter-soak.XXXXXX")
			run_matrix "$v" --workdir "$soak_workdir" --keep
			export SOAK_PG_CONFIG2=$soak_workdir/pg-$v/bin/pg_config
		else
			run_matrix "$v"
		fi
		count_matrix "$v"
	fi
done

# ---------------------------------------------------------------------------
# Eight concurrent writers on 16 filters for 10 s (pgbench, the four
# patterns of test/load), then the check that no committed key was lost and
# that every filter is exactly the filter of its logged keys.
heading "Load: 8 writers, no lost key (test/load/run.sh -T 10 -c 8)"
if PG_CONFIG="$PG_CONFIG" bash test/load/run.sh -T 10 -c 8 -j 2; then
	passed=$((passed + 1))
else
	failed=$((failed + 1))
	status=1
fi

# ---------------------------------------------------------------------------
# A minute of test/soak's random mix (seeded by the date: a failure replays
# from the command it prints): half on the distribution's server, half on
# 17 (built from MATRIX_DIR's tarball into a temporary directory).
heading "Soak: 30 s on 15 and 30 s on 17 of a random mix on a primary and a hot standby (test/soak/suite.sh)"
. test/soak/suite.sh
if run_soak "$PG_CONFIG"; then
	passed=$((passed + 1))
else
	failed=$((failed + 1))
	status=1
fi
[ -n "$soak_workdir" ] && rm -rf "$soak_workdir"

# ---------------------------------------------------------------------------
# Every input that ever crashed the fuzzer, and the seed corpus, replayed
# through the decoders of the PostgreSQL-free core under ASan and UBSan.
heading "Fuzzer regression inputs (test/fuzz/run.sh --replay)"
if bash test/fuzz/run.sh --replay; then
	passed=$((passed + 1))
else
	failed=$((failed + 1))
	status=1
fi

# ---------------------------------------------------------------------------
# A real Citus cluster (coordinator and two workers) from the prebuilt
# PostgreSQL 18 tarball next to the repository; it says "skipped" without it.
heading "Citus (test/citus/run.sh, run in the background since the install)"
wait "$citus_pid"
citus_pid=
cat "$LOGDIR/citus.log"
rc=$(cat "$LOGDIR/citus.rc" 2>/dev/null || echo 1)
read -r p f < <(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$LOGDIR/citus.log" | tail -1)
passed=$((passed + ${p:-0}))
failed=$((failed + ${f:-0}))
if [ "$rc" -ne 0 ]; then
	status=1
	[ "${f:-0}" -eq 0 ] && failed=$((failed + 1))
fi

# ---------------------------------------------------------------------------
for v in $matrix_versions; do
	[ -n "${matrix_pid[$v]:-}" ] || continue
	if has_tap "$v"; then
		heading "Build (-Werror), regression and TAP tests on PostgreSQL $v (test/matrix.sh --tap, run in the background since the install)"
	else
		heading "Build (-Werror) and regression tests on PostgreSQL $v (test/matrix.sh, run in the background since the install)"
	fi
	wait "${matrix_pid[$v]}"
	unset "matrix_pid[$v]"
	cat "$LOGDIR/matrix-$v.log"
	count_matrix "$v"
done

# ---------------------------------------------------------------------------
report_tap
[ "$failed" -gt 0 ] && status=1
exit "$status"
