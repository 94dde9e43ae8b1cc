/*-------------------------------------------------------------------------
 *
 * bfinsert.c
 *	  Insert into a bloomfilter index: set the key's bits in the newest
 *	  layer, one page, one small WAL record (bfxlog.c), or nothing when they
 *	  are set.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfinsert.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/rel.h"

#include "bfindex.h"

/*
 * Does this page hold more bits than its share of the layer's capacity
 * would set on average?  Each page sees a random share of the layer's keys,
 * so the first page to cross this line does so when the layer as a whole is
 * a little short of its capacity: growth comes early, never late.  Only the
 * page an inserter writes is counted: nothing shared decides growth.
 */
static bool
bf_page_full(const BfLayer *layer, Page page)
{
	uint32		nblocks = BfPageGetHeader(page)->nblocks;
	double		keys = (double) layer->capacity * nblocks / (double) layer->nblocks;
	double		mean;
	double		sd;

	bloom_expected_fill(nblocks, (int) layer->k, keys, &mean, &sd);
	return (double) bloom_popcount(BfPageGetBits(page),
								   (size_t) nblocks * BLOOM_BLOCK_BYTES) > mean;
}

/* Does a layer older than the newest, i, report hash h? */
static bool
bf_present_in_older(Relation index, const BfMetaPageData *meta, uint32 i,
					uint64 h)
{
	while (i-- > 0)
	{
		size_t		off;
		Buffer		buf = bf_read_block(index, &meta->layers[i], i, h, &off);
		bool		found;

		found = bloom_block_test(BfPageGetBits(BufferGetPage(buf)) + off,
								 (int) meta->layers[i].k, h);
		UnlockReleaseBuffer(buf);
		if (found)
			return true;
	}
	return false;
}

/*
 * Set the key's bits in the newest layer this backend knows of.  A layer
 * added meanwhile by another backend is found at the next relcache
 * invalidation or when this backend's layer looks full; a key set in an
 * older layer is still found, since probes test every layer.
 */
bool
bfinsert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
		 Relation heapRel, IndexUniqueCheck checkUnique,
		 bool indexUnchanged, IndexInfo *indexInfo)
{
	BfState    *state;
	BfMetaPageData meta;
	const BfLayer *layer;
	uint32		i;
	uint64		h;
	Buffer		buf;
	size_t		off;
	Page		page;
	uint8		blk[BLOOM_BLOCK_BYTES];
	bool		full;

	if (isnull[0])
		return false;

	state = bf_get_state(index, false);
	if (state->meta.nlayers == 0)
	{
		/* an unlogged index after a crash: its init fork has no layer */
		bf_grow(index, 0);
		state = bf_get_state(index, true);
		if (state->meta.nlayers == 0)
			elog(ERROR, "bloomfilter index \"%s\" has no layer",
				 RelationGetRelationName(index));
	}
	/* copies: rd_amcache goes at a relcache invalidation */
	meta = state->meta;
	i = meta.nlayers - 1;
	layer = &meta.layers[i];
	h = bloom_key_hash(&state->keytype, values[0], state->meta.seed);

	/*
	 * Most keys of a busy table are already there: look under share locks,
	 * in the newest layer first, then in the older ones (as RedisBloom does:
	 * a key any layer reports is not added again, which keeps repeated keys
	 * from filling the newest layer and writes no WAL).
	 */
	buf = bf_read_block(index, layer, i, h, &off);
	if (bloom_block_test(BfPageGetBits(BufferGetPage(buf)) + off,
						 (int) layer->k, h))
	{
		UnlockReleaseBuffer(buf);
		return false;
	}
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	if (bf_present_in_older(index, &meta, i, h))
	{
		ReleaseBuffer(buf);
		return false;
	}
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);

	page = BufferGetPage(buf);
	memcpy(blk, BfPageGetBits(page) + off, BLOOM_BLOCK_BYTES);
	bloom_set_hash(blk, 1, (int) layer->k, h);
	if (memcmp(blk, BfPageGetBits(page) + off, BLOOM_BLOCK_BYTES) == 0)
	{
		/* another backend set them between our two locks */
		UnlockReleaseBuffer(buf);
		return false;
	}
	bf_log_block(index, buf, off, blk);
	full = bf_page_full(layer, page);
	UnlockReleaseBuffer(buf);

	if (full)
		bf_grow(index, i + 1);
	return false;
}
