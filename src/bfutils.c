/*-------------------------------------------------------------------------
 *
 * bfutils.c
 *	  The bloomfilter index access method's handler, options, metapage and
 *	  per-backend state.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfutils.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/reloptions.h"
#include "access/relscan.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "bfindex.h"

static relopt_kind bf_relopt_kind;
static bool bf_relopt_ready = false;

/*
 * Options are registered the first time the handler runs in a backend: the
 * handler runs before anything parses a bloomfilter index's options.
 */
static void
bf_register_options(void)
{
	if (bf_relopt_ready)
		return;
	bf_relopt_kind = add_reloption_kind();
	add_int_reloption(bf_relopt_kind, "capacity",
					  "Number of distinct keys the first layer is sized for",
					  0, 1, INT_MAX, AccessExclusiveLock);
	add_real_reloption(bf_relopt_kind, "false_positive_rate",
					   "False-positive rate the index keeps however far it grows",
					   BLOOM_DEFAULT_RATE, 0.0, 1.0, AccessExclusiveLock);
	bf_relopt_ready = true;
}

bytea *
bfoptions(Datum reloptions, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{"capacity", RELOPT_TYPE_INT, offsetof(BfOptions, capacity)},
		{"false_positive_rate", RELOPT_TYPE_REAL, offsetof(BfOptions, rate)},
	};
	BfOptions  *opts;

	bf_register_options();
	opts = (BfOptions *) build_reloptions(reloptions, validate, bf_relopt_kind,
										  sizeof(BfOptions), tab, lengthof(tab));
	if (opts && validate && !(opts->rate > 0.0 && opts->rate < 1.0))
		ereport(ERROR,
				errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				errmsg("false_positive_rate must be between 0 and 1, not %g",
					   opts->rate),
				errhint("Pass a rate such as 0.01 for one false positive in a hundred probes."));
	return (bytea *) opts;
}

/* The planner never uses the index: it has no operators to match. */
static void
bfcostestimate(PlannerInfo *root, IndexPath *path, double loop_count,
			   Cost *indexStartupCost, Cost *indexTotalCost,
			   Selectivity *indexSelectivity, double *indexCorrelation,
			   double *indexPages)
{
	*indexStartupCost = 1.0e10;
	*indexTotalCost = 1.0e10;
	*indexSelectivity = 1.0;
	*indexCorrelation = 0.0;
	*indexPages = 1;
}

static IndexScanDesc
bfbeginscan(Relation r, int nkeys, int norderbys)
{
	ereport(ERROR,
			errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			errmsg("bloomfilter indexes cannot be scanned"),
			errhint("Probe the index with bloom_index_contains()."));
	return NULL;				/* keep compiler quiet */
}

static void
bfrescan(IndexScanDesc scan, ScanKey scankey, int nscankeys,
		 ScanKey orderbys, int norderbys)
{
	elog(ERROR, "bloomfilter indexes cannot be scanned");
}

static void
bfendscan(IndexScanDesc scan)
{
}

/*
 * The handler.  No amgettuple or amgetbitmap: with neither, and no
 * operators in its operator classes, the planner never makes a path for the
 * index (as for src/test/modules/dummy_index_am).
 */
PG_FUNCTION_INFO_V1(bf_handler);
Datum
bf_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *amroutine = makeNode(IndexAmRoutine);

	bf_register_options();

	amroutine->amstrategies = 0;
	amroutine->amsupport = 0;
	amroutine->amoptsprocnum = 0;
	amroutine->amcanorder = false;
	amroutine->amcanorderbyop = false;
	amroutine->amcanbackward = false;
	amroutine->amcanunique = false;
	amroutine->amcanmulticol = false;
	amroutine->amoptionalkey = true;
	amroutine->amsearcharray = false;
	amroutine->amsearchnulls = false;
	amroutine->amstorage = false;
	amroutine->amclusterable = false;
	amroutine->ampredlocks = false;
	amroutine->amcanparallel = false;
	amroutine->amcaninclude = false;
	amroutine->amusemaintenanceworkmem = false;
	amroutine->amparallelvacuumoptions = VACUUM_OPTION_NO_PARALLEL;
	amroutine->amkeytype = InvalidOid;
