/*-------------------------------------------------------------------------
 *
 * bloomfilter.c
 *	  The module magic of the bloomfilter library.  The SQL-callable
 *	  functions are in the files named for what they do (see bloom_pg.h).
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloomfilter.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "fmgr.h"
#include "utils/guc.h"

#include "bloom_pg.h"
#include "bfindex.h"
#include "bfjoin.h"

#if PG_VERSION_NUM >= 180000
PG_MODULE_MAGIC_EXT(.name = "bloomfilter",.version = "1.0");
#else
PG_MODULE_MAGIC;
#endif

#if PG_VERSION_NUM < 160000
extern PGDLLEXPORT void _PG_init(void);	/* fmgr.h declares it from 16 on */
#endif

/*
 * bloomfilter.cache_budget: the memory that one call site of bloom_contains
 * may keep of the stored filters it has read (bloom_cache.c), and one of
 * bloom_index_contains of an index's bits (bfprobesite.c).
 * bloomfilter.join_filter, and the planner hook of joins that probe a
 * bloomfilter index by themselves (bfjoin_path.c).
 */
void
_PG_init(void)
{
	bf_insert_init();
	DefineCustomIntVariable("bloomfilter.cache_budget",
							"Memory one bloom_contains or bloom_index_contains call site keeps of the filters it has read.",
							"When the copies would outgrow it, the call site drops them and starts again.",
							&bloom_cache_budget_kb,
							256 * 1024, 0, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
	DefineCustomBoolVariable("bloomfilter.join_filter",
							 "Lets anti and semi joins probe a bloomfilter index on the join key before their exact checks.",
							 "The planner then weighs a plan that answers the rows the filter rules out at once against the plain plans.",
							 &bf_join_filter_enabled,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	bf_join_register();
	MarkGUCPrefixReserved("bloomfilter");
}
