#!/usr/bin/env bash
#
# test/demo.sh: build and install bloomfilter, then run test/demo.sql (an
# anti-join pre-check over 2,000,000 keys) in a throwaway cluster.
#
#   bash test/demo.sh
#
# Needs root, or sudo, for installing packages and the extension.
# Environment: PG_CONFIG (default pg_config).

set -euo pipefail

cd "$(dirname "$0")/.."
PG_CONFIG=${PG_CONFIG:-pg_config}

heading() {
	printf '\n==== %s ====\n' "$*"
}

as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo -- "$@"
	else
		echo "demo.sh: '$*' needs root and sudo is not installed" >&2
		return 1
	fi
}

heading "Dependencies"
bash test/deps.sh
pg_major=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')

heading "Build"
make -s -j"$(nproc 2>/dev/null || echo 2)" PG_CONFIG="$PG_CONFIG"
echo "built bloomfilter.so"

heading "Install"
as_root make -s PG_CONFIG="$PG_CONFIG" install
echo "installed into $("$PG_CONFIG" --pkglibdir) and $("$PG_CONFIG" --sharedir)/extension"

heading "Demo: test/demo.sql in a throwaway PostgreSQL $pg_major cluster (pg_virtualenv)"
pg_virtualenv -t -v "$pg_major" psql -X -q -v ON_ERROR_STOP=1 -f test/demo.sql
