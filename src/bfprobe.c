/*-------------------------------------------------------------------------
 *
 * bfprobe.c
 *	  bloom_index_contains and bloom_index_partitions: probe a bloomfilter
 *	  index, or every partition's index under a partitioned index.
 *
 * A probe reads the metapage and one page per layer, under share locks.
 * Every key of a row committed before the probe's snapshot is found: its
 * bits were set (in a layer the metapage already named) before its
 * transaction committed, and bits are never cleared.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfprobe.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relation.h"
#include "access/table.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "commands/defrem.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"

#include "bfindex.h"

/*
 * Is the table a Citus distributed table (listed in pg_dist_partition)?  On
 * the coordinator its index holds only the keys of the rows stored there
 * (none): an answer from it would be a false "absent" for every key.
 */
static bool
citus_distributed(Oid relid)
{
	Oid			catoid = get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE);
	Relation	cat;
	SysScanDesc scan;
	ScanKeyData key;
	bool		found;

	if (!OidIsValid(catoid))
		return false;
	cat = table_open(catoid, AccessShareLock);
	/* its first column is logicalrelid (regclass) */
	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(relid));
	scan = systable_beginscan(cat, InvalidOid, false, NULL, 1, &key);
	found = HeapTupleIsValid(systable_getnext(scan));
	systable_endscan(scan);
	table_close(cat, AccessShareLock);
	return found;
}

/*
 * Open a bloomfilter index (or, with allow_partitioned, a partitioned index
 * of bloomfilter indexes) for reading, after checking what it is and that
 * the user may read its table.  The lock is kept to the end of the
 * transaction: the index cannot be dropped or rebuilt under the caller.
 *
 * An index on a Citus distributed table is refused, unless the caller asks
 * with *distributed (set to the table's OID, or InvalidOid) to probe the
 * shards itself.
 */
Relation
bf_open_index_ext(Oid indexoid, bool allow_partitioned, Oid *distributed)
{
	Relation	rel = try_relation_open(indexoid, AccessShareLock);
	Oid			heapoid;
	AclResult	acl;

	if (rel == NULL)
		ereport(ERROR,
				errcode(ERRCODE_UNDEFINED_OBJECT),
				errmsg("index with OID %u does not exist", indexoid),
				errdetail("It may have been dropped, or rebuilt by REINDEX CONCURRENTLY, since the query began."));
	if (rel->rd_rel->relkind != RELKIND_INDEX &&
		!(allow_partitioned && rel->rd_rel->relkind == RELKIND_PARTITIONED_INDEX))
		ereport(ERROR,
				errcode(ERRCODE_WRONG_OBJECT_TYPE),
				errmsg("\"%s\" is not a bloomfilter index",
					   RelationGetRelationName(rel)),
				rel->rd_rel->relkind == RELKIND_PARTITIONED_INDEX ?
				errdetail("It is a partitioned index.") :
				errdetail("It is not an index."));
	if (rel->rd_indam == NULL || rel->rd_indam->ambuild != bfbuild)
		ereport(ERROR,
				errcode(ERRCODE_WRONG_OBJECT_TYPE),
				errmsg("\"%s\" is not a bloomfilter index",
					   RelationGetRelationName(rel)),
				errdetail("It is an index of access method \"%s\".",
						  get_am_name(rel->rd_rel->relam)));

	/* the index tells which keys the table holds: reading it reads the table */
	heapoid = IndexGetRelation(indexoid, false);
	acl = pg_class_aclcheck(heapoid, GetUserId(), ACL_SELECT);
	if (acl != ACLCHECK_OK)
		aclcheck_error(acl, get_relkind_objtype(get_rel_relkind(heapoid)),
					   get_rel_name(heapoid));
	if (distributed)
		*distributed = citus_distributed(heapoid) ? heapoid : InvalidOid;
	else if (citus_distributed(heapoid))
		ereport(ERROR,
				errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				errmsg("bloomfilter index \"%s\" is on a distributed table",
					   RelationGetRelationName(rel)),
				errdetail("The rows of \"%s\" are on its shards; the index on this node holds none of their keys.",
						  get_rel_name(heapoid)),
				errhint("Use bloom_index_contains, which asks every shard, or probe a filter built with bloom_agg over the table."));
	return rel;
}

