/*-------------------------------------------------------------------------
 *
 * bfcompact.c
 *	  Compaction of a bloomfilter index: replace its layers by one sized for
 *	  the keys its table holds, while the table stays writable; move a lone
 *	  layer down the file, and give the free pages at its end back.  VACUUM
 *	  does it (bfvacuum.c).
 *
 * A Bloom filter cannot be resized or have its keys read back, so a new
 * layer is filled from the table.  How that keeps every key, with writers
 * going on:
 *
 * 1. Under the metapage's exclusive lock, the new layer is named as the
 *    newest (op BF_OP_COMPACT; replaced = the old layers), and the batch
 *    lock's ExclusiveLock.  Inserts hold the share lock, or the batch lock's
 *    ShareLock, for all of their work (bfbatch.c), so every insert from then
 *    on sets its key's bits in the new layer (and takes no old layer's bits
 *    as proof that a key is there), and every insert before it is done.  The
 *    layer is counted from the start as holding the keys the compaction
 *    will set (bf_compact_reserved), so that inserts meanwhile find only its
 *    headroom free, and grow the index past it.
 * 2. The table is scanned with a non-vacuumable snapshot: every tuple some
 *    snapshot may still see (live, recently dead, or inserted or deleted by
 *    a transaction in progress) has its key's bits set in the new layer (a
 *    superset of the keys is only a few more false positives).  A key set
 *    in an old layer was set before step 1, by an insert that came after
 *    its heap tuple was written, so the scan, which starts after step 1,
 *    finds that tuple, or no snapshot can see it any more.  (A tuple dead
 *    to all is skipped, as CREATE INDEX skips it: its TOASTed values may be
 *    gone already.)  The first scan counts the distinct keys it meets: if
 *    they would overfill the layer (VACUUM sized it from the live rows,
 *    which leave out the rows of transactions in progress), the compaction
 *    is given up before it writes anything, the old layers become live
 *    again, and one sized for the keys met begins.
 * 3. The scan's bits are ORed into the new layer's pages, keeping what
 *    inserts set there meanwhile, each page WAL-logged whole.
 * 4. A snapshot-conflict horizon is WAL-logged for hot standbys (the scan
 *    judged "dead to all" by this server's horizon: bf_log_conflict), then,
 *    under the exclusive lock again, the old layers are dropped (op NONE):
 *    the new layer holds every key they held that a snapshot can still see.
 *
 * Probes test every named layer throughout.  One that read the metapage
 * before step 4 may meet a dropped layer's page reused for a new layer: it
 * then reads the metapage again (bf_read_page), which names every layer of
 * a key committed before its snapshot.  A crash at any point leaves the
 * metapage naming every layer a committed key went into; the next VACUUM
 * finds op still set and does steps 2 to 4 again.
 *
 * A move (op BF_OP_MOVE) copies a lone layer into free pages lower in the
 * file in the same way, the copy taking the original's place as the newest
 * layer; then the pages past the last layer are truncated, if no other
 * session holds the index (as VACUUM truncates a heap).
 *
 * The new layer's bits are built in memory, at most maintenance_work_mem
 * (autovacuum_work_mem in autovacuum) at a time: a larger layer takes one
 * scan of the table per part.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfcompact.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/nbtxlog.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xloginsert.h"
#include "catalog/index.h"
#include "catalog/storage.h"
#include "commands/vacuum.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "postmaster/autovacuum.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "bfindex.h"

/*
 * Keys the live layers hold, as counted; with the table's live rows known
 * (VACUUM's count), at most those: no more distinct keys than rows.
 */
static double
bf_held_keys(const BfMetaPageData *meta, double live_rows, bool live_rows_known)
{
	double		held = (double) bf_live_keys(meta);

	if (live_rows_known && live_rows >= 0 && live_rows < held)
		held = live_rows;
	return held;
}

/*
 * Is a compaction worth a scan of the table: more than one live layer (each
 * probe reads a page of each, and the deeper layers cost more bits per key
 * than one layer for all the keys), one that took more keys than its
 * capacity and the lag of the counts explain (its rate is past what it
 * promised: a layer that could not grow), or one holding more than twice
 * the keys the table's rows can (the rest are keys of deleted rows: a
 * compaction drops them and makes the layer smaller)?
 */
