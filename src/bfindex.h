/*-------------------------------------------------------------------------
 *
 * bfindex.h
 *	  The bloomfilter index access method: its page format and the
 *	  functions of its C files.
 *
 * A bloomfilter index is a live Bloom filter of one key column, kept current
 * by PostgreSQL on every insert.  It answers no scans (the planner never
 * uses it); bloom_index_contains() probes it.
 *
 * Page format
 * -----------
 * Block 0 is the metapage; every other block is a bitmap page of some layer,
 * or a free page (of a layer a compaction replaced, or one a crash cut off
 * before the metapage named it).  Both keep all their data between the page
 * header and pd_lower, because GenericXLog treats the space between pd_lower
 * and pd_upper as a hole and zeroes it.  Fields are in host order, like
 * every PostgreSQL index: an index is physical data, rebuilt (never copied)
 * by dump and restore.
 *
 * Metapage (BfMetaPageData, right after the page header):
 *
 *	magic		BF_MAGIC, tells a bloomfilter metapage from anything else
 *	version		BF_VERSION (2); an index of another version is refused
 *	layout		BLOOM_LAYOUT_BLOCK512 (bloom.h)
 *	hash		BLOOM_HASH_XXH3 (bloom.h)
 *	op			a compaction or move in progress (BF_OP_*), or BF_OP_NONE
 *	nlayers		layers named, 0..BF_MAX_LAYERS
 *	seed		XXH3 seed of the key hash (BLOOM_DEFAULT_SEED)
 *	capacity	keys the first layer was sized for at CREATE INDEX
 *	rate		false-positive rate the whole index promises
 *	family		key family, as in a bloom value (bloom_keys.c)
 *	labels		an enum family's label guard, as in a bloom value (bloom.h)
 *				but over (OID, label) pairs: XXH3-64 of each label's UTF-8
 *				bytes with its pg_enum OID as the seed (a restore builds the
 *				index again, pg_upgrade keeps enum OIDs; a label renamed
 *				and its old name added again is seen), else 0: set at the
 *				build, and by the first insert after a label was added
 *				(bf_get_state)
 *	next_id		the id the next layer gets (ids are never reused)
 *	replaced	layers[0 .. replaced) are being replaced by op: still probed,
 *				no longer written, dropped when op ends (0 with BF_OP_NONE)
 *	generation	changes whenever the list of layers does
 *	layers[]	one BfLayer per layer, oldest first; the last is the one
 *				inserts write
 *
 * BfLayer: a layer is a Bloom filter of its own, laid out exactly like the
 * bits of a bloom value (bloom.h) of nblocks 64-byte blocks with k hashes:
 *
 *	start		first bitmap page of the layer
 *	npages		bitmap pages of the layer (consecutive)
 *	k			bits set per key
 *	id			the layer's id, also in each of its pages' headers
 *	nblocks		64-byte blocks of the layer
 *	capacity	keys the layer is sized for
 *	nkeys		keys added to it, as counted so far (an insert that set a bit
 *				counts one; backends add their counts in batches, so this
 *				may lag the truth by a few batches)
 *	rate		the layer's share of the index's rate
 *
 * Bitmap page: a BfPageHeader (after the page header, padding to 64 bytes so
 * that blocks are cache-line aligned in a buffer), then BF_BLOCKS_PER_PAGE
 * blocks.  Block b of a layer is block b % BF_BLOCKS_PER_PAGE of page
 * start + b / BF_BLOCKS_PER_PAGE: the concatenated blocks of a layer are the
 * bits of a bloom value, and a key's bits, in one block, lie in one page.
 * pd_lower is BLCKSZ: the whole page is data.  A page whose layer id is not
 * the one a reader expects was reused after the reader read the metapage
 * (the reader reads the metapage again) or is corrupt (the metapage did not
 * change).
 *
 * Layers (a scalable Bloom filter).  Layer i (counting from the first layer
 * that is not being replaced) is sized for BF_GROWTH times the keys of the
 * one before, or the keys the index holds if more, at BF_LAYER_RATE(rate, i):
 * the first layer gets BF_RATE_SHARE * (1 - BF_TIGHTEN_FIRST) of the rate,
 * the others halve what is left, so however many layers there are their
 * rates add up to less than BF_RATE_SHARE of the index's rate.  The rest is
 * headroom: a small layer's measured rate spreads around its expected one,
 * and counts lag.  A layer grows the next when its nkeys reaches its
 * capacity: never before it holds its capacity.  Inserts go to the newest
 * layer; probes test every layer.
 *
 * Compaction (bfcompact.c) replaces the layers by one, sized for the keys
 * the table holds now: VACUUM names a new layer as the newest (inserts go to
 * it from then on) with op BF_OP_COMPACT and replaced = the old layer count,
 * sets the bits of every row's key in it, then drops the old layers.  A move
 * (BF_OP_MOVE) copies a lone layer to free pages lower in the file so that
 * the file can be truncated.  A crash at any point leaves every layer a
 * committed key went into named in the metapage; VACUUM resumes the op.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfindex.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BFINDEX_H
#define BFINDEX_H

#include <math.h>

#include "access/amapi.h"
#include "access/generic_xlog.h"
#include "access/itup.h"
#include "access/xact.h"
#include "commands/vacuum.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "storage/bufmgr.h"
#include "utils/relcache.h"

#include "bloom_pg.h"

#define BF_METAPAGE_BLKNO	0

/*
 * The batch lock: a heavyweight lock on a tuple of the index at this block
 * number (no page has it; pg_locks shows a "tuple" lock on the index, page
 * -3, tuple 1), taken in ShareLock by a batch that claimed room
 * (bfbatch.c) for as long as it sets its bits, and in ExclusiveLock by a
 * compaction or move around each change of the layers it makes
 * (bfcompact.c).  It stands in for the metapage's share lock, which such a
 * batch then holds only to read the metapage: claims of room and counts
 * (the metapage's exclusive lock) no longer wait for every batch in flight
 * to finish, and the heavyweight lock queues fairly where the share lock
 * let a stream of batches starve them.  bf_batch_lock waits for it as the
 * LWLock it replaced was waited for: lock_timeout does not cut the wait
 * off (a VACUUM or a COMMIT would fail where they did not), a cancel does.
 * It is a tuple lock, not a page lock, and it is taken before the grow lock
 * (a page lock on the metapage's block), never under it: PostgreSQL up to
 * 15 asserts that no heavyweight lock is taken while a page lock is held,
 * and its deadlock detector does not follow page locks.
 */
