#!/usr/bin/env bash
#
# test/bench/memory.sh: the memory of a serial bloom_agg build against the
# size of the filter it returns, side by side in one run (issue 12).
#
#   bash test/bench/memory.sh [--keys "N ..."] [--work-mem "4MB 64MB"]
#                             [--rounds R] [--absent A] [--out FILE]
#
# Against the server that the libpq environment names (PGHOST, PGPORT,
# PGUSER, PGDATABASE; a superuser: peak memory is read from the backend's
# /proc/self/status, as in test/bench/README.md), with bloomfilter
# installable in that database.  run.sh runs it inside its cluster with the
# keys of its scale (small: 1M; default: 10M; full: 10M and 100M).
#
# For each number of distinct keys N (default 10M) and each work_mem
# (default 4MB and 64MB), serial (max_parallel_workers_per_gather = 0), in a
# fresh connection each:
#
#   unsized   bloom_agg(k)
#   sized     bloom_agg(k, N, 0.01), for comparison
#   baseline  sum(hashint8(k)): what generating and hashing the keys costs
#
# over k = 1 .. N (bigint), made by generate_series in the select list of a
# subquery: a ProjectSet node hands the rows one at a time, so no table and
# no tuplestore (a generate_series in FROM would write all N rows to a
# temporary file first).  Each build reports its time (EXPLAIN ANALYZE's
# Execution Time, TIMING OFF), its private peak memory (VmHWM less the
# shared and file pages mapped at the end), the temporary files it wrote
# (pg_stat_database.temp_bytes, which counts each file's size when it is
# deleted, and EXPLAIN's temp blocks written, which counts block rewrites
# too), then builds the same filter again in the same connection (after
# the peak is read) to report its size, hash count and md5, and probes it:
# A absent keys (-1 .. -A, default 1M) for the false-positive rate, and up
# to 1M of its keys, evenly spread, of which every one must be found (a
# false negative stops the run).  R rounds (default 1) alternate the order
# of the variants; the report gives medians.
#
# 100M keys take about 50 s a build on 2 shared cores, 0.8 GB of temporary
# files at a time and 150 to 250 MB of memory; nothing is kept.

set -euo pipefail

keys=10000000
work_mems="4MB 64MB"
rounds=1
absent=1000000
out=
while [ $# -gt 0 ]; do
	case "$1" in
		--keys) keys=$2; shift 2 ;;
		--work-mem) work_mems=$2; shift 2 ;;
		--rounds) rounds=$2; shift 2 ;;
		--absent) absent=$2; shift 2 ;;
		--out) out=$2; shift 2 ;;
		-h | --help) sed -n '3,38p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "memory.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done

q() { psql -XAtq -v ON_ERROR_STOP=1 "$@"; }
log() { echo "[memory] $*" >&2; }

tmp=$(mktemp -d)
cleanup() {
	q -c "DROP SCHEMA IF EXISTS bench_mem CASCADE" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT

q <<-'EOF'
	SET client_min_messages = warning;
	CREATE EXTENSION IF NOT EXISTS bloomfilter;
	DROP SCHEMA IF EXISTS bench_mem CASCADE;
	CREATE SCHEMA bench_mem;
	-- a field of this backend's /proc/self/status, in kB
	CREATE FUNCTION bench_mem.vm(field text) RETURNS bigint
	LANGUAGE sql AS $$
	    SELECT substring(pg_read_file('/proc/self/status')
	                     FROM field || ':\s*(\d+) kB')::bigint
	$$;
	-- execution time and temporary blocks written (the top node counts its
	-- children's too) of one run of a query
	CREATE FUNCTION bench_mem.explain(q text, OUT ms float8, OUT temp_written bigint)
	LANGUAGE plpgsql AS $$
	DECLARE
	    j jsonb;
	BEGIN
	    EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, SUMMARY ON, FORMAT JSON) ' || q INTO j;
	    ms := (j -> 0 ->> 'Execution Time')::float8;
	    temp_written := (j -> 0 -> 'Plan' ->> 'Temp Written Blocks')::bigint;
	END
	$$;
EOF
block=$(q -c "SHOW block_size")

keys_of() {		# n -> the FROM item of its keys
	echo "(SELECT generate_series(1::bigint, $1) AS k) AS s"
}
expr_of() {		# variant, n -> the aggregate
	case "$1" in
		unsized) echo "bloom_agg(k)" ;;
		sized) echo "bloom_agg(k, $2, 0.01)" ;;
		baseline) echo "sum(hashint8(k))" ;;
	esac
}

