/*-------------------------------------------------------------------------
 *
 * bfbatch.c
 *	  Set a batch of kept key hashes in a bloomfilter index: in the newest
 *	  layer, page by page, one small WAL record per page (bfxlog.c), nothing for
 *	  keys already there; the room a batch takes is claimed or counted, and the
 *	  index grows when a layer holds its capacity.
 *
 * A small batch holds the metapage's share lock from the moment it reads
 * which layer is the newest until its bits are set; a batch that claimed
 * room holds the batch lock (BF_BATCH_LOCK_BLKNO) in ShareLock instead, and
 * the metapage's share lock only while it reads it.  A compaction or a move
 * (bfcompact.c) changes the list of layers under both the metapage's
 * exclusive lock and the batch lock's ExclusiveLock, so every batch is set
 * wholly before or wholly after such a change: a compaction can name its
 * new layer and know that from then on every key goes into it, and that
 * every key that went into the old layers is in a heap tuple already there
 * (a hash is kept only after its row's heap tuple is written), and a move's
 * copy misses no bit set in the layer it copies.  Growth (bfgrow.c) takes
 * neither: a batch that set its keys in the layer growth found full set them
 * in a layer that stays live, and it counted them there (the claim).  The
 * backend's copy of the metapage (rd_amcache) is refreshed when the
 * metapage's generation differs from it.
 *
 * Claims and counts change the metapage under its exclusive lock: were the
 * large batches, many pages each, to hold its share lock while they set
 * their bits, that lock would wait for every batch in flight to end (and
 * LWLocks let new share lockers pass a waiting exclusive one: with eight
 * writers, it waited most of the time; issue 40).
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfbatch.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/lmgr.h"
#include "utils/rel.h"

#include "bfindex.h"

/*
 * How the keys of small batches are counted.  Adding each key to the
 * layer's count in the metapage would take its exclusive lock and a WAL
 * record per key; a count kept in the backend until it has many would be
 * lost when the backend exits or its relcache entry is rebuilt (a VACUUM or
 * ANALYZE of the table does that), and a layer could then take keys past
 * its capacity for ever.  So the count is sampled: a key that sets bits
 * adds "batch" to the count when its hash says so, one key in "batch" (by a
 * hash of its hash, independent of where its bits lie).  The count is right
 * on average and kept nowhere else, whatever the backends do; it is off by
 * about the square root of batch times the keys (1.6% of a large layer at
 * its capacity), and the metapage is written once per batch keys.  Small
 * layers are counted exactly.
 */
static uint32
bf_count_batch(const BfLayer *layer)
{
	return (uint32) Max(Min(layer->capacity / 4096, 256), 1);
}

static inline bool
bf_count_sampled(uint64 h, uint32 batch)
{
	h ^= h >> 33;
	h *= UINT64_C(0xff51afd7ed558ccd);
	h ^= h >> 33;
	return batch <= 1 || h % batch == 0;
}

/* One key of a batch: its page in a layer, and where it is in the batch. */
typedef struct BfSortKey
{
	uint64		block;			/* its block in the layer */
	uint32		i;				/* its index in the batch */
} BfSortKey;

