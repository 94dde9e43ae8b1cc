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

#include "fmgr.h"

#include "bloom_pg.h"

#if PG_VERSION_NUM >= 180000
PG_MODULE_MAGIC_EXT(.name = "bloomfilter",.version = "1.0");
#else
PG_MODULE_MAGIC;
#endif