# One build in a fresh connection: its time, temporary files and peak memory,
# then (unless the baseline) the filter built again, checked and probed.
# Appends a line to runs.tsv, and to filters.tsv on the first round.
measure() {		# n, work_mem, variant, round
	local n=$1 wm=$2 v=$3 r=$4 from expr check present step
	from=$(keys_of "$n")
	expr=$(expr_of "$v" "$n")
	present=$((n < 1000000 ? n : 1000000))
	step=$((n / present))
	if [ "$v" = baseline ]; then
		query="SELECT $expr FROM $from"
		check=
	else
		query="SELECT octet_length(($expr)::bytea) FROM $from"
		# after the peak is read: the same filter again, its size and bytes,
		# false positives among absent keys, false negatives among its keys
		check="SELECT octet_length(f::bytea) AS fbytes, md5(f::bytea) AS md5,
		              i.nhashes AS k, i.design_capacity AS cap,
		              (SELECT count(*) FROM generate_series(1::bigint, $absent) AS g
		               WHERE bloom_contains(f, -g)) AS fp,
		              (SELECT count(*) FROM generate_series(0::bigint, $present - 1) AS g
		               WHERE NOT bloom_contains(f, 1 + g * $step)) AS fn
		       FROM (SELECT $expr AS f FROM $from) AS x, LATERAL bloom_info(f) AS i \\gset
		SELECT pg_stat_force_next_flush() \\gset
		\\echo :fbytes :md5 :k :cap :fp :fn"
		[ "$r" -eq 1 ] || check=
	fi
	q -v query="$query" >"$tmp/one" <<-EOF
		SET max_parallel_workers_per_gather = 0;
		SET jit = off;
		SET work_mem = '$wm';
		SELECT bench_mem.vm('RssAnon') AS anon0 \gset
		SELECT temp_bytes AS t0, temp_files AS f0 FROM pg_stat_database
		WHERE datname = current_database() \gset
		SELECT ms, temp_written FROM bench_mem.explain(:'query') \gset
		SELECT bench_mem.vm('VmHWM') AS hwm, bench_mem.vm('RssShmem') AS shmem,
		       bench_mem.vm('RssFile') AS file \gset
		SELECT pg_stat_force_next_flush() \gset
		-- (the flush happened when the backend went idle before this query)
		SELECT temp_bytes - :t0 AS tbytes, temp_files - :f0 AS tfiles
		FROM pg_stat_database WHERE datname = current_database() \gset
		\echo :ms :temp_written :tbytes :tfiles :hwm :shmem :file :anon0
		$check
	EOF
	read -r ms tw tb tf hwm shm fil anon0 < <(sed -n 1p "$tmp/one")
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
		"$n" "$wm" "$v" "$r" "$ms" "$((tw * block))" "$tb" "$tf" "$hwm" "$shm" "$fil" "$anon0" \
		>>"$tmp/runs.tsv"
	log "$(printf '%s keys, work_mem %s, %s, round %s: %.0f ms, private peak %s kB, temp %s bytes in %s files' \
		"$n" "$wm" "$v" "$r" "$ms" "$((hwm - shm - fil))" "$tb" "$tf")"
	if [ -n "$check" ]; then
		read -r fb md5 k cap fp fn < <(sed -n 2p "$tmp/one")
		if [ "$fn" != 0 ]; then
			echo "memory.sh: $expr over $n keys, work_mem $wm: $fn of $present added keys not found (false negatives)" >&2
			exit 1
		fi
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
			"$n" "$wm" "$v" "$fb" "$md5" "$k" "$cap" "$fp" "$absent" "$present" >>"$tmp/filters.tsv"
		log "  filter $fb bytes, k $k, capacity $cap, $fp false positives among $absent absent keys, none missed among $present added"
	fi
}

: >"$tmp/runs.tsv"
: >"$tmp/filters.tsv"
for n in $keys; do
	for r in $(seq 1 "$rounds"); do
		i=0
		for wm in $work_mems; do
			# alternate which form goes first, by round and by work_mem
			if [ $(((r + i) % 2)) -eq 1 ]; then order="unsized sized"; else order="sized unsized"; fi
			for v in $order; do
				measure "$n" "$wm" "$v" "$r"
			done
			i=$((i + 1))
		done
		measure "$n" "$(echo "$work_mems" | cut -d' ' -f1)" baseline "$r"
	done
done

