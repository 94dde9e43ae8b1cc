#!/bin/bash
#
# test/bench/writers-device.sh: test/bench/writers.sh on the 16-core machine
# (../shared/device/README.md), with 1, 4, 8 and 16 writers.  Here, from the
# project root: bash ../shared/device/prepare.sh (packs PostgreSQL 18 with
# this checkout's build into .devcarry/); there, with .devcarry carried:
#   bash test/bench/writers-device.sh [writers.sh arguments]
# The report goes to $OUT/writers.txt (OUT=/tmp/o locally: SHARED_BUFFERS=512MB
# OUT=/tmp/o bash test/bench/writers-device.sh --secs 2 tries it on 2 cores).

set -u
cd "$(dirname "$0")/../.." || exit 1
. .devcarry/lib.sh
# fsync off, as the issue's figures were taken
q -c "ALTER SYSTEM SET fsync = off" -c "SELECT pg_reload_conf()" >/dev/null
# (a copy the server's user can read, wherever the checkout is)
cp test/bench/writers.sh "$B/writers.sh" && chmod a+r "$B/writers.sh"
as env PG_BIN=$P TMPDIR=$B bash "$B/writers.sh" --clients "1 4 8 16" "$@" | tee "$O/writers.txt"
stop_pg
