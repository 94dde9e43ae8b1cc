/*-------------------------------------------------------------------------
 *
 * bfjoin_exec.c
 *	  The executor's side of joins that use a bloomfilter index by
 *	  themselves: batches of outer rows, probes, exact checks in key order,
 *	  and the pause when the filter does not help.  Also their EXPLAIN.
 *
 * The node reads the outer rows in batches.  With the index's bits in
 * memory, and too large for the CPU's cache, a batch is BFJ_BATCH rows,
 * copied, whose keys are hashed and probed together (bfjoin_filter.c asks
 * for the blocks ahead of the tests); otherwise one row at a time, not
 * copied.  A row whose key the filter rules out is answered at once: an
 * anti join returns it, a semi join drops it.  A row with a NULL key is
 * answered likewise, with no probe: "=" is strict, so no inner row matches
 * it.  The "maybe" rows are copied into a buffer; when it holds enough of
 * them, or the outer rows end, they are sorted by key (so that the exact
 * checks walk the inner's btree in order) and fed to the Nested Loop below,
 * whose rows are the node's.  "Enough" is BFJ_FIRST_CHECKS rows at first,
 * twice as many each time after, until the rows' copies fill work_mem: a
 * LIMIT, or a semi join's first row, need not wait for a buffer's worth.
 *
 * The node counts the share of "maybe" answers over every BFJ_WINDOW rows
 * probed; past BFJ_PAUSE_SHARE it stops probing (every row goes to the
 * exact check) for a while, longer each time it pauses again.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfjoin_exec.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

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

#include "bfjoin.h"

/* a "maybe" row's key, for sorting */
typedef struct BfSortKey
{
	Datum		key;
	int			idx;
} BfSortKey;

struct BfJoinState
{
	CustomScanState css;
	JoinType	jointype;
	Oid			indexoid;
	List	   *leaves;			/* the leaf indexes probed, from the plan */
	int			nouter;			/* scan tuple columns from the outer plan */
	int			nscan;			/* all scan tuple columns */
	int			layers;			/* at planning */
	ExprState  *key;
	bool		key_is_var;		/* evaluating it allocates nothing */
	Oid			keytype;
	Oid			keycoll;
	int16		keylen;
	bool		keybyval;
	PlanState  *outer;
	PlanState  *nl;
	BfMaybeState *feeder;
	TupleDesc	outerdesc;

	/* the filter, opened at the first row */
	bool		opened;
	BfJoinFilter *filter;

	/* the batch of outer rows being answered */
	int			batch;			/* its size: BFJ_BATCH or 1 */
	TupleTableSlot **bslots;	/* copies of the rows (batch > 1) */
	TupleTableSlot *current;	/* the row itself (batch 1) */
	Datum	   *bkeys;			/* each row's key, evaluated once */
	bool	   *bnull;
	bool	   *bmaybe;
	Datum	   *pkeys;			/* the keys probed */
	bool	   *pmaybe;
	int			nbatch;
	int			bpos;
	bool		outer_done;
	MemoryContext batch_cxt;	/* the batch's keys: reset per batch */
	MemoryContext row_cxt;		/* a key's evaluation; a sort's scratch */

	/* the "maybe" rows waiting for their exact checks */
	int			mcap;			/* room in mslots, morder, mkeys */
	int			nmaybe;
	int			mwant;			/* rows kept before the next checks */
	Size		mbytes;			/* the kept rows' copies, about */
	Size		slot_bytes;		/* a slot's own memory, about */
	TupleTableSlot **mslots;
	int		   *morder;
	BfSortKey  *mkeys;			/* their keys, copied (in maybe_cxt) */
	MemoryContext maybe_cxt;
	bool		checking;		/* the Nested Loop's rows are being returned */
	bool		can_sort;
	SortSupportData ssup;

	/* the pause */
	uint64		window_rows;
	uint64		window_maybe;
	uint64		pause_left;
	uint64		pause_next;

	/* for EXPLAIN ANALYZE */
	uint64		rows_in;
	uint64		answered;		/* by the filter alone */
	uint64		null_keys;
	uint64		checks;			/* rows given to the exact check */
	uint64		check_rows;		/* rows the Nested Loop returned */
	uint64		pauses;
	uint64		paused_rows;	/* rows not probed during pauses */
	uint64		sorted_runs;
	uint64		batches;		/* of exact checks */
	Size		peak_bytes;		/* the most "maybe" rows kept at once */
};

