/*-------------------------------------------------------------------------
 *
 * bfgrow.c
 *	  Add a layer to a bloomfilter index whose newest layer holds its
 *	  capacity, and change the metapage under its exclusive lock.
 *
 * No inserter locks anything shared to decide that a layer is full: each
 * adds its keys to the layer's count in batches (bfbatch.c), and one that
 * has a key to set in a layer whose count has reached its capacity comes
 * here.  One at a time grows the index: the others wait for the grow lock
 * and then find the new layer.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfgrow.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/lmgr.h"
#include "utils/rel.h"

#include "bfindex.h"

/* Name a new layer as the newest (its pages are written). */
static bool
bf_add_layer(BfMetaPageData *meta, void *arg)
{
	const BfLayer *layer = (const BfLayer *) arg;

	if (meta->nlayers >= BF_MAX_LAYERS || meta->next_id != layer->id)
		elog(ERROR, "bloomfilter index changed under its grow lock");
	meta->layers[meta->nlayers++] = *layer;
	meta->next_id++;
	meta->generation++;
	return true;
}

/*
 * Add a layer after the newest, whose id is full_layer (0: the index has no
 * live layer, as an unlogged index after a crash), unless another backend
 * did it first or no layer can be added (the last one then keeps taking
 * keys; bloom_index_info shows the rate rising).
 *
 * The new pages are written first, then the metapage names them: a crash in
 * between leaves pages no layer names, which the next layer placed there
 * reuses.  The grow lock is a heavyweight lock on the metapage's block
 * number (as GIN locks its metapage for pending-list cleanup), held only
 * while changing the list of layers; probes and inserts never take it.
 */
void
bf_grow(Relation index, uint32 full_layer)
{
	BfMetaPageData meta;
	BfLayer		layer;
	bool		grow;

	LockPage(index, BF_METAPAGE_BLKNO, ExclusiveLock);

	bf_read_meta(index, &meta);
	if (full_layer == 0)
		grow = bf_live_layers(&meta) == 0;
	else
		grow = meta.nlayers > 0 &&
			meta.layers[meta.nlayers - 1].id == full_layer &&
			meta.layers[meta.nlayers - 1].nkeys >= meta.layers[meta.nlayers - 1].capacity;
	if (grow && bf_plan_next_layer(&meta, &layer))
	{
		bf_write_layer(index, &layer, NULL);
		bf_update_meta(index, bf_add_layer, &layer);
	}
	else if (grow && full_layer == 0)
	{
		/* the caller would wait for a layer forever */
		ereport(ERROR,
				errcode(ERRCODE_INDEX_CORRUPTED),
				errmsg("bloomfilter index \"%s\" is corrupted",
					   RelationGetRelationName(index)),
				errdetail("The metapage has no layer that takes keys, and no layer can be added."),
				errhint("Rebuild the index with REINDEX."));
	}
	UnlockPage(index, BF_METAPAGE_BLKNO, ExclusiveLock);
}
