/*-------------------------------------------------------------------------
 *
 * bfinfo.c
 *	  bloom_index_info and bloom_index_verify: what a bloomfilter index
 *	  holds, and proof that it misses no key of its table.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfinfo.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/pg_am.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/rls.h"
#include "utils/ruleutils.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"

#include "bfindex.h"

/*
 * Bits set in a layer, and the false-positive rate its bits give now: a key
 * never added falls in a block (each about as likely) and finds its k bits
 * set there with probability (c / 512)^k, c the block's bits set (as
 * bloom_fill_stats reads a value's bits); false if meta is out of date
 * (bf_read_page).
 */
static bool
bf_layer_fill(Relation index, const BfMetaPageData *meta, const BfLayer *layer,
			  uint64 *bits_set, double *fpr)
{
	double		hit[BLOOM_BLOCK_BITS + 1];
	double		sum = 0.0;

	for (int c = 0; c <= BLOOM_BLOCK_BITS; c++)
		hit[c] = pow((double) c / BLOOM_BLOCK_BITS, (double) layer->k);
	*bits_set = 0;
	for (BlockNumber p = 0; p < layer->npages; p++)
	{
		Buffer		buf;
		Page		page;
		uint32		n;

		CHECK_FOR_INTERRUPTS();
		buf = bf_read_page(index, meta, layer, p);
		if (!BufferIsValid(buf))
			return false;
		page = BufferGetPage(buf);
		n = BfPageGetHeader(page)->nblocks;
		for (uint32 b = 0; b < n; b++)
		{
			uint64		c = bloom_popcount(BfPageGetBits(page) + (size_t) b * BLOOM_BLOCK_BYTES,
										   BLOOM_BLOCK_BYTES);

			*bits_set += c;
			sum += hit[c];
		}
		UnlockReleaseBuffer(buf);
	}
	*fpr = sum / (double) layer->nblocks;
	return true;
}

/* Bytes of the pages of one layer for capacity keys at the first layer's rate. */
static double
bf_one_layer_bytes(const BfMetaPageData *meta, uint64 capacity)
{
	uint64		nblocks;
	int			k;

	if (!bloom_plan(capacity, BF_LAYER_RATE(meta->rate, 0), &nblocks, &k))
		return 0;
	return (double) ((nblocks + BF_BLOCKS_PER_PAGE - 1) / BF_BLOCKS_PER_PAGE + 1) * BLCKSZ;
}

/*
 * How far above its false_positive_rate an index's bits may answer before
 * the advice speaks: a layer at its capacity is near its own share of the
 * rate, and a small one's measured rate spreads around that.
 */
#define BF_RATE_TOLERANCE	1.2

/*
 * Has the index's table an index that can do the exact check of the
 * planner's join pre-check (bfjoin_match.c: the inner side's parameterized
 * path on the key)?  A cheap look at the table's other indexes: a valid,
 * not partial btree whose first column is the key (the same column, or an
 * equal expression), or a hash index on it.  Other access methods, or a
 * btree with the key further back, rarely serve: the advice then says to
 * make one, which is at worst a little early.
 */
static bool
bf_has_exact_check_index(Relation index, Relation heap)
{
	AttrNumber	key = index->rd_index->indkey.values[0];
	Node	   *expr = NULL;
	List	   *ids = RelationGetIndexList(heap);
	ListCell   *lc;
	bool		found = false;

	if (key == 0)
		expr = linitial(RelationGetIndexExpressions(index));
	foreach(lc, ids)
	{
		Relation	other;

		if (lfirst_oid(lc) == RelationGetRelid(index))
			continue;
		other = index_open(lfirst_oid(lc), AccessShareLock);
		if ((other->rd_rel->relam == BTREE_AM_OID ||
			 other->rd_rel->relam == HASH_AM_OID) &&
			other->rd_index->indisvalid &&
			other->rd_index->indkey.values[0] == key &&
			RelationGetIndexPredicate(other) == NIL)
			found = key != 0 ||
				equal(expr, linitial(RelationGetIndexExpressions(other)));
		index_close(other, AccessShareLock);
		if (found)
			break;
	}
	list_free(ids);
	return found;
}

/*
 * When the index is larger or slower than its keys need, what to do; else,
 * when its table has no index for the join pre-check's exact check, that;
 * NULL when it is in shape.
 */
