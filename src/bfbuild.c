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
#include "miscadmin.h"
#include "optimizer/plancat.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "bfindex.h"

typedef struct BfBuildState
{
	BfMetaPageData meta;
	BloomKeyType keytype;
	uint8	   *bits[BF_MAX_LAYERS];
	uint64		in_layer;		/* rows added to the newest layer */
	bool		full;			/* no further layer possible */
	double		indtuples;
} BfBuildState;

/*
 * The capacity of the first layer when the index has no capacity option:
 * BF_HEADROOM times the rows the table holds now (the planner's estimate,
 * which needs no ANALYZE), at least BF_MIN_CAPACITY, at most what one
 * layer can hold at the index's rate.  An empty table gets the minimum: the
 * planner would guess ten pages of rows for it.
 */
static uint64
bf_default_capacity(Relation heap, double rate)
{
	BlockNumber pages;
	double		tuples;
	double		allvisfrac;
	double		cap;
	uint64		most = bloom_max_capacity(BF_LAYER_RATE(rate, 0));

	if (RelationGetNumberOfBlocks(heap) == 0)
		return BF_MIN_CAPACITY;
	estimate_rel_size(heap, NULL, &pages, &tuples, &allvisfrac);
	cap = Max(tuples, 0.0) * BF_HEADROOM;
	if (cap < BF_MIN_CAPACITY)
		cap = BF_MIN_CAPACITY;
	if (cap > (double) most)
		cap = (double) most;
	return (uint64) cap;
}

