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

#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"

#include "bfindex.h"

/* bits set in a layer */
static uint64
bf_layer_bits_set(Relation index, const BfLayer *layer, uint32 i)
{
	uint64		total = 0;

	for (BlockNumber p = 0; p < layer->npages; p++)
	{
		Buffer		buf;

		CHECK_FOR_INTERRUPTS();
		buf = bf_read_page(index, layer, i, p);
		total += bloom_popcount(BfPageGetBits(BufferGetPage(buf)),
								(size_t) BfPageGetHeader(BufferGetPage(buf))->nblocks *
								BLOOM_BLOCK_BYTES);
		UnlockReleaseBuffer(buf);
	}
	return total;
}

/* One row of bloom_index_info for a leaf index. */
static void
bf_info_row(ReturnSetInfo *rsinfo, Oid indexoid)
{
	Relation	index = relation_open(indexoid, AccessShareLock);
	Relation	heap = relation_open(index->rd_index->indrelid, AccessShareLock);
	BfMetaPageData meta;
	Datum		values[9];
	bool		nulls[9] = {0};
	double		keys = 0.0;
	double		miss = 1.0;

	bf_read_meta(index, &meta);
	for (uint32 i = 0; i < meta.nlayers; i++)
	{
		const BfLayer *l = &meta.layers[i];
		double		n = bloom_estimate_keys(l->nblocks, (int) l->k,
											bf_layer_bits_set(index, l, i));

		keys += n;
		miss *= 1.0 - bloom_expected_fpr(l->nblocks, (int) l->k, n);
	}
	values[0] = ObjectIdGetDatum(indexoid);
	values[1] = Int64GetDatum((int64) meta.capacity);
	values[2] = Float8GetDatum(meta.rate);
	values[3] = Int32GetDatum((int32) meta.nlayers);
	values[4] = Int64GetDatum((int64) RelationGetNumberOfBlocks(index) * BLCKSZ);
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
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	relation_close(heap, NoLock);
	relation_close(index, NoLock);
}

/*
 * bloom_index_info(index regclass): one row per bloomfilter index (the
 * index, or each partition's under a partitioned index).
 */
PG_FUNCTION_INFO_V1(bf_index_info);
Datum
bf_index_info(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	rel;
	ListCell   *lc;

	InitMaterializedSRF(fcinfo, 0);
	rel = bf_open_index(PG_GETARG_OID(0), true);
	foreach(lc, bf_leaf_indexes(rel))
		bf_info_row(rsinfo, lfirst_oid(lc));
	relation_close(rel, NoLock);
	return (Datum) 0;
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
