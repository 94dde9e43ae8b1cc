/*-------------------------------------------------------------------------
 *
 * bfjoin_batch.c
 *	  The batches of the filter's node of a join: outer rows read, their
 *	  keys evaluated once each and probed; "maybe" rows kept with their keys
 *	  and given, sorted by key, to the exact checks; the pause.
 *
 * Memory.  A key is evaluated in memory reset at each row (what md5() of a
 * detoasted value allocates), its value copied into the batch's memory,
 * reset at the next batch; a key that is a column of the row is not
 * copied (the row lives as long as the batch).  A batch's copies of rows
 * and keys are counted: it stops at BFJ_BATCH rows or once they pass
 * work_mem / BFJ_BATCH_MEM_DIV (so a wide key, upper() of a 1 MB value,
 * makes batches of a row or two).  A "maybe" row keeps its key, detoasted,
 * beside its copy, both counted against work_mem with the batch's: a row
 * that would take them past work_mem waits until the rows kept before it
 * are checked (unless it is the only one).  So the node's memory is at
 * most work_mem, plus a row with its key (held by the batch and kept, when
 * that one row is wider than what is left), plus the filter's bits, however
 * many outer rows it reads and whatever the key's expression allocates.
 *
 * Lookahead.  A batch starts at one row and doubles up to BFJ_BATCH, and
 * the first exact checks wait for one "maybe" row, then two, four...: a
 * LIMIT's first row is returned before the node evaluates the keys of
 * the rows after it (an error there, a division by zero, is not raised
 * when the plain plan would not reach it).  After that the node reads
 * ahead of the rows it returns, by a batch, as a Sort or a Hash does.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfjoin_batch.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "utils/datum.h"
#include "utils/memutils.h"

#include "bfjoin_state.h"

/*
 * Open the filter at the first row (or when a parallel query is set up;
 * again after the leader gave its shared copy back, if it runs again).
 */
void
bf_join_open_filter(BfJoinState *s)
{
	EState	   *estate = s->css.ss.ps.state;
	MemoryContext old = MemoryContextSwitchTo(estate->es_query_cxt);

	/*
	 * With bloomfilter.join_filter off since the plan was made (a prepared
	 * statement's), every row is checked exactly: the setting is the way
	 * out of the filter, even for plans already made.
	 */
	s->opened = true;
	if (!bf_join_filter_enabled)
		s->filter = NULL;
	else if (s->shared != NULL && s->shared->bits_off > 0)
	{
		/* a worker: the leader's copy of the bits, in shared memory */
		s->filter = bf_join_filter_attach((char *) s->shared + s->shared->bits_off,
										  s->keytype, s->keycoll,
										  estate->es_query_cxt);
		s->bits_shared = true;
	}
	else
		s->filter = bf_join_filter_open(s->leaves, s->keytype, s->keycoll,
										s->outer->plan->plan_rows,
										estate->es_query_cxt);
	s->c.opened = true;
	s->c.unavailable = s->filter == NULL;
	MemoryContextSwitchTo(old);
}