static void bf_join_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *bf_join_exec(CustomScanState *node);
static void bf_join_end(CustomScanState *node);
static void bf_join_rescan(CustomScanState *node);

static const CustomExecMethods bf_join_exec_methods = {
	.CustomName = "BloomFilterJoin",
	.BeginCustomScan = bf_join_begin,
	.ExecCustomScan = bf_join_exec,
	.EndCustomScan = bf_join_end,
	.ReScanCustomScan = bf_join_rescan,
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
	s->mwant = BFJ_FIRST_CHECKS;
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

/* Open the filter, and size the batches to it, at the first row. */
static void
open_filter(BfJoinState *s)
{
	EState	   *estate = s->css.ss.ps.state;
	MemoryContext old = MemoryContextSwitchTo(estate->es_query_cxt);

	/*
	 * With bloomfilter.join_filter off since the plan was made (a prepared
	 * statement's), every row is checked exactly: the setting is the way
	 * out of the filter, even for plans already made.
	 */
	s->opened = true;
	s->filter = !bf_join_filter_enabled ? NULL :
		bf_join_filter_open(s->leaves, s->keytype, s->keycoll,
							s->outer->plan->plan_rows, estate->es_query_cxt);
	s->batch = (s->filter && bf_join_filter_in_memory(s->filter) &&
				bf_join_filter_bytes(s->filter) > BFJ_BATCH_BYTES) ? BFJ_BATCH : 1;
	if (s->batch > 1)
	{
		s->bslots = palloc(s->batch * sizeof(TupleTableSlot *));
		for (int i = 0; i < s->batch; i++)
			s->bslots[i] = MakeSingleTupleTableSlot(s->outerdesc, &TTSOpsHeapTuple);
	}
	s->bkeys = palloc(s->batch * sizeof(Datum));
	s->bnull = palloc(s->batch * sizeof(bool));
	s->bmaybe = palloc(s->batch * sizeof(bool));
	s->pkeys = palloc(s->batch * sizeof(Datum));
	s->pmaybe = palloc(s->batch * sizeof(bool));
	s->mcap = BFJ_FIRST_CHECKS;
	s->mslots = palloc0(s->mcap * sizeof(TupleTableSlot *));
	s->morder = palloc(s->mcap * sizeof(int));
	s->mkeys = palloc(s->mcap * sizeof(BfSortKey));
	MemoryContextSwitchTo(old);
}

/* Note the share of "maybe" answers; pause the filter where it is high. */
static void
watch_share(BfJoinState *s, int probed, int maybes)
{
	s->window_rows += probed;
	s->window_maybe += maybes;
	if (s->window_rows < BFJ_WINDOW)
		return;
	if (s->window_maybe > BFJ_PAUSE_SHARE * s->window_rows)
	{
		s->pauses++;
		s->pause_left = s->pause_next;
		s->pause_next = Min(s->pause_next * 2, BFJ_PAUSE_MAX);
	}
	else
		s->pause_next = BFJ_PAUSE_MIN;
	s->window_rows = s->window_maybe = 0;
}

/*
 * The key of the row in econtext's scan tuple, once per row: a column as it
 * is (it lives as long as the batch's rows), an expression evaluated in
 * memory reset at each row, its value copied into the batch's.
 */
static Datum
eval_key(BfJoinState *s, ExprContext *econtext, bool *isnull)
{
	MemoryContext old;
	Datum		key;

	if (s->key_is_var)
		return ExecEvalExpr(s->key, econtext, isnull);
	old = MemoryContextSwitchTo(s->row_cxt);
	key = ExecEvalExpr(s->key, econtext, isnull);
	MemoryContextSwitchTo(s->batch_cxt);
	if (!*isnull)
		key = datumCopy(key, s->keybyval, s->keylen);
	MemoryContextSwitchTo(old);
	MemoryContextReset(s->row_cxt);
	return key;
}

/*
 * Read the next batch of outer rows, evaluate their keys and probe them:
 * bmaybe[i] is true where row i needs its exact check.
 */
static void
fill_batch(BfJoinState *s)
{
	ExprContext *econtext = s->css.ss.ps.ps_ExprContext;
	int			n = 0;
	int			np = 0;

	ResetExprContext(econtext);
	MemoryContextReset(s->batch_cxt);
	s->nbatch = s->bpos = 0;
	while (n < s->batch)
	{
		TupleTableSlot *slot = ExecProcNode(s->outer);
		TupleTableSlot *row;

		if (TupIsNull(slot))
		{
			s->outer_done = true;
			break;
		}
		if (s->batch > 1)
			row = ExecCopySlot(s->bslots[n], slot);
		else
			row = s->current = slot;
		econtext->ecxt_scantuple = row;
		s->bkeys[n] = eval_key(s, econtext, &s->bnull[n]);
		n++;
	}
	s->nbatch = n;
	s->rows_in += n;

	for (int i = 0; i < n; i++)
	{
		if (s->bnull[i])
		{
			s->bmaybe[i] = false;
			s->null_keys++;
		}
		else if (s->filter == NULL || s->pause_left > 0)
			s->bmaybe[i] = true;
		else
			s->pkeys[np++] = s->bkeys[i];
	}
	if (np > 0)
	{
		int			maybes = 0;
		int			j = 0;

		bf_join_filter_probe(s->filter, s->pkeys, np, s->pmaybe);
		for (int i = 0; i < n; i++)
		{
			if (s->bnull[i])
				continue;
			s->bmaybe[i] = s->pmaybe[j++];
			if (s->bmaybe[i])
				maybes++;
			else
				s->answered++;
		}
		watch_share(s, np, maybes);
	}
	else if (s->pause_left > 0 && s->filter != NULL)
	{
		for (int i = 0; i < n; i++)
			if (!s->bnull[i])
			{
				s->paused_rows++;
				if (s->pause_left > 0)
					s->pause_left--;
			}
	}
}

static int
cmp_sort_key(const void *a, const void *b, void *arg)
{
	const BfSortKey *x = a;
	const BfSortKey *y = b;
	int			c = ApplySortComparator(x->key, false, y->key, false,
										(SortSupport) arg);

	return c != 0 ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

/*
 * Keep a "maybe" row for its exact check; true when enough are kept: the
 * count asked for, or work_mem of copies (slots and arrays included: the
 * slots stay, for the next rows).
 */
static bool
keep_maybe(BfJoinState *s, TupleTableSlot *row, Datum key)
{
	TupleTableSlot *copy;
	Size		keybytes = 0;

	if (s->nmaybe == s->mcap)
	{
		MemoryContext old = MemoryContextSwitchTo(s->css.ss.ps.state->es_query_cxt);
		int			cap = s->mcap * 2;

		s->mslots = repalloc(s->mslots, cap * sizeof(TupleTableSlot *));
		memset(s->mslots + s->mcap, 0, s->mcap * sizeof(TupleTableSlot *));
		s->morder = repalloc(s->morder, cap * sizeof(int));
		s->mkeys = repalloc(s->mkeys, cap * sizeof(BfSortKey));
		s->mcap = cap;
		MemoryContextSwitchTo(old);
	}
	if (s->mslots[s->nmaybe] == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(s->css.ss.ps.state->es_query_cxt);

		s->mslots[s->nmaybe] = MakeSingleTupleTableSlot(s->outerdesc,
														&TTSOpsHeapTuple);
		MemoryContextSwitchTo(old);
	}
	copy = ExecCopySlot(s->mslots[s->nmaybe], row);

	/*
	 * Its key, for the sort, kept rather than evaluated again (detoasted:
	 * the comparisons detoast nothing, and allocate nothing in the query's
	 * memory)
	 */
	if (s->can_sort)
	{
		MemoryContext old = MemoryContextSwitchTo(s->maybe_cxt);

		if (!s->keybyval)
		{
			if (s->keylen == -1)
				key = PointerGetDatum(PG_DETOAST_DATUM_COPY(key));
			else
				key = datumCopy(key, false, s->keylen);
			keybytes = MAXALIGN(datumGetSize(key, false, s->keylen)) + 16;
		}
		MemoryContextSwitchTo(old);
		s->mkeys[s->nmaybe].key = key;
		s->mkeys[s->nmaybe].idx = s->nmaybe;
	}
	s->nmaybe++;
	s->mbytes += s->slot_bytes + keybytes +
		MAXALIGN(((HeapTupleTableSlot *) copy)->tuple->t_len);
	return s->nmaybe >= s->mwant ||
		s->mbytes >= (Size) work_mem * 1024;
}

/*
 * Give the kept "maybe" rows to the Nested Loop, in key order when there
 * are many of them.
 */
static void
start_checks(BfJoinState *s)
{
	int		   *order = NULL;

	if (s->can_sort && s->nmaybe >= BFJ_SORT_MIN)
	{
		MemoryContext old = MemoryContextSwitchTo(s->row_cxt);

		qsort_arg(s->mkeys, s->nmaybe, sizeof(BfSortKey), cmp_sort_key,
				  &s->ssup);
		MemoryContextSwitchTo(old);
		MemoryContextReset(s->row_cxt);
		for (int i = 0; i < s->nmaybe; i++)
			s->morder[i] = s->mkeys[i].idx;
		order = s->morder;
		s->sorted_runs++;
	}
	s->feeder->slots = s->mslots;
	s->feeder->order = order;
	s->feeder->n = s->nmaybe;
	s->feeder->pos = 0;
	s->checking = true;
	s->batches++;
	s->peak_bytes = Max(s->peak_bytes, s->mbytes);
	if (s->mbytes < (Size) work_mem * 1024 && s->mwant <= INT_MAX / 2)
		s->mwant *= 2;
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

/*
 * Let the kept rows go, once the Nested Loop is done with them (or the node
 * is rescanned); the exact checks counted are of the rows it took.
 */
static void
release_maybes(BfJoinState *s)
{
	for (int i = 0; i < s->nmaybe; i++)
		ExecClearTuple(s->mslots[i]);
	if (s->checking)
		s->checks += s->feeder->pos;
	s->nmaybe = 0;
	s->mbytes = 0;
	MemoryContextReset(s->maybe_cxt);
	s->feeder->n = s->feeder->pos = 0;
	s->checking = false;
}

static TupleTableSlot *
bf_join_exec(CustomScanState *node)
{
	BfJoinState *s = (BfJoinState *) node;

	if (!s->opened)
		open_filter(s);

	for (;;)
	{
		TupleTableSlot *slot;

		CHECK_FOR_INTERRUPTS();
		if (s->checking)
		{
			slot = ExecProcNode(s->nl);
			if (!TupIsNull(slot))
			{
				s->check_rows++;
				if ((slot = emit(s, slot)) != NULL)
					return slot;
				continue;
			}
			release_maybes(s);
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
			if (keep_maybe(s, row, s->bkeys[i]))
				start_checks(s);
			continue;
		}
		if (s->outer_done)
		{
			if (s->nmaybe > 0)
			{
				start_checks(s);
				continue;
			}
			return NULL;
		}
		fill_batch(s);
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
		release_maybes(s);
	s->mwant = BFJ_FIRST_CHECKS;
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

/* --- EXPLAIN --- */

/*
 * The index probed; with ANALYZE, the rows the filter answered alone, the
 * exact checks (the rows the Nested Loop took: under a LIMIT, not those
 * kept and never checked) and how many found no row (false positives, or
 * rows whose keys are in the index but not visible), the batches of checks
 * and the most memory their rows took at once, and the pauses.  Under a
 * Gather, the leader's own counts.
 */
void
bf_join_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	BfJoinState *s = (BfJoinState *) node;
	char	   *name = get_rel_name(s->indexoid);
	uint64		checks = s->checks + (s->checking ? s->feeder->pos : 0);

	ExplainPropertyText("Bloom Filter", name ? name : "(dropped index)", es);
	if (!es->analyze || !s->opened)
		return;
	if (s->filter == NULL)
		ExplainPropertyText("Filter Unavailable",
							"every row checked exactly", es);
	ExplainPropertyInteger("Rows Answered by Filter", NULL,
						   (int64) s->answered, es);
	if (s->null_keys > 0 || es->format != EXPLAIN_FORMAT_TEXT)
		ExplainPropertyInteger("Rows with NULL Key", NULL,
							   (int64) s->null_keys, es);
	ExplainPropertyInteger("Exact Checks", NULL, (int64) checks, es);
	ExplainPropertyInteger("Exact Checks Finding No Row", NULL,
						   (int64) (s->jointype == JOIN_ANTI ? s->check_rows :
									checks - s->check_rows), es);
	if (s->batches > 0 || es->format != EXPLAIN_FORMAT_TEXT)
	{
		ExplainPropertyInteger("Exact Check Batches", NULL,
							   (int64) s->batches, es);
		ExplainPropertyInteger("Maybe Rows Memory", "kB",
							   (int64) ((s->peak_bytes + 1023) / 1024), es);
	}
	if (s->pauses > 0 || es->format != EXPLAIN_FORMAT_TEXT)
	{
		ExplainPropertyInteger("Filter Pauses", NULL, (int64) s->pauses, es);
		ExplainPropertyInteger("Rows Not Probed", NULL,
							   (int64) s->paused_rows, es);
	}
}
