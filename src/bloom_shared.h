/*-------------------------------------------------------------------------
 *
 * bloom_shared.h
 *	  A shared filter without its keys (bloom_filter_*): a table of
 *	  fixed-size slices of a blocked filter, layer by layer.  Private to the
 *	  bloom_shared*.c files; docs/shared-filters.md has the design.
 *
 * The table, made by bloom_filter_create:
 *
 *	(layer int4, slice int4, nkeys int8, bits bytea), PRIMARY KEY (layer, slice)
 *
 *	(-1, 0)   the head row: bits = a bloom header (bloom.h, 124 bytes: the
 *	          requested capacity and rate, layer 0's nblocks and k, the seed,
 *	          the key family and label guard, "" until the first add), then
 *	          "BLSF" and the expansion (uint32 little-endian; 0: NONSCALING);
 *	          nkeys = the number of layers
 *	(L, -1)   layer L's row: nkeys = its slices whose count reached their
 *	          share of the layer's capacity; bits empty
 *	(L, s)    slice s of layer L: blocks BS_SLICE_BLOCKS * s onwards (the
 *	          last slice may hold fewer); nkeys = keys its adds counted
 *
 * Layer L is sized for capacity * expansion^L keys at BF_LAYER_RATE(rate, L),
 * recomputed from the head row on every open.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_shared.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOM_SHARED_H
#define BLOOM_SHARED_H

#include "bloom_pg.h"
#include "executor/spi.h"

#define BS_SLICE_BLOCKS		4
#define BS_SLICE_BYTES		(BS_SLICE_BLOCKS * BLOOM_BLOCK_BYTES)
#define BS_MAX_LAYERS		24
#define BS_MAX_EXPANSION	1024
#define BS_TAIL_MAGIC		"BLSF"
#define BS_HEAD_SIZE		(BLOOM_HEADER_SIZE + 8)

/* The saved plans of one filter, per backend (bloom_shared.c) */
typedef enum BsPlanId
{
	BS_HEAD,					/* the head row */
	BS_SET_HEAD,				/* the head row's first family */
	BS_SLICE,					/* one slice's bits */
	BS_SLICES,					/* some slices of a layer, by slice */
	BS_SLICES_LOCK,				/* the same, FOR UPDATE */
	BS_WRITE,					/* slices' new bits and counts */
	BS_CROSSED,					/* a layer row's count += n */
	BS_LAYER_ROW,				/* a layer row's count */
	BS_HEAD_FIRST,				/* the head row and a slice of layer 0 */
	BS_NPLANS
} BsPlanId;

typedef struct BsLayer
{
	uint64		capacity;
	double		rate;
	uint64		nblocks;
	int			k;
	int32		nslices;
} BsLayer;

typedef struct BsPlans
{
	Oid			relid;			/* hash key */
	char	   *qname;			/* the name the plans were made for */
	SPIPlanPtr	plan[BS_NPLANS];
	SPIPlanPtr	setbits[BLOOM_MAX_K + 1];	/* bs_add_hash's, per k */
	bool		known;			/* first and seed read from the head row */
	BsLayer		first;			/* layer 0, which never changes */
	uint64		seed;
} BsPlans;

typedef struct BsFilter
{
	Oid			relid;
	BsPlans    *plans;
	bool		read_only;		/* a probe: SPI under the caller's snapshot */
	BloomFilter head;			/* the requested capacity, rate; family */
	uint8		headbytes[BS_HEAD_SIZE];
	uint32		expansion;		/* 0: NONSCALING */
	int			nlayers;
	BsLayer		layers[BS_MAX_LAYERS];
} BsFilter;

/* Some slices of one layer in memory, sorted by slice */
typedef struct BsSlices
{
	int			n;
	int32	   *slice;
	int64	   *nkeys;
	uint8	   *bits;			/* n * BS_SLICE_BYTES */
	bool	   *changed;
	int64	   *added;
	int32	   *index;			/* slice -> its place here, for many; or NULL */
} BsSlices;

/* bloom_shared.c */
extern bool bs_plan_layer(uint64 capacity, double rate, uint32 expansion,
						  int layer, BsLayer *out);
extern int	bs_slice_bytes(const BsLayer *l, int32 slice);
extern int64 bs_share(const BsLayer *l, int32 slice);
extern char *bs_qualified_name(Oid relid);
extern void bs_corrupt(const BsFilter *f, const char *detail);
extern void bs_open(BsFilter *f, Oid relid, bool read_only);
extern void bs_open_ex(BsFilter *f, Oid relid, bool read_only, bool plain);
extern void bs_read_head(BsFilter *f);
extern void bs_not_updated(const BsFilter *f, int layer, int32 slice);
extern uint64 bs_exec(BsFilter *f, BsPlanId id, Datum *values);
extern void bs_check_key(BsFilter *f, BloomKeyType *kt, bool set);
extern void bs_make_head(uint8 *buf, const BloomFilter *head,
						 uint32 expansion);
extern void bs_insert_layer(const char *qname, int layer, const BsLayer *l);
extern void bs_crossed(BsFilter *f, int layer, int32 n);
extern bool bs_add_hash(BsFilter *f, uint64 h);
extern bool bs_probe_hash(BsFilter *f, uint64 h);
extern bool bs_probe_known(BsFilter *f, Oid relid, BloomKeyType *kt,
						   Datum key, bool *found);

/* bloom_shared_check.c */
extern void bs_check_table(Oid relid, bool plain);

/* bloom_shared_batch.c */
extern void bs_read_slices(BsFilter *f, int layer, int32 *slices, int n,
						   bool lock, BsSlices *out);
extern uint8 *bs_block_of(const BsFilter *f, int layer, const BsSlices *s,
						  uint64 h, int *idx);
extern void bs_test_layer(BsFilter *f, int layer, const uint64 *h, int n,
						  bool *pending);
extern int64 bs_add_hashes(BsFilter *f, const uint64 *h, int n);

#endif							/* BLOOM_SHARED_H */
