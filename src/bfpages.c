/*-------------------------------------------------------------------------
 *
 * bfpages.c
 *	  The pages of a bloomfilter index: the metapage and the bitmap pages, made,
 *	  read, checked and written (src/bfindex.h describes them).
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfpages.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "utils/rel.h"

#include "bfindex.h"

/* A metapage with the given fields. */
void
bf_init_metapage(Page page, const BfMetaPageData *meta)
{
	PageInit(page, BLCKSZ, 0);
	memcpy(BfPageGetMeta(page), meta, sizeof(*meta));
	((PageHeader) page)->pd_lower =
		(char *) (BfPageGetMeta(page) + 1) - (char *) page;
}

/* An empty bitmap page: every byte up to BLCKSZ lies inside pd_lower. */
void
bf_init_bitmap_page(Page page, uint32 layer, uint64 first_block,
					uint32 nblocks)
{
	BfPageHeader *hdr;

	PageInit(page, BLCKSZ, 0);
	memset((char *) page + SizeOfPageHeaderData, 0,
		   BLCKSZ - SizeOfPageHeaderData);
	hdr = BfPageGetHeader(page);
	hdr->magic = BF_MAGIC;
	hdr->layer = layer;
	hdr->first_block = first_block;
	hdr->nblocks = nblocks;
	hdr->reserved = 0;
	((PageHeader) page)->pd_lower = BLCKSZ;
}

static void
bf_corrupt(Relation index, const char *what)
{
	ereport(ERROR,
			errcode(ERRCODE_INDEX_CORRUPTED),
			errmsg("bloomfilter index \"%s\" is corrupted",
				   RelationGetRelationName(index)),
			errdetail("The metapage has %s.", what),
			errhint("Rebuild the index with REINDEX."));
}

/*
 * What is wrong with a metapage that is not one this code wrote, or NULL:
 * every field in range, layers with distinct ids, inside the file's nblocks
 * and not overlapping.  BF_META_OLD_VERSION for another format version.
 */
#define BF_META_OLD_VERSION "another format version"

static const char *
bf_meta_problem(const BfMetaPageData *meta, BlockNumber nblocks)
{
	if (meta->magic != BF_MAGIC)
		return "a wrong magic number";
	if (meta->version != BF_VERSION)
		return BF_META_OLD_VERSION;
	if (meta->layout != BLOOM_LAYOUT_BLOCK512 || meta->hash != BLOOM_HASH_XXH3)
		return "an unknown layout or hash scheme";
	if (meta->nlayers > BF_MAX_LAYERS)
		return "too many layers";
	if (meta->op > BF_OP_MOVE || meta->replaced > meta->nlayers ||
		(meta->op == BF_OP_NONE) != (meta->replaced == 0) ||
		(meta->op != BF_OP_NONE && meta->replaced == meta->nlayers))
		return "an invalid operation in progress";
	if (!(meta->rate > 0.0 && meta->rate < 1.0) || meta->capacity < 1)
		return "an invalid capacity or rate";
	if (memchr(meta->family, '\0', BLOOM_FAMILY_LEN) == NULL)
		return "an unterminated key family";
	if (!bloom_family_is_enum(meta->family) &&
		(meta->labels.count != 0 || meta->labels.sum != 0))
		return "enum labels for a key family of no enum";
	for (uint32 i = 0; i < meta->nlayers; i++)
	{
		const BfLayer *l = &meta->layers[i];

		if (l->start < 1 || l->k < 1 || l->k > BLOOM_MAX_K ||
			l->nblocks < 1 || l->nblocks > BLOOM_MAX_NBLOCKS ||
			l->npages != (l->nblocks + BF_BLOCKS_PER_PAGE - 1) / BF_BLOCKS_PER_PAGE ||
			(uint64) l->start + l->npages > nblocks ||
			l->id >= meta->next_id)
			return "an invalid layer";
		for (uint32 j = 0; j < i; j++)
		{
			const BfLayer *o = &meta->layers[j];

			if (o->id == l->id ||
				(o->start < l->start + l->npages && l->start < o->start + o->npages))
				return "overlapping layers";
		}
	}
	return NULL;
}

