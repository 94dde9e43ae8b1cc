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
 * Block 0 is the metapage; every other block is a bitmap page.  Both keep
 * all their data between the page header and pd_lower, because GenericXLog
 * treats the space between pd_lower and pd_upper as a hole and zeroes it.
 * Fields are in host order, like every PostgreSQL index: an index is
 * physical data, rebuilt (never copied) by dump and restore.
 *
 * Metapage (BfMetaPageData, right after the page header):
 *
 *	magic		BF_MAGIC, tells a bloomfilter metapage from anything else
 *	version		BF_VERSION (1); an index of another version is refused
 *	layout		BLOOM_LAYOUT_BLOCK512 (bloom.h)
 *	hash		BLOOM_HASH_XXH3 (bloom.h)
 *	nlayers		layers in use, 1..BF_MAX_LAYERS
 *	seed		XXH3 seed of the key hash (BLOOM_DEFAULT_SEED)
 *	capacity	keys the first layer was sized for (option capacity)
 *	rate		false-positive rate the whole index promises
 *	family		key family, as in a bloom value (bloom_keys.c)
 *	labels		an enum family's label guard, as in a bloom value (bloom.h),
 *				else 0: set at the build, and by the first insert after a
 *				label was added (bf_get_state)
 *	layers[]	one BfLayer per layer, oldest first
 *
 * BfLayer: a layer is a Bloom filter of its own, laid out exactly like the
 * bits of a bloom value (bloom.h) of nblocks 64-byte blocks with k hashes:
 *
 *	start		first bitmap page of the layer
 *	npages		bitmap pages of the layer
 *	k			bits set per key
 *	nblocks		64-byte blocks of the layer
 *	capacity	keys the layer is sized for
 *	rate		the layer's share of the index's rate
 *
 * Bitmap page: a BfPageHeader (after the page header, padding to 64 bytes so
 * that blocks are cache-line aligned in a buffer), then BF_BLOCKS_PER_PAGE
 * blocks.  Block b of a layer is block b % BF_BLOCKS_PER_PAGE of page
 * start + b / BF_BLOCKS_PER_PAGE: the concatenated blocks of a layer are the
 * bits of a bloom value, and a key's bits, in one block, lie in one page.
 * pd_lower is BLCKSZ: the whole page is data.
 *
 * Layers (a scalable Bloom filter): layer i holds capacity * BF_GROWTH^i
 * keys at BF_LAYER_RATE(rate, i) = rate * BF_RATE_SHARE * (1 - BF_TIGHTEN) *
 * BF_TIGHTEN^i, so however many layers there are, their rates add up to less
 * than BF_RATE_SHARE of the index's rate.  The rest is headroom: a small
 * layer's measured rate spreads around its expected one (a layer of 1,000
 * keys sized for 0.75% measures 0.77%), and keys keep landing in a full
 * layer while another backend adds the next one.  Inserts go to the newest
 * layer; probes test every layer.
 *
 * BF_RATE_SHARE was 0.9 until 0.92 kept a layer within 1.1 x
 * bloom_size(capacity, rate) (docs/index.md).  A layer's k, blocks and
 * rate are written to the metapage when the layer is added and never
 * recomputed; a new layer is planned from the index's rate with the share
 * of the code that adds it.
 * So an index whose first layers were planned under 0.9 and whose later
 * ones under 0.92 has layer i at a rate of at most rate * 0.92 *
 * (1 - BF_TIGHTEN) * BF_TIGHTEN^i, and the sum of its layers' rates stays
 * below 0.92 of its rate, as for an index planned under 0.92 throughout:
 * the promise holds, with at least 8% of the rate left as headroom.
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
#include "commands/vacuum.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "storage/bufmgr.h"
#include "utils/relcache.h"

#include "bloom_pg.h"

#define BF_METAPAGE_BLKNO	0
#define BF_MAGIC			0x42465831	/* "BFX1" */
#define BF_VERSION			1
#define BF_MAX_LAYERS		16
#define BF_GROWTH			2	/* each layer holds twice the last's keys */
#define BF_TIGHTEN			0.25	/* at a quarter of the last's rate */
#define BF_RATE_SHARE		0.92 /* of the index's rate, for all layers */
#define BF_LAYER_RATE(rate, i) \
	((rate) * BF_RATE_SHARE * (1.0 - BF_TIGHTEN) * pow(BF_TIGHTEN, (i)))

/* default capacity: twice the table's rows at build, at least this */
#define BF_MIN_CAPACITY		1000
#define BF_HEADROOM			2

typedef struct BfLayer
{
	BlockNumber start;
	BlockNumber npages;
	uint32		k;
	uint32		reserved;		/* 0 */
	uint64		nblocks;
	uint64		capacity;
	double		rate;
} BfLayer;