/* Size the batches to the filter, and make their arrays, at the first row. */
void
bf_join_size_batches(BfJoinState *s)
{
	MemoryContext old = MemoryContextSwitchTo(s->css.ss.ps.state->es_query_cxt);

	s->batch = (s->filter && bf_join_filter_in_memory(s->filter) &&
				bf_join_filter_bytes(s->filter) > BFJ_BATCH_BYTES) ? BFJ_BATCH : 1;
	if (s->batch > 1)
	{
		s->bslots = palloc(s->batch * sizeof(TupleTableSlot *));
		for (int i = 0; i < s->batch; i++)
			s->bslots[i] = MakeSingleTupleTableSlot(s->outerdesc, &TTSOpsHeapTuple);
	}
	s->bwant = 1;
	s->bsize = palloc0(s->batch * sizeof(Size));
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
		s->c.pauses++;
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

/* The bytes a key kept for the sort takes (detoasted), about. */
static Size
key_bytes(BfJoinState *s, Datum key)
{
	if (s->keybyval)
		return 0;
	if (s->keylen == -1)
		return MAXALIGN(toast_raw_datum_size(key)) + 16;
	return MAXALIGN(datumGetSize(key, false, s->keylen)) + 16;
}

/*
 * Read the next batch of outer rows, evaluate their keys and probe them:
 * bmaybe[i] is true where row i needs its exact check.  The last batch's
 * rows and keys are let go first.
 */
void
bf_join_fill_batch(BfJoinState *s)
{
	ExprContext *econtext = s->css.ss.ps.ps_ExprContext;
	Size		limit = (Size) work_mem * 1024 / BFJ_BATCH_MEM_DIV;
	int			n = 0;
	int			np = 0;

	ResetExprContext(econtext);
	MemoryContextReset(s->batch_cxt);
	if (s->batch > 1)
		for (int i = 0; i < s->batch; i++)
			ExecClearTuple(s->bslots[i]);
	s->nbatch = s->bpos = 0;
	s->bbytes = 0;
	while (n < s->bwant && (n == 0 || s->bbytes < limit))
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
		s->bsize[n] = s->bnull[n] ? 0 : key_bytes(s, s->bkeys[n]);
		if (s->batch > 1)
			s->bsize[n] += MAXALIGN(((HeapTupleTableSlot *) row)->tuple->t_len);
		s->bbytes += s->bsize[n];
		n++;
	}
	s->nbatch = n;
	s->bwant = Min(s->bwant * 2, s->batch);
	s->c.rows_in += n;

	for (int i = 0; i < n; i++)
	{
		if (s->bnull[i])
		{
			s->bmaybe[i] = false;
			s->c.null_keys++;
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
				s->c.answered++;
		}
		watch_share(s, np, maybes);
	}
	else if (s->pause_left > 0 && s->filter != NULL)
	{
		for (int i = 0; i < n; i++)
			if (!s->bnull[i])
			{
				s->c.paused_rows++;
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
 * Whether row i of the batch, a "maybe" row, may be kept with those kept
 * before it: its copy and its key, with theirs and the batch's, within
 * work_mem (or it would be the only one).
 */
bool
bf_join_maybe_fits(BfJoinState *s, int i)
{
	return s->nmaybe == 0 ||
		s->mbytes + s->bbytes + s->slot_bytes + s->bsize[i] <=
		(Size) work_mem * 1024;
}

/*
 * Keep a "maybe" row for its exact check; true when enough are kept: the
 * count asked for, or work_mem of copies with the batch's (slots and arrays
 * included: the slots stay, for the next rows).
 */
bool
bf_join_keep_maybe(BfJoinState *s, TupleTableSlot *row, Datum key)
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
		s->mbytes + s->bbytes >= (Size) work_mem * 1024;
}

/*
 * Give the kept "maybe" rows to the Nested Loop, in key order when there
 * are many of them.
 */
void
bf_join_start_checks(BfJoinState *s)
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
		s->c.sorted_runs++;
	}
	s->feeder->slots = s->mslots;
	s->feeder->order = order;
	s->feeder->n = s->nmaybe;
	s->feeder->pos = 0;
	s->checking = true;
	s->c.batches++;
	s->c.peak_bytes = Max(s->c.peak_bytes, s->mbytes);
	if (s->mbytes + s->bbytes < (Size) work_mem * 1024 && s->mwant <= INT_MAX / 2)
		s->mwant *= 2;
}

/*
 * Let the kept rows go, once the Nested Loop is done with them (or the node
 * is rescanned); the exact checks counted are of the rows it took.
 */
void
bf_join_release_maybes(BfJoinState *s)
{
	for (int i = 0; i < s->nmaybe; i++)
		ExecClearTuple(s->mslots[i]);
	if (s->checking)
		s->c.checks += s->feeder->pos;
	s->nmaybe = 0;
	s->mbytes = 0;
	MemoryContextReset(s->maybe_cxt);
	s->feeder->n = s->feeder->pos = 0;
	s->checking = false;
}
