/*-------------------------------------------------------------------------
 *
 * bfjoin_exec.c
 *	  The executor's side of joins that use a bloomfilter index by
 *	  themselves: the node, the rows it answers and those of its exact
 *	  checks, its state shared under a Gather.
 *
 * The node reads the outer rows in batches.  With the index's bits in
 * memory, and too large for the CPU's cache, a batch is up to BFJ_BATCH
 * rows, copied, whose keys are hashed and probed together (bfjoin_filter.c
 * asks for the blocks ahead of the tests); otherwise one row at a time, not
 * copied.  A row whose key the filter rules out is answered at once: an
 * anti join returns it, a semi join drops it.  A row with a NULL key is
 * answered likewise, with no probe: "=" is strict, so no inner row matches
 * it.  The "maybe" rows are copied into a buffer; when it holds enough of
 * them, or the outer rows end, they are sorted by key (so that the exact
 * checks walk the inner's btree in order) and fed to the Nested Loop below,
 * whose rows are the node's.  "Enough" is one row at first, twice as many
 * each time after, until the rows' copies fill work_mem: a LIMIT, or a
 * semi join's first row, need not wait for a buffer's worth.  A batch of
 * outer rows likewise starts at one row and doubles (bfjoin_batch.c).
 *
 * The node counts the share of "maybe" answers over every BFJ_WINDOW rows
 * probed; past BFJ_PAUSE_SHARE it stops probing (every row goes to the
 * exact check) for a while, longer each time it pauses again.  The batches,
 * the "maybe" rows and the pause are in bfjoin_batch.c.
 *
 * Under a Gather the node is parallel aware: the leader opens its filter
 * when the parallel query is set up, and where it copied the bits into its
 * memory it moves the copy into the parallel query's dynamic shared memory,
 * which the leader and the workers then probe (one copy, not one per
 * process); each worker leaves its counts there for the leader's EXPLAIN
 * (bfjoin_counts.c).
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfjoin_exec.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/sortsupport.h"
#include "utils/typcache.h"
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#endif

#include "bfjoin_state.h"


static void bf_join_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *bf_join_exec(CustomScanState *node);
static void bf_join_end(CustomScanState *node);
static void bf_join_rescan(CustomScanState *node);
static void bf_join_explain(CustomScanState *node, List *ancestors,
							ExplainState *es);
static Size bf_join_estimate_dsm(CustomScanState *node, ParallelContext *pcxt);
static void bf_join_init_dsm(CustomScanState *node, ParallelContext *pcxt,
							 void *coordinate);
static void bf_join_reinit_dsm(CustomScanState *node, ParallelContext *pcxt,
							   void *coordinate);
static void bf_join_init_worker(CustomScanState *node, shm_toc *toc,
								void *coordinate);
static void bf_join_shutdown(CustomScanState *node);

static const CustomExecMethods bf_join_exec_methods = {
	.CustomName = "BloomFilterJoin",
	.BeginCustomScan = bf_join_begin,
	.ExecCustomScan = bf_join_exec,
	.EndCustomScan = bf_join_end,
	.ReScanCustomScan = bf_join_rescan,
	.EstimateDSMCustomScan = bf_join_estimate_dsm,
	.InitializeDSMCustomScan = bf_join_init_dsm,
	.ReInitializeDSMCustomScan = bf_join_reinit_dsm,
	.InitializeWorkerCustomScan = bf_join_init_worker,
	.ShutdownCustomScan = bf_join_shutdown,
	.ExplainCustomScan = bf_join_explain,
};

const CustomScanMethods bf_join_anti_scan_methods = {
	.CustomName = "BloomAntiJoin",
	.CreateCustomScanState = bf_join_create_state,
};

const CustomScanMethods bf_join_semi_scan_methods = {
	.CustomName = "BloomSemiJoin",
	.CreateCustomScanState = bf_join_create_state,
};

Node *
bf_join_create_state(CustomScan *cscan)
{
	BfJoinState *s = (BfJoinState *) newNode(sizeof(BfJoinState),
											 T_CustomScanState);

	s->css.methods = &bf_join_exec_methods;
	return (Node *) s;
}

/* --- the filter's node --- */