/* Refuse a metapage that is not one this code wrote. */
static void
bf_check_meta_size(Relation index, const BfMetaPageData *meta,
				   BlockNumber nblocks)
{
	const char *problem = bf_meta_problem(meta, nblocks);

	if (problem == NULL)
		return;
	if (strcmp(problem, BF_META_OLD_VERSION) == 0)
		ereport(ERROR,
				errcode(ERRCODE_INDEX_CORRUPTED),
				errmsg("bloomfilter index \"%s\" has format version %u, not %d",
					   RelationGetRelationName(index), meta->version, BF_VERSION),
				errhint("Rebuild the index with REINDEX."));
	bf_corrupt(index, problem);
}

void
bf_check_meta(Relation index, const BfMetaPageData *meta)
{
	bf_check_meta_size(index, meta, RelationGetNumberOfBlocks(index));
}

/*
 * Copy the metapage and the file's size, taken under the metapage's lock: a
 * layer's pages are added before the metapage names them, so every page the
 * copy names is within it.  false if the file or the page was never written.
 */
static bool
bf_copy_meta(Relation index, BfMetaPageData *meta, BlockNumber *nblocks)
{
	Buffer		buf;
	Page		page;

	if (RelationGetNumberOfBlocks(index) == 0)
		return false;
	buf = ReadBuffer(index, BF_METAPAGE_BLKNO);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	if (PageIsNew(page))
	{
		UnlockReleaseBuffer(buf);
		return false;
	}
	memcpy(meta, BfPageGetMeta(page), sizeof(*meta));
	*nblocks = RelationGetNumberOfBlocks(index);
	UnlockReleaseBuffer(buf);
	return true;
}

/* Read and check the metapage. */
void
bf_read_meta(Relation index, BfMetaPageData *meta)
{
	BlockNumber nblocks;

	if (!bf_copy_meta(index, meta, &nblocks))
		bf_corrupt(index, "not been initialized");
	bf_check_meta_size(index, meta, nblocks);
}

/*
 * Read the metapage; false, without an error, where it is not one this
 * code wrote (corrupted, or of another format version).  For the planner
 * and the join node, which then do without the index, as the plain plan
 * would.  An unreadable page still raises its error.
 */
bool
bf_try_read_meta(Relation index, BfMetaPageData *meta)
{
	BlockNumber nblocks;

	return bf_copy_meta(index, meta, &nblocks) &&
		bf_meta_problem(meta, nblocks) == NULL;
}

/*
 * Change the metapage: change() edits it under the buffer's exclusive lock
 * and returns whether it changed anything, which is then WAL-logged.
 */
void
bf_update_meta(Relation index, bool (*change) (BfMetaPageData *meta, void *arg),
			   void *arg)
{
	Buffer		buf = ReadBuffer(index, BF_METAPAGE_BLKNO);
	GenericXLogState *gx;
	Page		page;

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	gx = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(gx, buf, 0);
	if (change(BfPageGetMeta(page), arg))
		GenericXLogFinish(gx);
	else
		GenericXLogAbort(gx);
	UnlockReleaseBuffer(buf);
}

/* Is the page the one of layer l, at layer block first_block? */
bool
bf_page_is(Page page, const BfLayer *layer, uint64 first_block)
{
	BfPageHeader *hdr = BfPageGetHeader(page);

	return !PageIsNew(page) && hdr->magic == BF_MAGIC &&
		hdr->layer == layer->id && hdr->first_block == first_block &&
		hdr->nblocks >= 1 && hdr->nblocks <= BF_BLOCKS_PER_PAGE &&
		hdr->nblocks == Min((uint64) BF_BLOCKS_PER_PAGE, layer->nblocks - first_block) &&
		((PageHeader) page)->pd_lower == BLCKSZ;
}

/* The error for page p of a layer that is not that layer's. */
void
bf_page_corrupt(Relation index, const BfLayer *layer, BlockNumber p)
{
	ereport(ERROR,
			errcode(ERRCODE_INDEX_CORRUPTED),
			errmsg("bloomfilter index \"%s\" is corrupted",
				   RelationGetRelationName(index)),
			errdetail("Bitmap page %u is not page %u of layer %u.",
					  layer->start + p, p, layer->id),
			errhint("Rebuild the index with REINDEX."));
}