static char *
bf_advice(Relation index, Relation heap, const BfMetaPageData *meta,
		  double size, double rate, double stale, bool stale_known)
{
	uint32		live = bf_live_layers(meta);
	double		one = bf_one_layer_bytes(meta, bf_compact_capacity(index, meta, 0, false));
	double		free_bytes = size - (double) bf_layers_end(meta) * BLCKSZ;
	BloomKeyType kt;
	BfKeysMatch match;

	match = bf_keys_match(index, meta, &kt);
	if (match == BF_KEYS_CHANGED)
		return psprintf("Its keys no longer hash as they did (the key's family is \"%s\" now, not \"%s\"): probes and inserts are refused and VACUUM cannot compact it. Rebuild it with REINDEX.",
						bloom_family_display(kt.family),
						bloom_family_display(meta->family));
	if (match == BF_KEYS_LABELS)
		return pstrdup("A label of its key's enum type was renamed since its keys were hashed (or too many were added to tell): probes and inserts are refused and VACUUM cannot compact it. Rebuild it with REINDEX.");
	if (rate > BF_RATE_TOLERANCE * meta->rate && meta->op == BF_OP_NONE)
		return psprintf("Its bits answer \"maybe\" for %.2g of absent keys, above its false_positive_rate of %g: a layer holds more keys than it was sized for. VACUUM compacts it into one layer sized for the table's keys; if the rate stays above, rebuild it with REINDEX.",
						rate, meta->rate);
	if (meta->op != BF_OP_NONE)
		return psprintf("A %s was cut off or is under way: the index probes its old and new layers until the next VACUUM finishes it.",
						meta->op == BF_OP_COMPACT ? "compaction" : "move");
	if (live > 1)
		return psprintf("%u layers: a probe reads a page of each, and the index is %.1f times the size of one layer for its keys. VACUUM (or autovacuum) compacts them into one.",
						live, one > 0 ? size / one : 0);
	if (stale_known && stale >= 0.5)
		return psprintf("At least %.0f%% of its keys are no longer in the table. VACUUM compacts it into one layer for the keys left.",
						stale * 100);
	if (free_bytes > 0.1 * size)
		return psprintf("%.0f kB of its pages are free. VACUUM gives them back when no other session is using the index.",
						free_bytes / 1024);
	if (!bf_has_exact_check_index(index, heap))
		return psprintf("No btree or hash index of %s has this index's key as its first column: the planner's pre-check of NOT EXISTS, EXISTS and IN joins needs one for the exact check of the keys the filter may hold, and plans a plain join without it. Create one: CREATE INDEX ON %s (%s).",
						quote_identifier(RelationGetRelationName(heap)),
						quote_identifier(RelationGetRelationName(heap)),
						pg_get_indexdef_columns(RelationGetRelid(index), true));
	return NULL;
}

/*
 * The advice for a leaf index that answers "maybe" more often than the
 * partitioned index rel it is read through promises (bf_keeps_promise), or
 * NULL.
 */
static char *
bf_promise_advice(Relation rel, Relation index, const BfMetaPageData *meta)
{
	double		promised;

	if (bf_keeps_promise(rel, meta, &promised))
		return NULL;
	return psprintf("It was built with false_positive_rate %s, above the %s that partitioned index \"%s\" promises (ATTACH PARTITION or CREATE INDEX on the partitioned table adopted it without comparing their options): probes through \"%s\" are refused. %s",
					bf_rate_text(meta->rate), bf_rate_text(promised),
					RelationGetRelationName(rel),
					RelationGetRelationName(rel), bf_promise_hint(index, promised));
}

