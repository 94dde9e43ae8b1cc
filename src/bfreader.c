/*-------------------------------------------------------------------------
 *
 * bfreader.c
 *	  Opening a bloomfilter index for reading: what a reader must pass
 *	  (privileges, row-level security, a valid index, every partition covered),
 *	  the leaf indexes of a partitioned one, and a probe of one hash.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfreader.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_namespace.h"
#include "common/shortest_dec.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "storage/predicate.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "bfindex.h"

/*
 * Is the table a Citus distributed table (listed in pg_dist_partition)?  On
 * the coordinator its index holds only the keys of the rows stored there
 * (none, or stale ones if the table was distributed with rows in it): an
 * answer from it would be a false "absent" for the keys on the shards.
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
 * the user may read every row of its table.  The lock is kept to the end of
 * the transaction: the index cannot be dropped or rebuilt by another session
 * under the caller.
 *
 * The index holds the key of every row, so reading it reads the table: it
 * takes SELECT on the table, and it is refused where row-level security
 * applies to the caller (check_enable_rls, so that the owner and roles that
 * bypass it keep working), since an answer would tell keys of rows the
 * policies hide.
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
	/* (the access method's routine is ours: its validator is ours) */
	if (rel->rd_indam == NULL || rel->rd_indam->amvalidate != bfvalidate)
		ereport(ERROR,
				errcode(ERRCODE_WRONG_OBJECT_TYPE),
				errmsg("\"%s\" is not a bloomfilter index",
					   RelationGetRelationName(rel)),
				errdetail("It is an index of access method \"%s\".",
						  get_am_name(rel->rd_rel->relam)));

	heapoid = rel->rd_index->indrelid;
	acl = pg_class_aclcheck(heapoid, GetUserId(), ACL_SELECT);
	if (acl != ACLCHECK_OK)
		aclcheck_error(acl, get_relkind_objtype(get_rel_relkind(heapoid)),
					   get_rel_name(heapoid));
	if (check_enable_rls(heapoid, InvalidOid, false) == RLS_ENABLED)
		ereport(ERROR,
				errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				errmsg("cannot read bloomfilter index \"%s\": row-level security applies to table \"%s\"",
					   RelationGetRelationName(rel), get_rel_name(heapoid)),
				errdetail("The index holds the key of every row, including the rows the table's policies hide from you."),
				errhint("Read it as the table's owner or as a role that bypasses row-level security, or probe a filter built with bloom_agg over the rows you can see."));
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

/*
 * Does PostgreSQL itself trust the index for this transaction's snapshots?
 * Not one left invalid by a CREATE INDEX CONCURRENTLY or REINDEX
 * CONCURRENTLY that failed, was cancelled or is still running, which may
 * miss rows written meanwhile (or have no pages at all yet); nor one built
 * over a broken HOT chain (pg_index.indcheckxmin) after this transaction's
 * snapshots were taken, which lacks the keys of row versions those
 * snapshots still see (a key updated in place before the index existed).
 * The planner never uses such an index either (get_relation_info).
 */
BfTrust
bf_index_trust(Oid indexoid)
{
	HeapTuple	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
	Form_pg_index form;
	BfTrust		trust = BF_TRUSTED;

	if (!HeapTupleIsValid(tup))
		return BF_TRUST_GONE;
	form = (Form_pg_index) GETSTRUCT(tup);
	if (!form->indisvalid || !form->indisready)
		trust = BF_TRUST_INVALID;
	else if (form->indcheckxmin &&
			 !TransactionIdPrecedes(HeapTupleHeaderGetXmin(tup->t_data),
									TransactionXmin))
		trust = BF_TRUST_TOO_NEW;
	ReleaseSysCache(tup);
	return trust;
}

