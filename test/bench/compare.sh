#!/usr/bin/env bash
#
# test/bench/compare.sh: the aggregates' speed at two revisions, in one run.
#
#   PG_CONFIG=/path/pg-18/bin/pg_config bash test/bench/compare.sh [options] REV_A REV_B
#
#   --rows N          rows of bigint keys and of text keys (default 2000000;
#                     10000000 is the issue's build size)
#   --rounds R        timed rounds, at least 3 (default 9)
#   --filters N       filters for bloom_union_agg (default 1000), of
#   --filter-keys K   capacity K each (default 10000: about 12 kB, TOASTed)
#   --only REGEX      only the workloads whose label matches (grep -E), e.g.
#                     'text$' for the serial text builds
#   --port P          the throwaway cluster's port (default: a free one)
#   --out FILE        also write the report to FILE
#
# Reads as "B against A": give the older revision first; every ratio is
# B / A (above 1: B is slower).  Run as root, against a private server
# (e.g. one kept by test/matrix.sh --keep): the script installs each
# revision into PG_CONFIG's directories in turn, and leaves B installed.
#
#   1. builds each revision (git archive, make, make install DESTDIR=...)
#      into a directory of its own under a temporary directory;
#   2. initdb's and starts a throwaway cluster with PG_CONFIG's binaries, as
#      user postgres (jit off, autovacuum off, work_mem 4MB), and makes the
#      data once: N distinct bigint keys (1..N) and N md5 text keys, and
#      the union's filters, each sized for K keys and holding K/10 of them
#      (their union: all K), kept as bytea;
#   3. per round, per workload, A and B one after the other (which goes
#      first alternates, ABBA...): to switch revision, removes every
#      installed bloomfilter file, installs that revision's .so, control
#      file and scripts, DROP/CREATE EXTENSION, casts the stored filters
#      back to bloom; each run is a session of its own: a warm-up that
#      keeps the md5 of the result's bytes, then one timed run, EXPLAIN
#      (ANALYZE, TIMING OFF)'s Execution Time;
#   4. prints per workload the median, min and max of each revision, B / A
#      (of the medians, and the median of the rounds' B / A), the median CPU
#      time of the backend and its workers, the parallel workers launched,
#      and whether both built the same bytes.
#
# Workloads: bloom_agg(key) and bloom_agg(key, N, 0.01), bigint and text
# keys, serial (max_parallel_workers_per_gather = 0) and with 2 workers
# (setup and tuple costs 0, parallel_workers = 2 on the tables; a run that
# launched fewer is flagged); bloom_union_agg(f) over the filters, serial
# and with 2 workers.
# Timings are reported, never asserted.

set -euo pipefail

rows=2000000
rounds=9
nfilters=1000
filter_keys=10000
port=
only=
out=
revs=()
while [ $# -gt 0 ]; do
	case "$1" in
		--rows) rows=$2; shift 2 ;;
		--rounds) rounds=$2; shift 2 ;;
		--filters) nfilters=$2; shift 2 ;;
		--filter-keys) filter_keys=$2; shift 2 ;;
		--only) only=$2; shift 2 ;;
		--port) port=$2; shift 2 ;;
		--out) out=$(realpath -m -- "$2"); shift 2 ;;
		-h | --help) sed -n '3,46p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		-*) echo "compare.sh: unknown option: $1" >&2; exit 2 ;;
		*) revs+=("$1"); shift ;;
	esac
