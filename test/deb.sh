#!/usr/bin/env bash
#
# test/deb.sh: build the Debian package (debian/, pg_buildext) from this
# tree, install it, and create the extension from it in a fresh cluster.
#
#   sudo bash test/deb.sh [--keep-installed] [--no-install | --install-only]
#                         [--outdir DIR]
#
# 1. copies the tree (without .git and build output) into a scratch folder
#    and runs `dpkg-buildpackage -us -uc -b` there, so that this tree is
#    left as it was and the .deb files land in the scratch folder: one
#    postgresql-NN-bloomfilter_*.deb per server version in debian/pgversions
#    whose server-dev package is installed (postgresql-15-bloomfilter on
#    Debian 12); with --outdir, the .deb files are kept in DIR;
# 2. checks each package's file list (the library, the control file, the
#    SQL script) and that debian/control is what `pg_buildext updatecontrol`
#    makes of debian/control.in;
# 3. unless --no-install: `dpkg -i` the package of the distribution's
#    version, then, in a throwaway cluster (pg_virtualenv), CREATE EXTENSION
#    bloomfilter and a probe of a bloomfilter index; then `dpkg -r` (unless
#    --keep-installed), which removes the files again: run `make install`
#    afterwards to test this tree's build (test/run-tests.sh does).
#    --install-only skips steps 1 and 2 and installs the package that an
#    earlier run with --no-install --outdir DIR left there (test/run-tests.sh
#    builds in the background, and installs just before its own install).
#
# Needs root (dpkg -i) and debhelper (test/deps.sh). Exit status 0 when
# every step passed.

set -euo pipefail

keep=0
install=1
build=1
outdir=
while [ $# -gt 0 ]; do
	case "$1" in
		--keep-installed) keep=1; shift ;;
		--no-install) install=0; shift ;;
		--install-only) build=0; shift ;;
		--outdir) outdir=$2; shift 2 ;;
		-h | --help) sed -n '3,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) echo "deb.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
[ "$build" -eq 1 ] || [ -n "$outdir" ] || { echo "deb.sh: --install-only needs --outdir" >&2; exit 2; }

cd "$(dirname "$0")/.."
ROOT=$(pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/bloomfilter-deb.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
pg_major=$(pg_config --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')

if [ "$build" -eq 1 ]; then
# 1. the build, in a copy
# (the files git knows of, or would add: not the build's output, which a
# build beside this one may be writing and removing; without git, all but
# the build's output)
mkdir "$scratch/bloomfilter"
if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$ROOT" ls-files -z --cached --others --exclude-standard |
		tar -C "$ROOT" --null --ignore-failed-read -T - -cf - |
		tar -C "$scratch/bloomfilter" -xf -
else
	tar -C "$ROOT" --exclude=./.git --exclude=./results --exclude=./tmp_check \
		--exclude=./output_iso --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
		--exclude='./debian/postgresql-*' --exclude=./debian/.debhelper \
		-cf - . | tar -C "$scratch/bloomfilter" -xf -
fi
(cd "$scratch/bloomfilter" &&
	DEB_BUILD_OPTIONS="parallel=$(nproc) noautodbgsym${DEB_BUILD_OPTIONS:+ $DEB_BUILD_OPTIONS}" \
		dpkg-buildpackage -us -uc -b) >"$scratch/build.log" 2>&1 || {
	tail -40 "$scratch/build.log" >&2
	echo "deb.sh: dpkg-buildpackage failed" >&2
	exit 1
}
ls "$scratch"/*.deb

# 2. the packages' files, and debian/control up to date
(cd "$scratch/bloomfilter" && cp debian/control debian/control.committed &&
	pg_buildext updatecontrol >/dev/null &&
	cmp -s debian/control debian/control.committed) || {
	echo "deb.sh: debian/control is not what 'pg_buildext updatecontrol' makes of debian/control.in: run it and commit debian/control" >&2
	exit 1
}
for deb in "$scratch"/postgresql-*-bloomfilter_*.deb; do
	v=$(basename "$deb" | sed -E 's/^postgresql-([0-9]+)-.*/\1/')
	files=$(dpkg-deb -c "$deb" | awk '{ print $NF }')
	for f in "./usr/lib/postgresql/$v/lib/bloomfilter.so" \
		"./usr/share/postgresql/$v/extension/bloomfilter.control" \
		"./usr/share/postgresql/$v/extension/bloomfilter--1.0.sql"; do
		grep -qxF "$f" <<<"$files" || { echo "deb.sh: $(basename "$deb") lacks $f" >&2; exit 1; }
	done
	echo "$(basename "$deb"): $(grep -c . <<<"$files") files, the library, control file and SQL script among them"
done
if [ -n "$outdir" ]; then
	mkdir -p "$outdir"
	cp "$scratch"/postgresql-*-bloomfilter_*.deb "$outdir"/
fi
fi

[ "$install" -eq 1 ] || exit 0

# 3. installed, in a fresh cluster
deb=$(ls "${outdir:-$scratch}"/postgresql-"$pg_major"-bloomfilter_*.deb)
dpkg -i "$deb"
[ "$keep" -eq 1 ] || trap 'dpkg -r postgresql-'"$pg_major"'-bloomfilter >/dev/null; rm -rf "$scratch"' EXIT
# pg_virtualenv runs initdb as postgres (it refuses root) in a folder of its own
out=$(pg_virtualenv -v "$pg_major" psql -X -q -A -t -v ON_ERROR_STOP=1 <<'SQL'
CREATE EXTENSION bloomfilter;
CREATE TABLE deb_keys AS SELECT g AS k FROM generate_series(1, 1000) g;
CREATE INDEX deb_keys_bf ON deb_keys USING bloomfilter (k);
SELECT extversion FROM pg_extension WHERE extname = 'bloomfilter';
SELECT bloom_index_contains('deb_keys_bf', 500), bloom_contains(bloom_agg(k), 7) FROM deb_keys;
SQL
)
# (pg_virtualenv says on stdout too when it creates and drops its cluster)
out=$(grep -v -e '^Creating new PostgreSQL cluster' -e '^Dropping cluster' <<<"$out")
echo "$out"
[ "$out" = "$(printf '1.0\nt|t')" ] || { echo "deb.sh: the installed package did not answer as expected" >&2; exit 1; }
echo "deb.sh: $(basename "$deb") installed, CREATE EXTENSION bloomfilter and a probe work in a fresh cluster"
