/*-------------------------------------------------------------------------
 *
 * bfvacuum.c
 *	  VACUUM of a bloomfilter index: nothing to remove.
 *
 * A Bloom filter cannot forget a key (its bits may be shared with other
 * keys), so dead rows leave their bits: more false positives, never a false
 * negative.  REINDEX is the clean-up.  VACUUM only reports the index's size.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfvacuum.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

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
 * The index holds no tuples to count: report the table's count, as an
 * estimate, so that VACUUM neither warns nor stores a wrong reltuples.
 */
IndexBulkDeleteResult *
bfvacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	if (info->analyze_only)
		return stats;
	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	stats->num_pages = RelationGetNumberOfBlocks(info->index);
	stats->num_index_tuples = Max(info->num_heap_tuples, 0);
	stats->estimated_count = true;
	return stats;
}
