#!/usr/bin/env bash
#
# test/tap-failures.sh: what a failed TAP script said, for a CI log that
# keeps only its output (the logs themselves stay on the CI machine).
#
#   bash test/tap-failures.sh PROVE_OUTPUT LOG_DIR
#
# For every script that PROVE_OUTPUT's summary lists as failed
# ("name.pl (Wstat: ..."), prints from LOG_DIR (tmp_check/log):
#   - its regress_log's failed checks with their diagnostics, and its last
#     lines (a script that died says why there);
#   - the PANIC, FATAL, ERROR and TRAP lines of the servers it started, and
#     the postmaster's reports of children that died.
# Bounded: a few dozen lines per script and per server.

set -uo pipefail

out=$1
logdir=$2
[ -f "$out" ] && [ -d "$logdir" ] || exit 0

sed -n 's/^\(.*\/\)\{0,1\}\([^ /]*\)\.pl *(Wstat: .*/\2/p' "$out" | sort -u |
	while read -r script; do
		log="$logdir/regress_log_$script"
		echo "---- $script: failed checks ($log)"
		if [ -f "$log" ]; then
			grep -n -A 12 '^not ok' "$log" | head -n 80
			echo "---- $script: last lines of its log"
			tail -n 25 "$log"
		fi
		for server in "$logdir/${script}"_*.log; do
			[ -f "$server" ] || continue
			echo "---- $script: $(basename "$server"): errors"
			grep -E 'PANIC|FATAL|ERROR|TRAP|was terminated|exited with exit code' "$server" |
				tail -n 30
		done
	done
exit 0