static void
bf_join_begin(CustomScanState *node, EState *estate, int eflags)
{
	BfJoinState *s = (BfJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *info = linitial(cscan->custom_private);
	Expr	   *key = linitial(cscan->custom_exprs);
	Oid			ltopr;

	s->jointype = (JoinType) list_nth_int(info, BFJ_PRIVATE_JOINTYPE);
	s->indexoid = (Oid) list_nth_int(info, BFJ_PRIVATE_INDEX);
	s->leaves = lsecond(cscan->custom_private);
	s->nouter = list_nth_int(info, BFJ_PRIVATE_NOUTER);
	s->layers = list_nth_int(info, BFJ_PRIVATE_LAYERS);
	s->nscan = list_length(cscan->custom_scan_tlist);

	s->outer = ExecInitNode(linitial(cscan->custom_plans), estate, eflags);
	s->nl = ExecInitNode(lsecond(cscan->custom_plans), estate, eflags);
	node->custom_ps = list_make2(s->outer, s->nl);
	s->feeder = (BfMaybeState *) outerPlanState(s->nl);
	if (!bf_join_is_maybe_state((PlanState *) s->feeder))
		elog(ERROR, "bloom filter join: unexpected exact check plan");
	/* only the leaves of the partitions left by the initial pruning */
	s->leaves = bf_join_scanned_leaves(s->leaves, innerPlanState(s->nl));
	s->outerdesc = ExecGetResultType(s->outer);

	/*
	 * Rows come from the outer plan's or the Nested Loop's slots, of any
	 * kind: neither the projection nor the parent may take them for virtual
	 * slots (ExecInitCustomScan said they were).
	 */
	node->ss.ps.scanopsfixed = false;
	node->ss.ps.resultopsfixed = false;
	ExecAssignScanProjectionInfoWithVarno(&node->ss, INDEX_VAR);
	s->key = ExecInitExpr(key, &node->ss.ps);
	s->keytype = exprType((Node *) key);
	s->keycoll = exprCollation((Node *) key);
	get_typlenbyval(s->keytype, &s->keylen, &s->keybyval);
	s->key_is_var = IsA(key, Var) && ((Var *) key)->varattno > 0;

	/*
	 * What evaluating the keys allocates (a detoasted value, md5's result)
	 * lives no longer than its batch; the "maybe" rows' keys are copied into
	 * memory counted with their rows against work_mem.
	 */
	s->batch_cxt = AllocSetContextCreate(estate->es_query_cxt,
										 "bloom join batch keys",
										 ALLOCSET_DEFAULT_SIZES);
	s->row_cxt = AllocSetContextCreate(estate->es_query_cxt,
									   "bloom join key evaluation",
									   ALLOCSET_DEFAULT_SIZES);
	s->maybe_cxt = AllocSetContextCreate(estate->es_query_cxt,
										 "bloom join maybe keys",
										 ALLOCSET_DEFAULT_SIZES);

	/* a kept row's slot and its arrays' entries, besides the row's copy */
	s->mwant = 1;
	s->slot_bytes = MAXALIGN(sizeof(HeapTupleTableSlot)) +
		s->outerdesc->natts * (sizeof(Datum) + sizeof(bool)) +
		HEAPTUPLESIZE + sizeof(TupleTableSlot *) + sizeof(int) +
		sizeof(BfSortKey) + 64;

	/* sorted by the key type's "<", where it has one */
	ltopr = lookup_type_cache(s->keytype, TYPECACHE_LT_OPR)->lt_opr;
	if (OidIsValid(ltopr))
	{
		memset(&s->ssup, 0, sizeof(s->ssup));
		s->ssup.ssup_cxt = estate->es_query_cxt;
		s->ssup.ssup_collation = (Oid) list_nth_int(info, BFJ_PRIVATE_SORTCOLL);
		s->ssup.ssup_nulls_first = false;
		PrepareSortSupportFromOrderingOp(ltopr, &s->ssup);
		s->can_sort = true;
	}
	s->pause_next = BFJ_PAUSE_MIN;
}

/*
 * A row of the join, from a slot in the outer rows' layout (the outer
 * plan's, a copy of it, or the Nested Loop's): the inner Vars an anti join
 * returns are NULL; the qual and projection apply.  NULL if the qual
 * rejects it.
 */
static TupleTableSlot *
emit(BfJoinState *s, TupleTableSlot *src)
{
	ExprContext *econtext = s->css.ss.ps.ps_ExprContext;

	ResetExprContext(econtext);
	if (s->nscan > s->nouter)
	{
		TupleTableSlot *scan = s->css.ss.ss_ScanTupleSlot;

		ExecClearTuple(scan);
		slot_getallattrs(src);
		memcpy(scan->tts_values, src->tts_values, s->nouter * sizeof(Datum));
		memcpy(scan->tts_isnull, src->tts_isnull, s->nouter * sizeof(bool));
		for (int i = s->nouter; i < s->nscan; i++)
		{
			scan->tts_values[i] = (Datum) 0;
			scan->tts_isnull[i] = true;
		}
		ExecStoreVirtualTuple(scan);
		src = scan;
	}
	econtext->ecxt_scantuple = src;
	if (s->css.ss.ps.qual && !ExecQual(s->css.ss.ps.qual, econtext))
		return NULL;
	if (s->css.ss.ps.ps_ProjInfo)
		return ExecProject(s->css.ss.ps.ps_ProjInfo);
	return src;
}

static TupleTableSlot *
bf_join_exec(CustomScanState *node)
{
	BfJoinState *s = (BfJoinState *) node;

	if (!s->opened)
		bf_join_open_filter(s);
	if (s->bkeys == NULL)
		bf_join_size_batches(s);

	for (;;)
	{
		TupleTableSlot *slot;

		CHECK_FOR_INTERRUPTS();
		if (s->checking)
		{
			slot = ExecProcNode(s->nl);
			if (!TupIsNull(slot))
			{
				s->c.check_rows++;
				if ((slot = emit(s, slot)) != NULL)
					return slot;
				continue;
			}
			bf_join_release_maybes(s);
			continue;
		}
		if (s->bpos < s->nbatch)
		{
			int			i = s->bpos++;
			TupleTableSlot *row = s->batch > 1 ? s->bslots[i] : s->current;

			if (!s->bmaybe[i])
			{
				/* answered: an anti join returns the row, a semi join not */
				if (s->jointype == JOIN_ANTI && (slot = emit(s, row)) != NULL)
					return slot;
				continue;
			}
			if (!bf_join_maybe_fits(s, i))
			{
				/* the rows kept are checked first; this one waits */
				s->bpos--;
				bf_join_start_checks(s);
				continue;
			}
			if (bf_join_keep_maybe(s, row, s->bkeys[i]))
				bf_join_start_checks(s);
			continue;
		}
		if (s->outer_done)
		{
			if (s->nmaybe > 0)
			{
				bf_join_start_checks(s);
				continue;
			}
			return NULL;
		}
		bf_join_fill_batch(s);
	}
}

static void
bf_join_end(CustomScanState *node)
{
	BfJoinState *s = (BfJoinState *) node;

	ExecEndNode(s->outer);
	ExecEndNode(s->nl);
	if (s->filter)
		bf_join_filter_close(s->filter);
	s->filter = NULL;
	if (s->bslots)
		for (int i = 0; i < s->batch; i++)
			ExecDropSingleTupleTableSlot(s->bslots[i]);
	s->bslots = NULL;
	if (s->mslots)
		for (int i = 0; i < s->mcap && s->mslots[i]; i++)
			ExecDropSingleTupleTableSlot(s->mslots[i]);
	s->mslots = NULL;
}

/*
 * Start again: the children are rescanned (now, or at their next row if
 * their parameters changed); the filter, read for this snapshot, stays.
 */
static void
bf_join_rescan(CustomScanState *node)
{
	BfJoinState *s = (BfJoinState *) node;
	PlanState  *children[2] = {s->outer, s->nl};

	if (s->mslots)
		bf_join_release_maybes(s);
	s->mwant = 1;
	s->bwant = 1;
	s->nbatch = s->bpos = 0;
	s->outer_done = false;
	s->current = NULL;
	for (int i = 0; i < 2; i++)
	{
		if (node->ss.ps.chgParam != NULL)
			UpdateChangedParamSet(children[i], node->ss.ps.chgParam);
		if (children[i]->chgParam == NULL)
			ExecReScan(children[i]);
	}
}

/* --- under a Gather --- */

/* This process's counts, with the exact checks under way. */
static void
own_counts(BfJoinState *s, BfJoinCounts *c)
{
	*c = s->c;
	if (s->checking)
		c->checks += s->feeder->pos;
}

/*
 * The shared state: the workers' counts, and the bits when the leader's
 * filter copied them (the leader opens its filter now, before its first
 * row, to know).
 */
static Size
bf_join_estimate_dsm(CustomScanState *node, ParallelContext *pcxt)
{
	BfJoinState *s = (BfJoinState *) node;

	if (!s->opened)
		bf_join_open_filter(s);
	if (s->filter && !s->bits_shared)
	{
		/* the bits every process would read, copied once (within budget) */
		bf_join_filter_copy_for(s->filter, s->outer->plan->plan_rows *
								(pcxt->nworkers + 1));
		s->share_bytes = bf_join_filter_share_size(s->filter);
	}
	else
		s->share_bytes = 0;
	return bf_join_shared_size(pcxt->nworkers, s->share_bytes);
}

/*
 * The leader moves its copy of the bits into the shared memory: the workers
 * probe it there rather than each copy the index into its own memory, and
 * the leader probes it too, so that the query holds one copy.
 */
static void
bf_join_init_dsm(CustomScanState *node, ParallelContext *pcxt,
				 void *coordinate)
{
	BfJoinState *s = (BfJoinState *) node;
	BfJoinShared *sh = (BfJoinShared *) coordinate;

	bf_join_shared_init(sh, pcxt->nworkers, s->share_bytes);
	if (s->share_bytes > 0)
	{
		bf_join_filter_share(s->filter, (char *) sh + sh->bits_off);
		s->bits_shared = true;
		s->c.shared_bytes = s->share_bytes;
	}
	s->shared = sh;
}

/* The workers start again: their counts so far are the leader's to keep. */
static void
bf_join_reinit_dsm(CustomScanState *node, ParallelContext *pcxt,
				   void *coordinate)
{
	BfJoinState *s = (BfJoinState *) node;

	bf_join_shared_collect((BfJoinShared *) coordinate, &s->workers);
}

static void
bf_join_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	((BfJoinState *) node)->shared = (BfJoinShared *) coordinate;
}

/*
 * A worker leaves its counts in its slot; the leader adds up the slots
 * before the Gather frees the shared memory, and no longer probes the bits
 * there (if it runs again, a LIMIT's rescan after its early shutdown, it
 * opens its filter again).
 */
static void
bf_join_shutdown(CustomScanState *node)
{
	BfJoinState *s = (BfJoinState *) node;

	if (s->shared == NULL)
		return;
	if (IsParallelWorker())
	{
		if (ParallelWorkerNumber >= 0 &&
			ParallelWorkerNumber < s->shared->nworkers)
			own_counts(s, &s->shared->workers[ParallelWorkerNumber]);
		return;
	}
	bf_join_shared_collect(s->shared, &s->workers);
	if (s->bits_shared)
	{
		if (s->filter)
			bf_join_filter_close(s->filter);
		s->filter = NULL;
		s->bits_shared = false;
		s->opened = false;
	}
	s->shared = NULL;
}

/* --- EXPLAIN --- */

static void
bf_join_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	BfJoinState *s = (BfJoinState *) node;
	BfJoinCounts c;

	own_counts(s, &c);
	bf_join_counts_add(&c, &s->workers);
	bf_join_explain_counts(s->indexoid, s->jointype, &c, es);
}
