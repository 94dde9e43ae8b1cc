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
	if (opts && validate)
		bf_check_rate(opts->rate);
	return (bytea *) opts;
}

/*
 * Refuse a rate at which no layer can hold a key: the index would be built,
 * and then every insert would fail.  Checked when the option is set (CREATE
 * INDEX, ALTER INDEX ... SET) and again at every build.
 */
void
bf_check_rate(double rate)
{
	if (bloom_max_capacity(BF_LAYER_RATE(rate, 0)) < 1)
		ereport(ERROR,
				errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				errmsg("false_positive_rate %g is too small for a bloomfilter index", rate),
				errdetail("The index's first layer, at %g, could not hold a single key in the largest Bloom filter.",
						  BF_LAYER_RATE(rate, 0)),
				errhint("Raise the rate."));
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
	amroutine->amcanbuildparallel = true;
	amroutine->aminsertcleanup = bfinsertcleanup;
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
	amroutine->ambuildphasename = bfbuildphasename;
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

/* The layers not being replaced: the ones inserts and growth count. */
uint32
bf_live_layers(const BfMetaPageData *meta)
{
	return meta->nlayers - meta->replaced;
}

/* The keys the live layers hold, as counted. */
uint64
bf_live_keys(const BfMetaPageData *meta)
{
	uint64		keys = 0;

	for (uint32 i = meta->replaced; i < meta->nlayers; i++)
		keys += meta->layers[i].nkeys;
	return keys;
}

/*
 * A layer for capacity keys at the rate of live position "position", its
 * pages where bf_place_layer finds room in the index as meta describes it.
 * False when the layer would be too large (or too tight for k <=
 * BLOOM_MAX_K), or the index has no room for another layer.
 */
bool
bf_plan_layer(const BfMetaPageData *meta, uint32 position, uint64 capacity,
			  BfLayer *layer)
{
	double		rate = BF_LAYER_RATE(meta->rate, position);
	uint64		nblocks;
	int			k;
	uint64		npages;

	if (meta->nlayers >= BF_MAX_LAYERS || capacity < 1 ||
		!bloom_plan(capacity, rate, &nblocks, &k))
		return false;
	npages = (nblocks + BF_BLOCKS_PER_PAGE - 1) / BF_BLOCKS_PER_PAGE;
	if (npages >= MaxBlockNumber / 2)
		return false;
	memset(layer, 0, sizeof(*layer));
	layer->nblocks = nblocks;
	layer->k = (uint32) k;
	layer->capacity = capacity;
	layer->rate = rate;
	layer->npages = (BlockNumber) npages;
	layer->start = bf_place_layer(meta, layer->npages);
	if (layer->start == InvalidBlockNumber)
		return false;
	layer->id = meta->next_id;
	return true;
}

/*
 * The layer growth adds after the newest: BF_GROWTH times the newest's
 * capacity, or as many keys as the live layers hold if that is more (so
 * that an index that outgrew its layers catches up at once).
 */
bool
bf_plan_next_layer(const BfMetaPageData *meta, BfLayer *layer)
{
	uint32		live = bf_live_layers(meta);
	double		cap;

	if (live == 0)
		cap = (double) meta->capacity;
	else
	{
		cap = (double) meta->layers[meta->nlayers - 1].capacity * BF_GROWTH;
		cap = Max(cap, (double) bf_live_keys(meta));
	}
	if (live >= BF_GROW_LAYERS || cap > (double) PG_INT64_MAX)
		return false;
	return bf_plan_layer(meta, live, (uint64) cap, layer);
}

/*
 * The first block of npages consecutive pages that no named layer uses: the
 * lowest gap between layers that is large enough, else after the last one.
 * Pages past the last named layer may exist already (left by a crash, or by
 * layers a compaction dropped): they are reused.
 */
BlockNumber
bf_place_layer(const BfMetaPageData *meta, BlockNumber npages)
{
	BlockNumber candidate = 1;

	for (;;)
	{
		BlockNumber next = candidate;

		/* the first layer that overlaps [candidate, candidate + npages) */
		for (uint32 i = 0; i < meta->nlayers; i++)
		{
			const BfLayer *l = &meta->layers[i];

			if (l->start < candidate + npages && candidate < l->start + l->npages)
				next = Max(next, l->start + l->npages);
		}
		if (next == candidate)
			return candidate;
		if ((uint64) next + npages >= MaxBlockNumber)
			return InvalidBlockNumber;
		candidate = next;
	}
}

/* One past the last page any named layer uses. */
BlockNumber
bf_layers_end(const BfMetaPageData *meta)
{
	BlockNumber end = 1;

	for (uint32 i = 0; i < meta->nlayers; i++)
		end = Max(end, meta->layers[i].start + meta->layers[i].npages);
	return end;
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
 * Refuse a metapage that is not one this code wrote: every field in range,
 * layers with distinct ids, inside the file's nblocks and not overlapping.
 */
static void
bf_check_meta_size(Relation index, const BfMetaPageData *meta,
				   BlockNumber nblocks)
{
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
	if (meta->op > BF_OP_MOVE || meta->replaced > meta->nlayers ||
		(meta->op == BF_OP_NONE) != (meta->replaced == 0) ||
		(meta->op != BF_OP_NONE && meta->replaced == meta->nlayers))
		bf_corrupt(index, "an invalid operation in progress");
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

		if (l->start < 1 || l->k < 1 || l->k > BLOOM_MAX_K ||
			l->nblocks < 1 || l->nblocks > BLOOM_MAX_NBLOCKS ||
			l->npages != (l->nblocks + BF_BLOCKS_PER_PAGE - 1) / BF_BLOCKS_PER_PAGE ||
			(uint64) l->start + l->npages > nblocks ||
			l->id >= meta->next_id)
			bf_corrupt(index, "an invalid layer");
		for (uint32 j = 0; j < i; j++)
		{
			const BfLayer *o = &meta->layers[j];

			if (o->id == l->id ||
				(o->start < l->start + l->npages && l->start < o->start + o->npages))
				bf_corrupt(index, "overlapping layers");
		}
	}
}

void
bf_check_meta(Relation index, const BfMetaPageData *meta)
{
	bf_check_meta_size(index, meta, RelationGetNumberOfBlocks(index));
}

/*
 * Read and check the metapage.  The file's size is taken under the
 * metapage's lock: a layer's pages are added before the metapage names them,
 * so every page the copy names is within it.
 */
void
bf_read_meta(Relation index, BfMetaPageData *meta)
{
	Buffer		buf;
	Page		page;
	BlockNumber nblocks;

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
	nblocks = RelationGetNumberOfBlocks(index);
	UnlockReleaseBuffer(buf);
	bf_check_meta_size(index, meta, nblocks);
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
 * Refuse to write an index whose keys were hashed as another family than
 * its column's keys hash now.  (The labels of an enum family are checked by
 * bf_get_state.)
 */
void
bf_check_family_meta(Relation index, const BfMetaPageData *meta,
					 const BloomKeyType *kt)
{
	if (strcmp(meta->family, kt->family) != 0)
		ereport(ERROR,
				errcode(ERRCODE_DATATYPE_MISMATCH),
				errmsg("bloomfilter index \"%s\" holds keys of family \"%s\", not \"%s\"",
					   RelationGetRelationName(index),
					   bloom_family_display(meta->family),
					   bloom_family_display(kt->family)),
				bloom_family_is_enum(meta->family) && bloom_family_is_enum(kt->family) ?
				errdetail("The enum type was renamed or moved to another schema since the index was built.") :
				errdetail("Its keys were hashed by another PostgreSQL version or platform."),
				errhint("Rebuild the index with REINDEX."));
}

/*
 * Record in the metapage the labels of the index's enum now, if its guard is
 * still "seen", which bloom_check_labels found to be those labels less some
 * added since: keys of the new labels are about to be inserted, and a later
 * rename of one must be seen.  false if another backend changed the guard
 * meanwhile.
 */
typedef struct BfLabelsArg
{
	BloomLabels seen;
	BloomLabels labels;
	bool		done;
} BfLabelsArg;

static bool
bf_set_labels(BfMetaPageData *meta, void *arg)
{
	BfLabelsArg *a = (BfLabelsArg *) arg;

	a->done = bloom_labels_equal(&meta->labels, &a->seen);
	if (a->done)
		meta->labels = a->labels;
	return a->done;
}

bool
bf_update_labels(Relation index, const BloomLabels *seen,
				 const BloomLabels *labels)
{
	BfLabelsArg arg = {*seen, *labels, false};

	bf_update_meta(index, bf_set_labels, &arg);
	return arg.done;
}

/*
 * How the keys the index holds stand to its column's keys now, without an
 * error (VACUUM goes on whatever they are): BF_KEYS_SAME; BF_KEYS_ADDED,
 * when labels were added to the key's enum since the metapage recorded them
 * (keys hash as they did); BF_KEYS_CHANGED when the family's name changed
 * (an enum renamed or moved; a type that can no longer be a key), and
 * BF_KEYS_LABELS when a label of the enum was renamed since (or so many
 * were added that the check gives up).  kt is set up for the column.
 */
BfKeysMatch
bf_keys_match(Relation index, const BfMetaPageData *meta, BloomKeyType *kt)
{
	if (!bloom_key_type_try_init(kt, TupleDescAttr(RelationGetDescr(index), 0)->atttypid,
								 index->rd_indcollation[0], CurrentMemoryContext) ||
		strcmp(meta->family, kt->family) != 0)
		return BF_KEYS_CHANGED;
	if (kt->kind != KEY_ENUM)
		return BF_KEYS_SAME;
	switch (bloom_labels_match(kt, &meta->labels, true))
	{
		case 1:
			return BF_KEYS_SAME;
		case 0:
			return BF_KEYS_ADDED;
		default:
			return BF_KEYS_LABELS;
	}
}

/*
 * The backend's state of an index, kept in rd_amcache (gone at the next
 * relcache invalidation): its key type, and a copy of the metapage that an
 * inserter checks against the metapage itself (bfinsert.c).  Made anew when
 * the labels of the key's enum may have changed: a label renamed is refused,
 * labels added are recorded in the metapage before keys of them go in.
 */
BfState *
bf_get_state(Relation index)
{
	BfState    *state = (BfState *) index->rd_amcache;
	BloomKeyType kt;
	BfMetaPageData meta;

	if (state != NULL && !bloom_labels_stale(&state->keytype))
		return state;

	/*
	 * The check of an enum's labels may read the catalog, and so take
	 * invalidations that free rd_amcache: it works on a copy of the key type.
	 */
	if (state == NULL)
		bf_key_type(index, &kt, index->rd_indexcxt);
	else
		kt = state->keytype;
	for (;;)
	{
		bf_read_meta(index, &meta);
		bf_check_family_meta(index, &meta, &kt);
		if (kt.kind != KEY_ENUM ||
			bloom_check_labels(&kt, &meta.labels, RelationGetRelationName(index)))
			break;
		if (bf_update_labels(index, &meta.labels, &kt.oidlabels))
		{
			meta.labels = kt.oidlabels;
			break;
		}
	}
	state = (BfState *) index->rd_amcache;
	if (state == NULL)
		state = MemoryContextAllocZero(index->rd_indexcxt, sizeof(BfState));
	state->keytype = kt;
	state->meta = meta;
	index->rd_amcache = state;
	return state;
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

/*
 * Pin and share-lock page p of a layer of the index as meta describes it.
 * A page that is not that layer's: if the metapage changed since meta was
 * read, the page was reused after a compaction dropped the layer, and
 * InvalidBuffer tells the caller to read the metapage again; otherwise the
 * index is corrupt.
 */
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

Buffer
bf_read_page(Relation index, const BfMetaPageData *meta, const BfLayer *layer,
			 BlockNumber p)
{
	uint64		first = (uint64) p * BF_BLOCKS_PER_PAGE;
	Buffer		buf = ReadBuffer(index, layer->start + p);
	BfMetaPageData now;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
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
