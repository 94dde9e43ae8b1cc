#!/usr/bin/env bash
#
# test/bench/writers.sh: concurrent bulk writers (issue 40).  N pgbench
# clients each run 1,000-row INSERT ... SELECT transactions of random bigint
# keys into a table with
#   btree     a btree on the key,
#   bf        a bloomfilter index with default options (grows from empty),
#   bf_sized  a bloomfilter index WITH (capacity = 20000000),
#   btree_bf  the btree and the sized bloomfilter index,
# for each N of --clients; prints tps per case and each case's ratio to the
# btree's in the same run, and samples pg_stat_activity's wait events of the
# clients (every 50 ms) during the runs at the largest N.  Then a load of
# --load-rows rows in one INSERT ... SELECT into an empty table with a
# default bloomfilter index against one with a btree, each followed by a
# VACUUM (times and their ratio).  Timings are reported, never asserted.
#
#   bash test/bench/writers.sh [--secs S] [--clients "1 2 4 8"]
#        [--load-rows N] [--servers "NAME=PORT NAME=PORT ..."] [--db NAME]
#
# Connects where psql and pgbench do (PGHOST, PGPORT, PGUSER, PGDATABASE;
# the bin folder of PG_BIN or PATH); the database must allow CREATE
# EXTENSION bloomfilter.  The server should run with fsync off.  --servers
# compares builds: every run is made on each server in turn (A B A B ...,
# same PGHOST, each its own port), and each server's ratios are its own.
# Defaults: 5 s per run, clients "1 2 4 8", 2,000,000 rows: about 3
# minutes on 2 cores for one server.

set -euo pipefail

secs=5
clients="1 2 4 8"
load_rows=2000000
servers=
while [ $# -gt 0 ]; do
	case "$1" in
		--secs) secs=$2; shift 2 ;;
		--clients) clients=$2; shift 2 ;;
		--load-rows) load_rows=$2; shift 2 ;;
		--servers) servers=$2; shift 2 ;;
		--db) export PGDATABASE=$2; shift 2 ;;
		-h | --help) sed -n '3,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "writers.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
[ -n "$servers" ] || servers="this=${PGPORT:-5432}"
bin=${PG_BIN:+$PG_BIN/}
dir=$(mktemp -d "${TMPDIR:-/tmp}/bloomfilter-writers.XXXXXX")
chmod 755 "$dir"
trap 'rm -rf "$dir"' EXIT
cases="btree bf bf_sized btree_bf"
maxc=$(echo "$clients" | tr ' ' '\n' | sort -n | tail -1)

q() {					# q PORT SQL...
	local port=$1
	shift
	PGPORT=$port "${bin}psql" -X -q -At -v ON_ERROR_STOP=1 "$@"
}

# the table of a case, made anew (so that bf grows from empty every run);
# the checkpoint before the indexes: the previous run's dirty pages are
# written out before this run, and the pages CREATE INDEX wrote need no
# full-page image in it (as in a run that follows the build, or one long
# against checkpoint_timeout: a sized index's first write to each of its
# pages after a checkpoint logs the whole page)
make_table() {			# make_table PORT CASE
	local idx=
	case "$2" in
		btree) idx="CREATE INDEX ON w_keys (k);" ;;
		bf) idx="CREATE INDEX ON w_keys USING bloomfilter (k);" ;;
		bf_sized) idx="CREATE INDEX ON w_keys USING bloomfilter (k) WITH (capacity = 20000000);" ;;
		btree_bf) idx="CREATE INDEX ON w_keys (k);
			CREATE INDEX ON w_keys USING bloomfilter (k) WITH (capacity = 20000000);" ;;
		none) ;;
	esac
	q "$1" <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomfilter;
DROP TABLE IF EXISTS w_keys;
CREATE TABLE w_keys (k bigint NOT NULL);
CHECKPOINT;
$idx
SQL
}

cat >"$dir/bulk.sql" <<'EOF'
INSERT INTO w_keys SELECT (random() * 1e15)::bigint FROM generate_series(1, 1000);
EOF

# sample the wait events of pgbench's backends until $dir/stop exists
sample() {				# sample PORT FILE
	local port=$1 out=$2
	while [ ! -e "$dir/stop" ]; do
		q "$port" -c "SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU')
			FROM pg_stat_activity WHERE application_name = 'pgbench' AND state = 'active'" \
			>>"$out" 2>/dev/null || true
		sleep 0.05
	done
}

