/*-------------------------------------------------------------------------
 *
 * bloom_shared_check.c
 *	  A shared filter's table checked on every open (bloom_shared.h): the
 *	  table bloom_filter_create made, of its four columns, and without
 *	  row-level security or a trigger of the user's; and the error of a
 *	  slice row that could be read but not updated.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_shared_check.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "utils/rel.h"
#include "utils/reltrigger.h"

#include "bloom_shared.h"

/* A slice row that could be read but not updated: the add would be lost */
void
bs_not_updated(const BsFilter *f, int layer, int32 slice)
{
	ereport(ERROR,
			errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			errmsg("could not update slice %d of layer %d of shared bloom filter %s",
				   slice, layer, f->plans->qname),
			errdetail("Row-level security or a trigger keeps the row from being updated, so the add would be lost."));
}

/*
 * The table is one bloom_filter_create made: a plain table of exactly the
 * columns (layer int4, slice int4, nkeys int8, bits bytea), in that order.
 * With plain, also without row-level security or a trigger of the user's:
 * the table is the filter's storage, and a policy or a trigger that hid or
 * skipped a row would lose adds silently (false negatives) or make a probe
 * read a filter with holes.  bloom_filter_drop alone accepts them.
 */
void
bs_check_table(Oid relid, bool plain)
{
	static const char *const names[] = {"layer", "slice", "nkeys", "bits"};
	static const Oid types[] = {INT4OID, INT4OID, INT8OID, BYTEAOID};
	Relation	rel = try_relation_open(relid, AccessShareLock);
	TupleDesc	td;
	bool		ok;
	int			n = 0;
	char	   *name;

	if (rel == NULL)
		ereport(ERROR,
				errcode(ERRCODE_UNDEFINED_TABLE),
				errmsg("relation with OID %u does not exist", relid));
	td = RelationGetDescr(rel);
	ok = rel->rd_rel->relkind == RELKIND_RELATION;
	for (int i = 0; ok && i < td->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(td, i);

		if (a->attisdropped)
			continue;
		if (n >= 4 || strcmp(NameStr(a->attname), names[n]) != 0 ||
			a->atttypid != types[n])
			ok = false;
		n++;
	}
	name = pstrdup(RelationGetRelationName(rel));
	if (ok && n == 4 && plain)
	{
		bool		rls = rel->rd_rel->relrowsecurity;
		bool		trig = false;

		if (rel->trigdesc)
			for (int i = 0; i < rel->trigdesc->numtriggers; i++)
				if (!rel->trigdesc->triggers[i].tgisinternal)
					trig = true;
		relation_close(rel, NoLock);
		if (rls || trig)
			ereport(ERROR,
					errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					errmsg("shared bloom filter \"%s\" has %s", name,
						   rls ? "row-level security enabled" : "a trigger"),
					errdetail("A shared filter's table is its storage: a policy or a trigger that hides or skips its rows would lose adds."),
					errhint("%s", rls ? "ALTER TABLE ... DISABLE ROW LEVEL SECURITY, or use bloom_filter_drop()." :
							"DROP TRIGGER, or use bloom_filter_drop()."));
		return;
	}
	relation_close(rel, NoLock);
	if (!ok || n != 4)
		ereport(ERROR,
				errcode(ERRCODE_WRONG_OBJECT_TYPE),
				errmsg("\"%s\" is not a shared bloom filter", name),
				errdetail("A shared filter is a table made by bloom_filter_create(), of the columns (layer int4, slice int4, nkeys int8, bits bytea)."));
}