/* One row of bloom_index_info for a leaf index of rel. */
static void
bf_info_row(ReturnSetInfo *rsinfo, Relation rel, Oid indexoid)
{
	Relation	index = relation_open(indexoid, AccessShareLock);
	Relation	heap = relation_open(index->rd_index->indrelid, AccessShareLock);
	BfMetaPageData meta;
	Datum		values[10];
	bool		nulls[10] = {0};
	double		keys;
	double		miss;
	double		size;
	char	   *advice;

	bf_flush_pending(index);
	bf_read_meta(index, &meta);
retry:
	keys = 0.0;
	miss = 1.0;
	for (uint32 i = 0; i < meta.nlayers; i++)
	{
		const BfLayer *l = &meta.layers[i];
		uint64		set;
		double		fpr;
		double		n;

		if (!bf_layer_fill(index, &meta, l, &set, &fpr))
		{
			bf_read_meta(index, &meta);
			goto retry;
		}

		/*
		 * A layer with every bit set could hold any number of keys: it holds
		 * at least as many as one bit fewer would show, and as many as were
		 * counted into it.
		 */
		if (set < l->nblocks * BLOOM_BLOCK_BITS)
			n = bloom_estimate_keys(l->nblocks, (int) l->k, set);
		else
			n = Max(bloom_estimate_keys(l->nblocks, (int) l->k, set - 1),
					(double) l->nkeys);
		/* a layer being replaced holds keys the new one is given too */
		if (i >= meta.replaced)
			keys += n;
		miss *= 1.0 - fpr;
	}
	size = (double) RelationGetNumberOfBlocks(index) * BLCKSZ;
	values[0] = ObjectIdGetDatum(indexoid);
	/* the capacity of the first live layer (a compaction's, after one) */
	values[1] = Int64GetDatum((int64) (bf_live_layers(&meta) > 0 ?
									   meta.layers[meta.replaced].capacity :
									   meta.capacity));
	values[2] = Float8GetDatum(meta.rate);
	values[3] = Int32GetDatum((int32) meta.nlayers);
	values[4] = Int64GetDatum((int64) size);
	values[5] = Float8GetDatum(keys);
	values[6] = Float8GetDatum(1.0 - miss);
	/*
	 * Staleness: the table's live rows (reltuples, -1 before its first
	 * VACUUM or ANALYZE: unknown) hold at most that many distinct keys, so
	 * at least 1 - live_rows / estimated_keys of the index's keys are gone
	 * from the table.  A lower bound: with repeated keys, more are.
	 */
	if (heap->rd_rel->reltuples >= 0)
	{
		double		live = heap->rd_rel->reltuples;

		values[7] = Float8GetDatum(live);
		values[8] = Float8GetDatum(keys > live ? 1.0 - live / keys : 0.0);
	}
	else
		nulls[7] = nulls[8] = true;
	advice = bf_promise_advice(rel, index, &meta);
	if (advice == NULL)
		advice = bf_advice(index, heap, &meta, size, 1.0 - miss,
						   nulls[8] ? 0 : DatumGetFloat8(values[8]), !nulls[8]);
	if (advice)
		values[9] = CStringGetTextDatum(advice);
	else
		nulls[9] = true;
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	relation_close(heap, NoLock);
	relation_close(index, NoLock);
}

/*
 * The rows a set-returning function of argument index (a bloomfilter index,
 * or a partitioned one) gives: those rows() gives for each leaf index, after
 * the checks every reader passes.
 */
static Datum
bf_leaf_rows(FunctionCallInfo fcinfo,
			 void (*rows) (ReturnSetInfo *rsinfo, Relation rel, Oid indexoid))
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	rel;
	ListCell   *lc;

	InitMaterializedSRF(fcinfo, 0);
	rel = bf_open_index(PG_GETARG_OID(0), true);
	foreach(lc, bf_leaf_indexes(rel))
		rows(rsinfo, rel, lfirst_oid(lc));
	relation_close(rel, NoLock);
	return (Datum) 0;
}

/*
 * bloom_index_info(index regclass): one row per bloomfilter index (the
 * index, or each partition's under a partitioned index).
 */
PG_FUNCTION_INFO_V1(bf_index_info);
Datum
bf_index_info(PG_FUNCTION_ARGS)
{
	return bf_leaf_rows(fcinfo, bf_info_row);
}

typedef struct BfVerifyState
{
	BfMetaPageData meta;
	BloomKeyType keytype;
	int64		missing;
} BfVerifyState;

static void
bf_verify_callback(Relation index, ItemPointer tid, Datum *values,
				   bool *isnull, bool tupleIsAlive, void *state)
{
	BfVerifyState *vs = (BfVerifyState *) state;

	if (isnull[0])
		return;
	if (!bf_probe_hash(index, &vs->meta,
					   bloom_key_hash(&vs->keytype, values[0], vs->meta.seed)))
		vs->missing++;
}

/*
 * Rows visible to a fresh snapshot whose key the index does not report.
 * The metapage is read after the snapshot is taken, so that it names every
 * layer a committed row's key went into.
 */
static int64
bf_verify_leaf(Oid indexoid)
{
	Relation	index = relation_open(indexoid, AccessShareLock);
	Relation	heap = table_open(index->rd_index->indrelid, AccessShareLock);
	IndexInfo  *indexInfo = BuildIndexInfo(index);
	Snapshot	snapshot;
	TableScanDesc scan;
	BfVerifyState vs;

	/* the scan reads every row: it must not bypass row-level security */
	if (check_enable_rls(RelationGetRelid(heap), InvalidOid, false) == RLS_ENABLED)
		ereport(ERROR,
				errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				errmsg("cannot verify index \"%s\": table \"%s\" has row-level security enabled",
					   RelationGetRelationName(index), RelationGetRelationName(heap)),
				errhint("Run it as the table's owner or as a role that bypasses row-level security."));

	memset(&vs, 0, sizeof(vs));
	bf_key_type(index, &vs.keytype, CurrentMemoryContext);
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	bf_flush_pending(index);
	bf_read_meta(index, &vs.meta);

	/* an MVCC scan, as amcheck's heapallindexed does without a ShareLock */
	indexInfo->ii_Concurrent = true;
	scan = table_beginscan_strat(heap, snapshot, 0, NULL, true, false);
	table_index_build_scan(heap, index, indexInfo, true, false,
						   bf_verify_callback, &vs, scan);
	UnregisterSnapshot(snapshot);

	table_close(heap, NoLock);
	relation_close(index, NoLock);
	return vs.missing;
}