#define BF_OVERFULL			1.1

bool
bf_compaction_due(const BfMetaPageData *meta, double live_rows,
				  bool live_rows_known)
{
	const BfLayer *last = &meta->layers[meta->nlayers - 1];

	if (meta->op != BF_OP_NONE || bf_live_layers(meta) == 0)
		return false;
	if (bf_live_layers(meta) > 1 ||
		(double) last->nkeys > BF_OVERFULL * (double) last->capacity)
		return true;
	return live_rows_known && live_rows >= 0 &&
		(double) bf_live_keys(meta) > 2 * live_rows + BF_MIN_CAPACITY;
}

/*
 * The capacity of the layer a compaction makes: the keys held, with
 * BF_COMPACT_HEADROOM for the writes to come, at least the index's capacity
 * option and BF_MIN_CAPACITY, at most what one layer holds at the rate.
 */
uint64
bf_compact_capacity(Relation index, const BfMetaPageData *meta,
					double live_rows, bool live_rows_known)
{
	BfOptions  *opts = (BfOptions *) index->rd_options;
	double		cap = bf_held_keys(meta, live_rows, live_rows_known) * BF_COMPACT_HEADROOM;

	if (opts && opts->capacity > 0)
		cap = Max(cap, (double) opts->capacity);
	cap = Max(cap, (double) BF_MIN_CAPACITY);
	cap = Min(cap, (double) bloom_max_capacity(BF_LAYER_RATE(meta->rate, 0)));
	return (uint64) cap;
}

typedef struct BfOpArg
{
	uint16		op;
	BfLayer		layer;			/* begin: the new layer; end: its nkeys */
	uint64		seen;			/* end of a compaction: the keys its scan met */
} BfOpArg;

/* Name the new layer as the newest; the others are being replaced. */
static bool
bf_begin_op(BfMetaPageData *meta, void *arg)
{
	BfOpArg    *a = (BfOpArg *) arg;

	if (meta->op != BF_OP_NONE || meta->nlayers >= BF_MAX_LAYERS ||
		meta->next_id != a->layer.id)
		elog(ERROR, "bloomfilter index changed under its grow lock");
	meta->replaced = meta->nlayers;
	meta->layers[meta->nlayers++] = a->layer;
	meta->next_id++;
	meta->op = a->op;
	meta->generation++;
	return true;
}

/*
 * Drop the replaced layers.  A move's copy was named counting the keys of
 * the layer it copies, and counts the inserts since.  A compaction's layer
 * counts the keys the scan set, or met if more (a->layer.nkeys), and those
 * inserted since it was named: its count less what it was counted to hold
 * meanwhile, the larger of its reservation and the keys the scan met
 * (bf_fill_fits raised it to those).  A key both set is counted twice: the
 * layer grows a little early, never late.
 */
static bool
bf_end_op(BfMetaPageData *meta, void *arg)
{
	BfOpArg    *a = (BfOpArg *) arg;
	uint32		gone = meta->replaced;
	BfLayer    *l = &meta->layers[gone];

	if (meta->op != a->op || l->id != a->layer.id)
		elog(ERROR, "bloomfilter index changed under its grow lock");
	if (a->op == BF_OP_COMPACT)
	{
		uint64		held = Max(bf_compact_reserved(l), a->seen);

		l->nkeys = (l->nkeys > held ? l->nkeys - held : 0) + a->layer.nkeys;
	}
	memmove(&meta->layers[0], &meta->layers[gone],
			(meta->nlayers - gone) * sizeof(BfLayer));
	meta->nlayers -= gone;
	memset(&meta->layers[meta->nlayers], 0, gone * sizeof(BfLayer));
	meta->replaced = 0;
	meta->op = BF_OP_NONE;
	meta->generation++;
	return true;
}

