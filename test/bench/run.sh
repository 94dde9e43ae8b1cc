#!/usr/bin/env bash
#
# test/bench/run.sh: the bloomfilter benchmark suite.
#
#   bash test/bench/run.sh [--scale small|default|full] [--out FILE] [--no-build]
#                          [--mem-keys "N ..."] [--aj-regimes "E:B:P ..."]
#
# Builds and installs the extension (test/deps.sh, make, make install, in a
# copy of the tree; skip with --no-build), runs the core microbenchmark
# (test/bench/micro.c), then initdb's and starts a throwaway cluster with the
# binaries of PG_CONFIG (its own port and socket), makes the data once, runs
# every workload (ours and its baseline alternately, a warm-up and then at
# least 3 timed rounds), and prints Markdown tables of medians and ratios on
# stdout (progress goes to stderr). --out FILE also writes them to FILE.
#
#   --scale small     a smoke run, a few minutes
#   --scale default   about 10 minutes on 2 cores (29 with the load average
#                     at 10 to 17, the anti-join 13 of them): the issue's
#                     sizes except 2M probe and build rows (not 10M),
#                     pgbench 5 s (not 20), and the anti-join's 10M existing
#                     keys against batches of 1M and 200k (not 10M and 50M
#                     against 1M)
#   --scale full      the sizes of the issue: 10M probe rows, pgbench 20 s,
#                     5 rounds, the memory of builds over 100M keys, and the
#                     anti-join against 50M existing keys; over an hour (the
#                     anti-join alone took 64 minutes with the load average
#                     at 8 to 19), ~4 GB RAM, ~9 GB disk
#   --mem-keys LIST   the distinct keys of test/bench/memory.sh's builds
#                     (small: 1000000; default: 10000000; full: 10000000
#                     100000000), e.g. "10000000 100000000" at default scale
#   --aj-regimes LIST the anti-join's regimes (test/bench/antijoin.sh), each
#                     EXISTING:BATCH:PERCENT: existing keys, incoming keys,
#                     percent of these that exist.  Default: existing 10 and
#                     50 times the batch, 1% and 10% present, with 1M
#                     existing keys (small), 10M (default), or 10M and 50M
#                     plus 10M against 100k (full)
#   --huge-pages      reserve huge pages for the cluster's shared buffers
#                     (vm.nr_hugepages, put back on exit) and start it with
#                     huge_pages=on.  Without them each parallel worker maps
#                     the shared buffers it reads 4 kB at a time, which on a
#                     VM can cost more than its share of the scan: the
#                     parallel rows then measure the page faults.  By default
#                     the cluster takes huge pages only if some are reserved
#                     already (huge_pages=try).
#
# Needs root (packages, make install, a cluster run as user postgres, reading
# the backend's /proc entry through pg_read_file as its superuser).
# Environment: PG_CONFIG (default pg_config: the distribution's server;
# installing into a server under /usr takes /tmp/bloomfilter-pgNN.lock);
# BENCH_PORT, the cluster's port (default: the first free one from 55432).
# Another server: PG_CONFIG=/path/pg-18/bin/pg_config (e.g. one unpacked by
# test/matrix.sh --keep).
# Not part of test/run-tests.sh: timings are reported, never asserted.

set -euo pipefail

usage() {
	sed -n '3,47p' "$0" | sed 's/^# \{0,1\}//'
}

scale=default
out=
mem_keys=
aj_regimes=
build=1
inside=0
huge=0
while [ $# -gt 0 ]; do
	case "$1" in
		--scale) scale=${2:?--scale needs small, default or full}; shift 2 ;;
		--scale=*) scale=${1#--scale=}; shift ;;
		--out) out=${2:?--out needs a file name}; shift 2 ;;
		--out=*) out=${1#--out=}; shift ;;
		--no-build) build=0; shift ;;
		--huge-pages) huge=1; shift ;;
		--mem-keys) mem_keys=${2:?--mem-keys needs a list of key counts}; shift 2 ;;
		--mem-keys=*) mem_keys=${1#--mem-keys=}; shift ;;
		--aj-regimes) aj_regimes=${2:?--aj-regimes needs EXISTING:BATCH:PERCENT ...}; shift 2 ;;
		--aj-regimes=*) aj_regimes=${1#--aj-regimes=}; shift ;;
		--inside) inside=1; shift ;;	# internal: run against the started cluster
		-h | --help) usage; exit 0 ;;
		*) echo "run.sh: unknown argument: $1" >&2; usage >&2; exit 2 ;;
	esac
