# Makefile for the bloomfilter PostgreSQL extension (PGXS)
#
#   make                      build bloomfilter.so
#   make install              install into the server that pg_config points at
#   make installcheck         regression tests (+ isolation and TAP tests, see
#                             below) against a running server
#   make tap                  TAP tests in test/t only (needs a non-root user)
#
# Extra compiler flags go through PG_CFLAGS, e.g. `make PG_CFLAGS=-Werror`.
# CI does that (see .ci/run); warnings are never errors in the shipped build.

EXTENSION  = bloomfilter
EXTVERSION := $(shell sed -n "s/^[[:space:]]*default_version[[:space:]]*=[[:space:]]*'\([^']*\)'.*/\1/p" $(EXTENSION).control)

MODULE_big = bloomfilter
OBJS = \
	src/bloomfilter.o \
	src/bloom_sizing.o \
	src/bloom_bits.o \
	src/bloom_unique.o \
	src/bloom_format.o \
	src/bloom_value.o \
	src/bloom_labels.o \
	src/bloom_keys.o \
	src/bloom_hash.o \
	src/bloom_io.o \
	src/bloom_add.o \
	src/bloom_cache.o \
	src/bloom_contains.o \
	src/bloom_agg.o \
	src/bloom_agg_state.o \
	src/bloom_agg_combine.o \
	src/bloom_agg_serial.o \
	src/bloom_agg_spill.o \
	src/bloom_agg_plan.o \
	src/bloom_setops.o \
	src/bloom_info.o \
	src/bloom_support.o \
	src/bfhandler.o \
	src/bflayers.o \
	src/bfpages.o \
	src/bfkeys.o \
	src/bfreader.o \
	src/bfbatch.o \
	src/bffill.o \
	src/bfbuild.o \
	src/bfparallel.o \
	src/bfinsert.o \
	src/bfpending.o \
	src/bfxlog.o \
	src/bfgrow.o \
	src/bfcompact.o \
	src/bfprobe.o \
	src/bfprobesite.o \
	src/bfcitus.o \
	src/bfvacuum.o \
	src/bfvalidate.o \
	src/bfinfo.o \
	src/bfjoin_match.o \
	src/bfjoin_path.o \
	src/bfjoin_plan.o \
	src/bfjoin_maybe.o \
	src/bfjoin_exec.o \
	src/bfjoin_counts.o \
	src/bfjoin_batch.o \
	src/bfjoin_filter.o \
	src/bloom_shared.o \
	src/bloom_shared_batch.o \
	src/bloom_shared_check.o \
	src/bloom_shared_fn.o
PGFILEDESC = "bloomfilter - Bloom filter index, join pre-check and data type"

# Install script plus every upgrade script (bloomfilter--A--B.sql).
DATA = $(wildcard sql/bloomfilter--*.sql)

# Regression tests: sql/X.sql and expected/X.out, pg_regress's default
# input directory. One file per feature, each able to run alone.
REGRESS = \
	bloom_type \
	bloom_create \
	bloom_keys \
	bloom_key_parts \
	bloom_contains \
	bloom_agg \
	bloom_parallel \
	bloom_cache \
	bloom_hash \
	bloom_ops \
	bloom_info \
	bloom_fuzz \
	bloom_partition \
	bloom_fdw \
	bloom_distributed \
	bloom_support \
	bloom_limits \
	bloom_privileges \
	bloom_stats_security \
	bloom_families \
	bloom_enum \
	bloom_oversize \
	bloom_cache_budget \
	bloom_refusals \
	bloom_parallel_limit \
	bloom_agg_no_rows \
	bloom_cache_inline \
	bloom_index \
	bloom_index_trust \
	bloom_index_adopt \
	bloom_untyped \
	bloom_index_parallel \
	bloom_index_growth \
	bloom_index_checks \
	bloom_index_pending \
	bloom_index_maintenance \
	bloom_join \
	bloom_index_stats \
	bloom_join_parts \
	bloom_join_refusals \
	bloom_index_rollback \
	bloom_index_advice \
	bloom_catalog \
	bloom_shared \
	bloom_readme