#define BF_BATCH_LOCK_BLKNO	(MaxBlockNumber - 1)
#define BF_MAGIC			0x42465831	/* "BFX1" */
#define BF_VERSION			2
#define BF_MAX_LAYERS		32	/* named in the metapage, old and new */
#define BF_GROW_LAYERS		24	/* growth stops here: room for a compaction */
#define BF_GROWTH			2	/* each layer holds twice the last's keys */
#define BF_TIGHTEN_FIRST	0.25	/* what the first layer leaves the others */
#define BF_TIGHTEN			0.5 /* each further layer at half the last's rate */
#define BF_RATE_SHARE		0.92 /* of the index's rate, for all layers */
#define BF_LAYER_RATE(rate, i) \
	((i) == 0 ? (rate) * BF_RATE_SHARE * (1.0 - BF_TIGHTEN_FIRST) : \
	 (rate) * BF_RATE_SHARE * BF_TIGHTEN_FIRST * (1.0 - BF_TIGHTEN) * \
	 pow(BF_TIGHTEN, (i) - 1))

/* default capacity: twice the table's rows at build, at least this */
#define BF_MIN_CAPACITY		1000
#define BF_HEADROOM			2

/*
 * Older layers an insert (or a build) looks in before setting bits in the
 * newest.  Each is a page read, most often a cache miss, for every key that
 * is new; the ones left out are the smallest (each layer holds about twice
 * the keys of the one before), so a key repeated from them costs a little
 * fill and WAL in the newest layer, never a lost key (probes test every
 * layer), and the next compaction drops the repeats.
 */
#define BF_OLDER_CHECKED	2

/* a compaction sizes its layer for this many times the keys it expects */
#define BF_COMPACT_HEADROOM	1.25

/* operations in progress (BfMetaPageData.op) */
#define BF_OP_NONE			0
#define BF_OP_COMPACT		1	/* the newest layers replace the old */
#define BF_OP_MOVE			2	/* the newest layer is a copy of the old one */