#if PG_VERSION_NUM >= 160000
	amroutine->amsummarizing = false;
#endif
#if PG_VERSION_NUM >= 170000
	amroutine->amcanbuildparallel = false;
	amroutine->aminsertcleanup = NULL;
#endif

	amroutine->ambuild = bfbuild;
	amroutine->ambuildempty = bfbuildempty;
	amroutine->aminsert = bfinsert;
	amroutine->ambulkdelete = bfbulkdelete;
	amroutine->amvacuumcleanup = bfvacuumcleanup;
	amroutine->amcanreturn = NULL;
	amroutine->amcostestimate = bfcostestimate;
	amroutine->amoptions = bfoptions;
	amroutine->amproperty = NULL;
	amroutine->ambuildphasename = NULL;
	amroutine->amvalidate = bfvalidate;
	amroutine->amadjustmembers = NULL;
	amroutine->ambeginscan = bfbeginscan;
	amroutine->amrescan = bfrescan;
	amroutine->amgettuple = NULL;
	amroutine->amgetbitmap = NULL;
	amroutine->amendscan = bfendscan;
	amroutine->ammarkpos = NULL;
	amroutine->amrestrpos = NULL;
	amroutine->amestimateparallelscan = NULL;
	amroutine->aminitparallelscan = NULL;
	amroutine->amparallelrescan = NULL;

	PG_RETURN_POINTER(amroutine);
}

