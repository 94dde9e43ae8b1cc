/*-------------------------------------------------------------------------
 *
 * bfcitus.c
 *	  bloom_index_contains on the coordinator of a Citus distributed table:
 *	  ask every shard's bloomfilter index, through run_command_on_shards.
 *
 * The coordinator's index covers only its own copy of the table, which is
 * not the table: empty, or the rows it held when it was distributed.  So it
 * is never read: the key is sent as its text form, cast back to the same
 * type on the workers (so it hashes the same: the text is made under fixed
 * settings, since the worker parses it under its own), and probed in the
 * index of each shard that has the same key definition and predicate.  The
 * table may hold the key if some shard says so.  A shard that fails, or has
 * no such index, raises an error: it never counts as "absent".  Each call
 * opens a new connection to every shard (run_command_on_shards does not
 * reuse them): for a few keys.
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
 * Append s to the shard command with every '%' doubled: run_command_on_shards
 * passes the command through format(), with the shard's name (quoted as an
 * identifier) as its only argument.
 */
static void
append_format_text(StringInfo buf, const char *s)
{
	for (; *s; s++)
	{
		if (*s == '%')
			appendStringInfoChar(buf, '%');
		appendStringInfoChar(buf, *s);
	}
}

/*
 * The command run on each shard: OR of bloom_index_contains over the
 * shard's bloomfilter indexes with the same first column (column name or
 * expression) and predicate as the coordinator's index; NULL when the shard
 * has none.  All the shard indexes so matched hold every row's key, so
 * their OR has no false negative.
 *
 * The worker reads the command under its own settings, not this session's.
 * So the key's text is made under fixed settings, those of postgres_fdw's
 * set_transmission_modes (a date printed "SQL, DMY", an interval printed
 * sql_standard or a float printed short would be read back as another key:
 * a false "absent"), and the index's definition is printed under the
 * search_path the session started with, which a new connection to a worker
 * gets on nodes configured alike (under one SET since, schema names would be
 * left out or added, and no shard's index would match).  The settings are
 * undone at once (or by the abort, if an output function raises an error).
 *
 * Every name and literal is quoted, then every '%' doubled for format(); the
 * shard's name goes in as a literal (%1$L) cast to regclass.
 */
static char *
shard_command(Relation index, Oid fnoid, Oid keytype, Datum key)
{
	StringInfoData head;
	StringInfoData tail;
	StringInfoData cmd;
	Oid			outfunc;
	bool		isvarlena;
	int			nestlevel;
	char	   *keytext;
	char	   *coldef;
	char	   *pred;
	Datum		predtree;
	bool		nopred;

	getTypeOutputInfo(keytype, &outfunc, &isvarlena);
	predtree = SysCacheGetAttr(INDEXRELID, index->rd_indextuple,
							   Anum_pg_index_indpred, &nopred);

	nestlevel = NewGUCNestLevel();
	(void) set_config_option("datestyle", "ISO", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("intervalstyle", "postgres", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("extra_float_digits", "3", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("search_path", GetConfigOptionResetString("search_path"),
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	keytext = OidOutputFunctionCall(outfunc, key);
	coldef = TextDatumGetCString(DirectFunctionCall3(pg_get_indexdef_ext,
													 ObjectIdGetDatum(RelationGetRelid(index)),
													 Int32GetDatum(1), BoolGetDatum(false)));
	pred = nopred ? "" :
		TextDatumGetCString(DirectFunctionCall2(pg_get_expr, predtree,
												ObjectIdGetDatum(index->rd_index->indrelid)));
	AtEOXact_GUC(true, nestlevel);

	/* the command in two parts of plain SQL, the shard's name between them */
	initStringInfo(&head);
	appendStringInfo(&head,
					 "SELECT pg_catalog.bool_or(%s.%s(i.indexrelid::pg_catalog.regclass, %s::%s))"
					 " FROM pg_catalog.pg_index i"
					 " JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid"
					 " JOIN pg_catalog.pg_am a ON a.oid = c.relam"
					 " WHERE i.indrelid = ",
					 quote_identifier(get_namespace_name(get_func_namespace(fnoid))),
					 quote_identifier(get_func_name(fnoid)),
					 quote_literal_cstr(keytext),
					 format_type_be_qualified(keytype));
	initStringInfo(&tail);
	appendStringInfo(&tail,
					 "::pg_catalog.regclass AND a.amname = 'bloomfilter'"
					 " AND pg_catalog.pg_get_indexdef(i.indexrelid, 1, false) = %s"
					 " AND coalesce(pg_catalog.pg_get_expr(i.indpred, i.indrelid), '') = %s",
					 quote_literal_cstr(coldef), quote_literal_cstr(pred));

	initStringInfo(&cmd);
	append_format_text(&cmd, head.data);
	appendStringInfoString(&cmd, "%1$L");
	append_format_text(&cmd, tail.data);
	return cmd.data;
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