# ---------------------------------------------------------------------------
# the report
# ---------------------------------------------------------------------------
{
	echo "### Memory of a serial build against its filter (test/bench/memory.sh)"
	echo
	echo "Keys 1 .. N (bigint) from generate_series in a subquery's select list (no table, no tuplestore); serial; a fresh connection per build; medians of $rounds round(s). \"Private peak\" is the backend's VmHWM less the shared and file pages it had mapped at the end (test/bench/README.md); \"at connect\" is its RssAnon before the build. Temporary files: the bytes of the files when deleted (pg_stat_database.temp_bytes) and the blocks written to them, rewrites included (EXPLAIN's temp written). The bound is issue 12's: about twice the final filter, or work_mem where that is larger. False positives: $absent absent keys (-1 .. -$absent) probed in the filter; requested rate 1% (the unsized form's default and the sized form's argument)."
	echo
	echo "| keys | build | work_mem | time (s) | private peak (MB) | at connect (MB) | filter (MB) | peak / filter | ≤ max(2 × filter, work_mem)? | temp files (MB) | temp written (MB) | false positives (rate, ±95%) |"
	echo "|---:|---|---:|---:|---:|---:|---:|---:|:-:|---:|---:|---|"
	awk -F'\t' -v keys="$keys" -v wms="$work_mems" '
		function med(a, m,   i, j, t) {		# median of a[1..m]
			for (i = 2; i <= m; i++)
				for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
			return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
		}
		function mb(b) { return sprintf("%.1f", b / 1048576) }
		function n(v) {		# 10000000 -> 10M
			if (v % 1000000 == 0) return (v / 1000000) "M"
			if (v % 1000 == 0) return (v / 1000) "k"
			return v
		}
		function wm_bytes(s,   v) {
			v = s + 0
			if (s ~ /GB$/) return v * 1073741824
			if (s ~ /MB$/) return v * 1048576
			if (s ~ /kB$/) return v * 1024
			return v * 1024
		}
		FILENAME ~ /filters/ {
			key = $1 SUBSEP $2 SUBSEP $3
			fb[key] = $4; md5[key] = $5; fp[key] = $8; nabs[key] = $9
			next
		}
		{
			key = $1 SUBSEP $2 SUBSEP $3
			c = ++cnt[key]
			ms[key, c] = $5; tw[key, c] = $6; tb[key, c] = $7
			pk[key, c] = ($9 - $10 - $11) * 1024; an[key, c] = $12 * 1024
		}
		END {
			# rows: keys, then unsized, sized, baseline, then work_mem
			nn = split(keys, kk, " "); nw = split(wms, ww, " "); split("unsized sized baseline", vv, " ")
			for (a = 1; a <= nn; a++) for (b = 1; b <= 3; b++) for (d = 1; d <= nw; d++) {
				key = kk[a] SUBSEP ww[d] SUBSEP vv[b]
				if (!(key in cnt)) continue
				split(key, p, SUBSEP); m = cnt[key]
				for (c = 1; c <= m; c++) { a1[c] = ms[key, c]; a2[c] = pk[key, c]; a3[c] = tb[key, c]; a4[c] = tw[key, c]; a5[c] = an[key, c] }
				t = med(a1, m); peak = med(a2, m); tbm = med(a3, m); twm = med(a4, m); anm = med(a5, m)
				build = (p[3] == "unsized") ? "`bloom_agg(k)`" : (p[3] == "sized") ? sprintf("`bloom_agg(k, %s, 0.01)`", p[1]) : "`sum(hashint8(k))` (baseline)"
				if (key in fb) {
					f = fb[key]
					bound = 2 * f; if (wm_bytes(p[2]) > bound) bound = wm_bytes(p[2])
					ratio = sprintf("%.2f", peak / f)
					met = (peak <= bound) ? "yes" : "**no**"
					if (p[3] == "sized") met = met " (not the target)"
					rate = fp[key] / nabs[key]
					fps = sprintf("%d (%.3f%%, ±%.0f%%)", fp[key], 100 * rate, 196 / sqrt(fp[key] > 0 ? fp[key] : 1))
					fmb = mb(f)
				} else {
					ratio = ""; met = ""; fps = ""; fmb = ""
				}
				printf "| %s | %s | %s | %.1f | %s | %s | %s | %s | %s | %s | %s | %s |\n", \
					n(p[1]), build, p[2], t / 1000, mb(peak), mb(anm), fmb, ratio, met, mb(tbm), mb(twm), fps
			}
			# the same filter whatever work_mem and form: the unsized form sizes
			# for the distinct count, which is the capacity of the sized form here
			print ""
			for (a = 1; a <= nn; a++) {
				same = 1; first = ""; all = ""
				for (b = 1; b <= 2; b++) for (d = 1; d <= nw; d++) {
					key = kk[a] SUBSEP ww[d] SUBSEP vv[b]
					if (!(key in md5)) continue
					if (first == "") first = md5[key]
					if (md5[key] != first) same = 0
					all = all " " vv[b] "/" ww[d] ": " md5[key]
				}
				if (first != "")
					printf "- %s keys: the filters of both forms at every work_mem are %s (md5%s).\n", n(kk[a]), same ? "equal byte for byte" : "**not all equal**", same ? " " substr(first, 1, 12) "…" : all
			}
		}' "$tmp/filters.tsv" "$tmp/runs.tsv"
	echo
	echo "Every timed run (s, private peak MB):"
	echo
	awk -F'\t' '{ printf "- %s keys, work_mem %s, %s, round %s: %.2f s, %.1f MB\n", $1, $2, $3, $4, $5 / 1000, ($9 - $10 - $11) / 1024 }' "$tmp/runs.tsv"
} >"$tmp/report.md"

cat "$tmp/report.md"
[ -n "$out" ] && cp "$tmp/report.md" "$out"
exit 0