/* bf_open_index_ext, refusing an index on a distributed table */
Relation
bf_open_index(Oid indexoid, bool allow_partitioned)
{
	return bf_open_index_ext(indexoid, allow_partitioned, NULL);
}

/* The leaf (non-partitioned) indexes under an index, or the index itself. */
List *
bf_leaf_indexes(Relation rel)
{
	List	   *all;
	List	   *leaves = NIL;
	ListCell   *lc;

	if (rel->rd_rel->relkind == RELKIND_INDEX)
		return list_make1_oid(RelationGetRelid(rel));
	all = find_all_inheritors(RelationGetRelid(rel), AccessShareLock, NULL);
	foreach(lc, all)
	{
		if (get_rel_relkind(lfirst_oid(lc)) == RELKIND_INDEX)
			leaves = lappend_oid(leaves, lfirst_oid(lc));
	}
	return leaves;
}

/* Is hash h in some layer of the index? */
bool
bf_probe_hash(Relation index, const BfMetaPageData *meta, uint64 h)
{
	for (uint32 i = 0; i < meta->nlayers; i++)
		if (bf_layer_test(index, &meta->layers[i], i, h))
			return true;
	return false;
}

/*
 * Refuse a key of another family than the index's, or of an enum a label of
 * which was renamed since the index's keys were hashed.
 */
void
bf_check_family(Relation index, const BfMetaPageData *meta, BloomKeyType *kt)
{
	(void) bloom_check_key_family(meta->family, &meta->labels, kt,
								  RelationGetRelationName(index));
}

/* Probe one leaf index for a key, refusing a key of another family. */
static bool
bf_probe_leaf(Relation index, BloomKeyType *kt, Datum key)
{
	BfMetaPageData meta;

	bf_read_meta(index, &meta);
	bf_check_family(index, &meta, kt);
	return bf_probe_hash(index, &meta, bloom_key_hash(kt, key, meta.seed));
}

/*
 * bloom_index_contains(index regclass, key anyelement): false if no row of
 * the index's table (any partition, for a partitioned index) holds the key,
 * true if one may.  The call site keeps its checks, metapages and, for bulk
 * probes, a copy of the bits (bfprobesite.c).  On the coordinator of a Citus
 * distributed table, the shards' indexes answer (bfcitus.c).
 */
PG_FUNCTION_INFO_V1(bf_index_contains);
Datum
bf_index_contains(PG_FUNCTION_ARGS)
{
	BfProbeSite *site = bf_probe_site(fcinfo);
	Oid			distributed = bf_probe_site_distributed(site);
	bool		found;

	if (OidIsValid(distributed))
	{
		Relation	rel = relation_open(PG_GETARG_OID(0), NoLock);

		found = bf_citus_index_contains(rel, distributed, fcinfo);
		relation_close(rel, NoLock);
	}
	else
		found = bf_probe_site_test(site, PG_GETARG_DATUM(1));
	PG_RETURN_BOOL(found);
}

/*
 * bloom_index_partitions(index regclass, key anyelement): the tables
 * (partitions) whose bloomfilter index may hold the key.
 */
PG_FUNCTION_INFO_V1(bf_index_partitions);
Datum
bf_index_partitions(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	rel;
	BloomKeyType *kt;
	ListCell   *lc;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	rel = bf_open_index(PG_GETARG_OID(0), true);
	kt = bloom_call_key_type(fcinfo, 1);
	foreach(lc, bf_leaf_indexes(rel))
	{
		Relation	leaf = relation_open(lfirst_oid(lc), AccessShareLock);

		if (bf_probe_leaf(leaf, kt, PG_GETARG_DATUM(1)))
		{
			Datum		value = ObjectIdGetDatum(leaf->rd_index->indrelid);
			bool		null = false;

			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
								 &value, &null);
		}
		relation_close(leaf, NoLock);
	}
	relation_close(rel, NoLock);
	return (Datum) 0;
}
