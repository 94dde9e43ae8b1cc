#!/usr/bin/env bash
#
# test/symbols.sh: the module exports only what the server calls.
#
#   bash test/symbols.sh [path/to/bloomfilter.so]
#
# The server resolves a module's functions by name in one namespace with its
# own symbols: core PostgreSQL exports a bloom_create (lib/bloomfilter.c), so
# a module symbol of that name would collide.  Every exported symbol must be
# an fmgr function named bf_*, its pg_finfo_bf_* record, the magic block or
# _PG_init; and every C function the install script names must be exported.
# Of the object files, only src/bfcitus.o may call SPI or set_config_option
# (see docs/privileges.md), and the shared filters' files (src/bloom_shared*.o,
# whose filters are tables: docs/shared-filters.md) SPI; only src/bfpending.o
# may read and write a file (its temporary file, made by OpenTemporaryFile).
set -euo pipefail
cd "$(dirname "$0")/.."
so=${1:-bloomfilter.so}
[ -f "$so" ] || { echo "symbols.sh: no $so (build first)" >&2; exit 2; }

exported=$(nm -D --defined-only "$so" | awk '{print $3}' | sort)
bad=$(grep -v -E '^(bf_[a-z0-9_]+|pg_finfo_bf_[a-z0-9_]+|Pg_magic_func|_PG_init)$' <<<"$exported" || true)
if [ -n "$bad" ]; then
	echo "symbols.sh: $so exports symbols outside bf_*:"
	sed 's/^/  /' <<<"$bad"
	exit 1
fi
# every link symbol of the install scripts is exported, with its finfo record
missing=0
for sym in $(grep -ho "'MODULE_PATHNAME', '[a-z0-9_]*'" sql/bloomfilter--*.sql |
	sed "s/.*, '\(.*\)'/\1/" | sort -u); do
	for s in "$sym" "pg_finfo_$sym"; do
		if ! grep -qx "$s" <<<"$exported"; then
			echo "symbols.sh: $so does not export $s"
			missing=1
		fi
	done
done
[ "$missing" -eq 0 ] || exit 1
# SQL (SPI) is run, and settings changed, in one place only: the Citus
# coordinator's index probe (run_command_on_shards, with the key's text made
# under fixed DateStyle, IntervalStyle and extra_float_digits)
spi=$(for o in src/*.o; do
	case "$o" in src/bloom_shared*.o) nm --undefined-only "$o" | grep -qE ' (set_config_option|SetConfigOption)$' && echo "$o"; continue ;; esac
	nm --undefined-only "$o" | grep -qE ' (SPI_|set_config_option$|SetConfigOption$)' && echo "$o"
done || true)
if [ -n "$spi" ] && [ "$spi" != "src/bfcitus.o" ]; then
	echo "symbols.sh: SPI or set_config_option is called outside src/bfcitus.o:"
	sed 's/^/  /' <<<"$spi"
	exit 1
fi
# Files are read and written in one place only: the temporary file that
# keeps an index's pending keys past their memory bound (src/bfpending.c:
# OpenTemporaryFile, a file of the backend's own under pgsql_tmp)
files=$(for o in src/*.o; do
	nm --undefined-only "$o" | grep -qE ' (FileRead|FileWrite|FileTruncate|OpenTemporaryFile|PathNameOpenFile|OpenTransientFile|AllocateFile|BufFile[A-Za-z]*)$' && echo "$o"
done || true)
if [ -n "$files" ] && [ "$files" != "src/bfpending.o" ]; then
	echo "symbols.sh: files are opened, read or written outside src/bfpending.o:"
	sed 's/^/  /' <<<"$files"
	exit 1
fi
echo "symbols.sh: $(grep -c '^bf_' <<<"$exported") fmgr functions exported, all bf_*; nothing else"