REGRESS_OPTS = --load-extension=$(EXTENSION)

# The slowest tests of code that no PostgreSQL version guard touches (the
# limits of a filter's size and of an aggregate's state, the aggregates and
# their parallel plans, the false-positive rate over a million probes):
# `make installcheck QUICK=1` leaves them out, half of the suite's time.
# test/run-tests.sh runs them on the distribution's version, the rest on
# every other.
REGRESS_SLOW = bloom_limits bloom_oversize bloom_parallel_limit bloom_parallel \
	bloom_agg bloom_contains
ifdef QUICK
REGRESS := $(filter-out $(REGRESS_SLOW),$(REGRESS))
endif
# A smoke set: the type, the index with its kept keys, the join pre-check
# and the shared filter (`make installcheck SMOKE=1`), for the versions
# test/run-tests.sh only builds and smoke-tests.
REGRESS_SMOKE = bloom_type bloom_keys bloom_index bloom_index_rollback \
	bloom_join bloom_shared
ifdef SMOKE
REGRESS := $(filter $(REGRESS_SMOKE),$(REGRESS))
endif

PG_CPPFLAGS = -I$(srcdir)/src

# The README's doc test: bloom_readme is generated from README.md before
# the regression tests (test/readme.awk: every ```sql block in order in a
# fresh database, its output against the ```text block after it).
README_TEST = sql/bloom_readme.sql expected/bloom_readme.out
REGRESS_PREP = $(README_TEST)