typedef struct BfMetaPageData
{
	uint32		magic;
	uint32		version;
	uint8		layout;
	uint8		hash;
	uint16		reserved;		/* 0 */
	uint32		nlayers;
	uint64		seed;
	uint64		capacity;
	double		rate;
	char		family[BLOOM_FAMILY_LEN];
	BloomLabels labels;
	BfLayer		layers[BF_MAX_LAYERS];
} BfMetaPageData;

#define BfPageGetMeta(page) \
	((BfMetaPageData *) (((char *) (page)) + MAXALIGN(SizeOfPageHeaderData)))

/* bitmap page header, inside the first 64 bytes of the page */
typedef struct BfPageHeader
{
	uint32		magic;			/* BF_MAGIC */
	uint32		layer;			/* the layer this page belongs to */
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
	/* bfinsert.c's last fill limit: for pages of fill_nblocks of fill_layer */
	uint32		fill_layer;
	uint32		fill_nblocks;	/* 0: none computed yet */
	double		fill_limit;
	double		fill_keys;		/* keys of the layer's capacity such a page holds */
	uint32		nchanges;		/* inserts that set bits, for sampling */
} BfState;

/* bfutils.c */
extern void bf_init_metapage(Page page, uint64 capacity, double rate,
							 const char *family);
extern void bf_init_bitmap_page(Page page, uint32 layer, uint64 first_block,
								uint32 nblocks);
extern void bf_read_meta(Relation index, BfMetaPageData *meta);
extern void bf_check_meta(Relation index, const BfMetaPageData *meta);
extern bool bf_plan_layer(const BfMetaPageData *meta, uint32 i,
						  BfLayer *layer);
extern BfState *bf_get_state(Relation index, bool refresh);
extern void bf_key_type(Relation index, BloomKeyType *kt, MemoryContext mcxt);
extern Buffer bf_new_buffer(Relation index);
extern Buffer bf_read_page(Relation index, const BfLayer *layer, uint32 i,
						   BlockNumber p);
extern Buffer bf_read_block(Relation index, const BfLayer *layer, uint32 i,
							uint64 h, size_t *off);
extern bool bf_layer_test(Relation index, const BfLayer *layer, uint32 i,
						  uint64 h);
extern bytea *bfoptions(Datum reloptions, bool validate);

/* bfbuild.c */
extern IndexBuildResult *bfbuild(Relation heap, Relation index,
								 IndexInfo *indexInfo);
extern void bfbuildempty(Relation index);
extern void bf_write_layer(Relation index, const BfLayer *layer, uint32 i,
						   const uint8 *bits, bool init_only);

/* bfxlog.c */
extern void bf_log_block(Relation index, Buffer buf, size_t off,
						 const uint8 *newblk);

/* bfinsert.c */
extern bool bfinsert(Relation index, Datum *values, bool *isnull,
					 ItemPointer ht_ctid, Relation heapRel,
					 IndexUniqueCheck checkUnique,
					 bool indexUnchanged,
					 struct IndexInfo *indexInfo);

/* bfcitus.c */
extern bool bf_citus_index_contains(Relation index, Oid heapoid,
									FunctionCallInfo fcinfo);

/* bfgrow.c */
extern void bf_grow(Relation index, uint32 nlayers_seen);

/* bfprobe.c */
extern bool bf_probe_hash(Relation index, const BfMetaPageData *meta,
						  uint64 h);
extern Relation bf_open_index(Oid indexoid, bool allow_partitioned);
extern Relation bf_open_index_ext(Oid indexoid, bool allow_partitioned,
								  Oid *distributed);
extern List *bf_leaf_indexes(Relation rel);
extern void bf_check_family(Relation index, const BfMetaPageData *meta,
							BloomKeyType *kt);

/* bfprobesite.c */
typedef struct BfProbeSite BfProbeSite;
extern BfProbeSite *bf_probe_site(FunctionCallInfo fcinfo);
extern Oid	bf_probe_site_distributed(BfProbeSite *site);
extern bool bf_probe_site_test(BfProbeSite *site, Datum key);

/* bfvacuum.c */
extern IndexBulkDeleteResult *bfbulkdelete(IndexVacuumInfo *info,
										   IndexBulkDeleteResult *stats,
										   IndexBulkDeleteCallback callback,
										   void *callback_state);
extern IndexBulkDeleteResult *bfvacuumcleanup(IndexVacuumInfo *info,
											  IndexBulkDeleteResult *stats);

/* bfvalidate.c */
extern bool bfvalidate(Oid opclassoid);

#endif							/* BFINDEX_H */
