/*-------------------------------------------------------------------------
 *
 * bfhandler.c
 *	  The bloomfilter index access method's handler and options: the entry
 *	  points PostgreSQL calls, and nothing else calls.
 *
 * Like pgvector's hnsw.c, this file sits at the top of the index's files:
 * it names the phase files' entry points (bfbuild.c, bfinsert.c,
 * bfvacuum.c, bfvalidate.c), and they call only the helpers below them
 * (bfpages.c, bflayers.c, bfkeys.c), never back up here.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfhandler.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/reloptions.h"
#include "utils/rel.h"

#include "bfindex.h"

static relopt_kind bf_relopt_kind;
static bool bf_relopt_ready = false;

/*
 * Options are registered the first time the handler runs in a backend: the
 * handler runs before anything parses a bloomfilter index's options.
 */
static void
bf_register_options(void)
{
	if (bf_relopt_ready)
		return;
	bf_relopt_kind = add_reloption_kind();
	add_int_reloption(bf_relopt_kind, "capacity",
					  "Number of distinct keys the first layer is sized for",
					  0, 1, INT_MAX, AccessExclusiveLock);
	add_real_reloption(bf_relopt_kind, "false_positive_rate",
					   "False-positive rate the index keeps however far it grows",
					   BLOOM_DEFAULT_RATE, 0.0, 1.0, AccessExclusiveLock);
	bf_relopt_ready = true;
}

bytea *
bfoptions(Datum reloptions, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{"capacity", RELOPT_TYPE_INT, offsetof(BfOptions, capacity)},
		{"false_positive_rate", RELOPT_TYPE_REAL, offsetof(BfOptions, rate)},
	};
	BfOptions  *opts;

	bf_register_options();
	opts = (BfOptions *) build_reloptions(reloptions, validate, bf_relopt_kind,
										  sizeof(BfOptions), tab, lengthof(tab));
	if (opts && validate && !(opts->rate > 0.0 && opts->rate < 1.0))
		ereport(ERROR,
				errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				errmsg("false_positive_rate must be between 0 and 1, not %g",
					   opts->rate),
				errhint("Pass a rate such as 0.01 for one false positive in a hundred probes."));
	if (opts && validate)
		bf_check_rate(opts->rate);
	return (bytea *) opts;
}

/* The planner never uses the index: it has no operators to match. */
static void
bfcostestimate(PlannerInfo *root, IndexPath *path, double loop_count,
			   Cost *indexStartupCost, Cost *indexTotalCost,
			   Selectivity *indexSelectivity, double *indexCorrelation,
			   double *indexPages)
{
	*indexStartupCost = 1.0e10;
	*indexTotalCost = 1.0e10;
	*indexSelectivity = 1.0;
	*indexCorrelation = 0.0;
	*indexPages = 1;
}

static IndexScanDesc
bfbeginscan(Relation r, int nkeys, int norderbys)
{
	ereport(ERROR,
			errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			errmsg("bloomfilter indexes cannot be scanned"),
			errhint("Probe the index with bloom_index_contains()."));
	return NULL;				/* keep compiler quiet */
}

static void
bfrescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
		 ScanKey orderbys, int norderbys)
{
	elog(ERROR, "bloomfilter indexes cannot be scanned");
}

static void
bfendscan(IndexScanDesc scan)
{
}

/*
 * The handler.  No amgettuple or amgetbitmap: with neither, and no
 * operators in its operator classes, the planner never makes a path for the
 * index (as for src/test/modules/dummy_index_am).
 */
PG_FUNCTION_INFO_V1(bf_handler);
Datum
bf_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *amroutine = makeNode(IndexAmRoutine);

	bf_register_options();

	amroutine->amstrategies = 0;
	amroutine->amsupport = 0;
	amroutine->amoptsprocnum = 0;
	amroutine->amcanorder = false;
	amroutine->amcanorderbyop = false;
	amroutine->amcanbackward = false;
	amroutine->amcanunique = false;
	amroutine->amcanmulticol = false;
	amroutine->amoptionalkey = true;
	amroutine->amsearcharray = false;
	amroutine->amsearchnulls = false;
	amroutine->amstorage = false;
	amroutine->amclusterable = false;
	amroutine->ampredlocks = false;
	amroutine->amcanparallel = false;
	amroutine->amcaninclude = false;
	amroutine->amusemaintenanceworkmem = false;
	amroutine->amparallelvacuumoptions = VACUUM_OPTION_NO_PARALLEL;
	amroutine->amkeytype = InvalidOid;
#if PG_VERSION_NUM >= 160000
	amroutine->amsummarizing = false;
#endif
#if PG_VERSION_NUM >= 170000
	amroutine->amcanbuildparallel = true;
#endif

	amroutine->ambuild = bfbuild;
	amroutine->ambuildempty = bfbuildempty;
	amroutine->aminsert = bfinsert;
	amroutine->ambulkdelete = bfbulkdelete;
	amroutine->amvacuumcleanup = bfvacuumcleanup;
	amroutine->amcanreturn = NULL;
	amroutine->amcostestimate = bfcostestimate;
	amroutine->amoptions = bfoptions;
	amroutine->amproperty = NULL;
	amroutine->ambuildphasename = bfbuildphasename;
	amroutine->amvalidate = bfvalidate;
	amroutine->amadjustmembers = NULL;
	amroutine->ambeginscan = bfbeginscan;
	amroutine->amrescan = bfrescan;
	amroutine->amgettuple = NULL;
	amroutine->amgetbitmap = NULL;
	amroutine->amendscan = bfendscan;
	amroutine->ammarkpos = NULL;
	amroutine->amrestrpos = NULL;
	amroutine->amestimateparallelscan = NULL;
	amroutine->aminitparallelscan = NULL;
	amroutine->amparallelrescan = NULL;

	PG_RETURN_POINTER(amroutine);
}
