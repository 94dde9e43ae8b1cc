#!/bin/bash
#
# test/fuzz/run.sh: build and run the libFuzzer target over the bloom
# decoders (test/fuzz/fuzz_decode.c) on the PostgreSQL-free core.
#
#   test/fuzz/run.sh [SECONDS [DIR...]]
#                                  fuzz for SECONDS (default 60), starting
#                                  from a copy of test/fuzz/corpus and of the
#                                  inputs in the DIRs (an earlier run's
#                                  grown corpus, say)
#   test/fuzz/run.sh --replay      run every input in test/fuzz/regressions
#                                  and test/fuzz/corpus once (no libFuzzer);
#                                  fails while a regression input still fails
#   test/fuzz/run.sh --coverage [DIR...]
#                                  line coverage of the PostgreSQL-free core
#                                  (src/bloom_*.c in $CORE) over the corpus (and DIRs)
#   test/fuzz/run.sh --corpus      regenerate test/fuzz/corpus
#
# Environment: FUZZ_WORK (work directory, default /tmp/bloomfilter-fuzz; the
# grown corpus and any crashing input are left there), FUZZ_MAX_LEN (default
# 4096).
#
# Exits non-zero on any crash, sanitizer report (ASan, UBSan), failed check,
# timeout, or allocation above the declared maximum.  The machine may be
# shared: run long sessions under nice.

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${FUZZ_WORK:-/tmp/bloomfilter-fuzz}
max_len=${FUZZ_MAX_LEN:-4096}

CORE="$root/src/bloom_sizing.c $root/src/bloom_bits.c $root/src/bloom_unique.c $root/src/bloom_format.c"
CFLAGS="-g -O1 -fno-omit-frame-pointer -Wall -Wextra -I$root/src"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all"

die() { echo "run.sh: $*" >&2; exit 2; }

# clang with the libFuzzer and sanitizer runtimes (Debian: clang,
# libclang-rt-14-dev); installed when missing, which needs root.
need_clang() {
	local probe="$work/probe"
	mkdir -p "$work"
	if command -v clang >/dev/null 2>&1; then
		printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void) d; (void) n; return 0; }\n' > "$probe.c"
		if clang -fsanitize=fuzzer,address,undefined "$probe.c" -o "$probe" >/dev/null 2>&1; then
			return 0
		fi
	fi
	[ "$(id -u)" = 0 ] || die "clang with libFuzzer is missing; install the Debian packages clang and libclang-rt-14-dev"
	echo "run.sh: installing clang and libclang-rt-14-dev"
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends clang libclang-rt-14-dev >/dev/null ||
		die "apt-get install clang libclang-rt-14-dev failed"
	clang -fsanitize=fuzzer,address,undefined "$probe.c" -o "$probe" >/dev/null 2>&1 ||
		die "clang cannot build a libFuzzer target even after installing libclang-rt-14-dev"
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

