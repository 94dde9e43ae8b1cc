/*-------------------------------------------------------------------------
 *
 * bloom_agg_state.h
 *	  The layout of bloom_agg's state, private to the files that build,
 *	  combine and serialize it (bloom_agg_state.c, bloom_agg_combine.c,
 *	  bloom_agg_serial.c).
 *
 * bloom_pg.h keeps BloomAggState opaque: bloom_agg.c and the rest go through
 * its functions.  Only the bloom_agg_*.c files that work on its hash lists
 * or bits include this header.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_agg_state.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOM_AGG_STATE_H
#define BLOOM_AGG_STATE_H

#include "bloom_pg.h"

#define INITIAL_HASHES	16
#define NBUCKETS		256		/* lists after the split, by the top byte */
#define SPLIT_HASHES	32768	/* split once the single list holds this many */
#define MIN_BUDGET		(1024 * 1024)	/* bytes of hash lists, at least */

/*
 * Once a sized state is bits, each key set at once would be a write at a
 * random place in the filter: a cache and TLB miss per key for a large
 * filter, about 100 ns (and with 2 parallel workers on 2 cores, each with a
 * filter of its own, more: the parallel build was slower than the serial
 * one).  The hash lists stay as a buffer instead: a hash is appended to the
 * list of its top byte, and when a list is full, every list is set in turn.
 * A list's hashes all fall in 1/NBUCKETS of the filter (the block is taken
 * from the hash's top bits), so the filter is swept once, a small run at a
 * time, within the cache.
 */

typedef struct HashList
{
	uint64	   *h;
	size_t		n;
	size_t		max;
	size_t		unique;			/* h[0, unique) has no duplicates */
} HashList;

struct BloomAggState
{
	char		family[BLOOM_FAMILY_LEN];
	BloomLabels labels;			/* an enum family's label guard */
	bool		sized;
	int64		capacity;		/* sized only */
	double		rate;			/* sized only */
	uint64		nblocks;		/* sized only: the geometry */
	int			k;
	/* while collecting hashes: one list, or NBUCKETS by the top byte */
	HashList   *lists;
	int			nlists;
	size_t		allocated;		/* slots in all lists */
	uint64	   *scratch;		/* for bloom_unique, kept for the next time */
	size_t		nscratch;
	double		rows_hint;		/* rows the planner expects, or 0 */
	int64		nrows;			/* keys added, for bloom_agg_state_split */
	bytea	   *filter;			/* sized, once turned into bits; then the
								 * lists hold the hashes not yet set */
	BloomFilter f;				/* header of filter; f.bits into it */
	/* unsized: hash lists beyond the budget go to temporary files */
	size_t		budget;			/* bytes of hash lists in memory */
	BloomSpill *spill;			/* NULL until the first spill */
	bool		spill_reported; /* bloom_agg_state_spill_started said so */
	MemoryContext owner;		/* deserialized, nobody else holds it */
};

/* Reads the hashes of a settled state back, a chunk at a time. */
typedef struct SpilledReader
{
	BloomSpill *spill;
	int			part;			/* the partition being read */
	bool		first;			/* nothing read from it yet */
	uint64	   *buf;			/* the chunk last read */
} SpilledReader;

/* bloom_agg_state.c: the hash lists and bits, for the other two files */
extern void bloom_agg_list_init(HashList *l, size_t max, MemoryContext cxt);
extern void bloom_agg_list_grow(HashList *l, size_t need);
extern void bloom_agg_free_lists(BloomAggState *s);
extern size_t bloom_agg_state_unique(BloomAggState *s, MemoryContext cxt);
extern void bloom_agg_state_to_bits(BloomAggState *s, MemoryContext cxt);
extern void bloom_agg_state_split(BloomAggState *s, MemoryContext cxt);
extern void bloom_agg_state_spill(BloomAggState *s, MemoryContext cxt,
								  bool unique_first);
extern void bloom_agg_state_flush(BloomAggState *s);
extern size_t bloom_agg_state_settle(BloomAggState *s, MemoryContext cxt);
extern void bloom_agg_spilled_begin(BloomAggState *s, SpilledReader *r);
extern size_t bloom_agg_spilled_next(SpilledReader *r);

#endif							/* BLOOM_AGG_STATE_H */
