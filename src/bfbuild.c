/*-------------------------------------------------------------------------
 *
 * bfbuild.c
 *	  Build a bloomfilter index: size it, set the bits of every row's key in
 *	  memory, then write the pages through GenericXLog.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfbuild.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tableam.h"
#include "commands/progress.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "optimizer/plancat.h"
#include "utils/memutils.h"
#include "storage/smgr.h"
#include "utils/rel.h"

#include "bfindex.h"

typedef struct BfBuildState
{
	BfMetaPageData meta;
	BloomKeyType keytype;
	uint8	   *bits[BF_MAX_LAYERS];
	bool		full;			/* no further layer possible */
	double		indtuples;
} BfBuildState;

/* rows between two reports of progress */
#define BF_PROGRESS_EVERY	1024

/*
 * The capacity of the first layer when the index has no capacity option:
 * BF_HEADROOM times the rows the table holds now (the planner's estimate,
 * which needs no ANALYZE), at least BF_MIN_CAPACITY (the caller keeps it
 * within what one layer can hold at the index's rate).  An empty table gets
 * the minimum: the planner would guess ten pages of rows for it.
 */
static uint64
bf_default_capacity(Relation heap)
{
	BlockNumber pages;
	double		tuples;
	double		allvisfrac;
	double		cap;

	if (RelationGetNumberOfBlocks(heap) == 0)
		return BF_MIN_CAPACITY;
	estimate_rel_size(heap, NULL, &pages, &tuples, &allvisfrac);
	cap = Max(tuples, 0.0) * BF_HEADROOM;
	if (cap < BF_MIN_CAPACITY)
		cap = BF_MIN_CAPACITY;
	if (cap > (double) PG_INT64_MAX)
		cap = (double) PG_INT64_MAX;
	return (uint64) cap;
}

/* Add the next layer in memory; false when none can be added. */
static bool
bf_build_add_layer(BfBuildState *bs)
{
	uint32		i = bs->meta.nlayers;
	BfLayer		layer;

	if (!bf_plan_next_layer(&bs->meta, &layer))
		return false;
	bs->bits[i] = palloc_extended(layer.nblocks * BLOOM_BLOCK_BYTES,
								  MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	bs->meta.layers[i] = layer;
	bs->meta.nlayers = i + 1;
	bs->meta.next_id++;
	return true;
}

/*
 * Set a row's key in the newest layer, unless it or one of the
 * BF_OLDER_CHECKED before it has the key already, as an insert does; a layer
 * counts the keys that set bits in it, and the next is added when a key
 * comes to a layer that holds its capacity (not when the layer fills: a
 * table of exactly capacity keys gets one layer, as inserts give it).
 */
static void
bf_build_callback(Relation index, ItemPointer tid, Datum *values,
				  bool *isnull, bool tupleIsAlive, void *state)
{
	BfBuildState *bs = (BfBuildState *) state;
	BfLayer    *layer;
	uint32		i;
	uint64		h;

	if (isnull[0])
		return;
	if ((int64) ++bs->indtuples % BF_PROGRESS_EVERY == 0)
		pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, (int64) bs->indtuples);
	h = bloom_key_hash(&bs->keytype, values[0], bs->meta.seed);
	layer = &bs->meta.layers[bs->meta.nlayers - 1];
	if (layer->nkeys >= layer->capacity && !bs->full &&
		!bf_build_add_layer(bs))
		bs->full = true;
	i = bs->meta.nlayers - 1;
	for (uint32 j = i > BF_OLDER_CHECKED ? i - BF_OLDER_CHECKED : 0; j < i; j++)
		if (bloom_test_hash(bs->bits[j], bs->meta.layers[j].nblocks,
							(int) bs->meta.layers[j].k, h))
			return;
	layer = &bs->meta.layers[i];
	if (bloom_set_hash_changed(bs->bits[i], layer->nblocks, (int) layer->k, h))
		layer->nkeys++;
}