done

if [ "$(id -u)" -ne 0 ]; then
	echo "run.sh: run as root (packages, make install, a cluster owned by postgres)" >&2
	exit 1
fi
[ -n "$out" ] && out=$(realpath -m -- "$out")
BENCH=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$BENCH/../.." && pwd)
PG_CONFIG=${PG_CONFIG:-pg_config}

export BENCH_T0=${BENCH_T0:-$(date +%s)}
log() {
	printf '[bench %4ds] %s\n' $(($(date +%s) - BENCH_T0)) "$*" >&2
}

n() {		# 10000 -> 10k, 2000000 -> 2M
	if [ $(($1 % 1000000)) -eq 0 ]; then echo "$(($1 / 1000000))M"
	elif [ $(($1 % 1000)) -eq 0 ]; then echo "$(($1 / 1000))k"
	else echo "$1"; fi
}

# ---------------------------------------------------------------------------
# sizes
# ---------------------------------------------------------------------------
small_keys=10000			# the small probe filters
kb_keys=700					# about 1 KB of bits: the single-key baseline
nparts=100					# per-partition filters: big_keys / nparts keys each
acc_keys=1000000			# accuracy and space: filters at full capacity
acc_absent=1000000			# absent keys probed for the false-positive rate
# the issue's anti-join regimes: 10M and 50M existing keys, 1M incoming, and
# 10M against 100k, where a nested loop is the fastest plain plan
full_aj_regimes="10000000:1000000:1 10000000:1000000:10 50000000:1000000:1 50000000:1000000:10 10000000:100000:1"
case "$scale" in
	small)
		probe_rows=200000 big_keys=1000000 huge_keys=3000000
		scale_aj_regimes="1000000:100000:1 1000000:100000:10 1000000:20000:1 1000000:20000:10"
		runs=3 pgbench_secs=2 micro_sizes="10000 1000000"
		shared_buffers=1GB scale_mem_keys="1000000" ;;
	default)
		probe_rows=2000000 big_keys=10000000 huge_keys=100000000
		scale_aj_regimes="10000000:1000000:1 10000000:1000000:10 10000000:200000:1 10000000:200000:10"
		runs=3 pgbench_secs=5 micro_sizes="10000 1000000 10000000"
		shared_buffers=2GB scale_mem_keys="10000000" ;;
	full)
		probe_rows=10000000 big_keys=10000000 huge_keys=100000000
		scale_aj_regimes=$full_aj_regimes
		runs=5 pgbench_secs=20 micro_sizes="10000 1000000 100000000"
		shared_buffers=4GB scale_mem_keys="10000000 100000000" ;;
	*)
		echo "run.sh: --scale must be small, default or full" >&2
		exit 2 ;;
esac
huge_note=
[ "$huge_keys" -ne 100000000 ] && huge_note=" (issue: 100M)"
# the builds over 100M keys take minutes and 0.8 GB of temporary files:
# --scale full, or asked for with --mem-keys
mem_keys=${mem_keys:-$scale_mem_keys}
aj_regimes=${aj_regimes:-$scale_aj_regimes}
for k in $mem_keys; do
	case "$k" in
		*[!0-9]* | '') echo "run.sh: --mem-keys takes key counts, e.g. \"10000000 100000000\"" >&2; exit 2 ;;
	esac
done
single_name="single-key probe: pgbench -M prepared, 1 client, ${pgbench_secs} s, mean latency, $(n "$huge_keys")-key filter${huge_note} (baseline: 1 KB filter)"
header_bytes=$(sed -n 's/^#define[[:space:]]*BLOOM_HEADER_SIZE[[:space:]]*\([0-9][0-9]*\).*/\1/p' "$ROOT/src/bloom.h")
: "${header_bytes:?cannot find BLOOM_HEADER_SIZE in src/bloom.h}"

psql_vars=(
	-v probe_rows="$probe_rows" -v small_keys="$small_keys" -v big_keys="$big_keys"
	-v huge_keys="$huge_keys" -v huge_note="$huge_note" -v kb_keys="$kb_keys"
	-v nparts="$nparts"
	-v acc_keys="$acc_keys" -v acc_absent="$acc_absent" -v runs="$runs"
	-v header_bytes="$header_bytes" -v single_name="$single_name"
)