/*
 * Give up a compaction whose layer the table's keys would overfill: the old
 * layers are live again, and the compaction's layer, which holds the keys
 * inserted since it was named and none of the scan's, becomes one more
 * layer, counted for those keys.  (A compaction sized anew replaces them
 * all.)
 */
static bool
bf_abandon_op(BfMetaPageData *meta, void *arg)
{
	BfOpArg    *a = (BfOpArg *) arg;
	BfLayer    *l = &meta->layers[meta->replaced];

	if (meta->op != BF_OP_COMPACT || l->id != a->layer.id)
		elog(ERROR, "bloomfilter index changed under its grow lock");
	l->nkeys = bf_compact_inserted(l);
	meta->replaced = 0;
	meta->op = BF_OP_NONE;
	meta->generation++;
	return true;
}

/*
 * Is there a lower place for a lone layer, so that the pages after it can
 * be given back?
 */
static bool
bf_move_due(const BfMetaPageData *meta)
{
	return meta->op == BF_OP_NONE && meta->nlayers == 1 &&
		bf_place_layer(meta, meta->layers[0].npages) < meta->layers[0].start;
}

/*
 * Write a new layer's empty pages and name it as the newest, with op, under
 * the grow lock (which growth takes too).  False if there is no room, or
 * (a move) if the metapage read under the lock has no lone layer to move
 * down: the index may have grown since the caller looked.
 */
static bool
bf_begin(Relation index, uint16 op, uint64 capacity)
{
	BfMetaPageData meta;
	BfOpArg		arg;
	bool		ok;

	/* (the batch lock before the grow lock: see bfindex.h) */
	bf_batch_lock(index, ExclusiveLock);
	LockPage(index, BF_METAPAGE_BLKNO, ExclusiveLock);
	bf_read_meta(index, &meta);
	arg.op = op;
	if (meta.op != BF_OP_NONE)
		ok = false;
	else if (op == BF_OP_MOVE)
	{
		/* a copy of the lone layer, in the lowest free pages */
		ok = bf_move_due(&meta);
		arg.layer = meta.layers[0];
		arg.layer.start = bf_place_layer(&meta, arg.layer.npages);
		arg.layer.id = meta.next_id;
	}
	else
		ok = bf_plan_layer(&meta, 0, capacity, &arg.layer);
	if (ok)
	{
		/* (a move's copy starts with the count of the layer it copies) */
		if (op == BF_OP_COMPACT)
			arg.layer.nkeys = bf_compact_reserved(&arg.layer);
		bf_write_layer(index, &arg.layer, NULL);
		bf_update_meta(index, bf_begin_op, &arg);
	}
	UnlockPage(index, BF_METAPAGE_BLKNO, ExclusiveLock);
	bf_batch_unlock(index, ExclusiveLock);
	return ok;
}

/*
 * End (or, with bf_abandon_op, give up) the operation op of layer: nkeys
 * and seen as bf_end_op counts them.
 */
static void
bf_end(Relation index, uint16 op, const BfLayer *layer, uint64 nkeys,
	   uint64 seen, bool (*change) (BfMetaPageData *meta, void *arg))
{
	BfOpArg		arg;

	arg.op = op;
	arg.layer = *layer;
	arg.layer.nkeys = nkeys;
	arg.seen = seen;
	bf_batch_lock(index, ExclusiveLock);
	LockPage(index, BF_METAPAGE_BLKNO, ExclusiveLock);
	bf_update_meta(index, change, &arg);
	UnlockPage(index, BF_METAPAGE_BLKNO, ExclusiveLock);
	bf_batch_unlock(index, ExclusiveLock);
}

/*
 * A move's copy: OR every page of the old layer into the new one, with
 * VACUUM's cost-based delay after each page, as the compaction's scan has
 * (a layer of 20 million keys is 26 MB of reads and as much WAL).
 */
