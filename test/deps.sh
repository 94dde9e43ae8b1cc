#!/usr/bin/env bash
#
# test/deps.sh: install what bloomfilter needs to build and test on Debian 12
# or Ubuntu, using only the distribution's apt archive.
#
# Installs the distribution's PostgreSQL (server, contrib, server headers
# with PGXS), a C toolchain, the xxHash headers, IPC::Run for the TAP
# tests, Python 3's xxhash for the reference implementation's test and
# psycopg2 for the soak test's driver (test/soak). Does
# nothing (and never touches apt) when everything is already installed, so
# reruns are fast. Needs root; re-executes itself via sudo
# otherwise.

set -euo pipefail

PACKAGES=(
	make
	gcc
	perl                        # prove, for the TAP tests
	postgresql                  # the distribution's server version
	postgresql-contrib          # a metapackage on newer releases
	postgresql-server-dev-all   # pulls postgresql-server-dev-<distro ver>
	libxxhash-dev
	libipc-run-perl
	python3-xxhash              # test/reference, the Python reference (014_reference.pl)
	python3-psycopg2            # test/soak, the randomized soak test's driver
	debhelper                   # test/deb.sh: the Debian package (dpkg-buildpackage, dh --with pgxs_loop)
)

is_installed() {
	[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

missing=()
for pkg in "${PACKAGES[@]}"; do
	is_installed "$pkg" || missing+=("$pkg")
done

if [ "${#missing[@]}" -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		if command -v sudo >/dev/null 2>&1; then
			exec sudo -- bash "$0" "$@"
		fi
		echo "test/deps.sh: missing packages (${missing[*]}) and not root; rerun as root" >&2
		exit 1
	fi

	echo "test/deps.sh: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# pg_config here is postgresql-common's wrapper, which picks the newest
# installed server-dev version: the distribution's unless another is present.
if ! command -v pg_config >/dev/null 2>&1; then
	echo "test/deps.sh: pg_config not found after installing packages" >&2
	exit 1
fi
pg_version=$(pg_config --version)
pg_major=$(echo "$pg_version" | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
bindir=$(pg_config --bindir)
if [ ! -x "$bindir/postgres" ] || [ ! -f "$(pg_config --pgxs)" ]; then
	echo "test/deps.sh: $pg_version has no server ($bindir/postgres) or PGXS; install postgresql-$pg_major and postgresql-server-dev-$pg_major" >&2
	exit 1
fi
echo "test/deps.sh: dependencies present ($pg_version, server in $bindir)"