case "${1:-}" in
--corpus)
	need_clang
	clang $CFLAGS "$here/gen_corpus.c" $CORE -lm -o "$work/gen_corpus"
	rm -f "$here"/corpus/*
	mkdir -p "$here/corpus"
	"$work/gen_corpus" "$here/corpus"
	echo "run.sh: wrote $(ls "$here/corpus" | wc -l) seeds to test/fuzz/corpus ($(du -sk "$here/corpus" | cut -f1) kB)"
	;;

--replay)
	# a plain program: gcc's sanitizers do where clang is not installed
	mkdir -p "$work"
	cc=gcc
	command -v clang >/dev/null 2>&1 && cc=clang
	$cc $CFLAGS $SAN "$here/replay.c" "$here/fuzz_decode.c" $CORE -lm -o "$work/replay"
	fails=0
	n=0
	# each regression input in its own process, so that all are reported
	for f in "$here"/regressions/*; do
		[ -f "$f" ] && [ "$(basename "$f")" != README.md ] || continue
		n=$((n + 1))
		if { "$work/replay" -t 10 "$f"; } > "$work/replay.log" 2>&1; then
			echo "run.sh: ok    regressions/$(basename "$f")"
		else
			fails=$((fails + 1))
			why=$(grep -m 1 -E 'runtime error|ERROR: AddressSanitizer|TIMEOUT|check failed|allocation of' "$work/replay.log" || tail -n 1 "$work/replay.log")
			echo "run.sh: FAIL  regressions/$(basename "$f"): $why"
		fi
	done
	if "$work/replay" -t 10 "$here/corpus" > "$work/replay.log" 2>&1; then
		echo "run.sh: ok    corpus ($(tail -n 1 "$work/replay.log" | sed 's/^replay: //'))"
	else
		fails=$((fails + 1))
		tail -n 20 "$work/replay.log"
		echo "run.sh: FAIL  corpus, on the last input listed above"
	fi
	if [ "$fails" != 0 ]; then
		echo "run.sh: REPLAY FAILED: $fails of $((n + 1)) (regression inputs, then the corpus)"
		exit 1
	fi
	echo "run.sh: replay OK: $n regression inputs and the corpus"
	;;

--coverage)
	shift
	command -v llvm-profdata >/dev/null && command -v llvm-cov >/dev/null ||
		die "llvm-profdata and llvm-cov are needed (Debian: llvm)"
	need_clang
	clang $CFLAGS -fprofile-instr-generate -fcoverage-mapping \
		"$here/replay.c" "$here/fuzz_decode.c" $CORE -lm -o "$work/replay-cov"
	rm -f "$work"/cov-*.profraw
	LLVM_PROFILE_FILE="$work/cov-%p.profraw" "$work/replay-cov" "$here/corpus" "$@" > "$work/coverage.log"
	llvm-profdata merge -o "$work/cov.profdata" "$work"/cov-*.profraw
	llvm-cov report "$work/replay-cov" -instr-profile="$work/cov.profdata" \
		$CORE "$root/src/bloom.h"
	echo "run.sh: per-line report: llvm-cov show $work/replay-cov -instr-profile=$work/cov.profdata $root/src/bloom_format.c"
	;;

''|[0-9]*)
	secs=${1:-60}
	[[ "$secs" =~ ^[0-9]+$ ]] || die "usage: run.sh [SECONDS [DIR...]] | --replay | --coverage [DIR...] | --corpus"
	[ $# -gt 0 ] && shift
	need_clang
	clang $CFLAGS -fsanitize=fuzzer $SAN "$here/fuzz_decode.c" $CORE -lm -o "$work/fuzz_decode"

	# Fuzz a copy: libFuzzer adds what it finds to its first corpus
	# directory.  Extra DIRs (perhaps an earlier $work/corpus) are merged in
	# first, since that directory is emptied here.
	rm -rf "$work/corpus.new" "$work/artifacts"
	mkdir -p "$work/corpus.new" "$work/artifacts"
	cp "$here"/corpus/* "$work/corpus.new/"
	for d in "$@"; do
		[ -d "$d" ] || die "no such directory: $d"
		find "$d" -maxdepth 1 -type f -exec cp {} "$work/corpus.new/" \;
	done
	rm -rf "$work/corpus"
	mv "$work/corpus.new" "$work/corpus"
	echo "run.sh: fuzzing for ${secs}s from $(ls "$work/corpus" | wc -l) inputs, log in $work/fuzz.log"
	status=0
	"$work/fuzz_decode" -max_total_time="$secs" -max_len="$max_len" \
		-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=64 \
		-print_final_stats=1 -artifact_prefix="$work/artifacts/" \
		"$work/corpus" > "$work/fuzz.log" 2>&1 || status=$?

	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/fuzz.log" | tail -n 1)
	rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$work/fuzz.log" | tail -n 1)
	last=$(grep -E '^#[0-9]+' "$work/fuzz.log" | tail -n 1 || true)
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
	corp=$(sed -n 's/.* corp: \([^ ]*\).*/\1/p' <<<"$last")
	crashes=$(ls "$work/artifacts" | wc -l)

	echo "run.sh: command:   $work/fuzz_decode -max_total_time=$secs -max_len=$max_len -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=64 -print_final_stats=1 -artifact_prefix=$work/artifacts/ $work/corpus"
	echo "run.sh: time:      ${secs}s"
	echo "run.sh: execs:     ${execs:-?} (${rate:-?}/s), peak RSS ${rss:-?} MB"
	echo "run.sh: coverage:  cov ${cov:-?} edges, ft ${ft:-?} features, corpus ${corp:-?} (units/size)"
	echo "run.sh: artifacts: $crashes in $work/artifacts"
	if [ "$status" != 0 ] || [ "$crashes" != 0 ]; then
		grep -E 'ERROR: |runtime error|check failed|allocation of|SUMMARY|Test unit written' "$work/fuzz.log" | head -n 20 || true
		echo "run.sh: FAILED (status $status): copy the input into test/fuzz/regressions/ and see $work/fuzz.log"
		exit 1
	fi
	echo "run.sh: OK, no crash, no sanitizer report, no allocation above the maximum"
	echo "run.sh: grown corpus in $work/corpus (line coverage: run.sh --coverage $work/corpus)"
	;;

*)
	die "usage: run.sh [SECONDS [DIR...]] | --replay | --coverage [DIR...] | --corpus"
	;;
esac