static void
bf_copy_layer(Relation index, BfMetaPageData *meta)
{
	const BfLayer *from = &meta->layers[0];
	const BfLayer *to = &meta->layers[meta->replaced];
	uint8		bits[BF_BLOCKS_PER_PAGE * BLOOM_BLOCK_BYTES];

	/* a move replaces one layer: the one it copies (bf_begin) */
	if (meta->replaced != 1)
		elog(ERROR, "bloomfilter index \"%s\" has a move of %u layers",
			 RelationGetRelationName(index), meta->replaced);

	for (BlockNumber p = 0; p < from->npages; p++)
	{
		uint64		first = (uint64) p * BF_BLOCKS_PER_PAGE;
		uint64		n = Min((uint64) BF_BLOCKS_PER_PAGE, from->nblocks - first);
		Buffer		buf = bf_read_page(index, meta, from, p);

		if (!BufferIsValid(buf))
			elog(ERROR, "bloomfilter index \"%s\" changed during a move",
				 RelationGetRelationName(index));
		memcpy(bits, BfPageGetBits(BufferGetPage(buf)), n * BLOOM_BLOCK_BYTES);
		UnlockReleaseBuffer(buf);
		bf_or_layer(index, to, first, n, bits);
		/* (no lock held here: the cost-based delay slows no writer) */
#if PG_VERSION_NUM >= 180000
		vacuum_delay_point(false);
#else
		vacuum_delay_point();
#endif
	}
}

/*
 * Whether VACUUM may truncate the table, by its vacuum_truncate option (and,
 * from PostgreSQL 18, the setting of that name): the index's truncation
 * takes the same ACCESS EXCLUSIVE lock, which a hot standby replays and
 * which cancels the standby's queries of the index, so a table whose owner
 * turned truncation off keeps its index's free pages too.  (A VACUUM
 * (TRUNCATE false) is not told to index access methods.)
 */
static bool
bf_truncate_allowed(Relation heap)
{
	StdRdOptions *options = (StdRdOptions *) heap->rd_options;

#if PG_VERSION_NUM >= 190000
	if (options == NULL || options->vacuum_truncate == PG_TERNARY_UNSET)
		return vacuum_truncate;
	return options->vacuum_truncate == PG_TERNARY_TRUE;
#elif PG_VERSION_NUM >= 180000
	if (options == NULL || !options->vacuum_truncate_set)
		return vacuum_truncate;
	return options->vacuum_truncate;
#else
	if (options == NULL)
		return true;
	return options->vacuum_truncate;
#endif
}

/*
 * Give back the pages after the last layer, if no other session holds the
 * index: a session that read the metapage before a layer was dropped may
 * still read that layer's pages.  Inserts hold a lock on the index, and so
 * do probes, for their whole transaction.
 */
static void
bf_truncate(Relation index, Relation heap)
{
	BfMetaPageData meta;
	BlockNumber end;

	/*
	 * A VACUUM that vacuums the table's indexes in parallel calls this in
	 * parallel mode, where the ACCESS EXCLUSIVE lock, which is WAL-logged for
	 * hot standbys, cannot get the transaction ID its record needs: the free
	 * pages stay for layers to come, and a VACUUM that is not parallel
	 * (autovacuum's are not) gives them back.
	 */
	if (IsInParallelMode() || !bf_truncate_allowed(heap))
		return;
	bf_read_meta(index, &meta);
	if (bf_layers_end(&meta) >= RelationGetNumberOfBlocks(index))
		return;
	if (!ConditionalLockRelation(index, AccessExclusiveLock))
		return;
	bf_read_meta(index, &meta);
	end = bf_layers_end(&meta);
	if (end < RelationGetNumberOfBlocks(index))
		RelationTruncate(index, end);
	UnlockRelation(index, AccessExclusiveLock);
}

/*
 * Before the replaced layers are dropped: a hot standby must cancel the
 * queries whose snapshots may still see a row the compaction's scan left out
 * as dead to all (by this server's horizon, which a standby without
 * hot_standby_feedback does not hold back; and a standby's feedback may
 * hold it back again only after the scan judged), since the new layer may
 * lack its key.  As nbtree does when it removes index entries, the newest
 * deleter of those rows is WAL-logged as a snapshot-conflict horizon
 * (nothing when the scan left out no row).  An extension that is not
 * preloaded cannot add a resource manager, and generic WAL carries no
 * horizon, so the record is nbtree's XLOG_BTREE_REUSE_PAGE, whose replay
 * does nothing but resolve that conflict (for the index's relation, in its
 * database).
 */