typedef struct BfLayer
{
	BlockNumber start;
	BlockNumber npages;
	uint32		k;
	uint32		id;
	uint64		nblocks;
	uint64		capacity;
	uint64		nkeys;
	double		rate;
} BfLayer;

typedef struct BfMetaPageData
{
	uint32		magic;
	uint32		version;
	uint8		layout;
	uint8		hash;
	uint16		op;
	uint32		nlayers;
	uint64		seed;
	uint64		capacity;
	double		rate;
	char		family[BLOOM_FAMILY_LEN];
	BloomLabels labels;
	uint32		next_id;
	uint32		replaced;
	uint64		generation;
	BfLayer		layers[BF_MAX_LAYERS];
} BfMetaPageData;

#define BfPageGetMeta(page) \
	((BfMetaPageData *) (((char *) (page)) + MAXALIGN(SizeOfPageHeaderData)))

/* bitmap page header, inside the first 64 bytes of the page */
typedef struct BfPageHeader
{
	uint32		magic;			/* BF_MAGIC */
	uint32		layer;			/* the id of the layer this page belongs to */
	uint64		first_block;	/* layer block number of the first block */
	uint32		nblocks;		/* blocks used on this page */
	uint32		reserved;		/* 0 (inserts log only their block) */
} BfPageHeader;

#define BF_BITS_OFFSET		64
#define BF_BLOCKS_PER_PAGE	((BLCKSZ - BF_BITS_OFFSET) / BLOOM_BLOCK_BYTES)

#define BfPageGetHeader(page) \
	((BfPageHeader *) (((char *) (page)) + MAXALIGN(SizeOfPageHeaderData)))
#define BfPageGetBits(page)	((uint8 *) (page) + BF_BITS_OFFSET)

StaticAssertDecl(MAXALIGN(SizeOfPageHeaderData) + sizeof(BfPageHeader) <= BF_BITS_OFFSET,
				 "bitmap page header overlaps the bits");
StaticAssertDecl(MAXALIGN(SizeOfPageHeaderData) + sizeof(BfMetaPageData) <= BLCKSZ,
				 "metapage does not fit in a page");

/* reloptions */
typedef struct BfOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int32		capacity;		/* 0: from the table's size */
	double		rate;
} BfOptions;

/*
 * What a backend keeps of an index between calls (rd_amcache): the
 * metapage as last read, and how its keys hash.
 */
typedef struct BfState
{
	BfMetaPageData meta;
	BloomKeyType keytype;
} BfState;

/* phases of CREATE INDEX (pg_stat_progress_create_index) */
#define BF_PHASE_SCAN		2
#define BF_PHASE_WRITE		3

/* autovacuum's workers (renamed in PostgreSQL 17) */
#if PG_VERSION_NUM >= 170000
#define bf_in_autovacuum()	AmAutoVacuumWorkerProcess()
#else
#define bf_in_autovacuum()	IsAutoVacuumWorkerProcess()
#endif

/*
 * The functions of the index's files, from the bottom up: a file calls only
 * files listed above it (test/shape.py checks it), and nothing calls the
 * handler and the SQL-callable functions at the end.
 */

/* bflayers.c: the layer plan, pure functions of the metapage's fields */
extern void bf_check_rate(double rate);
extern uint32 bf_live_layers(const BfMetaPageData *meta);
extern uint64 bf_live_keys(const BfMetaPageData *meta);
extern bool bf_plan_layer(const BfMetaPageData *meta, uint32 position,
						  uint64 capacity, BfLayer *layer);
extern bool bf_plan_next_layer(const BfMetaPageData *meta, BfLayer *layer);
extern BlockNumber bf_place_layer(const BfMetaPageData *meta, BlockNumber npages);
extern BlockNumber bf_layers_end(const BfMetaPageData *meta);
extern uint64 bf_compact_reserved(const BfLayer *layer);
extern uint64 bf_compact_inserted(const BfLayer *layer);

/* bfxlog.c: the WAL record of the keys set in one page */
extern void bf_log_blocks(Relation index, Buffer buf, int n,
						  const size_t *offs, const uint8 *newblks);