declare -A tps
for name_port in $servers; do
	make_table "${name_port#*=}" none
done
for c in $clients; do
	for t in $cases; do
		for name_port in $servers; do
			name=${name_port%%=*}
			port=${name_port#*=}
			make_table "$port" "$t"
			rm -f "$dir/stop"
			if [ "$c" = "$maxc" ]; then
				sample "$port" "$dir/waits.$name.$t" &
				spid=$!
			fi
			r=$(PGPORT=$port "${bin}pgbench" -n -M prepared -f "$dir/bulk.sql" \
				-c "$c" -j "$c" -T "$secs" 2>&1 | awk '/^tps/ {print int($3); exit}')
			if [ "$c" = "$maxc" ]; then
				touch "$dir/stop"
				wait "$spid" || true
			fi
			tps[$name.$t.$c]=${r:-0}
		done
	done
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

echo "== concurrent bulk writers: 1,000-row INSERT ... SELECT transactions, ${secs} s per run"
for name_port in $servers; do
	name=${name_port%%=*}
	echo "-- server $name: tps (ratio to the btree's in the same run)"
	printf '%8s' writers
	for t in $cases; do printf '%22s' "$t"; done
	echo
	for c in $clients; do
		printf '%8s' "$c"
		for t in $cases; do
			printf '%22s' "${tps[$name.$t.$c]} ($(ratio "${tps[$name.$t.$c]}" "${tps[$name.btree.$c]}"))"
		done
		echo
	done
	first=$(echo "$clients" | awk '{print $1}')
	echo "   $maxc writers against $first, bf: $(ratio "${tps[$name.bf.$maxc]}" "${tps[$name.bf.$first]}") x;" \
		"btree: $(ratio "${tps[$name.btree.$maxc]}" "${tps[$name.btree.$first]}") x;" \
		"bloomfilter beside a btree costs $(awk -v a="${tps[$name.btree_bf.$maxc]}" -v b="${tps[$name.btree.$maxc]}" \
			'BEGIN { if (b > 0) printf "%.0f", 100 * (1 - a / b); else print "-" }') % of the btree's tps"
	echo "-- server $name: wait events of the $maxc writers, share of samples"
	for t in $cases; do
		f="$dir/waits.$name.$t"
		[ -s "$f" ] || continue
		printf '   %-9s' "$t"
		sort "$f" | uniq -c | sort -rn | head -6 |
			awk -v n="$(wc -l <"$f")" '{ printf " %s %.0f%%", $2, 100 * $1 / n }'
		echo
	done
done

# a load into an empty table: INSERT ... SELECT (with its commit), then VACUUM
if [ "$load_rows" -gt 0 ]; then
	echo "== a load of $load_rows rows into an empty table, ms (ratio to the btree's)"
	declare -A ms
	for t in btree bf; do
		for name_port in $servers; do
			name=${name_port%%=*}
			port=${name_port#*=}
			make_table "$port" "$t"
			out=$(q "$port" <<SQL
\timing on
INSERT INTO w_keys SELECT (random() * 1e15)::bigint FROM generate_series(1, $load_rows);
VACUUM w_keys;
SQL
)
			ms[$name.$t.insert]=$(echo "$out" | awk '/^Time:/ {print $2}' | sed -n 1p)
			ms[$name.$t.vacuum]=$(echo "$out" | awk '/^Time:/ {print $2}' | sed -n 2p)
		done
	done
	for name_port in $servers; do
		name=${name_port%%=*}
		bi=${ms[$name.btree.insert]} bv=${ms[$name.btree.vacuum]}
		fi_=${ms[$name.bf.insert]} fv=${ms[$name.bf.vacuum]}
		echo "-- server $name: btree insert $bi, +vacuum $(awk -v a="$bi" -v b="$bv" 'BEGIN{printf "%.0f", a+b}');" \
			"bf insert $fi_ ($(ratio "$fi_" "$bi")), +vacuum $(awk -v a="$fi_" -v b="$fv" 'BEGIN{printf "%.0f", a+b}')" \
			"($(awk -v a="$fi_" -v b="$fv" -v c="$bi" -v d="$bv" 'BEGIN{printf "%.2f", (a+b)/(c+d)}'))"
	done
fi
for name_port in $servers; do
	q "${name_port#*=}" -c "DROP TABLE IF EXISTS w_keys"
done
