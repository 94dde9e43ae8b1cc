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

#include "port/pg_bitutils.h"
#include "utils/rel.h"

#include "bfindex.h"

/* older layers an insert looks in before setting bits in the newest */
#define BF_OLDER_CHECKED	4
/* a page's fill is counted after one change in 8 when it holds 1,024 keys */
#define BF_FILL_SAMPLE		8
#define BF_FILL_SAMPLE_KEYS	1024

/*
 * Does this page hold more bits than its share of the layer's capacity
 * would set on average?  Each page sees a random share of the layer's keys,
 * so the first page to cross this line does so when the layer as a whole is
 * a little short of its capacity: growth comes early.  Only the page an
 * inserter writes is counted: nothing shared decides growth.
 *
 * This runs after inserts that set bits, under the page's exclusive lock,
 * so it must be cheap: the limit is computed once per layer and page size
 * and kept in the backend's state; the bits are counted by PostgreSQL's
 * pg_popcount (the CPU's popcount instruction where there is one: a loop of
 * __builtin_popcountll compiled without -mpopcnt calls libgcc's routine a
 * thousand times per page, which cost as much as the rest of an insert);
 * and on a page whose share of the layer is at least BF_FILL_SAMPLE_KEYS
 * keys, only one change in BF_FILL_SAMPLE is followed by a count (counting
 * 8 kB after each change of 64 bytes was a tenth of a COPY's time).  A full
 * page is then found a few changes late, a few keys in a thousand of its
 * share, well inside the rate's headroom (bfindex.h).
 */
static bool
bf_page_full(BfState *state, uint32 i, const BfLayer *layer, Page page)
{
	uint32		nblocks = BfPageGetHeader(page)->nblocks;

	if (state->fill_nblocks != nblocks || state->fill_layer != i)
	{
		double		sd;

		state->fill_keys = (double) layer->capacity * nblocks / (double) layer->nblocks;
		bloom_expected_fill(nblocks, (int) layer->k, state->fill_keys,
							&state->fill_limit, &sd);
		state->fill_layer = i;
		state->fill_nblocks = nblocks;
	}
	if (state->fill_keys >= BF_FILL_SAMPLE_KEYS &&
		state->nchanges++ % BF_FILL_SAMPLE != 0)
		return false;
	return (double) pg_popcount((const char *) BfPageGetBits(page),
								(int) (nblocks * BLOOM_BLOCK_BYTES)) > state->fill_limit;
}

/*
 * Does one of the BF_OLDER_CHECKED layers before the newest, i, report hash
 * h?  Each is a page read, most often a cache miss: an index grown from a
 * small capacity has many layers, and testing them all cost a COPY into it
 * more than the rest of its inserts.  The layers left out are the smallest
 * (each layer holds twice the keys of the one before), together less than
 * 1/2^BF_OLDER_CHECKED of the keys of the older ones: a key repeated from
 * them gets its bits set in the newest layer too, which costs a little fill
 * and WAL, never a lost key (probes test every layer).
 */
static bool
bf_present_in_older(Relation index, const BfMetaPageData *meta, uint32 i,
					uint64 h)
{
	uint32		oldest = i > BF_OLDER_CHECKED ? i - BF_OLDER_CHECKED : 0;

	while (i-- > oldest)
		if (bf_layer_test(index, &meta->layers[i], i, h))
			return true;
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
	 * in the newest layer first, then in the largest older ones (as
	 * RedisBloom does: a key a layer reports is not added again, which keeps
	 * repeated keys from filling the newest layer and writes no WAL).
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
	/* (the state again: nothing above accepts invalidations, but be sure) */
	state = (BfState *) index->rd_amcache;
	full = state != NULL && bf_page_full(state, i, layer, page);
	UnlockReleaseBuffer(buf);

	if (full)
		bf_grow(index, i + 1);
	return false;
}