/* Refuse an index that PostgreSQL itself does not trust (bf_index_trust). */
static void
bf_check_valid(Oid indexoid)
{
	switch (bf_index_trust(indexoid))
	{
		case BF_TRUSTED:
			break;
		case BF_TRUST_GONE:
			elog(ERROR, "cache lookup failed for index %u", indexoid);
			break;
		case BF_TRUST_INVALID:
			ereport(ERROR,
					errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					errmsg("bloomfilter index \"%s\" is not valid",
						   get_rel_name(indexoid)),
					errdetail("A CREATE INDEX CONCURRENTLY or REINDEX CONCURRENTLY that built it failed, was canceled or is still running: it may miss keys of the table."),
					errhint("Rebuild it with REINDEX INDEX, or drop it."));
			break;
		case BF_TRUST_TOO_NEW:
			ereport(ERROR,
					errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					errmsg("bloomfilter index \"%s\" was built after this transaction's snapshot",
						   get_rel_name(indexoid)),
					errdetail("It was built over rows updated in place, and lacks the keys of row versions this snapshot still sees."),
					errhint("Probe it in a transaction that begins after it was built."));
			break;
	}
}

/*
 * The leaf indexes whose keys together are every key of the index's table:
 * the index itself, or under a partitioned index one index for each leaf
 * partition of the table, however the index tree was put together (CREATE
 * INDEX ON ONLY, ATTACH PARTITION, partitions attached or created later).
 * A partition that no leaf index covers (a foreign table, a partition whose
 * index was never created or attached), or an invalid leaf index, is
 * refused with an error: answering from the others would say "absent" for
 * the keys of its rows.
 */
List *
bf_leaf_indexes(Relation rel)
{
	Oid			heapoid = rel->rd_index->indrelid;
	List	   *tables;
	List	   *indexes;
	List	   *leaves = NIL;
	ListCell   *lc;

	if (rel->rd_rel->relkind == RELKIND_INDEX)
	{
		bf_check_valid(RelationGetRelid(rel));
		return list_make1_oid(RelationGetRelid(rel));
	}

	tables = find_all_inheritors(heapoid, AccessShareLock, NULL);
	indexes = find_all_inheritors(RelationGetRelid(rel), AccessShareLock, NULL);
	foreach(lc, tables)
	{
		Oid			table = lfirst_oid(lc);
		char		kind = get_rel_relkind(table);
		Oid			leaf = InvalidOid;
		ListCell   *li;

		if (kind == RELKIND_PARTITIONED_TABLE)
			continue;
		foreach(li, indexes)
		{
			Oid			index = lfirst_oid(li);

			if (get_rel_relkind(index) == RELKIND_INDEX &&
				IndexGetRelation(index, false) == table)
			{
				leaf = index;
				break;
			}
		}
		if (!OidIsValid(leaf))
			ereport(ERROR,
					errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					errmsg("partition \"%s\" of table \"%s\" is not covered by bloomfilter index \"%s\"",
						   get_rel_name(table), get_rel_name(heapoid),
						   RelationGetRelationName(rel)),
					kind == RELKIND_FOREIGN_TABLE ?
					errdetail("It is a foreign table, which cannot have the index: its keys are in no index of the tree.") :
					errdetail("No index of the tree is on it (the index was created ON ONLY the parent, or the partition's index was never attached): its keys are in no index."),
					kind == RELKIND_FOREIGN_TABLE ?
					errhint("Probe the partitions' own indexes and the foreign table separately, or probe a filter built with bloom_agg over the table.") :
					errhint("Create a bloomfilter index on the partition and attach it with ALTER INDEX ... ATTACH PARTITION."));
		bf_check_valid(leaf);
		leaves = lappend_oid(leaves, leaf);
	}
	return leaves;
}

/*
 * The false-positive rate a partitioned index promises: its
 * false_positive_rate option, the default where it has none.
 */
static double
bf_promised_rate(Relation rel)
{
	BfOptions  *opts = (BfOptions *) rel->rd_options;

	return opts ? opts->rate : BLOOM_DEFAULT_RATE;
}

/*
 * Does a leaf index (its metapage meta) keep the rate of the index rel that
 * it is read through?  PostgreSQL adopts a partition's index into a
 * partitioned one without comparing their options (ATTACH PARTITION, and
 * CREATE INDEX on the partitioned table over an index the partition already
 * has), and no access method callback runs then: a leaf built at a higher
 * false_positive_rate answers "maybe" above the parent's promise.  A lower
 * rate keeps it, and so does any capacity (past its capacity a leaf grows,
 * within its rate).  Sets *promised to rel's rate; always true for a leaf
 * read by itself.
 */