/* Add layer meta->nlayers in memory; false when none can be added. */
static bool
bf_build_add_layer(BfBuildState *bs)
{
	uint32		i = bs->meta.nlayers;
	BfLayer		layer;

	if (!bf_plan_layer(&bs->meta, i, &layer))
		return false;
	bs->bits[i] = palloc_extended(layer.nblocks * BLOOM_BLOCK_BYTES,
								  MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	bs->meta.layers[i] = layer;
	bs->meta.nlayers = i + 1;
	bs->in_layer = 0;
	return true;
}

static void
bf_build_callback(Relation index, ItemPointer tid, Datum *values,
				  bool *isnull, bool tupleIsAlive, void *state)
{
	BfBuildState *bs = (BfBuildState *) state;
	BfLayer    *layer;
	uint32		i;

	if (isnull[0])
		return;
	i = bs->meta.nlayers - 1;
	/* rows, not distinct keys, are counted: a layer fills no later than this */
	if (!bs->full && bs->in_layer >= bs->meta.layers[i].capacity)
	{
		if (bf_build_add_layer(bs))
			i++;
		else
			bs->full = true;
	}
	layer = &bs->meta.layers[i];
	bloom_set_hash(bs->bits[i], layer->nblocks, (int) layer->k,
				   bloom_key_hash(&bs->keytype, values[0], bs->meta.seed));
	bs->in_layer++;
	bs->indtuples += 1;
}

/*
 * Write layer i's pages (at the end of the index: they must be the next
 * blocks), from bits (nblocks * 64 bytes) or empty when bits is NULL.  Each
 * page is its own full-image GenericXLog record.  With init_only pages that
 * already exist (left by a crash between adding pages and recording the
 * layer in the metapage) are reused.
 */
void
bf_write_layer(Relation index, const BfLayer *layer, uint32 i,
			   const uint8 *bits, bool init_only)
{
	BlockNumber have = RelationGetNumberOfBlocks(index);

	for (BlockNumber p = 0; p < layer->npages; p++)
	{
		BlockNumber blkno = layer->start + p;
		uint64		first = (uint64) p * BF_BLOCKS_PER_PAGE;
		uint32		n = (uint32) Min((uint64) BF_BLOCKS_PER_PAGE,
									 layer->nblocks - first);
		GenericXLogState *gx;
		Buffer		buf;
		Page		page;

		CHECK_FOR_INTERRUPTS();
		if (init_only && blkno < have)
		{
			buf = ReadBuffer(index, blkno);
			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		}
		else
			buf = bf_new_buffer(index);
		if (BufferGetBlockNumber(buf) != blkno)
			elog(ERROR, "bloomfilter index \"%s\": new page %u, expected %u",
				 RelationGetRelationName(index), BufferGetBlockNumber(buf), blkno);

		gx = GenericXLogStart(index);
		page = GenericXLogRegisterBuffer(gx, buf, GENERIC_XLOG_FULL_IMAGE);
		bf_init_bitmap_page(page, i, first, n);
		if (bits)
		{
			memcpy(BfPageGetBits(page), bits + first * BLOOM_BLOCK_BYTES,
				   (size_t) n * BLOOM_BLOCK_BYTES);
		}
		GenericXLogFinish(gx);
		UnlockReleaseBuffer(buf);
	}
}

/* Write the metapage as block 0 (of a fork with no block yet). */
static void
bf_write_meta(Relation index, ForkNumber fork, const BfMetaPageData *meta)
{
	GenericXLogState *gx;
	Buffer		buf;
	Page		page;

#if PG_VERSION_NUM >= 160000
	buf = ExtendBufferedRel(BMR_REL(index), fork, NULL, EB_LOCK_FIRST);
#else
	buf = ReadBufferExtended(index, fork, P_NEW, RBM_NORMAL, NULL);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
#endif
	if (BufferGetBlockNumber(buf) != BF_METAPAGE_BLKNO)
		elog(ERROR, "bloomfilter index \"%s\" already has pages",
			 RelationGetRelationName(index));
	gx = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(gx, buf, GENERIC_XLOG_FULL_IMAGE);
	bf_init_metapage(page, meta->capacity, meta->rate, meta->family);
	/* every field as the build used it (the seed above all) */
	memcpy(BfPageGetMeta(page), meta, sizeof(*meta));
	GenericXLogFinish(gx);
	UnlockReleaseBuffer(buf);
}

/* Fill in the metapage fields of a new index from its options. */
static void
bf_build_meta(Relation heap, Relation index, BfMetaPageData *meta,
			  const BloomKeyType *kt)
{
	BfOptions  *opts = (BfOptions *) index->rd_options;
	double		rate = opts ? opts->rate : BLOOM_DEFAULT_RATE;
	uint64		cap;

	if (opts && opts->capacity > 0)
		cap = (uint64) opts->capacity;
	else
		cap = heap ? bf_default_capacity(heap, rate) : BF_MIN_CAPACITY;

	memset(meta, 0, sizeof(*meta));
	meta->magic = BF_MAGIC;
	meta->version = BF_VERSION;
	meta->layout = BLOOM_LAYOUT_BLOCK512;
	meta->hash = BLOOM_HASH_XXH3;
	meta->seed = BLOOM_DEFAULT_SEED;
	meta->capacity = cap;
	meta->rate = rate;
	strlcpy(meta->family, kt->family, BLOOM_FAMILY_LEN);
	meta->labels = kt->labels;
}

IndexBuildResult *
bfbuild(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	BfBuildState bs;
	double		reltuples;

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

	reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
									   bf_build_callback, &bs, NULL);

	bf_write_meta(index, MAIN_FORKNUM, &bs.meta);
	for (uint32 i = 0; i < bs.meta.nlayers; i++)
	{
		bf_write_layer(index, &bs.meta.layers[i], i, bs.bits[i], false);
		pfree(bs.bits[i]);
	}

	result = palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = bs.indtuples;
	return result;
}

/*
 * The init fork of an unlogged index: a metapage with no layer; the first
 * insert after a reset adds one (bf_grow).
 */
void
bfbuildempty(Relation index)
{
	BfMetaPageData meta;
	BloomKeyType kt;

	bf_key_type(index, &kt, CurrentMemoryContext);
	bf_build_meta(NULL, index, &meta, &kt);
	bf_write_meta(index, INIT_FORKNUM, &meta);
}
