/*-------------------------------------------------------------------------
 *
 * bfgrow.c
 *	  Add a layer to a bloomfilter index whose newest layer is full.
 *
 * No inserter locks anything shared to decide that: each one sees the fill
 * of the page it wrote (bfinsert.c).  Only the one that finds its page full
 * comes here, and only one at a time grows the index: the others, finding
 * the grow lock taken, go on inserting into the current layer, which stays
 * correct (probes test every layer) at a slightly higher rate for a moment.
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
#include "utils/inval.h"
#include "utils/rel.h"

#include "bfindex.h"

/*
 * Add layer nlayers_seen, unless the index has more layers than that by now
 * (then only this backend's copy of the metapage is refreshed) or no layer
 * can be added (the last one then keeps taking keys; bloom_index_info shows
 * the rate rising).
 *
 * The new pages are written first, then the metapage names them: a crash in
 * between leaves pages no layer names, which the next growth reuses.  The
 * grow lock is a heavyweight lock on the metapage's block number (as GIN
 * locks its metapage for pending-list cleanup), held only while growing;
 * probes and inserts never take it.
 */
void
bf_grow(Relation index, uint32 nlayers_seen)
{
	BfMetaPageData meta;
	BfLayer		layer;
	GenericXLogState *gx;
	Buffer		buf;
	Page		page;
	BfMetaPageData *pmeta;

	/*
	 * An index with no layer (an unlogged one after a crash) must get one
	 * before the caller can insert: wait for whoever is adding it.
	 */
	if (nlayers_seen == 0)
		LockPage(index, BF_METAPAGE_BLKNO, ExclusiveLock);
	else if (!ConditionalLockPage(index, BF_METAPAGE_BLKNO, ExclusiveLock))
		return;

	bf_read_meta(index, &meta);
	if (meta.nlayers != nlayers_seen || !bf_plan_layer(&meta, nlayers_seen, &layer))
	{
		UnlockPage(index, BF_METAPAGE_BLKNO, ExclusiveLock);
		(void) bf_get_state(index, true);
		return;
	}

	bf_write_layer(index, &layer, nlayers_seen, NULL, true);

	buf = ReadBuffer(index, BF_METAPAGE_BLKNO);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	gx = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(gx, buf, 0);
	pmeta = BfPageGetMeta(page);
	if (pmeta->nlayers != nlayers_seen)
		elog(ERROR, "bloomfilter index \"%s\" grew under the grow lock",
			 RelationGetRelationName(index));
	pmeta->layers[nlayers_seen] = layer;
	pmeta->nlayers = nlayers_seen + 1;
	GenericXLogFinish(gx);
	UnlockReleaseBuffer(buf);

	UnlockPage(index, BF_METAPAGE_BLKNO, ExclusiveLock);

	(void) bf_get_state(index, true);
	/* other backends drop their copy of the metapage at their next command */
	CacheInvalidateRelcache(index);
}