done
if [ ${#revs[@]} -ne 2 ] || [ "$rounds" -lt 3 ]; then
	echo "usage: PG_CONFIG=... bash test/bench/compare.sh [--rows N] [--rounds R>=3] REV_A REV_B" >&2
	exit 2
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "compare.sh: run as root (installs into PG_CONFIG's tree, a cluster owned by postgres)" >&2
	exit 1
fi
PG_CONFIG=${PG_CONFIG:?set PG_CONFIG to a private server\'s pg_config}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
bindir=$("$PG_CONFIG" --bindir)
pkglibdir=$("$PG_CONFIG" --pkglibdir)
sharedir=$("$PG_CONFIG" --sharedir)
case "$pkglibdir" in
	/usr/*) echo "compare.sh: $pkglibdir is a shared server's; use a private one" >&2; exit 1 ;;
esac

log() { printf '[compare %4ds] %s\n' "$SECONDS" "$*" >&2; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/bloomfilter-compare.XXXXXX")
chmod 755 "$TMP"
as_pg() { runuser -u postgres -- "$@"; }
cleanup() {
	if [ -f "$TMP/data/postmaster.pid" ]; then
		as_pg "$bindir/pg_ctl" -D "$TMP/data" -m fast -w stop >/dev/null 2>&1 || true
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# --- 1. build each revision into $TMP/{A,B}/stage -------------------------
names=(A B)
commits=()
for i in 0 1; do
	c=$(git -C "$ROOT" rev-parse --verify "${revs[$i]}^{commit}")
	commits+=("$c")
	d="$TMP/${names[$i]}"
	mkdir -p "$d/src" "$d/stage"
	log "building ${names[$i]} = ${revs[$i]} (${c:0:10})"
	git -C "$ROOT" archive "$c" | tar -x -C "$d/src"
	make -C "$d/src" -s -j"$(nproc)" PG_CONFIG="$PG_CONFIG" >"$d/build.log" 2>&1 ||
		{ cat "$d/build.log" >&2; exit 1; }
	make -C "$d/src" -s PG_CONFIG="$PG_CONFIG" install DESTDIR="$d/stage" >>"$d/build.log" 2>&1 ||
		{ cat "$d/build.log" >&2; exit 1; }
done

# Every installed bloomfilter file out, then this revision's in: the two
# revisions' scripts differ, and a file left by the other would be used.
owner=$(stat -c %U "$pkglibdir")
install_rev() {		# A or B
	local f dest
	rm -f "$pkglibdir/bloomfilter.so" "$sharedir/extension/bloomfilter.control" \
		"$sharedir"/extension/bloomfilter--*.sql "$pkglibdir/bitcode/bloomfilter.index.bc"
	rm -rf "$pkglibdir/bitcode/bloomfilter"
	while IFS= read -r f; do
		dest=${f#"$TMP/$1/stage"}
		case "$dest" in
			"$pkglibdir"/* | "$sharedir"/*) ;;
			*) echo "compare.sh: make install wrote $dest, outside the server's tree" >&2; exit 1 ;;
		esac
		install -D -m "$(stat -c %a "$f")" -o "$owner" "$f" "$dest"
	done < <(find "$TMP/$1/stage" -type f)
}

# --- 2. cluster and data ----------------------------------------------------
free_port() {
	local p
	for p in $(seq 55732 56031); do
		ss -Hltn "sport = :$p" 2>/dev/null | grep -q . && continue
		[ -e "/tmp/.s.PGSQL.$p" ] && continue
		echo "$p"
		return 0
	done
	return 1
}
[ -n "$port" ] || port=$(free_port) || { echo "compare.sh: no free port" >&2; exit 1; }
if [ "$rows" -gt 2000000 ]; then sb=3GB; else sb=1GB; fi
mkdir "$TMP/sock" "$TMP/data"
chown postgres: "$TMP/sock" "$TMP/data"
as_pg "$bindir/initdb" -D "$TMP/data" -A trust -E UTF8 --locale=C.UTF-8 >"$TMP/initdb.log" 2>&1 ||
	{ cat "$TMP/initdb.log" >&2; exit 1; }
settings="shared_buffers=$sb jit=off autovacuum=off work_mem=4MB max_worker_processes=8 max_parallel_workers=8 max_wal_size=8GB synchronous_commit=off"
tr ' ' '\n' <<<"$settings" | as_pg tee -a "$TMP/data/postgresql.auto.conf" >/dev/null
as_pg "$bindir/pg_ctl" -D "$TMP/data" -w -l "$TMP/sock/server.log" \
	-o "-p $port -k $TMP/sock -c listen_addresses=''" start >/dev/null ||
	{ cat "$TMP/sock/server.log" >&2; exit 1; }
export PATH="$bindir:$PATH" PGHOST="$TMP/sock" PGPORT="$port" PGUSER=postgres PGDATABASE=postgres
q() { psql -XAtq -v ON_ERROR_STOP=1 "$@"; }

log "data: $rows rows of bigint and of text keys, $nfilters filters of $filter_keys keys"
install_rev B
q <<-EOF
	SET client_min_messages = warning;
	SET max_parallel_workers_per_gather = 0;
	CREATE SCHEMA cmp;
	CREATE TABLE cmp.runs (rev text, round int, workload int, ms float8, cpu_ms float8,
	                       workers int, md5 text);
	-- CPU time: this backend's (ns, /proc/self/schedstat) plus that of the
	-- postmaster's children reaped meanwhile, i.e. the parallel workers,
	-- which the query waits for (clock ticks, /proc/PID/stat cutime, cstime)
	CREATE FUNCTION cmp.cpu_ms() RETURNS float8 LANGUAGE sql AS \$\$
	    SELECT split_part(pg_read_file('/proc/self/schedstat'), ' ', 1)::float8 / 1e6
	           + (split_part(st, ' ', 16)::float8 + split_part(st, ' ', 17)::float8) * 1000 / $(getconf CLK_TCK)
	    FROM pg_read_file('/proc/' || split_part(pg_read_file('postmaster.pid'), E'\n', 1) || '/stat') st
	\$\$;
	CREATE FUNCTION cmp.explain(q text, OUT ms float8, OUT cpu_ms float8, OUT workers int)
	LANGUAGE plpgsql AS \$\$
	DECLARE j jsonb;
	BEGIN
	    cpu_ms := cmp.cpu_ms();
	    EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON, FORMAT JSON) ' || q INTO j;
	    cpu_ms := cmp.cpu_ms() - cpu_ms;
	    ms := (j -> 0 ->> 'Execution Time')::float8;
	    SELECT coalesce(sum(w::text::int), 0) INTO workers
	    FROM jsonb_path_query(j, 'strict \$.**."Workers Launched"') AS w;
	END \$\$;
	CREATE UNLOGGED TABLE cmp_int WITH (parallel_workers = 2) AS
	    SELECT g::bigint AS key FROM generate_series(1, $rows) g;
	CREATE UNLOGGED TABLE cmp_text WITH (parallel_workers = 2) AS
	    SELECT md5(g::text) AS key FROM generate_series(1, $rows) g;
	-- kept as bytea: DROP EXTENSION leaves them
	CREATE EXTENSION bloomfilter;
	-- filter i: the K/10 keys from i * K/10 on, modulo K (the union, all K)
	CREATE UNLOGGED TABLE cmp_filters_raw AS
	    SELECT i AS id, bloom_agg(((i * ($filter_keys / 10) + j) % $filter_keys)::bigint,
	                              $filter_keys, 0.01)::bytea AS f
	    FROM generate_series(0, $nfilters - 1) i, generate_series(0, $filter_keys / 10 - 1) j
	    GROUP BY 1;
	DROP EXTENSION bloomfilter;
	VACUUM (FREEZE, ANALYZE) cmp_int, cmp_text, cmp_filters_raw;
EOF

# --- 3. workloads, alternately ----------------------------------------------
ser="SET max_parallel_workers_per_gather = 0;"
par="SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;"
wl=()		# label|workers expected|settings|aggregate call|table
for t in int text; do
	if [ $t = int ]; then ty=bigint; else ty=text; fi
	for form in "bloom_agg(key)" "bloom_agg(key, $rows, 0.01)"; do
		wl+=("$form, $ty|0|$ser|$form|cmp_$t" "$form, $ty, 2 workers|2|$par|$form|cmp_$t")
	done
done
wl+=("bloom_union_agg(f), $nfilters filters|0|$ser|bloom_union_agg(f)|cmp_filters"
	"bloom_union_agg(f), $nfilters filters, 2 workers|2|$par|bloom_union_agg(f)|cmp_filters")
if [ -n "$only" ]; then
	for i in "${!wl[@]}"; do
		grep -qE -- "$only" <<<"${wl[$i]%%|*}" || unset 'wl[i]'
	done
	[ ${#wl[@]} -gt 0 ] || { echo "compare.sh: --only $only matches no workload" >&2; exit 2; }
fi

cur=
switch_to() {		# A or B: its files, a new extension, the filters cast back
	[ "$cur" = "$1" ] && return 0
	install_rev "$1"
	q <<-EOF
		SET client_min_messages = warning;
		DROP TABLE IF EXISTS cmp_filters;
		DROP EXTENSION IF EXISTS bloomfilter CASCADE;
		CREATE EXTENSION bloomfilter;
		CREATE UNLOGGED TABLE cmp_filters WITH (parallel_workers = 2) AS
		    SELECT id, f::bloom AS f FROM cmp_filters_raw;
		VACUUM ANALYZE cmp_filters;
	EOF
	cur=$1
}
measure() {		# A or B, round, workload index
	local label nw set call tab
	IFS='|' read -r label nw set call tab <<<"${wl[$3]}"
	q <<-EOF
		$set
		SELECT md5(($call)::bytea) AS md5 FROM $tab \gset
		INSERT INTO cmp.runs SELECT '$1', $2, $3, ms, cpu_ms, workers, :'md5'
		FROM cmp.explain('SELECT octet_length(($call)::bytea) FROM $tab');
	EOF
}
# A and B side by side per workload, the first of the pair alternating
# (ABBA...: one install per pair)
for r in $(seq 1 "$rounds"); do
	for i in "${!wl[@]}"; do
		if [ $(((r + i) % 2)) -eq 1 ]; then order="A B"; else order="B A"; fi
		for v in $order; do
			switch_to "$v"
			measure "$v" "$r" "$i"
		done
	done
	for v in A B; do
		log "  round $r, $v: $(q -c "SELECT string_agg(round(ms)::text, ' ' ORDER BY workload) FROM cmp.runs WHERE rev = '$v' AND round = $r") ms"
	done
done
switch_to B		# leave B installed

# --- 4. report --------------------------------------------------------------
labels=$(for i in "${!wl[@]}"; do
	IFS='|' read -r label nw _ <<<"${wl[$i]}"
	printf '%s\t%s\t%s\n' "$i" "$label" "$nw"
done)
report=$TMP/report.md
{
	echo "## bloom_agg and bloom_union_agg: B = ${revs[1]} (${commits[1]:0:10}) against A = ${revs[0]} (${commits[0]:0:10})"
	echo
	echo "- $("$PG_CONFIG" --version), $(nproc) CPUs, load at end $(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- $rows distinct keys per build, $nfilters filters of $filter_keys keys for the union; $rounds rounds, A and B side by side per workload (which goes first alternating), a warm-up before every timed run; cluster settings: $settings"
	echo "- wall: EXPLAIN (ANALYZE, TIMING OFF) Execution Time, ms, median (min–max) over the rounds; B / A: of the medians, and the median of each round's B / A (A and B ran back to back)"
	echo "- CPU: the backend's CPU time (/proc/self/schedstat) plus its parallel workers' (the postmaster's cutime + cstime), ms, median, to a few ms (the kernel's tick); less sensitive than wall time to other load on the machine"
	echo
	echo "| workload | A wall (ms) | B wall (ms) | B / A | B / A by round | A CPU (ms) | B CPU (ms) | B / A CPU | workers launched | same bytes |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---|---|"
	q -F $'\t' <<-EOF
		CREATE TEMP TABLE labels (workload int, label text, nw int);
		COPY labels FROM STDIN;
		$labels
		\.
		CREATE FUNCTION pg_temp.r(x float8) RETURNS numeric LANGUAGE sql
		    AS 'SELECT round(x::numeric, CASE WHEN x < 100 THEN 1 ELSE 0 END)';
		WITH s AS (
		    SELECT workload, rev,
		           percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS med,
		           min(ms) AS lo, max(ms) AS hi,
		           percentile_cont(0.5) WITHIN GROUP (ORDER BY cpu_ms) AS cpu,
		           min(workers) AS wmin, max(workers) AS wmax,
		           count(DISTINCT md5) AS nmd5, min(md5) AS md5
		    FROM cmp.runs GROUP BY 1, 2),
		p AS (
		    SELECT a.workload, percentile_cont(0.5) WITHIN GROUP (ORDER BY b.ms / nullif(a.ms, 0)) AS ratio
		    FROM cmp.runs a JOIN cmp.runs b USING (workload, round)
		    WHERE a.rev = 'A' AND b.rev = 'B' GROUP BY 1)
		SELECT format('| %s | %s (%s–%s) | %s (%s–%s) | %s | %s | %s | %s | %s | %s | %s |',
		              l.label,
		              pg_temp.r(a.med), pg_temp.r(a.lo), pg_temp.r(a.hi),
		              pg_temp.r(b.med), pg_temp.r(b.lo), pg_temp.r(b.hi),
		              to_char(b.med / nullif(a.med, 0), 'FM0.00'), to_char(p.ratio, 'FM0.00'),
		              pg_temp.r(a.cpu), pg_temp.r(b.cpu), to_char(b.cpu / nullif(a.cpu, 0), 'FM0.00'),
		              CASE WHEN a.wmin = a.wmax AND b.wmin = b.wmax AND a.wmin = b.wmin
		                   THEN a.wmin::text
		                   ELSE format('A %s–%s, B %s–%s', a.wmin, a.wmax, b.wmin, b.wmax) END
		              || CASE WHEN least(a.wmin, b.wmin) < l.nw THEN ' **fewer than planned**' ELSE '' END,
		              CASE WHEN a.nmd5 = 1 AND b.nmd5 = 1 AND a.md5 = b.md5 THEN 'yes' ELSE '**no**' END)
		FROM labels l JOIN s a ON a.workload = l.workload AND a.rev = 'A'
		     JOIN s b ON b.workload = l.workload AND b.rev = 'B'
		     JOIN p ON p.workload = l.workload
		ORDER BY l.workload;
	EOF
	echo
	echo "Every timed run, by round (workload number in table order from 0: wall ms / CPU ms):"
	echo
	echo '```'
	q -c "SELECT rev || ' ' || workload || ': ' || string_agg(round(ms) || '/' || round(cpu_ms), ' ' ORDER BY round) FROM cmp.runs GROUP BY rev, workload ORDER BY workload, rev"
	echo '```'
} >"$report"
cat "$report"
[ -z "$out" ] || cp "$report" "$out"