/* A metapage with no layer yet (bf_grow adds the first). */
void
bf_init_metapage(Page page, uint64 capacity, double rate, const char *family)
{
	BfMetaPageData *meta;

	PageInit(page, BLCKSZ, 0);
	meta = BfPageGetMeta(page);
	memset(meta, 0, sizeof(*meta));
	meta->magic = BF_MAGIC;
	meta->version = BF_VERSION;
	meta->layout = BLOOM_LAYOUT_BLOCK512;
	meta->hash = BLOOM_HASH_XXH3;
	meta->nlayers = 0;
	meta->seed = BLOOM_DEFAULT_SEED;
	meta->capacity = capacity;
	meta->rate = rate;
	strlcpy(meta->family, family, BLOOM_FAMILY_LEN);
	((PageHeader) page)->pd_lower = (char *) (meta + 1) - (char *) page;
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

/*
 * Layer i of an index as its metapage describes it: sizes from the index's
 * capacity and rate, pages right after layer i - 1.  False when the layer
 * would be too large (or too tight for k <= BLOOM_MAX_K).
 */
bool
bf_plan_layer(const BfMetaPageData *meta, uint32 i, BfLayer *layer)
{
	double		cap = (double) meta->capacity * pow(BF_GROWTH, i);
	double		rate = BF_LAYER_RATE(meta->rate, i);
	uint64		nblocks;
	uint64		start;
	int			k;

	if (i >= BF_MAX_LAYERS || cap > (double) PG_INT64_MAX ||
		!bloom_plan((uint64) cap, rate, &nblocks, &k))
		return false;
	start = i == 0 ? 1 :
		(uint64) meta->layers[i - 1].start + meta->layers[i - 1].npages;
	memset(layer, 0, sizeof(*layer));
	layer->nblocks = nblocks;
	layer->k = (uint32) k;
	layer->capacity = (uint64) cap;
	layer->rate = rate;
	layer->npages = (BlockNumber) ((nblocks + BF_BLOCKS_PER_PAGE - 1) / BF_BLOCKS_PER_PAGE);
	if (start + layer->npages >= MaxBlockNumber)
		return false;
	layer->start = (BlockNumber) start;
	return true;
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

/* Refuse a metapage that is not one this code wrote. */
void
bf_check_meta(Relation index, const BfMetaPageData *meta)
{
	BlockNumber next = 1;

	if (meta->magic != BF_MAGIC)
		bf_corrupt(index, "a wrong magic number");
	if (meta->version != BF_VERSION)
		ereport(ERROR,
				errcode(ERRCODE_INDEX_CORRUPTED),
				errmsg("bloomfilter index \"%s\" has format version %u, not %d",
					   RelationGetRelationName(index), meta->version, BF_VERSION),
				errhint("Rebuild the index with REINDEX."));
	if (meta->layout != BLOOM_LAYOUT_BLOCK512 || meta->hash != BLOOM_HASH_XXH3)
		bf_corrupt(index, "an unknown layout or hash scheme");
	if (meta->nlayers > BF_MAX_LAYERS)
		bf_corrupt(index, "too many layers");
	if (!(meta->rate > 0.0 && meta->rate < 1.0) || meta->capacity < 1)
		bf_corrupt(index, "an invalid capacity or rate");
	if (memchr(meta->family, '\0', BLOOM_FAMILY_LEN) == NULL)
		bf_corrupt(index, "an unterminated key family");
	if (!bloom_family_is_enum(meta->family) &&
		(meta->labels.count != 0 || meta->labels.sum != 0))
		bf_corrupt(index, "enum labels for a key family of no enum");
	for (uint32 i = 0; i < meta->nlayers; i++)
	{
		const BfLayer *l = &meta->layers[i];

		if (l->start != next || l->k < 1 || l->k > BLOOM_MAX_K ||
			l->nblocks < 1 || l->nblocks > BLOOM_MAX_NBLOCKS ||
			l->npages != (l->nblocks + BF_BLOCKS_PER_PAGE - 1) / BF_BLOCKS_PER_PAGE)
			bf_corrupt(index, "an invalid layer");
		next = l->start + l->npages;
	}
}

/* Read and check the metapage. */
void
bf_read_meta(Relation index, BfMetaPageData *meta)
{
	Buffer		buf;
	Page		page;

	if (RelationGetNumberOfBlocks(index) == 0)
		bf_corrupt(index, "not been written");
	buf = ReadBuffer(index, BF_METAPAGE_BLKNO);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	if (PageIsNew(page))
	{
		UnlockReleaseBuffer(buf);
		bf_corrupt(index, "not been initialized");
	}
	memcpy(meta, BfPageGetMeta(page), sizeof(*meta));
	UnlockReleaseBuffer(buf);
	bf_check_meta(index, meta);
}

/*
 * How the index's keys hash: the type and collation of its column (or
 * expression), with the same refusals as a bloom value's keys.
 */
void
bf_key_type(Relation index, BloomKeyType *kt, MemoryContext mcxt)
{
	bloom_key_type_init(kt, TupleDescAttr(RelationGetDescr(index), 0)->atttypid,
						index->rd_indcollation[0], mcxt);
}

/*
 * Record in the metapage the labels of the index's enum now, if its guard is
 * still "seen", which bloom_check_labels found to be those labels less some
 * added since: keys of the new labels are about to be inserted, and a later
 * rename of one must be seen.  false if another backend changed the guard
 * meanwhile.
 */
static bool
bf_update_labels(Relation index, const BloomLabels *seen,
				 const BloomLabels *labels)
{
	Buffer		buf = ReadBuffer(index, BF_METAPAGE_BLKNO);
	bool		done = false;

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (bloom_labels_equal(&BfPageGetMeta(BufferGetPage(buf))->labels, seen))
	{
		GenericXLogState *gx = GenericXLogStart(index);

		BfPageGetMeta(GenericXLogRegisterBuffer(gx, buf, 0))->labels = *labels;
		GenericXLogFinish(gx);
		done = true;
	}
	UnlockReleaseBuffer(buf);
	return done;
}

/*
 * The backend's copy of the metapage and key type, kept in rd_amcache (gone
 * at the next relcache invalidation).  refresh re-reads the metapage: an
 * inserter does that when its layer looks full, and whenever the labels of
 * the key's enum may have changed.
 */
BfState *
bf_get_state(Relation index, bool refresh)
{
	BfState    *state = (BfState *) index->rd_amcache;
	bool		cached = state != NULL;
	BloomKeyType kt;
	BfMetaPageData meta;

	if (state == NULL)
	{
		state = MemoryContextAllocZero(index->rd_indexcxt, sizeof(BfState));
		bf_key_type(index, &state->keytype, index->rd_indexcxt);
		refresh = true;
	}
	if (!refresh && !bloom_labels_stale(&state->keytype))
		return state;

	/*
	 * The check of an enum's labels may read the catalog, and so take
	 * invalidations that free rd_amcache: it works on a copy of the key type.
	 */
	kt = state->keytype;
	for (;;)
	{
		bf_read_meta(index, &meta);
		if (strcmp(meta.family, kt.family) != 0)
			ereport(ERROR,
					errcode(ERRCODE_DATATYPE_MISMATCH),
					errmsg("bloomfilter index \"%s\" holds keys of family \"%s\", not \"%s\"",
						   RelationGetRelationName(index),
						   bloom_family_display(meta.family),
						   bloom_family_display(kt.family)),
					bloom_family_is_enum(meta.family) && bloom_family_is_enum(kt.family) ?
					errdetail("The enum type was renamed or moved to another schema since the index was built.") :
					errdetail("Its keys were hashed by another PostgreSQL version or platform."),
					errhint("Rebuild the index with REINDEX."));
		if (kt.kind != KEY_ENUM ||
			bloom_check_labels(&kt, &meta.labels, RelationGetRelationName(index)))
			break;
		if (bf_update_labels(index, &meta.labels, &kt.labels))
		{
			meta.labels = kt.labels;
			break;
		}
	}
	if (cached && index->rd_amcache != state)
		state = MemoryContextAllocZero(index->rd_indexcxt, sizeof(BfState));
	state->keytype = kt;
	state->meta = meta;
	index->rd_amcache = state;
	return state;
}

/* ereport for a bitmap page that is not the one the metapage promises */
static void
bf_check_page(Relation index, Buffer buf, uint32 layer, uint64 first_block)
{
	Page		page = BufferGetPage(buf);
	BfPageHeader *hdr = BfPageGetHeader(page);

	if (PageIsNew(page) || hdr->magic != BF_MAGIC || hdr->layer != layer ||
		hdr->first_block != first_block || hdr->nblocks < 1 ||
		hdr->nblocks > BF_BLOCKS_PER_PAGE ||
		((PageHeader) page)->pd_lower != BLCKSZ)
		ereport(ERROR,
				errcode(ERRCODE_INDEX_CORRUPTED),
				errmsg("bloomfilter index \"%s\" is corrupted",
					   RelationGetRelationName(index)),
				errdetail("Bitmap page %u is not page %llu of layer %u.",
						  BufferGetBlockNumber(buf),
						  (unsigned long long) (first_block / BF_BLOCKS_PER_PAGE),
						  layer),
				errhint("Rebuild the index with REINDEX."));
}

/* Pin, share-lock and check page p of layer i. */
Buffer
bf_read_page(Relation index, const BfLayer *layer, uint32 i, BlockNumber p)
{
	Buffer		buf = ReadBuffer(index, layer->start + p);

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	bf_check_page(index, buf, i, (uint64) p * BF_BLOCKS_PER_PAGE);
	return buf;
}

/*
 * Pin and share-lock the page of layer i that holds hash h's block; *off is
 * the block's offset in the page's bits.
 */
Buffer
bf_read_block(Relation index, const BfLayer *layer, uint32 i, uint64 h,
			  size_t *off)
{
	uint64		b = bloom_block_of(h, layer->nblocks);

	*off = (size_t) (b % BF_BLOCKS_PER_PAGE) * BLOOM_BLOCK_BYTES;
	return bf_read_page(index, layer, i, (BlockNumber) (b / BF_BLOCKS_PER_PAGE));
}

/* Does layer i report hash h?  (Its page is read under a share lock.) */
bool
bf_layer_test(Relation index, const BfLayer *layer, uint32 i, uint64 h)
{
	size_t		off;
	Buffer		buf = bf_read_block(index, layer, i, h, &off);
	bool		found;

	found = bloom_block_test(BfPageGetBits(BufferGetPage(buf)) + off,
							 (int) layer->k, h);
	UnlockReleaseBuffer(buf);
	return found;
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
