#!/usr/bin/env bash
#
# test/soak/suite.sh: the short soak run of the test suite.
#
#   . test/soak/suite.sh && run_soak [PG_CONFIG]     (from test/run-tests.sh)
#   bash test/soak/suite.sh [PG_CONFIG]              (alone)
#
# Runs test/soak/soak.py for SOAK_SECONDS (default 60) seconds of steps with
# seed SOAK_SEED (default: today's date, UTC, as YYYYMMDD: one seed a day,
# the same for every run that day, so a failure in CI replays from its
# date), against the server of PG_CONFIG (default $PG_CONFIG, else
# pg_config), which must have the extension installed.  Returns soak.py's
# exit code: 0 when every check held.  The seed is printed first; a
# failure prints the step, the operation, the check and the replay command.
# Works as root (the servers run as postgres) and as any other user.

run_soak() {
	local pg_config=${1:-${PG_CONFIG:-pg_config}}
	local seed=${SOAK_SEED:-$(date -u +%Y%m%d)}
	local seconds=${SOAK_SECONDS:-60}
	local dir
	dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	# Debian's psycopg2 is for Debian's python3, whatever python3 is first on PATH
	/usr/bin/python3 "$dir/soak.py" --seconds "$seconds" --seed "$seed" \
		--pg-config "$pg_config" </dev/null
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -uo pipefail
	run_soak "$@"
fi
