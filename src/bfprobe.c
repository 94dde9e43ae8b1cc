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

#include "access/relation.h"
#include "funcapi.h"
#include "pgstat.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"

#include "bfindex.h"

/*
 * Probe one leaf index of rel for a key, refusing a key of another family,
 * and a leaf that does not keep rel's rate.
 */
static bool
bf_probe_leaf(Relation rel, Relation index, BloomKeyType *kt, Datum key)
{
	BfMetaPageData meta;
	uint64		h;

	bf_predicate_lock_table(index);
	bf_read_meta(index, &meta);
	bf_check_promise(rel, index, &meta);
	bf_check_family(index, &meta, kt);
	h = bloom_key_hash(kt, key, meta.seed);
	/* (the transaction's own keys not set yet: bfpending.c) */
	return bf_probe_hash(index, &meta, h) ||
		bf_pending_contains(RelationGetRelid(index), h);
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
 * What a call site of bloom_index_partitions keeps (fn_extra): the key
 * argument's type and, for the last index, whether its keys are read with
 * the input function of the index's column type (bloom_key_reads_as).
 */
typedef struct BfPartitionsSite
{
	BloomKeyType kt;
	Oid			indexoid;
	bool		read;
	BloomKeyType colkt;
	BloomKeyReader reader;
} BfPartitionsSite;

/* The key type a key for index rel hashes as; *key read where it must be. */
static BloomKeyType *
bf_partitions_key(FunctionCallInfo fcinfo, Relation rel, Datum *key)
{
	BfPartitionsSite *site = (BfPartitionsSite *) fcinfo->flinfo->fn_extra;

	if (site == NULL)
	{
		site = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(*site));
		fcinfo->flinfo->fn_extra = site;
	}
	bloom_arg_key_type(fcinfo, 1, &site->kt);
	if (site->indexoid != RelationGetRelid(rel))
	{
		site->indexoid = InvalidOid;
		site->read = false;
		if (strcmp(site->kt.family, "text") == 0)
		{
			bf_key_type(rel, &site->colkt, fcinfo->flinfo->fn_mcxt);
			if (bloom_key_reads_as(&site->kt, site->colkt.family))
			{
				bloom_key_reader_init(&site->reader, &site->kt,
									  site->colkt.typid, fcinfo->flinfo->fn_mcxt);
				site->read = true;
			}
		}
		site->indexoid = RelationGetRelid(rel);
	}
	if (!site->read)
		return &site->kt;
	*key = bloom_key_read(&site->reader, *key);
	return &site->colkt;
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
	Datum		key = PG_GETARG_DATUM(1);
	ListCell   *lc;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	rel = bf_open_index(PG_GETARG_OID(0), true);
	kt = bf_partitions_key(fcinfo, rel, &key);
	foreach(lc, bf_leaf_indexes(rel))
	{
		Relation	leaf = relation_open(lfirst_oid(lc), AccessShareLock);

		/* an index scan of each leaf probed, for pg_stat_user_indexes */
		pgstat_count_index_scan(leaf);
		if (bf_probe_leaf(rel, leaf, kt, key))
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