bool
bf_keeps_promise(Relation rel, const BfMetaPageData *meta, double *promised)
{
	if (rel->rd_rel->relkind != RELKIND_PARTITIONED_INDEX)
	{
		*promised = meta->rate;
		return true;
	}
	*promised = bf_promised_rate(rel);
	/* (the same option gives the same double: no tolerance is needed) */
	return meta->rate <= *promised;
}

/*
 * A rate as its shortest exact decimal: the option a user sets from a
 * message must give the same double (with %g, 0.0123456789 read 0.0123457,
 * above the promise, and the hint's fix was refused again).
 */
char *
bf_rate_text(double rate)
{
	char	   *buf = palloc(DOUBLE_SHORTEST_DECIMAL_LEN);

	double_to_shortest_decimal_buf(rate, buf);
	return buf;
}

/*
 * What to do about a leaf that does not keep the promise: a hint's text.
 * The rate it names is the strictest of promised and those of every
 * partitioned index above the leaf: in a sub-partitioned tree a middle
 * index may promise less than the top one, and a fix at the top's rate
 * would leave probes through the middle refused.
 */
char *
bf_promise_hint(Relation leaf, double promised)
{
	char	   *name = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(leaf)),
												  RelationGetRelationName(leaf));
	ListCell   *lc;

	foreach(lc, get_partition_ancestors(RelationGetRelid(leaf)))
	{
		Relation	above = index_open(lfirst_oid(lc), AccessShareLock);

		promised = Min(promised, bf_promised_rate(above));
		index_close(above, AccessShareLock);
	}
	return psprintf("Rebuild it at the strictest rate of the partitioned indexes above it: ALTER INDEX %s SET (false_positive_rate = %s); REINDEX INDEX %s;",
					name, bf_rate_text(promised), name);
}

/*
 * Refuse a probe through rel of a leaf index that answers "maybe" more often
 * than rel promises (bf_keeps_promise): such a probe would not be wrong, but
 * a user of the answer (a dedup that skips a "maybe") would lose more than
 * the rate they asked for, without a sign.
 */
void
bf_check_promise(Relation rel, Relation leaf, const BfMetaPageData *meta)
{
	double		promised;

	if (bf_keeps_promise(rel, meta, &promised))
		return;
	ereport(ERROR,
			errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			errmsg("bloomfilter index \"%s\" of partition \"%s\" does not keep the false_positive_rate of partitioned index \"%s\"",
				   RelationGetRelationName(leaf),
				   get_rel_name(leaf->rd_index->indrelid),
				   RelationGetRelationName(rel)),
			errdetail("It was built with false_positive_rate %s, above the %s that \"%s\" promises: ATTACH PARTITION or CREATE INDEX on the partitioned table adopted it without comparing their options.",
					  bf_rate_text(meta->rate), bf_rate_text(promised),
					  RelationGetRelationName(rel)),
			errhint("%s", bf_promise_hint(leaf, promised)));
}

/*
 * Under SERIALIZABLE, a probe that answers "no row" has read the whole
 * table without touching a heap or btree page that would record the read:
 * a SIREAD lock on the table, as a sequential scan takes, makes a
 * concurrent insert of a key it ruled out a read/write conflict, so that
 * write skew through a probe fails a transaction as through a plain query.
 */
void
bf_predicate_lock_table(Relation index)
{
	Relation	heap;

	if (!IsolationIsSerializable() || !ActiveSnapshotSet())
		return;
	heap = table_open(index->rd_index->indrelid, AccessShareLock);
	PredicateLockRelation(heap, GetActiveSnapshot());
	table_close(heap, NoLock);
}

/*
 * Is hash h in some layer of the index?  meta is re-read (in place) when a
 * compaction dropped a layer it names and its pages were reused: the new
 * metapage names every layer a key committed before the caller's snapshot
 * went into, as the old one did.
 */
bool
bf_probe_hash(Relation index, BfMetaPageData *meta, uint64 h)
{
	for (uint32 i = 0; i < meta->nlayers; i++)
	{
		int			found = bf_layer_test(index, meta, &meta->layers[i], h);

		if (found == 1)
			return true;
		if (found < 0)
		{
			bf_read_meta(index, meta);
			i = -1;				/* from the first layer again */
		}
	}
	return false;
}
