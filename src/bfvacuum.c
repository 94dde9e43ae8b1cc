/*-------------------------------------------------------------------------
 *
 * bfvacuum.c
 *	  VACUUM of a bloomfilter index: nothing to remove key by key; the
 *	  cleanup compacts the index when it is due (bfcompact.c).
 *
 * A Bloom filter cannot forget a key (its bits may be shared with other
 * keys), so dead rows leave their bits: more false positives, never a false
 * negative.  A compaction, which builds one layer from the table's rows,
 * drops them, as REINDEX does.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfvacuum.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/index.h"
#include "utils/rel.h"

#include "bfindex.h"

IndexBulkDeleteResult *
bfbulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
			 IndexBulkDeleteCallback callback, void *callback_state)
{
	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	return stats;
}

/*
 * Compact the index when it is due (more than one layer, or mostly the keys
 * of deleted rows), finish a compaction a crash cut off, and give free pages
 * back.  The index holds no tuples to count: report the table's count, as an
 * estimate, so that VACUUM neither warns nor stores a wrong reltuples.
 */
IndexBulkDeleteResult *
bfvacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	Relation	heap;

	if (info->analyze_only)
		return stats;
	/* VACUUM holds a lock on the table that keeps other VACUUMs out */
#if PG_VERSION_NUM >= 160000
	heap = info->heaprel;
#else
	heap = table_open(IndexGetRelation(RelationGetRelid(info->index), false), NoLock);
#endif
	/*
	 * The table's live rows: VACUUM's count, or its estimate where this
	 * VACUUM removed dead rows (stats is NULL when it called no bulk delete).
	 * Most VACUUMs skip all-visible pages and only estimate, so with a count
	 * alone a plain VACUUM would never compact an index whose rows were
	 * mostly deleted; but an estimate from a VACUUM that read few pages (a
	 * table loaded by COPY FREEZE, or whose pages queries set all-visible)
	 * can be far too low, and would compact at every VACUUM.  A VACUUM that
	 * removed rows read the pages they were on.
	 */
	bf_compact(info->index, heap, info->num_heap_tuples,
			   !info->estimated_count ||
			   (stats != NULL && info->num_heap_tuples > 0));
#if PG_VERSION_NUM < 160000
	table_close(heap, NoLock);
#endif
	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	stats->num_pages = RelationGetNumberOfBlocks(info->index);
	stats->num_index_tuples = Max(info->num_heap_tuples, 0);
	stats->estimated_count = true;
	return stats;
}