static void
bf_log_conflict(Relation index, Relation heap, TransactionId horizon)
{
	xl_btree_reuse_page xlrec;
	FullTransactionId next;
	uint32		epoch;

	if (!TransactionIdIsNormal(horizon) || !RelationNeedsWAL(index) ||
		!XLogStandbyInfoActive())
		return;
	next = ReadNextFullTransactionId();
	epoch = EpochFromFullTransactionId(next);
	if (horizon > XidFromFullTransactionId(next))
		epoch--;				/* from before the last wraparound */
	memset(&xlrec, 0, sizeof(xlrec));
#if PG_VERSION_NUM >= 160000
	xlrec.locator = index->rd_locator;
	xlrec.block = BF_METAPAGE_BLKNO;
	xlrec.snapshotConflictHorizon = FullTransactionIdFromEpochAndXid(epoch, horizon);
	xlrec.isCatalogRel = RelationIsAccessibleInLogicalDecoding(heap);
#else
	xlrec.node = index->rd_node;
	xlrec.block = BF_METAPAGE_BLKNO;
	xlrec.latestRemovedFullXid = FullTransactionIdFromEpochAndXid(epoch, horizon);
#endif
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, SizeOfBtreeReusePage);
	XLogInsert(RM_BTREE_ID, XLOG_BTREE_REUSE_PAGE);
}

/* Say that a compaction of the index was not done, and why. */
static void
bf_not_compacted(Relation index, const char *why, const char *hint)
{
	ereport(bf_in_autovacuum() ? LOG : WARNING,
			errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			errmsg("bloomfilter index \"%s\" was not compacted",
				   RelationGetRelationName(index)),
			errdetail("%s", why),
			hint ? errhint("%s", hint) : 0);
}

/* attempts at a compaction whose layer the table's keys would overfill */
#define BF_COMPACT_TRIES	3

/*
 * Steps 2 to 4 of the compaction the metapage names: fill its layer from the
 * table, then drop the layers it replaces.  A layer the table's keys would
 * overfill is given up, and a compaction sized for them takes its place (a
 * few times at most: keys that keep coming faster than a scan grow the
 * index, and the next VACUUM compacts it again).  A fill that fails leaves
 * the compaction under way, for the next VACUUM, and says why.  The layer counts the keys its scan
 * met, whichever is more of those and those that set bits (which an
 * overfilled layer undercounts), so that a layer past its capacity is seen
 * as such.
 */
static void
bf_run_compaction(Relation index, Relation heap, BfMetaPageData *meta)
{
	for (int tries = 1;; tries++)
	{
		BfLayer		target = meta->layers[meta->replaced];
		BfFill		fill;
		char	   *failure;
		bool		done = bf_fill_guarded(index, heap, meta, &target,
										   tries >= BF_COMPACT_TRIES, &fill,
										   &failure);

		if (done)
		{
			bf_log_conflict(index, heap, fill.horizon);
			bf_end(index, BF_OP_COMPACT, &target,
				   Max(fill.added, (uint64) fill.seen), (uint64) fill.seen,
				   bf_end_op);
			break;
		}
		if (failure)
		{
			/*
			 * The compaction stays under way: its layer may hold some of the
			 * scan's bits (a part was written) that its count does not show,
			 * so it must not become a layer of its own; inserts go on into
			 * it and past it, and each VACUUM tries again.
			 */
			bf_not_compacted(index, psprintf("Filling its new layer from the table failed: %s", failure),
							 "The index answers from its old layers and the new one meanwhile; each VACUUM tries again until one finishes the compaction.");
			break;
		}
		bf_end(index, BF_OP_COMPACT, &target, 0, 0, bf_abandon_op);
		bf_read_meta(index, meta);
		if (!bf_begin(index, BF_OP_COMPACT,
					  (uint64) Min(fill.need * BF_COMPACT_HEADROOM,
								   (double) bloom_max_capacity(BF_LAYER_RATE(meta->rate, 0)))))
			break;
		bf_read_meta(index, meta);
		if (meta->op != BF_OP_COMPACT)
			break;
	}
	bf_read_meta(index, meta);
}