/* bfvalidate.c: the operator class validator */
extern bool bfvalidate(Oid opclassoid);

/* bfpages.c: the metapage and bitmap pages, made, read, checked, written */
extern void bf_init_metapage(Page page, const BfMetaPageData *meta);
extern void bf_init_bitmap_page(Page page, uint32 layer, uint64 first_block,
								uint32 nblocks);
extern void bf_check_meta(Relation index, const BfMetaPageData *meta);
extern void bf_read_meta(Relation index, BfMetaPageData *meta);
extern bool bf_try_read_meta(Relation index, BfMetaPageData *meta);
extern void bf_update_meta(Relation index,
						   bool (*change) (BfMetaPageData *meta, void *arg),
						   void *arg);
extern bool bf_page_is(Page page, const BfLayer *layer, uint64 first_block);
extern void bf_page_corrupt(Relation index, const BfLayer *layer, BlockNumber p);
extern Buffer bf_read_page(Relation index, const BfMetaPageData *meta,
						   const BfLayer *layer, BlockNumber p);
extern Buffer bf_lock_page(Relation index, const BfMetaPageData *meta,
						   const BfLayer *layer, BlockNumber p, int mode);
extern Buffer bf_read_block(Relation index, const BfMetaPageData *meta,
							const BfLayer *layer, uint64 h, size_t *off);
extern bool bf_copy_layers(Relation index, const BfMetaPageData *meta,
						   MemoryContext cxt, void **alloc, const uint8 **bits);
extern void bf_free_layers(void **alloc, const uint8 **bits);
extern int	bf_layer_test(Relation index, const BfMetaPageData *meta,
						  const BfLayer *layer, uint64 h);
extern Buffer bf_new_buffer(Relation index);
extern void bf_write_layer(Relation index, const BfLayer *layer,
						   const uint8 *bits);
extern void bf_or_layer(Relation index, const BfLayer *layer, uint64 first,
						uint64 nblocks, const uint8 *bits);
extern void bf_batch_lock(Relation index, LOCKMODE mode);
extern void bf_batch_unlock(Relation index, LOCKMODE mode);

/* bfkeys.c: how the index's keys hash, checked against its metapage */
typedef enum BfKeysMatch
{
	BF_KEYS_SAME,				/* the keys hash as the metapage says */
	BF_KEYS_ADDED,				/* enum labels added since it recorded them */
	BF_KEYS_CHANGED,			/* the key's family is another now */
	BF_KEYS_LABELS				/* an enum label renamed since, or too many
								 * added to tell */
} BfKeysMatch;

extern void bf_key_type(Relation index, BloomKeyType *kt, MemoryContext mcxt);
extern void bf_check_family_meta(Relation index, const BfMetaPageData *meta,
								 const BloomKeyType *kt);
extern void bf_check_family(Relation index, const BfMetaPageData *meta,
							BloomKeyType *kt);
extern bool bf_update_labels(Relation index, const BloomLabels *seen,
							 const BloomLabels *labels);
extern BfKeysMatch bf_keys_match(Relation index, const BfMetaPageData *meta,
								 BloomKeyType *kt);
extern BfState *bf_get_state(Relation index);

/* bfgrow.c: adding a layer */
extern void bf_grow(Relation index, uint32 full_layer);

/* bfbatch.c: setting a batch of kept hashes in the newest layer */
extern void bf_set_hashes(Relation index, const uint64 *hashes, uint32 n);

/* bfpending.c: a transaction's pending hashes, kept until it commits */
extern bool bf_pending_any(void);
extern void bf_pending_add(Relation index, uint64 h);
extern bool bf_pending_contains(Oid indexoid, uint64 h);
extern void bf_flush_pending(Relation index);
extern void bf_flush_all_pending(bool commit);
extern void bf_pending_subxact(SubXactEvent event, SubTransactionId mySubid,
							   SubTransactionId parentSubid);
extern void bf_pending_end(void);

/* bfinsert.c: inserts keep their keys' hashes; when they are set */
extern bool bfinsert(Relation index, Datum *values, bool *isnull,
					 ItemPointer ht_ctid, Relation heapRel,
					 IndexUniqueCheck checkUnique,
					 bool indexUnchanged,
					 struct IndexInfo *indexInfo);