/*
 * Pin and share-lock page p of a layer of the index as meta describes it.
 * A page that is not that layer's: if the metapage changed since meta was
 * read, the page was reused after a compaction dropped the layer, and
 * InvalidBuffer tells the caller to read the metapage again; otherwise the
 * index is corrupt.
 */
Buffer
bf_read_page(Relation index, const BfMetaPageData *meta, const BfLayer *layer,
			 BlockNumber p)
{
	return bf_lock_page(index, meta, layer, p, BUFFER_LOCK_SHARE);
}

/* bf_read_page, the page locked in mode (BUFFER_LOCK_SHARE or _EXCLUSIVE) */
Buffer
bf_lock_page(Relation index, const BfMetaPageData *meta, const BfLayer *layer,
			 BlockNumber p, int mode)
{
	uint64		first = (uint64) p * BF_BLOCKS_PER_PAGE;
	Buffer		buf = ReadBuffer(index, layer->start + p);
	BfMetaPageData now;

	LockBuffer(buf, mode);
	if (likely(bf_page_is(BufferGetPage(buf), layer, first)))
		return buf;
	UnlockReleaseBuffer(buf);
	bf_read_meta(index, &now);
	if (now.generation != meta->generation)
		return InvalidBuffer;
	bf_page_corrupt(index, layer, p);
	return InvalidBuffer;		/* keep compiler quiet */
}

/*
 * Pin and share-lock the page of a layer that holds hash h's block (or
 * InvalidBuffer, as bf_read_page); *off is the block's offset in the page's
 * bits.
 */
Buffer
bf_read_block(Relation index, const BfMetaPageData *meta, const BfLayer *layer,
			  uint64 h, size_t *off)
{
	uint64		b = bloom_block_of(h, layer->nblocks);

	*off = (size_t) (b % BF_BLOCKS_PER_PAGE) * BLOOM_BLOCK_BYTES;
	return bf_read_page(index, meta, layer, (BlockNumber) (b / BF_BLOCKS_PER_PAGE));
}

/*
 * Does a layer report hash h?  1 if so, 0 if not, -1 if meta is out of date
 * (bf_read_page).  The page is read under a share lock.
 */
int
bf_layer_test(Relation index, const BfMetaPageData *meta,
			  const BfLayer *layer, uint64 h)
{
	size_t		off;
	Buffer		buf = bf_read_block(index, meta, layer, h, &off);
	bool		found;

	if (!BufferIsValid(buf))
		return -1;
	found = bloom_block_test(BfPageGetBits(BufferGetPage(buf)) + off,
							 (int) layer->k, h);
	UnlockReleaseBuffer(buf);
	return found ? 1 : 0;
}

/*
 * Copy every layer that meta names into memory of cxt: bits[i] is layer i's
 * bit array (aligned to a block), alloc[i] the chunk it is in.  False, with
 * nothing kept, if a page was reused since meta was read (bf_read_page): the
 * caller reads the metapage again and retries.
 */
bool
bf_copy_layers(Relation index, const BfMetaPageData *meta, MemoryContext cxt,
			   void **alloc, const uint8 **bits)
{
	for (uint32 i = 0; i < meta->nlayers; i++)
	{
		const BfLayer *layer = &meta->layers[i];
		Size		size = layer->nblocks * BLOOM_BLOCK_BYTES;
		uint8	   *copy;

		alloc[i] = bloom_alloc_big(cxt, size + BLOOM_BLOCK_BYTES, 0);
		copy = (uint8 *) TYPEALIGN(BLOOM_BLOCK_BYTES, alloc[i]);
		for (BlockNumber p = 0; p < layer->npages; p++)
		{
			uint64		first = (uint64) p * BF_BLOCKS_PER_PAGE;
			uint64		nblocks = Min(BF_BLOCKS_PER_PAGE, layer->nblocks - first);
			Buffer		buf = bf_read_page(index, meta, layer, p);

			if (!BufferIsValid(buf))
			{
				bf_free_layers(alloc, bits);
				return false;
			}
			memcpy(copy + first * BLOOM_BLOCK_BYTES,
				   BfPageGetBits(BufferGetPage(buf)),
				   nblocks * BLOOM_BLOCK_BYTES);
			UnlockReleaseBuffer(buf);
			CHECK_FOR_INTERRUPTS();
		}
		bits[i] = copy;
	}
	return true;
}

