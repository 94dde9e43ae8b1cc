/*-------------------------------------------------------------------------
 *
 * bfcitus.c
 *	  bloom_index_contains on the coordinator of a Citus distributed table:
 *	  ask every shard's bloomfilter index, through run_command_on_shards.
 *
 * The coordinator's index holds none of the rows' keys (they are on the
 * shards), so its own answer would be "absent" for every key.  Instead the
 * key is sent as its text form, cast back to the same type on the workers
 * (so it hashes the same: the text is made under fixed settings, since the
 * worker parses it under its own), and probed in the index of each shard that has
 * the same key definition and predicate.  The table may hold the key if
 * some shard says so.  A shard that fails, or has no such index, raises an
 * error: it never counts as "absent".  Each call opens a new connection to
 * every shard (run_command_on_shards does not reuse them): for a few keys.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfcitus.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "bfindex.h"

/*
 * A literal for the shard command: quoted, and with every '%' doubled, since
 * run_command_on_shards passes the command through format() to put the
 * shard's name in place of %s.
 */
static void
append_shard_literal(StringInfo buf, const char *s)
{
	const char *q = quote_literal_cstr(s);

	for (; *q; q++)
	{
		if (*q == '%')
			appendStringInfoChar(buf, '%');
		appendStringInfoChar(buf, *q);
	}
}

/*
 * The key's text form, whatever this session's DateStyle, IntervalStyle or
 * extra_float_digits: "SQL, DMY" dates read back as MDY, or floats printed
 * short, would be other keys on the worker (a false "absent").  The settings
 * are those of postgres_fdw's set_transmission_modes, undone at once (or by
 * the abort, if the output function raises an error).
 */
static char *
key_literal(Oid keytype, Datum key)
{
	Oid			outfunc;
	bool		isvarlena;
	int			nestlevel = NewGUCNestLevel();
	char	   *s;

	getTypeOutputInfo(keytype, &outfunc, &isvarlena);
	(void) set_config_option("datestyle", "ISO", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("intervalstyle", "postgres", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("extra_float_digits", "3", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	s = OidOutputFunctionCall(outfunc, key);
	AtEOXact_GUC(true, nestlevel);
	return s;
}

/*
 * The command run on each shard: OR of bloom_index_contains over the
 * shard's bloomfilter indexes with the same first column (column name or
 * expression) and predicate as the coordinator's index; NULL when the shard
 * has none.  All the shard indexes so matched hold every row's key, so
 * their OR has no false negative.
 */
static char *
shard_command(Relation index, Oid fnoid, Oid keytype, Datum key)
{
	StringInfoData buf;
	char	   *pred;
	Datum		coldef;
	Datum		predtree;
	bool		nopred;

	coldef = DirectFunctionCall3(pg_get_indexdef_ext,
								 ObjectIdGetDatum(RelationGetRelid(index)),
								 Int32GetDatum(1), BoolGetDatum(false));
	predtree = SysCacheGetAttr(INDEXRELID, index->rd_indextuple,
							   Anum_pg_index_indpred, &nopred);
	pred = nopred ? "" :
		TextDatumGetCString(DirectFunctionCall2(pg_get_expr, predtree,
												ObjectIdGetDatum(index->rd_index->indrelid)));

	initStringInfo(&buf);
	appendStringInfo(&buf, "SELECT pg_catalog.bool_or(%s.%s(i.indexrelid::regclass, ",
					 quote_identifier(get_namespace_name(get_func_namespace(fnoid))),
					 quote_identifier(get_func_name(fnoid)));
	append_shard_literal(&buf, key_literal(keytype, key));
	appendStringInfo(&buf, "::%s))", format_type_be_qualified(keytype));
	appendStringInfoString(&buf,
						   " FROM pg_catalog.pg_index i"
						   " JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid"
						   " JOIN pg_catalog.pg_am a ON a.oid = c.relam"
						   " WHERE i.indrelid = '%1$s'::regclass AND a.amname = 'bloomfilter'"
						   " AND pg_catalog.pg_get_indexdef(i.indexrelid, 1, false) = ");
	append_shard_literal(&buf, TextDatumGetCString(coldef));
	appendStringInfoString(&buf,
						   " AND coalesce(pg_catalog.pg_get_expr(i.indpred, i.indrelid), '') = ");
	append_shard_literal(&buf, pred);
	return buf.data;
}

/*
 * Does some shard of the distributed table "heapoid" hold the key, by its
 * copy of the bloomfilter index "index"?
 */
bool
bf_citus_index_contains(Relation index, Oid heapoid, FunctionCallInfo fcinfo)
{
	Oid			keytype = get_fn_expr_argtype(fcinfo->flinfo, 1);
	char	   *cmd;
	Oid			argtypes[2] = {REGCLASSOID, TEXTOID};
	Datum		args[2];
	bool		found = false;

	if (!OidIsValid(keytype))
		elog(ERROR, "could not determine the type of the key");
	cmd = shard_command(index, fcinfo->flinfo->fn_oid, keytype,
						PG_GETARG_DATUM(1));
	args[0] = ObjectIdGetDatum(heapoid);
	args[1] = CStringGetTextDatum(cmd);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args("SELECT shardid, success, result"
							  " FROM pg_catalog.run_command_on_shards($1, $2)",
							  2, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "run_command_on_shards failed");
	if (SPI_processed == 0)
		ereport(ERROR,
				errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				errmsg("distributed table \"%s\" has no shard to probe",
					   get_rel_name(heapoid)));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		char	   *shardid = SPI_getvalue(tup, desc, 1);
		char	   *success = SPI_getvalue(tup, desc, 2);
		char	   *result = SPI_getvalue(tup, desc, 3);

		if (success == NULL || strcmp(success, "t") != 0)
			ereport(ERROR,
					errcode(ERRCODE_CONNECTION_FAILURE),
					errmsg("could not probe shard %s of \"%s\" for bloomfilter index \"%s\"",
						   shardid, get_rel_name(heapoid),
						   RelationGetRelationName(index)),
					errdetail("The shard answered: %s", result ? result : "(nothing)"));
		if (result != NULL && strcmp(result, "t") == 0)
			found = true;
		else if (result == NULL || strcmp(result, "f") != 0)
			ereport(ERROR,
					errcode(ERRCODE_UNDEFINED_OBJECT),
					errmsg("shard %s of \"%s\" has no bloomfilter index like \"%s\"",
						   shardid, get_rel_name(heapoid),
						   RelationGetRelationName(index)),
					errdetail("Its keys cannot be probed, so the table's answer is unknown."));
	}
	SPI_finish();
	return found;
}