extern void bf_insert_init(void);

/* bfparallel.c: parallel CREATE INDEX */
extern int	bf_build_workers(Relation heap, Relation index, IndexInfo *indexInfo);
extern bool bf_parallel_build(Relation heap, Relation index, IndexInfo *indexInfo,
							  const BfMetaPageData *meta, const BfLayer *layer,
							  int nworkers, uint8 *bits, double *reltuples,
							  double *indtuples, uint64 *added);

/* bfbuild.c: CREATE INDEX, and an unlogged index's init fork */
extern IndexBuildResult *bfbuild(Relation heap, Relation index,
								 IndexInfo *indexInfo);
extern char *bfbuildphasename(int64 phasenum);
extern void bfbuildempty(Relation index);

/* bffill.c: a compaction's layer filled from the table */
/* What filling a compaction's layer found. */
typedef struct BfFill
{
	uint64		added;			/* keys the scan set */
	double		seen;			/* distinct keys the scan met */
	double		need;			/* keys a compaction begun now must take */
	TransactionId horizon;		/* newest deleter of a tuple left out */
} BfFill;

extern bool bf_fill_guarded(Relation index, Relation heap,
							const BfMetaPageData *meta, const BfLayer *layer,
							bool must_fill, BfFill *fill, char **failure);

/* bfcompact.c: compaction, moves and truncation in VACUUM */
extern void bf_compact(Relation index, Relation heap, double live_rows,
					   bool live_rows_known);
extern bool bf_compaction_due(const BfMetaPageData *meta, double live_rows,
							  bool live_rows_known);
extern uint64 bf_compact_capacity(Relation index, const BfMetaPageData *meta,
								  double live_rows, bool live_rows_known);

/* bfvacuum.c: VACUUM's entry points */
extern IndexBulkDeleteResult *bfbulkdelete(IndexVacuumInfo *info,
										   IndexBulkDeleteResult *stats,
										   IndexBulkDeleteCallback callback,
										   void *callback_state);
extern IndexBulkDeleteResult *bfvacuumcleanup(IndexVacuumInfo *info,
											  IndexBulkDeleteResult *stats);

/*
 * bfreader.c: what a reader must pass; the leaves; a probe of one hash; the
 * SIREAD lock a probe takes under SERIALIZABLE
 */
/* Does PostgreSQL trust an index for this transaction's snapshots? */
typedef enum BfTrust
{
	BF_TRUSTED,
	BF_TRUST_GONE,				/* no such index */
	BF_TRUST_INVALID,			/* not valid, or not ready */
	BF_TRUST_TOO_NEW			/* indcheckxmin, built after our snapshots */
} BfTrust;

extern BfTrust bf_index_trust(Oid indexoid);
extern Relation bf_open_index(Oid indexoid, bool allow_partitioned);
extern Relation bf_open_index_ext(Oid indexoid, bool allow_partitioned,
								  Oid *distributed);
extern List *bf_leaf_indexes(Relation rel);
extern bool bf_keeps_promise(Relation rel, const BfMetaPageData *meta,
							 double *promised);
extern char *bf_rate_text(double rate);
extern char *bf_promise_hint(Relation leaf, double promised);
extern void bf_check_promise(Relation rel, Relation leaf,
							 const BfMetaPageData *meta);
extern bool bf_probe_hash(Relation index, BfMetaPageData *meta, uint64 h);
extern void bf_predicate_lock_table(Relation index);

/* bfcitus.c: a Citus distributed table's shards asked */
extern bool bf_citus_index_contains(Relation index, Oid heapoid,
									FunctionCallInfo fcinfo);

/* bfprobesite.c: what a call site of bloom_index_contains keeps */
typedef struct BfProbeSite BfProbeSite;
extern BfProbeSite *bf_probe_site(FunctionCallInfo fcinfo);
extern Oid	bf_probe_site_distributed(BfProbeSite *site);
extern bool bf_probe_site_test(BfProbeSite *site, Datum key);

/* bfhandler.c: the access method's handler and options (the top) */
extern bytea *bfoptions(Datum reloptions, bool validate);

/* bfprobe.c, bfinfo.c: the SQL-callable functions (the top) */

#endif							/* BFINDEX_H */
