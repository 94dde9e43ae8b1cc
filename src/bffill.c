/*-------------------------------------------------------------------------
 *
 * bffill.c
 *	  Fill a compaction's new layer of a bloomfilter index from its table: every
 *	  row some snapshot may still need, in parts of at most maintenance_work_mem,
 *	  counting the distinct keys met and the deleters of the rows left out (see
 *	  bfcompact.c).
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bffill.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "commands/vacuum.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "postmaster/autovacuum.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"

#include "bfindex.h"

/* The memory the new layer's bits may take at a time. */
static Size
bf_compact_budget(void)
{
	int			kb = maintenance_work_mem;

	if (bf_in_autovacuum() && autovacuum_work_mem != -1)
		kb = autovacuum_work_mem;
	return (Size) kb * 1024;
}

/*
 * Does some snapshot still need this heap tuple: live, inserted or deleted
 * by a transaction in progress, or deleted by one whose deletion not every
 * snapshot sees yet (judged, as a non-vacuumable snapshot does, by the
 * server's current horizon)?  A tuple some snapshot may still see has its
 * TOASTed values still there; one dead to all may not.  A tuple left out
 * because its deleter is older than the horizon is one a hot standby's
 * older snapshot may still see: its deleter moves *horizon (the newest such
 * deleter), the snapshot-conflict horizon the compaction WAL-logs (as
 * nbtree logs the newest deleter of the entries it removes).  A tuple whose
 * inserter aborted was never seen by anyone.  The buffer is pinned; it is
 * share-locked here, since hint bits may be set.
 */
static bool
bf_tuple_needed(HeapTuple tuple, Buffer buf, GlobalVisState *vistest,
				TransactionId *horizon)
{
	TransactionId dead_after = InvalidTransactionId;
	HTSV_Result result;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	result = HeapTupleSatisfiesVacuumHorizon(tuple, buf, &dead_after);
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	if (result == HEAPTUPLE_DEAD)
		return false;
	/* 19 asks whether the horizons may be recomputed: yes, as before 19 */
#if PG_VERSION_NUM >= 190000
	if (result == HEAPTUPLE_RECENTLY_DEAD &&
		GlobalVisTestIsRemovableXid(vistest, dead_after, true))
#else
	if (result == HEAPTUPLE_RECENTLY_DEAD &&
		GlobalVisTestIsRemovableXid(vistest, dead_after))
#endif
	{
		if (!TransactionIdIsValid(*horizon) ||
			TransactionIdFollows(dead_after, *horizon))
			*horizon = dead_after;
		return false;
	}
	return true;
}

/*
 * Set the key of every tuple of the table some snapshot may still need
 * (bf_tuple_needed) whose key's block lies in [lo, hi) of the layer, in bits
 * (the blocks lo..hi-1); returns the keys that set bits.  Every such key,
 * in the part or not, goes into distinct if given.  The table is a heap
 * (bf_compact checks it).
 */