/* Free the copies bf_copy_layers made. */
void
bf_free_layers(void **alloc, const uint8 **bits)
{
	for (uint32 i = 0; i < BF_MAX_LAYERS; i++)
	{
		if (alloc[i])
			pfree(alloc[i]);
		alloc[i] = NULL;
		bits[i] = NULL;
	}
}

/* A new page at the end of the index, pinned and exclusively locked. */
Buffer
bf_new_buffer(Relation index)
{
#if PG_VERSION_NUM >= 160000
	return ExtendBufferedRel(BMR_REL(index), MAIN_FORKNUM, NULL, EB_LOCK_FIRST);
#else
	Buffer		buf;
	bool		needLock = !RELATION_IS_LOCAL(index);

	if (needLock)
		LockRelationForExtension(index, ExclusiveLock);
	buf = ReadBuffer(index, P_NEW);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (needLock)
		UnlockRelationForExtension(index, ExclusiveLock);
	return buf;
#endif
}

/*
 * Write a layer's pages (at the blocks the layer names, over free pages or
 * at the end of the index), from bits (nblocks * 64 bytes) or empty when
 * bits is NULL.  Each page is its own full-image GenericXLog record.
 */
void
bf_write_layer(Relation index, const BfLayer *layer, const uint8 *bits)
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
		if (blkno < have)
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
		bf_init_bitmap_page(page, layer->id, first, n);
		if (bits)
			memcpy(BfPageGetBits(page), bits + first * BLOOM_BLOCK_BYTES,
				   (size_t) n * BLOOM_BLOCK_BYTES);
		GenericXLogFinish(gx);
		UnlockReleaseBuffer(buf);
	}
}

/*
 * OR bits into the blocks [first, first + nblocks) of a named layer (first
 * a multiple of BF_BLOCKS_PER_PAGE), keeping what inserts set meanwhile;
 * each page a full-image GenericXLog record.
 */
void
bf_or_layer(Relation index, const BfLayer *layer, uint64 first, uint64 nblocks,
			const uint8 *bits)
{
	for (uint64 b = first; b < first + nblocks; b += BF_BLOCKS_PER_PAGE)
	{
		BlockNumber blkno = layer->start + (BlockNumber) (b / BF_BLOCKS_PER_PAGE);
		uint32		n = (uint32) Min((uint64) BF_BLOCKS_PER_PAGE, first + nblocks - b);
		Buffer		buf = ReadBuffer(index, blkno);
		GenericXLogState *gx;
		Page		page;
		uint64	   *dst;
		const uint64 *src = (const uint64 *) (bits + (b - first) * BLOOM_BLOCK_BYTES);

		CHECK_FOR_INTERRUPTS();
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		if (b % BF_BLOCKS_PER_PAGE != 0 ||
			!bf_page_is(BufferGetPage(buf), layer, b))
			bf_page_corrupt(index, layer, blkno - layer->start);
		gx = GenericXLogStart(index);
		page = GenericXLogRegisterBuffer(gx, buf, GENERIC_XLOG_FULL_IMAGE);
		dst = (uint64 *) BfPageGetBits(page);
		for (size_t w = 0; w < (size_t) n * BLOOM_BLOCK_BYTES / sizeof(uint64); w++)
			dst[w] |= src[w];
		GenericXLogFinish(gx);
		UnlockReleaseBuffer(buf);
	}
}

/*
 * Take the batch lock (bfindex.h) in mode, waiting as long as it takes: the
 * wait stands in for an LWLock's, which lock_timeout never cut off.
 */
void
bf_batch_lock(Relation index, LOCKMODE mode)
{
	ItemPointerData tid;
	int			save = LockTimeout;

	ItemPointerSet(&tid, BF_BATCH_LOCK_BLKNO, 1);
	LockTimeout = 0;
	PG_TRY();
	{
		LockTuple(index, &tid, mode);
	}
	PG_FINALLY();
	{
		LockTimeout = save;
	}
	PG_END_TRY();
}

void
bf_batch_unlock(Relation index, LOCKMODE mode)
{
	ItemPointerData tid;

	ItemPointerSet(&tid, BF_BATCH_LOCK_BLKNO, 1);
	UnlockTuple(index, &tid, mode);
}
