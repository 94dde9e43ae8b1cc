/*-------------------------------------------------------------------------
 *
 * bflayers.c
 *	  The layers of a bloomfilter index as its metapage names them: which are
 *	  live, how many keys they hold, where and how large the next one goes.
 *	  Pure functions of the metapage's fields: no page is read here.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bflayers.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"


#include "bfindex.h"

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

/*
 * The keys a compaction's layer is counted to hold from the moment it is
 * named: the keys the compaction expects to set in it (its capacity less
 * the headroom), so that inserts meanwhile find only the headroom free and
 * grow the index past it, as they would a full layer.  A function of the
 * layer alone: a compaction resumed after a crash finds it the same.
 */
uint64
bf_compact_reserved(const BfLayer *layer)
{
	return (uint64) ((double) layer->capacity / BF_COMPACT_HEADROOM);
}

/* The keys inserts added to a compaction's layer since it was named. */
uint64
bf_compact_inserted(const BfLayer *layer)
{
	uint64		reserved = bf_compact_reserved(layer);

	return layer->nkeys > reserved ? layer->nkeys - reserved : 0;
}