# ---------------------------------------------------------------------------
# inside the throwaway cluster (PGHOST, PGPORT, PGUSER and PATH set below)
# ---------------------------------------------------------------------------
if [ "$inside" -eq 1 ]; then
	: "${BENCH_TMP:?}"
	cd "$ROOT"
	bpsql() {
		psql -X -q -v ON_ERROR_STOP=1 "${psql_vars[@]}" "$@"
	}

	log "cluster: $(psql -XAtq -c 'SELECT version()')"
	bpsql -f "$BENCH/lib.sql"
	log "making data (scale $scale)"
	bpsql -f "$BENCH/data.sql" >&2
	log "timed workloads"
	bpsql -At -f "$BENCH/workloads.sql" | sed 's/^/  /' >&2
	log "anti-join pre-check: regimes $aj_regimes (test/bench/antijoin.sh)"
	bash "$BENCH/antijoin.sh" --regimes "$aj_regimes" --rounds "$runs" --keep \
		>"$BENCH_TMP/antijoin.md"

	# single-key probe: one prepared query per transaction, pgbench.  The
	# round trip between pgbench and its backend dominates, and on a small
	# VM it swings 5x with where the scheduler puts the two processes; so
	# both run on the same CPU (new backends inherit the postmaster's CPU
	# mask), which makes it steady.
	log "single-key probe (pgbench, ${pgbench_secs} s per run)"
	pm_pid=$(head -1 "$(psql -XAtq -c 'SHOW data_directory')/postmaster.pid")
	pin_cpu=$(($(nproc) - 1))
	pin=()
	if command -v taskset >/dev/null && taskset -p -c "$pin_cpu" "$pm_pid" >/dev/null; then
		pin=(taskset -c "$pin_cpu")
	fi
	latency() {		# filter id, seconds -> mean latency in ms
		local res
		res=$("${pin[@]}" pgbench -n -M prepared -c 1 -j 1 -T "$2" -D id="$1" \
			-D maxkey=$((2 * huge_keys)) -f "$BENCH/single_probe.sql" 2>&1)
		if ! grep -q '^number of failed transactions: 0 ' <<<"$res"; then
			echo "run.sh: pgbench failed:" >&2
			echo "$res" >&2
			return 1
		fi
		sed -n 's/^latency average = \([0-9.]*\) ms.*/\1/p' <<<"$res"
	}
	record() {		# variant, round, ms
		echo "INSERT INTO bench.runs VALUES (:'single_name', '$1', $2, $3, NULL, NULL, '(pgbench)', NULL);" | bpsql
	}
	huge_id=$(psql -XAtq -c "SELECT id FROM bench_filters WHERE name = 'int_huge'")
	kb_id=$(psql -XAtq -c "SELECT id FROM bench_filters WHERE name = 'int_1kb'")
	latency "$huge_id" 1 >/dev/null		# warm-up
	latency "$kb_id" 1 >/dev/null
	for r in $(seq 1 "$runs"); do
		if [ $((r % 2)) -eq 1 ]; then order="ours baseline"; else order="baseline ours"; fi
		for v in $order; do
			if [ "$v" = ours ]; then id=$huge_id; else id=$kb_id; fi
			ms=$(latency "$id" "$pgbench_secs")
			[ -n "$ms" ] || { echo "run.sh: pgbench printed no latency" >&2; exit 1; }
			record "$v" "$r" "$ms"
			log "  single-key probe, $v, round $r: $ms ms"
		done
	done
	[ ${#pin[@]} -gt 0 ] && taskset -p -c "0-$pin_cpu" "$pm_pid" >/dev/null
	if [ ${#pin[@]} -gt 0 ]; then
		echo "INSERT INTO bench.sizes (what, value) VALUES ('single-key probe', 'pgbench and its backend pinned to CPU $pin_cpu');" | bpsql
	fi

	# peak memory: a fresh connection per query
	log "peak backend memory"
	mem() {		# label, settings, query (one line, no semicolon)
		bpsql -v what="$1" >/dev/null <<-EOF
			SELECT bench.vm('VmHWM') AS h0 \gset
			$2
			$3 \g /dev/null
			INSERT INTO bench.mem (what, start_hwm_kb, hwm_kb, shmem_kb, file_kb)
			VALUES (:'what', :h0, bench.vm('VmHWM'), bench.vm('RssShmem'), bench.vm('RssFile'));
		EOF
	}
	serial="SET max_parallel_workers_per_gather = 0;"
	rows=$(psql -XAtq -c "SELECT to_char($probe_rows, 'FM999,999,999')")
	mem "build: bloom_agg(text key), $rows rows, serial" "$serial" \
		"SELECT octet_length(bloom_agg(key)::bytea) FROM bench_probe_text"
	mem "build baseline: sum(hashtext(key)), $rows rows" "$serial" \
		"SELECT sum(hashtext(key)) FROM bench_probe_text"
	mem "build: bloom_agg(bigint key), $rows rows, serial" "$serial" \
		"SELECT octet_length(bloom_agg(key)::bytea) FROM bench_probe_int"
	mem "build baseline: sum(hashint8(key)), $rows rows" "$serial" \
		"SELECT sum(hashint8(key)) FROM bench_probe_int"
	# the anti-join's regime with the most incoming and present keys
	IFS='|' read -r aj_label aj_i aj_e aj_f <<<"$(psql -XAtq -c "SELECT format('%s existing, %s incoming, %s%% present', bench_aj.n(existing), bench_aj.n(batch), pct::float8), 'bench_aj.' || incoming_t, 'bench_aj.' || existing_t, 'bench_aj.' || filter_t FROM bench_aj.regimes ORDER BY batch DESC, pct DESC, existing LIMIT 1")"
	for wm in 4MB 256MB; do
		mem "anti-join pre-check (README form, OFFSET 0), $aj_label, work_mem $wm" "$serial SET work_mem = '$wm';" \
			"SELECT count(*) FROM $aj_i i WHERE NOT bloom_contains((SELECT f FROM $aj_f), i.key) OR NOT EXISTS (SELECT 1 FROM $aj_e e WHERE e.key = i.key OFFSET 0)"
		mem "anti-join pre-check without OFFSET 0, $aj_label, work_mem $wm" "$serial SET work_mem = '$wm';" \
			"SELECT count(*) FROM $aj_i i WHERE NOT bloom_contains((SELECT f FROM $aj_f), i.key) OR NOT EXISTS (SELECT 1 FROM $aj_e e WHERE e.key = i.key)"
		mem "anti-join plain NOT EXISTS, $aj_label, work_mem $wm" "$serial SET work_mem = '$wm';" \
			"SELECT count(*) FROM $aj_i i WHERE NOT EXISTS (SELECT 1 FROM $aj_e e WHERE e.key = i.key)"
	done
	mem "probe: bigint keys, $(n "$huge_keys")-key filter, $rows rows" "$serial" \
		"SELECT count(*) FROM bench_probe_int WHERE bloom_contains((SELECT f FROM bench_filters WHERE name = 'int_huge'), key)"

	# the memory of serial builds against their filters (issue 12): one
	# build per fresh connection, unsized and sized, work_mem 4MB and 64MB;
	# 3 rounds at every scale (a 100M-key build takes about a minute)
	log "build memory against the filter's size: $mem_keys keys (test/bench/memory.sh)"
	bash "$BENCH/memory.sh" --keys "$mem_keys" --work-mem "4MB 64MB" \
		--rounds 3 >"$BENCH_TMP/memory.md"

	psql -XAtq -c "SELECT format('- %s: %s', what, value) FROM bench.sizes ORDER BY ord" \
		>"$BENCH_TMP/sizes.md"
	bpsql -At -f "$BENCH/report.sql" >"$BENCH_TMP/results.md"
	log "done inside the cluster"
	exit 0
fi

# ---------------------------------------------------------------------------
# outside: build, microbenchmark, cluster, report
# ---------------------------------------------------------------------------
cd "$ROOT"
pg_major=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
bindir=$("$PG_CONFIG" --bindir)
pkglibdir=$("$PG_CONFIG" --pkglibdir)

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
BENCH_TMP=$(mktemp -d "${TMPDIR:-/tmp}/bloomfilter-bench.XXXXXX")
chmod 755 "$BENCH_TMP"
export BENCH_TMP
as_pg() {
	runuser -u postgres -- "$@"
}
hugepages_before=
stop_cluster() {
	if [ -f "$BENCH_TMP/data/postmaster.pid" ]; then
		as_pg "$bindir/pg_ctl" -D "$BENCH_TMP/data" -m fast -w stop >/dev/null 2>&1 || true
	fi
	[ -n "$hugepages_before" ] && sysctl -q -w "vm.nr_hugepages=$hugepages_before" || true
	rm -rf "$BENCH_TMP"
}
trap stop_cluster EXIT

if [ "$build" -eq 1 ]; then
	log "dependencies, build, install (PostgreSQL $pg_major, $pkglibdir)"
	bash test/deps.sh >&2
	# built in a copy: objects left by a build for another server would
	# otherwise be linked as they are
	mkdir "$BENCH_TMP/src"
	tar -C "$ROOT" --exclude=./.git --exclude=./results --exclude=./tmp_check \
		--exclude=./output_iso --exclude='*.o' --exclude='*.so' --exclude='*.bc' -cf - . |
		tar -C "$BENCH_TMP/src" -xf -
	make -C "$BENCH_TMP/src" -s -j"$(nproc 2>/dev/null || echo 2)" PG_CONFIG="$PG_CONFIG" >&2
	case "$pkglibdir" in
		/usr/*)		# the distribution's server, shared with every test run
			flock "/tmp/bloomfilter-pg$pg_major.lock" \
				make -C "$BENCH_TMP/src" -s PG_CONFIG="$PG_CONFIG" install >&2 ;;
		*)
			make -C "$BENCH_TMP/src" -s PG_CONFIG="$PG_CONFIG" install >&2 ;;
	esac
	rm -rf "$BENCH_TMP/src"
fi

log "core microbenchmark: $micro_sizes keys"
cc -O2 -Wno-stringop-truncation -I src -o "$BENCH_TMP/micro" \
	"$BENCH/micro.c" src/bloom_sizing.c src/bloom_bits.c src/bloom_unique.c \
	src/bloom_format.c -lm
"$BENCH_TMP/micro" -r "$runs" -H $micro_sizes >"$BENCH_TMP/micro.md"

log "throwaway cluster (PostgreSQL $pg_major from $bindir, shared_buffers $shared_buffers)"
settings=(
	"shared_buffers=$shared_buffers"
	"jit=off"						# no compile time in the timings
	"autovacuum=off"				# data is vacuumed once, after loading
	"max_wal_size=8GB"
	"checkpoint_timeout=1h"
	"synchronous_commit=off"
	"maintenance_work_mem=1GB"
	"work_mem=4MB"
	"max_worker_processes=8"
	"max_parallel_workers=8"
	"max_parallel_workers_per_gather=2"
)
if [ "$huge" -eq 1 ]; then
	# shared_buffers and about 10% for the rest of shared memory, in 2 MB pages
	sb_mb=$(( $(echo "$shared_buffers" | sed 's/GB$//') * 1024 ))
	hugepages_before=$(cat /proc/sys/vm/nr_hugepages)
	sysctl -q -w "vm.nr_hugepages=$(( hugepages_before + sb_mb * 11 / 10 / 2 ))"
	settings+=("huge_pages=on")
else
	settings+=("huge_pages=try")
fi
# Other clusters may be running (test runs, other benchmarks): use a port
# nobody listens on and a socket directory of our own.
free_port() {
	local p
	for p in $(seq 55432 55731); do
		ss -Hltn "sport = :$p" 2>/dev/null | grep -q . && continue
		[ -e "/var/run/postgresql/.s.PGSQL.$p" ] && continue
		[ -e "/tmp/.s.PGSQL.$p" ] && continue
		echo "$p"
		return 0
	done
	return 1
}
if [ -n "${BENCH_PORT:-}" ]; then
	PGPORT=$BENCH_PORT
else
	PGPORT=$(free_port) || { echo "run.sh: no free port in 55432-55731" >&2; exit 1; }
fi
mkdir "$BENCH_TMP/sock" "$BENCH_TMP/data"
chown postgres: "$BENCH_TMP/sock" "$BENCH_TMP/data"
as_pg "$bindir/initdb" -D "$BENCH_TMP/data" -A trust -E UTF8 --locale=C.UTF-8 \
	>"$BENCH_TMP/initdb.log" 2>&1 ||
	{ echo "run.sh: initdb failed" >&2; cat "$BENCH_TMP/initdb.log" >&2; exit 1; }
for s in "${settings[@]}"; do
	echo "$s"
done | as_pg tee -a "$BENCH_TMP/data/postgresql.auto.conf" >/dev/null
as_pg "$bindir/pg_ctl" -D "$BENCH_TMP/data" -w -l "$BENCH_TMP/sock/server.log" \
	-o "-p $PGPORT -k $BENCH_TMP/sock -c listen_addresses=''" start >/dev/null ||
	{ echo "run.sh: the server did not start" >&2; cat "$BENCH_TMP/sock/server.log" >&2; exit 1; }
# huge_pages_status is PostgreSQL 17's
huge_status=$("$bindir/psql" -XAtq -h "$BENCH_TMP/sock" -p "$PGPORT" -U postgres -d postgres \
	-c "SHOW huge_pages_status" 2>/dev/null || echo "not reported before PostgreSQL 17")
PATH="$bindir:$PATH" PGHOST="$BENCH_TMP/sock" PGPORT="$PGPORT" PGUSER=postgres PGDATABASE=postgres \
	bash "$BENCH/run.sh" --inside --scale "$scale" --mem-keys "$mem_keys" --aj-regimes "$aj_regimes" >&2

# ---------------------------------------------------------------------------
# the report
# ---------------------------------------------------------------------------
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git -C "$ROOT" status --porcelain -- src sql Makefile 2>/dev/null)" ]; then
	commit="$commit + uncommitted changes in src/ sql/ Makefile"
fi
# --no-build measures whatever is installed, which need not be this tree
[ "$build" -eq 0 ] && commit="the build installed in $pkglibdir (--no-build; this tree is at $commit)"
model=$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -1)
mem_gb=$(awk '/^MemTotal/ { printf "%.0f", $2 / 1048576 }' /proc/meminfo)

diffs=()
[ "$probe_rows" -ne 10000000 ] && diffs+=("$(n "$probe_rows") probe and build rows, not 10M")
[ "$huge_keys" -ne 100000000 ] && diffs+=("a $(n "$huge_keys")-key filter, not 100M")
[ "$aj_regimes" != "$full_aj_regimes" ] && diffs+=("anti-join regimes $aj_regimes, not $full_aj_regimes")
[ "$pgbench_secs" -ne 20 ] && diffs+=("pgbench $pgbench_secs s, not 20 s")
[ "$big_keys" -ne 10000000 ] && diffs+=("$(n "$big_keys")-key filters and $nparts × $(n $((big_keys / nparts))) per partition, not 10M and 100 × 100k")

{
	echo "# bloomfilter benchmarks, scale $scale"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); total run time $((SECONDS / 60)) min $((SECONDS % 60)) s"
	echo "- machine: nproc $(nproc), ${model:-unknown CPU}, ${mem_gb} GB RAM"
	echo "- $("$PG_CONFIG" --version), bloomfilter at $commit"
	echo "- cluster: initdb'd by run.sh, run as user postgres; settings $(printf '%s, ' "${settings[@]}" | sed 's/, $//'); huge pages for shared memory: $huge_status"
	echo "- load average (1, 5, 15 min) at start: $load_start; at end: $(cut -d' ' -f1-3 /proc/loadavg) (anything else running on the machine shows up in the timings)"
	echo "- each workload: a warm-up, then $runs timed rounds alternating ours and baseline; medians; times from EXPLAIN (ANALYZE, TIMING OFF) (single-key probe: pgbench's mean latency)"
	echo
	echo "## Results: $(n "$probe_rows") probe and build rows, filters of $(n "$small_keys"), $(n "$big_keys") and $(n "$huge_keys") keys, $nparts × $(n $((big_keys / nparts))) per-partition, anti-join regimes (existing:incoming:percent present) $aj_regimes, pgbench $pgbench_secs s"
	echo
	if [ ${#diffs[@]} -gt 0 ]; then
		echo "Smaller than the issue's sizes (those are --scale full): $(printf '%s; ' "${diffs[@]}" | sed 's/; $//')."
	else
		echo "The issue's sizes."
	fi
	echo
	cat "$BENCH_TMP/sizes.md"
	echo
	cat "$BENCH_TMP/results.md"
	echo
	cat "$BENCH_TMP/antijoin.md"
	echo
	cat "$BENCH_TMP/memory.md"
	echo
	echo "## Core microbenchmark (outside PostgreSQL; median of $runs; cc -O2; 8-byte integer keys, XXH3-64 then bloom_set_hash / bloom_test_hash; filters sized for 1%)"
	echo
	cat "$BENCH_TMP/micro.md"
} >"$BENCH_TMP/report.md"

cat "$BENCH_TMP/report.md"
if [ -n "$out" ]; then
	cp "$BENCH_TMP/report.md" "$out"
	log "written to $out"
fi