static uint64
bf_scan_part(Relation index, Relation heap, const BfMetaPageData *meta,
			 const BfLayer *layer, uint64 lo, uint64 hi, uint8 *bits,
			 BloomKeyType *kt, BloomDistinct *distinct, TransactionId *horizon)
{
	IndexInfo  *ii = BuildIndexInfo(index);
	EState	   *estate = CreateExecutorState();
	ExprContext *econtext = GetPerTupleExprContext(estate);
	TupleTableSlot *slot = table_slot_create(heap, NULL);
	GlobalVisState *vistest = GlobalVisTestFor(heap);
	ExprState  *predicate;
	TableScanDesc scan;
	HeapTuple	tuple;
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	uint64		added = 0;

	econtext->ecxt_scantuple = slot;
	predicate = ExecPrepareQual(ii->ii_Predicate, estate);
	scan = table_beginscan_strat(heap, SnapshotAny, 0, NULL, true, false);
	while ((tuple = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Buffer		buf = ((HeapScanDesc) scan)->rs_cbuf;
		uint64		h;
		uint64		b;

		CHECK_FOR_INTERRUPTS();
#if PG_VERSION_NUM >= 180000
		vacuum_delay_point(false);
#else
		vacuum_delay_point();
#endif
		if (!bf_tuple_needed(tuple, buf, vistest, horizon))
			continue;
		MemoryContextReset(econtext->ecxt_per_tuple_memory);
		ExecStoreBufferHeapTuple(tuple, slot, buf);
		if (predicate && !ExecQual(predicate, econtext))
			continue;
		FormIndexDatum(ii, slot, estate, values, isnull);
		if (isnull[0])
			continue;
		h = bloom_key_hash(kt, values[0], meta->seed);
		if (distinct)
			bloom_distinct_add(distinct, h);
		b = bloom_block_of(h, layer->nblocks);
		if (b < lo || b >= hi)
			continue;
		/* the part is a bloom bit array of its own, at the block's offset */
		if (!bloom_block_test(bits + (b - lo) * BLOOM_BLOCK_BYTES, (int) layer->k, h))
		{
			uint8	   *blk = bits + (b - lo) * BLOOM_BLOCK_BYTES;

			bloom_set_hash(blk, 1, (int) layer->k, h);
			added++;
		}
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
	return added;
}

/* Add count keys to the count of layer id. */
typedef struct BfRaiseArg
{
	uint32		layer;
	uint64		count;
} BfRaiseArg;

static bool
bf_raise_count(BfMetaPageData *meta, void *arg)
{
	BfRaiseArg *a = (BfRaiseArg *) arg;

	for (uint32 i = 0; i < meta->nlayers; i++)
		if (meta->layers[i].id == a->layer)
		{
			meta->layers[i].nkeys += a->count;
			return true;
		}
	return false;
}

/*
 * After the first part's scan: the keys it met (distinct), those inserted
 * into the layer since it was named (mine) and into layers grown after it
 * (later).  False if the scan's and the layer's inserts would overfill it;
 * otherwise the layer's count is raised to what the scan met, if more than
 * it was counted to hold, so that inserts from now on find only the room
 * truly left (the scan's later parts set those keys too).
 */
static bool
bf_fill_fits(Relation index, const BfLayer *layer, BloomDistinct *distinct,
			 bool must_fill, BfFill *fill)
{
	BfMetaPageData now;
	double		mine = 0;
	double		later = 0;
	bool		after = false;
	uint64		reserved = bf_compact_reserved(layer);

	fill->seen = bloom_distinct_estimate(distinct);
	bf_read_meta(index, &now);
	for (uint32 i = 0; i < now.nlayers; i++)
	{
		if (now.layers[i].id == layer->id)
		{
			mine = (double) bf_compact_inserted(&now.layers[i]);
			after = true;
		}
		else if (after)
			later += (double) now.layers[i].nkeys;
	}
	fill->need = fill->seen + mine + later;
	if (fill->seen + mine > (double) layer->capacity && !must_fill)
		return false;
	if (fill->seen > (double) reserved)
	{
		BfRaiseArg	arg = {layer->id, (uint64) fill->seen - reserved};

		bf_update_meta(index, bf_raise_count, &arg);
	}
	return true;
}

/*
 * Steps 2 and 3: fill the new layer from the table.  The layer was sized
 * from VACUUM's count of live rows, which leaves out the rows of
 * transactions in progress (a bulk load not yet committed) that the scan
 * sets too.  So the first part's scan also counts the distinct keys it
 * meets, and if those and the keys inserted into the layer since it was
 * named would overfill it, nothing is written (unless must_fill): false,
 * with fill->need the keys a compaction begun now must take.
 */
static bool
bf_fill_from_table(Relation index, Relation heap, const BfMetaPageData *meta,
				   const BfLayer *layer, bool must_fill, BfFill *fill)
{
	BloomKeyType kt;
	uint64		part = bf_compact_budget() / BLOOM_BLOCK_BYTES;
	BloomDistinct *distinct = palloc0(sizeof(BloomDistinct));

	memset(fill, 0, sizeof(*fill));
	fill->horizon = InvalidTransactionId;
	bf_key_type(index, &kt, CurrentMemoryContext);
	bf_check_family(index, meta, &kt);
	/* whole pages per part, at least one */
	part = Max(part / BF_BLOCKS_PER_PAGE, 1) * BF_BLOCKS_PER_PAGE;
	for (uint64 lo = 0; lo < layer->nblocks; lo += part)
	{
		uint64		hi = Min(lo + part, layer->nblocks);
		uint8	   *bits = palloc_extended((hi - lo) * BLOOM_BLOCK_BYTES,
										   MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		uint64		n = bf_scan_part(index, heap, meta, layer, lo, hi, bits,
									 &kt, distinct, &fill->horizon);

		if (distinct)
		{
			bool		fits = bf_fill_fits(index, layer, distinct, must_fill, fill);

			pfree(distinct);
			distinct = NULL;
			if (!fits)
			{
				pfree(bits);
				return false;
			}
		}
		bf_or_layer(index, layer, lo, hi - lo, bits);
		fill->added += n;
		pfree(bits);
	}
	return true;
}

/*
 * bf_fill_from_table in a subtransaction: an error it raises (an index
 * expression that fails on some row, or under VACUUM's search_path; the
 * key's type changed meanwhile) is caught, its message returned in
 * *failure, and the caller gives the compaction up: VACUUM must not fail
 * because of the index.  A cancel still cancels.  In parallel mode
 * (VACUUM's parallel index phase) no subtransaction can start: there
 * bf_compact compacts only an index of a plain column.
 */
bool
bf_fill_guarded(Relation index, Relation heap, const BfMetaPageData *meta,
				const BfLayer *layer, bool must_fill, BfFill *fill,
				char **failure)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	bool		ok = false;

	*failure = NULL;
	if (IsInParallelMode())
		return bf_fill_from_table(index, heap, meta, layer, must_fill, fill);
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		ok = bf_fill_from_table(index, heap, meta, layer, must_fill, fill);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		if (geterrcode() == ERRCODE_QUERY_CANCELED)
			PG_RE_THROW();
		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		*failure = edata->message;
	}
	PG_END_TRY();
	return ok;
}
