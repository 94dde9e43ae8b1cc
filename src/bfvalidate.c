/*-------------------------------------------------------------------------
 *
 * bfvalidate.c
 *	  Operator class validator of the bloomfilter access method.
 *
 * The access method hashes keys itself, exactly as the bloom type does
 * (bloom_keys.c), from the type of the index column: its one operator class,
 * for anyelement, has no operators and no support functions, and must stay
 * so (an operator would let the planner try to scan the index).
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfvalidate.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "utils/catcache.h"
#include "utils/syscache.h"

#include "bfindex.h"

bool
bfvalidate(Oid opclassoid)
{
	HeapTuple	tup;
	Form_pg_opclass opclass;
	CatCList   *oprlist;
	CatCList   *proclist;
	bool		result = true;

	tup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	opclass = (Form_pg_opclass) GETSTRUCT(tup);

	oprlist = SearchSysCacheList1(AMOPSTRATEGY,
								  ObjectIdGetDatum(opclass->opcfamily));
	proclist = SearchSysCacheList1(AMPROCNUM,
								   ObjectIdGetDatum(opclass->opcfamily));
	if (oprlist->n_members > 0)
	{
		ereport(INFO,
				errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				errmsg("bloomfilter operator family of operator class \"%s\" has operators; it must have none",
					   NameStr(opclass->opcname)));
		result = false;
	}
	if (proclist->n_members > 0)
	{
		ereport(INFO,
				errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				errmsg("bloomfilter operator family of operator class \"%s\" has support functions; it must have none",
					   NameStr(opclass->opcname)));
		result = false;
	}
	if (OidIsValid(opclass->opckeytype))
	{
		ereport(INFO,
				errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				errmsg("bloomfilter operator class \"%s\" has a storage type; it must have none",
					   NameStr(opclass->opcname)));
		result = false;
	}
	ReleaseCatCacheList(proclist);
	ReleaseCatCacheList(oprlist);
	ReleaseSysCache(tup);
	return result;
}