/*
 * bloom_index_verify(index regclass): how many live rows have a key the
 * index answers "absent" for; 0 means no false negative.
 */
PG_FUNCTION_INFO_V1(bf_index_verify);
Datum
bf_index_verify(PG_FUNCTION_ARGS)
{
	Relation	rel = bf_open_index(PG_GETARG_OID(0), true);
	int64		missing = 0;
	ListCell   *lc;

	foreach(lc, bf_leaf_indexes(rel))
		missing += bf_verify_leaf(lfirst_oid(lc));
	relation_close(rel, NoLock);
	PG_RETURN_INT64(missing);
}

/*
 * The layers of one leaf index as bloom values, in values[] (n of them),
 * with the label guard of a value of the key's type (labels); false if a
 * page was reused since meta was read (then nothing is kept).
 */
static bool
bf_leaf_filters(Relation index, const BfMetaPageData *meta,
				const BloomLabels *labels, Datum *values)
{
	for (uint32 i = 0; i < meta->nlayers; i++)
	{
		const BfLayer *l = &meta->layers[i];
		bytea	   *v = bloom_new(l->capacity, l->rate, l->nblocks, (int) l->k,
								  meta->family, labels);
		BloomFilter f;

		bloom_open(v, &f);
		for (BlockNumber p = 0; p < l->npages; p++)
		{
			uint64		first = (uint64) p * BF_BLOCKS_PER_PAGE;
			uint64		n = Min((uint64) BF_BLOCKS_PER_PAGE, l->nblocks - first);
			Buffer		buf;

			CHECK_FOR_INTERRUPTS();
			buf = bf_read_page(index, meta, l, p);
			if (!BufferIsValid(buf))
			{
				pfree(v);
				for (uint32 j = 0; j < i; j++)
					pfree(DatumGetPointer(values[j]));
				return false;
			}
			memcpy(f.bits + first * BLOOM_BLOCK_BYTES,
				   BfPageGetBits(BufferGetPage(buf)), n * BLOOM_BLOCK_BYTES);
			UnlockReleaseBuffer(buf);
		}
		values[i] = PointerGetDatum(v);
	}
	return true;
}

/*
 * The rows of bloom_index_filters for one leaf index of rel (refused, as a
 * probe is, where the leaf does not keep rel's rate).
 */
static void
bf_filters_rows(ReturnSetInfo *rsinfo, Relation rel, Oid indexoid)
{
	Relation	index = relation_open(indexoid, AccessShareLock);
	BfMetaPageData meta;
	Datum		filters[BF_MAX_LAYERS];
	BloomLabels labels;
	BloomKeyType kt;

	bf_flush_pending(index);

	/*
	 * The metapage's guard of an enum's labels is of (OID, label) pairs; a
	 * bloom value's is of the labels: checked (a rename refused), the values
	 * get the labels the type has now.  Nothing is recorded in the
	 * metapage: reading never writes (a hot standby, a read-only
	 * transaction).
	 */
	bf_key_type(index, &kt, CurrentMemoryContext);
	do
	{
		bf_read_meta(index, &meta);
		bf_check_promise(rel, index, &meta);
		bf_check_family(index, &meta, &kt);
		labels = kt.labels;
	} while (!bf_leaf_filters(index, &meta, &labels, filters));
	for (uint32 i = 0; i < meta.nlayers; i++)
	{
		Datum		values[3];
		bool		nulls[3] = {false, false, false};

		values[0] = ObjectIdGetDatum(RelationGetRelid(index));
		values[1] = Int32GetDatum((int32) i + 1);
		values[2] = filters[i];
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		pfree(DatumGetPointer(filters[i]));
	}
	relation_close(index, NoLock);
}

/*
 * bloom_index_filters(index regclass): each layer of the index (of each
 * partition's index, under a partitioned one) as a bloom value: the bits of
 * a layer, with its capacity, rate and key family, byte for byte the value
 * bloom_agg(key, capacity, rate) makes of the same keys.  Like a probe, it
 * holds every key of a row committed before its snapshot.
 */
PG_FUNCTION_INFO_V1(bf_index_filters);
Datum
bf_index_filters(PG_FUNCTION_ARGS)
{
	return bf_leaf_rows(fcinfo, bf_filters_rows);
}