/* Write the metapage as block 0 (of a fork with no block yet). */
static void
bf_write_meta(Relation index, const BfMetaPageData *meta)
{
	GenericXLogState *gx;
	Buffer		buf = bf_new_buffer(index);
	Page		page;

	if (BufferGetBlockNumber(buf) != BF_METAPAGE_BLKNO)
		elog(ERROR, "bloomfilter index \"%s\" already has pages",
			 RelationGetRelationName(index));
	gx = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(gx, buf, GENERIC_XLOG_FULL_IMAGE);
	bf_init_metapage(page, meta);
	GenericXLogFinish(gx);
	UnlockReleaseBuffer(buf);
}

/* Fill in the metapage of a new index, with no layer, from its options. */
static void
bf_build_meta(Relation heap, Relation index, BfMetaPageData *meta,
			  const BloomKeyType *kt)
{
	BfOptions  *opts = (BfOptions *) index->rd_options;
	double		rate = opts ? opts->rate : BLOOM_DEFAULT_RATE;
	uint64		cap;

	bf_check_rate(rate);
	if (opts && opts->capacity > 0)
		cap = (uint64) opts->capacity;
	else
		cap = Min(heap ? bf_default_capacity(heap) : BF_MIN_CAPACITY,
				  bloom_max_capacity(BF_LAYER_RATE(rate, 0)));

	memset(meta, 0, sizeof(*meta));
	meta->magic = BF_MAGIC;
	meta->version = BF_VERSION;
	meta->layout = BLOOM_LAYOUT_BLOCK512;
	meta->hash = BLOOM_HASH_XXH3;
	meta->op = BF_OP_NONE;
	meta->seed = BLOOM_DEFAULT_SEED;
	meta->capacity = cap;
	meta->rate = rate;
	strlcpy(meta->family, kt->family, BLOOM_FAMILY_LEN);
	meta->labels = kt->oidlabels;
	meta->next_id = 1;
	meta->generation = 1;
}

/*
 * Can the build run in parallel: is one layer enough for the rows the
 * planner expects (the default capacity is twice them), and does the layer
 * fit in maintenance_work_mem, the shared memory a build may take?
 */
static bool
bf_parallel_ok(Relation heap, Relation index, const BfLayer *layer)
{
	BlockNumber pages;
	double		tuples;
	double		allvisfrac;

	estimate_rel_size(heap, NULL, &pages, &tuples, &allvisfrac);
	if (tuples > (double) layer->capacity)
		return false;
	if ((double) layer->nblocks * BLOOM_BLOCK_BYTES > (double) maintenance_work_mem * 1024)
	{
		ereport(NOTICE,
				errmsg("bloomfilter index \"%s\" is built without parallel workers: its %.0f MB of bits exceed maintenance_work_mem",
					   RelationGetRelationName(index),
					   (double) layer->nblocks * BLOOM_BLOCK_BYTES / (1024 * 1024)),
				errhint("Raise maintenance_work_mem for a parallel build."));
		return false;
	}
	return true;
}