/*
 * Why the index cannot be compacted now, or NULL.  Its keys must hash as
 * they did (labels added to the key's enum are recorded first, as an insert
 * would); its table must be a heap (the scan judges which rows some snapshot
 * still needs, and which deleters a hot standby must hear of, by heap
 * visibility); and in parallel mode, where a failure could not be caught,
 * it must be an index of a plain column of a type that is never TOASTed
 * (a TOASTed key of a row deleted meanwhile may be gone before the scan
 * reads it, once VACUUM of the TOAST table removes it).  *hint tells what
 * to do.
 */
static const char *
bf_cannot_compact(Relation index, Relation heap, BfMetaPageData *meta,
				  const char **hint)
{
	BloomKeyType kt;
	BfKeysMatch match;

	*hint = "Rebuild the index with REINDEX.";
	while ((match = bf_keys_match(index, meta, &kt)) == BF_KEYS_ADDED)
	{
		(void) bf_update_labels(index, &meta->labels, &kt.oidlabels);
		bf_read_meta(index, meta);
	}
	if (match == BF_KEYS_CHANGED)
		return psprintf("Its keys no longer hash as they did: they are of key family \"%s\", its column's keys of \"%s\" now.",
						bloom_family_display(meta->family),
						bloom_family_display(kt.family));
	if (match == BF_KEYS_LABELS)
		return "A label of its key's enum type was renamed since its keys were hashed, or too many were added to tell.";
	if (heap->rd_tableam != GetHeapamTableAmRoutine())
	{
		*hint = NULL;
		return "Its table is not a heap: a compaction scans only heap tables.";
	}
	if (IsInParallelMode() &&
		(RelationGetIndexExpressions(index) != NIL ||
		 RelationGetIndexPredicate(index) != NIL ||
		 TupleDescAttr(RelationGetDescr(index), 0)->attlen == -1))
	{
		*hint = "A VACUUM that does not vacuum indexes in parallel (autovacuum, or VACUUM (PARALLEL 0)) compacts it.";
		return "The index has an expression, a predicate or a key of variable length, and this VACUUM cleans it up in parallel mode.";
	}
	return NULL;
}

/*
 * Compact the index if it is due, finish an operation a crash or an error
 * cut off, move a lone layer down, and give free pages back.  The caller
 * (VACUUM) holds a lock on the table that keeps other compactions out.
 * Whatever the index's state, VACUUM goes on: a compaction that cannot be
 * done now is skipped, with a message (bf_cannot_compact), and probes and
 * inserts refuse an index whose keys no longer hash as they did.
 */
void
bf_compact(Relation index, Relation heap, double live_rows, bool live_rows_known)
{
	BfMetaPageData meta;
	const char *hint;
	const char *why;

	bf_read_meta(index, &meta);
	why = bf_cannot_compact(index, heap, &meta, &hint);
	if (why == NULL)
	{
		if (bf_compaction_due(&meta, live_rows, live_rows_known) &&
			bf_begin(index, BF_OP_COMPACT,
					 bf_compact_capacity(index, &meta, live_rows, live_rows_known)))
			bf_read_meta(index, &meta);
		if (meta.op == BF_OP_COMPACT)
			bf_run_compaction(index, heap, &meta);
	}
	else if (meta.op == BF_OP_COMPACT ||
			 bf_compaction_due(&meta, live_rows, live_rows_known))
		bf_not_compacted(index, why, hint);
	if (bf_move_due(&meta) && bf_begin(index, BF_OP_MOVE, 0))
		bf_read_meta(index, &meta);
	if (meta.op == BF_OP_MOVE)
	{
		BfLayer		target = meta.layers[meta.replaced];

		bf_copy_layer(index, &meta);
		bf_end(index, BF_OP_MOVE, &target, 0, 0, bf_end_op);
	}
	bf_truncate(index, heap);
}