static int
bf_sortkey_cmp(const void *a, const void *b)
{
	const BfSortKey *x = (const BfSortKey *) a;
	const BfSortKey *y = (const BfSortKey *) b;

	if (x->block != y->block)
		return x->block < y->block ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/*
 * The keys of hashes[] not marked done, sorted by their block in layer;
 * returns how many.
 */
static uint32
bf_sort_by_block(const BfLayer *layer, const uint64 *hashes, const bool *done,
				 uint32 n, BfSortKey *keys)
{
	uint32		m = 0;

	for (uint32 i = 0; i < n; i++)
		if (!done[i])
		{
			keys[m].block = bloom_block_of(hashes[i], layer->nblocks);
			keys[m].i = i;
			m++;
		}
	qsort(keys, m, sizeof(BfSortKey), bf_sortkey_cmp);
	return m;
}

/*
 * Mark done[] the hashes an older live layer reports (as RedisBloom does: a
 * key a layer reports is not added again, which keeps repeated keys from
 * filling the newest layer and writes no WAL).  Page by page, under share
 * locks.
 */
static void
bf_mark_present(Relation index, const BfMetaPageData *meta, const BfLayer *layer,
				const uint64 *hashes, bool *done, uint32 n, BfSortKey *keys)
{
	uint32		m = bf_sort_by_block(layer, hashes, done, n, keys);

	for (uint32 j = 0; j < m;)
	{
		BlockNumber p = (BlockNumber) (keys[j].block / BF_BLOCKS_PER_PAGE);
		Buffer		buf = bf_read_page(index, meta, layer, p);
		const uint8 *bits;

		if (!BufferIsValid(buf))
			elog(ERROR, "bloomfilter index \"%s\" changed under its metapage's lock",
				 RelationGetRelationName(index));
		bits = BfPageGetBits(BufferGetPage(buf));
		for (; j < m && keys[j].block / BF_BLOCKS_PER_PAGE == p; j++)
			if (bloom_block_test(bits + (keys[j].block % BF_BLOCKS_PER_PAGE) * BLOOM_BLOCK_BYTES,
								 (int) layer->k, hashes[keys[j].i]))
				done[keys[j].i] = true;
		UnlockReleaseBuffer(buf);
	}
}

/*
 * Set the bits of the hashes not done[] in the newest layer: per page, the
 * keys whose bits are all set already are skipped under a share lock; the
 * others are set under the exclusive lock, with one WAL record for the
 * page.  After a page that changed, the next is locked exclusively at once
 * (keys that set bits come in runs: a new layer's, new keys'), which saves
 * a share lock taken and given up per page; a page that then had nothing
 * to set goes back to the share lock first.  Returns the keys that set
 * bits; adds the sampled count of them (bf_count_batch) to *sampled.
 */
static uint32
bf_set_newest(Relation index, const BfMetaPageData *meta, const uint64 *hashes,
			  const bool *done, uint32 n, BfSortKey *keys, uint64 *sampled)
{
	const BfLayer *layer = &meta->layers[meta->nlayers - 1];
	uint32		m = bf_sort_by_block(layer, hashes, done, n, keys);
	uint32		added = 0;
	uint32		batch = bf_count_batch(layer);
	size_t		offs[BF_BLOCKS_PER_PAGE];
	uint8	   *blks = palloc(BF_BLOCKS_PER_PAGE * BLOOM_BLOCK_BYTES);
	bool		direct = false; /* lock the next page exclusively at once */

	for (uint32 j = 0; j < m;)
	{
		BlockNumber p = (BlockNumber) (keys[j].block / BF_BLOCKS_PER_PAGE);
		uint32		end;
		Buffer		buf = bf_lock_page(index, meta, layer, p,
									   direct ? BUFFER_LOCK_EXCLUSIVE : BUFFER_LOCK_SHARE);
		uint8	   *bits;
		bool		any = direct;
		int			nblk = 0;

		if (!BufferIsValid(buf))
			elog(ERROR, "bloomfilter index \"%s\" changed under its metapage's lock",
				 RelationGetRelationName(index));
		for (end = j; end < m && keys[end].block / BF_BLOCKS_PER_PAGE == p; end++)
			if (!any &&
				!bloom_block_test(BfPageGetBits(BufferGetPage(buf)) +
								  (keys[end].block % BF_BLOCKS_PER_PAGE) * BLOOM_BLOCK_BYTES,
								  (int) layer->k, hashes[keys[end].i]))
				any = true;
		if (!any)
		{
			UnlockReleaseBuffer(buf);
			j = end;
			continue;
		}
		if (!direct)
		{
			LockBuffer(buf, BUFFER_LOCK_UNLOCK);
			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		}
		bits = BfPageGetBits(BufferGetPage(buf));
		/* the new contents of each block the page's keys touch, in order */
		for (; j < end; j++)
		{
			size_t		off = (keys[j].block % BF_BLOCKS_PER_PAGE) * BLOOM_BLOCK_BYTES;
			uint8	   *blk;

			if (nblk == 0 || offs[nblk - 1] != off)
			{
				offs[nblk] = off;
				memcpy(blks + (size_t) nblk * BLOOM_BLOCK_BYTES, bits + off, BLOOM_BLOCK_BYTES);
				nblk++;
			}
			blk = blks + (size_t) (nblk - 1) * BLOOM_BLOCK_BYTES;
			if (!bloom_block_test(blk, (int) layer->k, hashes[keys[j].i]))
			{
				bloom_set_hash(blk, 1, (int) layer->k, hashes[keys[j].i]);
				added++;
				if (bf_count_sampled(hashes[keys[j].i], batch))
					*sampled += batch;
			}
		}
		/* (another backend may have set them all between our two locks) */
		{
			int			changed = 0;

			for (int b = 0; b < nblk; b++)
				if (memcmp(blks + (size_t) b * BLOOM_BLOCK_BYTES, bits + offs[b],
						   BLOOM_BLOCK_BYTES) != 0)
				{
					offs[changed] = offs[b];
					memmove(blks + (size_t) changed * BLOOM_BLOCK_BYTES,
							blks + (size_t) b * BLOOM_BLOCK_BYTES, BLOOM_BLOCK_BYTES);
					changed++;
				}
			if (changed > 0)
				bf_log_blocks(index, buf, changed, offs, blks);
			direct = changed > 0;
		}
		UnlockReleaseBuffer(buf);
	}
	pfree(blks);
	return added;
}

typedef struct BfCountArg
{
	uint32		layer;			/* the layer's id */
	int64		count;			/* keys to add to its nkeys (or take back) */
} BfCountArg;

static bool
bf_add_count(BfMetaPageData *meta, void *arg)
{
	BfCountArg *a = (BfCountArg *) arg;

	for (uint32 i = 0; i < meta->nlayers; i++)
	{
		BfLayer    *l = &meta->layers[i];

		if (l->id != a->layer)
			continue;
		if (a->count < 0 && (uint64) -a->count > l->nkeys)
			l->nkeys = 0;
		else
			l->nkeys += a->count;
		return true;
	}
	return false;				/* the layer is gone: nothing to count */
}

/* Add count keys to the nkeys of layer id in the metapage. */
static void
bf_count(Relation index, uint32 id, int64 count)
{
	BfCountArg	arg;

	arg.layer = id;
	arg.count = count;
	bf_update_meta(index, bf_add_count, &arg);
}

/*
 * A claim of room in the newest layer: what a batch of many keys takes
 * before it sets them, so that the other writers see it taken.
 */
typedef struct BfClaimArg
{
	uint64		want;			/* keys to claim room for */
	uint32		layer;			/* out: the newest layer's id, 0 if none */
	uint64		claimed;		/* out: room claimed (0: the layer is full) */
} BfClaimArg;

static bool
bf_claim_room(BfMetaPageData *meta, void *arg)
{
	BfClaimArg *a = (BfClaimArg *) arg;
	BfLayer    *l;

	a->layer = 0;
	a->claimed = 0;
	if (bf_live_layers(meta) == 0)
		return false;
	l = &meta->layers[meta->nlayers - 1];
	a->layer = l->id;
	if (l->nkeys >= l->capacity)
		return false;
	a->claimed = Min(a->want, l->capacity - l->nkeys);
	l->nkeys += a->claimed;
	return true;
}

/*
 * Pin and share-lock the metapage, for setting keys: the backend's copy of
 * it is refreshed (and checked) when the list of layers changed; *nkeys is
 * the newest layer's count, which changes without a new generation.
 */
static Buffer
bf_lock_meta(Relation index, BfState *state, uint64 *nkeys)
{
	Buffer		metabuf = ReadBuffer(index, BF_METAPAGE_BLKNO);
	BfMetaPageData *meta;

	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	meta = BfPageGetMeta(BufferGetPage(metabuf));
	if (meta->generation != state->meta.generation ||
		meta->magic != state->meta.magic)
	{
		BfMetaPageData copy;

		memcpy(&copy, meta, sizeof(copy));
		bf_check_meta(index, &copy);
		bf_check_family_meta(index, &copy, &state->keytype);
		state->meta = copy;
	}
	*nkeys = meta->nlayers > 0 ? meta->layers[meta->nlayers - 1].nkeys : 0;
	return metabuf;
}

/*
 * Set a slice of hashes in the newest layer of meta, less those the older
 * layers an insert looks in report: returns the keys that set bits.
 */
static uint32
bf_set_slice(Relation index, const BfMetaPageData *meta, const uint64 *hashes,
			 bool *done, uint32 n, BfSortKey *keys, uint64 *sampled)
{
	uint32		oldest = Max(meta->replaced, meta->nlayers - 1 > BF_OLDER_CHECKED ?
							 meta->nlayers - 1 - BF_OLDER_CHECKED : 0);

	memset(done, 0, n * sizeof(bool));
	for (uint32 i = meta->nlayers - 1; i > oldest; i--)
		bf_mark_present(index, meta, &meta->layers[i - 1], hashes, done, n, keys);
	return bf_set_newest(index, meta, hashes, done, n, keys, sampled);
}

/*
 * Set the hashes in the index: in slices that fit in the newest layer's
 * room, each under the metapage's share lock, growing between them.
 *
 * The room a slice takes must be seen as taken by the other writers, or
 * several of them fill one layer many times over.  A slice of more keys
 * than a count batch claims its room in the metapage first
 * (bf_claim_room), and gives back what its keys, some of them there
 * already, did not take.  A smaller one takes the room the metapage shows,
 * and adds its keys to the count by sampling (bf_count_batch): the others
 * see it at once, on average.  When the newest layer is full, the writer
 * grows the index; a layer that cannot grow (the index has as many layers
 * as it may) takes the keys.
 */
void
bf_set_hashes(Relation index, const uint64 *hashes, uint32 n)
{
	bool	   *done = palloc(n * sizeof(bool));
	BfSortKey  *keys = palloc(n * sizeof(BfSortKey));
	uint32		off = 0;
	uint32		grow_tried = 0; /* the layer this backend tried to grow */

	while (off < n)
	{
		BfState    *state = bf_get_state(index);
		uint32		left = n - off;
		Buffer		metabuf;
		const BfLayer *newest;
		BfClaimArg	claim = {0};
		uint32		id;
		uint32		slice;
		uint32		added;
		uint64		sampled = 0;
		uint64		nkeys;
		double		room = 0;

		if (bf_live_layers(&state->meta) > 0 &&
			left > bf_count_batch(&state->meta.layers[state->meta.nlayers - 1]))
		{
			claim.want = left;
			bf_update_meta(index, bf_claim_room, &claim);
			if (claim.layer != 0 && claim.claimed == 0 &&
				grow_tried != claim.layer)
			{
				grow_tried = claim.layer;
				bf_grow(index, claim.layer);
				continue;
			}
		}

		/* (the batch lock before the metapage: see the header comment) */
		if (claim.claimed > 0)
			bf_batch_lock(index, ShareLock);
		metabuf = bf_lock_meta(index, state, &nkeys);
		if (bf_live_layers(&state->meta) == 0)
		{
			/* an unlogged index after a crash: its init fork has no layer */
			UnlockReleaseBuffer(metabuf);
			if (claim.claimed > 0)
				bf_batch_unlock(index, ShareLock);
			bf_grow(index, 0);
			continue;
		}
		newest = &state->meta.layers[state->meta.nlayers - 1];
		id = newest->id;
		if (claim.claimed > 0 && claim.layer != id)
		{
			/* a layer was added since the claim: claim room in it instead */
			UnlockReleaseBuffer(metabuf);
			bf_batch_unlock(index, ShareLock);
			bf_count(index, claim.layer, -(int64) claim.claimed);
			continue;
		}
		if (claim.claimed > 0)
		{
			/* the batch lock keeps the layers: the metapage is free */
			UnlockReleaseBuffer(metabuf);
			metabuf = InvalidBuffer;
			slice = (uint32) claim.claimed;
		}
		else
		{
			room = (double) newest->capacity - (double) nkeys;
			if (room < 1 && grow_tried != id)
			{
				/*
				 * The newest layer holds its capacity and a key does not fit:
				 * grow (or wait for whoever grows it).
				 */
				UnlockReleaseBuffer(metabuf);
				grow_tried = id;
				bf_grow(index, id);
				continue;
			}
			/* (a layer that cannot grow takes all) */
			slice = room >= (double) left || room < 1 ? left : (uint32) room;
		}

		added = bf_set_slice(index, &state->meta, hashes + off, done + off,
							 slice, keys, &sampled);
		if (BufferIsValid(metabuf))
			UnlockReleaseBuffer(metabuf);
		else
			bf_batch_unlock(index, ShareLock);
		off += slice;

		if (claim.claimed > 0)
		{
			/* give back the room the keys already there did not take */
			if (added < slice)
				bf_count(index, id, -(int64) (slice - added));
		}
		else if ((double) added >= room)
			bf_count(index, id, added); /* the layer is full: others then grow it */
		else if (sampled > 0)
			bf_count(index, id, (int64) sampled);
	}
	pfree(done);
	pfree(keys);
}