IndexBuildResult *
bfbuild(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	BfBuildState bs;
	double		reltuples = 0;
	bool		built = false;
	int			nworkers;
	BlockNumber npages = 0;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data",
			 RelationGetRelationName(index));

	memset(&bs, 0, sizeof(bs));
	bf_key_type(index, &bs.keytype, CurrentMemoryContext);
	bf_build_meta(heap, index, &bs.meta, &bs.keytype);
	if (!bf_build_add_layer(&bs))
		ereport(ERROR,
				errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				errmsg("capacity %llu is too large for a bloomfilter index at false_positive_rate %g",
					   (unsigned long long) bs.meta.capacity, bs.meta.rate),
				errdetail("The index's first layer would be larger than the largest Bloom filter."),
				errhint("At this rate the capacity can be at most %llu.",
						(unsigned long long) bloom_max_capacity(BF_LAYER_RATE(bs.meta.rate, 0))));

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, BF_PHASE_SCAN);
	nworkers = bf_build_workers(heap, index, indexInfo);
	if (nworkers > 0 && bf_parallel_ok(heap, index, &bs.meta.layers[0]))
	{
		BfLayer    *layer = &bs.meta.layers[0];
		uint64		added;

		if (bf_parallel_build(heap, index, indexInfo, &bs.meta, layer, nworkers,
							  bs.bits[0], &reltuples, &bs.indtuples, &added))
		{
			if (added <= layer->capacity)
			{
				layer->nkeys = added;
				built = true;
			}
			else
			{
				/* more keys than the planner expected: layers, serially */
				ereport(NOTICE,
						errmsg("bloomfilter index \"%s\" is built again without parallel workers: the table holds more keys than its first layer's capacity",
							   RelationGetRelationName(index)));
				memset(bs.bits[0], 0, layer->nblocks * BLOOM_BLOCK_BYTES);
				bs.indtuples = 0;
			}
		}
	}
	if (!built)
		reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
										   bf_build_callback, &bs, NULL);

	pgstat_progress_update_param(PROGRESS_CREATEIDX_SUBPHASE, BF_PHASE_WRITE);
	for (uint32 i = 0; i < bs.meta.nlayers; i++)
		npages += bs.meta.layers[i].npages;
	pgstat_progress_update_param(PROGRESS_SCAN_BLOCKS_TOTAL, npages + 1);
	bf_write_meta(index, &bs.meta);
	npages = 1;
	for (uint32 i = 0; i < bs.meta.nlayers; i++)
	{
		bf_write_layer(index, &bs.meta.layers[i], bs.bits[i]);
		npages += bs.meta.layers[i].npages;
		pgstat_progress_update_param(PROGRESS_SCAN_BLOCKS_DONE, npages);
		pfree(bs.bits[i]);
	}

	result = palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = bs.indtuples;
	return result;
}

/* The name of a phase of CREATE INDEX (pg_stat_progress_create_index). */
char *
bfbuildphasename(int64 phasenum)
{
	switch (phasenum)
	{
		case PROGRESS_CREATEIDX_SUBPHASE_INITIALIZE:
			return "initializing";
		case BF_PHASE_SCAN:
			return "scanning table";
		case BF_PHASE_WRITE:
			return "writing index pages";
		default:
			return NULL;
	}
}

/*
 * The init fork of an unlogged index: a metapage with no layer; the first
 * insert after a reset adds one (bf_grow).  GenericXLog writes no WAL for an
 * unlogged relation, but the init fork is what a crash or a promoted standby
 * resets the index from: it is WAL-logged and made durable here as the core
 * access methods do (btbuildempty), or every insert after a crash would meet
 * a metapage of zeros.
 */
void
bfbuildempty(Relation index)
{
	BfMetaPageData meta;
	BloomKeyType kt;
	Page		page;

	bf_key_type(index, &kt, CurrentMemoryContext);
	bf_build_meta(NULL, index, &meta, &kt);
#if PG_VERSION_NUM >= 160000
	{
		Buffer		buf = ExtendBufferedRel(BMR_REL(index), INIT_FORKNUM, NULL,
											EB_SKIP_EXTENSION_LOCK | EB_LOCK_FIRST);

		START_CRIT_SECTION();
		page = BufferGetPage(buf);
		bf_init_metapage(page, &meta);
		MarkBufferDirty(buf);
		log_newpage_buffer(buf, true);
		END_CRIT_SECTION();
		UnlockReleaseBuffer(buf);
	}
#else
	/*
	 * Before 16 the core access methods write the init fork around the
	 * buffer manager: the page, its WAL, then an immediate sync, since a
	 * checkpoint may have moved the redo pointer past the record.
	 */
	page = (Page) palloc(BLCKSZ);
	bf_init_metapage(page, &meta);
	PageSetChecksumInplace(page, BF_METAPAGE_BLKNO);
	smgrwrite(RelationGetSmgr(index), INIT_FORKNUM, BF_METAPAGE_BLKNO,
			  (char *) page, true);
	log_newpage(&(RelationGetSmgr(index))->smgr_rnode.node, INIT_FORKNUM,
				BF_METAPAGE_BLKNO, page, true);
	smgrimmedsync(RelationGetSmgr(index), INIT_FORKNUM);
#endif
}
