/*-------------------------------------------------------------------------
 *
 * bfjoin_state.h
 *	  The state of the filter's node of a join, shared by the files of its
 *	  execution: bfjoin_exec.c (the node) and bfjoin_batch.c (its batches of
 *	  outer rows and of exact checks).
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfjoin_state.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BFJOIN_STATE_H
#define BFJOIN_STATE_H

#include "utils/sortsupport.h"

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
	int			batch;			/* its most rows: BFJ_BATCH or 1 */
	int			bwant;			/* rows read into the next: 1, 2, 4 .. batch */
	Size		bbytes;			/* its copies of rows and keys, about */
	Size	   *bsize;			/* each row's copy and its key's, about */
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

	/* for EXPLAIN ANALYZE: this process's counts; the workers' (leader) */
	BfJoinCounts c;
	BfJoinCounts workers;

	/* under a Gather: the shared counts and bits (bfjoin_counts.c) */
	BfJoinShared *shared;
	Size		share_bytes;	/* of bits the leader puts there */
	bool		bits_shared;	/* the filter probes the shared bits */
};

/* bfjoin_batch.c */
extern void bf_join_open_filter(BfJoinState *s);
extern void bf_join_size_batches(BfJoinState *s);
extern void bf_join_fill_batch(BfJoinState *s);
extern bool bf_join_maybe_fits(BfJoinState *s, int i);
extern bool bf_join_keep_maybe(BfJoinState *s, TupleTableSlot *row, Datum key);
extern void bf_join_start_checks(BfJoinState *s);
extern void bf_join_release_maybes(BfJoinState *s);

#endif							/* BFJOIN_STATE_H */