# Isolation tests (pg_isolation_regress): test/isolation/specs/X.spec with
# test/isolation/expected/X.out; run by `make installcheck` when present.
ifneq ($(wildcard test/isolation/specs/*.spec),)
ISOLATION = $(sort $(basename $(notdir $(wildcard test/isolation/specs/*.spec))))
ISOLATION_OPTS = --inputdir=test/isolation --load-extension=$(EXTENSION)
endif

# TAP tests (test/t/*.pl) use PGXS's own prove_installcheck: prove with
# PostgreSQL::Test::* from $(pkglibdir)/pgxs/src/test/perl on @INC,
# PG_REGRESS pointing at the installed pg_regress and $(bindir) on PATH.
# Each test initdb's its own throwaway clusters, and initdb refuses to run
# as root, so `make installcheck` only includes them for non-root users;
# root runs them through `runuser -u postgres -- make tap` (test/run-tests.sh).
# A server built without --enable-tap-tests (the prebuilt tarballs of
# test/matrix.sh) has neither prove_installcheck nor those modules: `make tap`
# then does what prove_installcheck does with the modules in TAP_PERL_DIR,
# by default the distribution's (those of the pg_config first on PATH).
ifneq ($(wildcard test/t/*.pl),)
PROVE_TESTS = test/t/*.pl
ifneq ($(shell id -u),0)
TAP_TESTS = 1
endif
endif

EXTRA_CLEAN = results/ regression.diffs regression.out log/ tmp_check/ \
	test/t/tmp_check/ tmp_check.first/ output_iso/ tmp_check_iso/ \
	$(EXTENSION)-$(EXTVERSION).zip $(README_TEST)

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# (after PGXS's rules, so that `make` still builds the module first)
sql/bloom_readme.sql: README.md test/readme.awk
	awk -v mode=sql -f test/readme.awk README.md > $@.tmp && mv $@.tmp $@
expected/bloom_readme.out: README.md test/readme.awk
	awk -v mode=out -f test/readme.awk README.md > $@.tmp && mv $@.tmp $@

# Export only the functions the server calls (PGDLLEXPORT: the fmgr functions,
# all named bf_*, the magic block and _PG_init).  PostgreSQL 16 and later build
# modules so; on 15 this does it, because a symbol of ours the server also
# exports (it has a bloom_create of its own) would otherwise be interposable.
ifeq ($(shell test $(VERSION_NUM) -lt 160000 && echo old),old)
override CFLAGS += -fvisibility=hidden
override CPPFLAGS := '-DPGDLLEXPORT=__attribute__((visibility("default")))' $(CPPFLAGS)
endif

ifeq ($(enable_tap_tests),yes)
tap_prove = $(prove_installcheck)
else
TAP_PERL_DIR ?= $(patsubst %/src/makefiles/pgxs.mk,%/src/test/perl,$(shell pg_config --pgxs 2>/dev/null))
# TESTDIR for the modules of PostgreSQL 15, TESTLOGDIR and TESTDATADIR for 16+
define tap_prove
@if [ ! -f '$(TAP_PERL_DIR)/PostgreSQL/Test/Cluster.pm' ]; then \
	echo "make tap: $(PG_CONFIG) was built without TAP tests, and TAP_PERL_DIR" >&2; \
	echo "('$(TAP_PERL_DIR)') holds no PostgreSQL/Test/Cluster.pm" >&2; \
	exit 1; \
fi
rm -rf '$(CURDIR)'/tmp_check && \
$(MKDIR_P) '$(CURDIR)'/tmp_check && \
   TESTDIR='$(CURDIR)' \
   TESTLOGDIR='$(CURDIR)/tmp_check/log' \
   TESTDATADIR='$(CURDIR)/tmp_check' \
   PATH="$(bindir):$(CURDIR):$$PATH" \
   PG_REGRESS='$(top_builddir)/src/test/regress/pg_regress' \
   prove -I '$(TAP_PERL_DIR)' -I $(srcdir) $(PROVE_FLAGS) $(PROVE_TESTS)
endef
endif

# `make tap` runs the scripts TAP_JOBS at a time (prove -j; they mostly
# wait for their servers), then those of TAP_ALONE one at a time with no
# other script beside them: 018_compaction polls a VACUUM for the moment to
# crash it, which it misses beside another script on a busy machine.  The
# logs of both runs end up in tmp_check/log.
TAP_JOBS ?= 1
TAP_ALONE = test/t/018_compaction.pl

.PHONY: tap tap-prove
tap:
ifeq ($(wildcard test/t/*.pl),)
	@echo "no TAP tests in test/t"
else
	@if [ "$$(id -u)" = 0 ]; then \
		echo "make tap: TAP tests run initdb, which refuses to run as root;" >&2; \
		echo "run as an unprivileged user, e.g. runuser -u postgres -- make tap" >&2; \
		exit 1; \
	fi
	@rc=0; rm -rf tmp_check.first; \
	first='$(filter-out $(TAP_ALONE),$(wildcard $(PROVE_TESTS)))'; \
	alone='$(filter $(TAP_ALONE),$(wildcard $(PROVE_TESTS)))'; \
	if [ -n "$$first" ]; then \
		$(MAKE) --no-print-directory tap-prove PROVE_TESTS="$$first" \
			PROVE_FLAGS="-j$(TAP_JOBS) $(PROVE_FLAGS)" || rc=1; \
	fi; \
	if [ -n "$$alone" ]; then \
		[ -d tmp_check ] && mv tmp_check tmp_check.first; \
		$(MAKE) --no-print-directory tap-prove PROVE_TESTS="$$alone" \
			PROVE_FLAGS="$(PROVE_FLAGS)" || rc=1; \
		if [ -d tmp_check.first ]; then \
			mkdir -p tmp_check/log; \
			mv tmp_check/log/* tmp_check.first/log/ 2>/dev/null; \
			for f in tmp_check/*; do [ "$$f" = tmp_check/log ] || mv "$$f" tmp_check.first/ 2>/dev/null; done; \
			rm -rf tmp_check && mv tmp_check.first tmp_check; \
		fi; \
	fi; \
	exit $$rc
endif

tap-prove:
	$(tap_prove)

# Source archive for PGXN, from the committed tree.
.PHONY: dist
dist:
	git archive --format zip --prefix=$(EXTENSION)-$(EXTVERSION)/ \
		--output $(EXTENSION)-$(EXTVERSION).zip HEAD
