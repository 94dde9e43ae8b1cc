/*-------------------------------------------------------------------------
 *
 * bloom_keys.c
 *	  Key types: how each type's keys are hashed and which family they
 *	  belong to, decided once per call site (the hashing itself, per key,
 *	  is in bloom_hash.c).
 *
 * The bits of a stored filter must never depend on PostgreSQL's in-memory
 * layout, byte order, OIDs or internal hash functions, or a filter would
 * start answering "absent" for keys it holds after a dump and restore, an
 * upgrade, or a move to another machine.  So each common type gets canonical
 * bytes defined here (and in the README), chosen so that values equal under
 * the type's "=" hash equally.  Types without canonical bytes fall back to
 * their default hash operator class, and their key family records the
 * PostgreSQL major version (and byte order), so that a filter moved past a
 * change of those is refused with an error instead of silently answering
 * wrongly.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_keys.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_enum.h"
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "nodes/primnodes.h"
#include "parser/parse_type.h"
#include "utils/builtins.h"
#include "utils/catcache.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "bloom_pg.h"

/* PostgreSQL's own hash functions may differ between byte orders */
#ifdef WORDS_BIGENDIAN
#define BYTE_ORDER_SUFFIX "be"
#else
#define BYTE_ORDER_SUFFIX ""
#endif

/*
 * The canonical types: a table of (type, how it is hashed, family).  Every
 * other type is an enum (its label) or generic (its own hash function).
 */
typedef struct CanonicalType
{
	Oid			typid;
	BloomKeyKind kind;
	const char *family;
} CanonicalType;

static const CanonicalType canonical_types[] = {
	{INT2OID, KEY_INT2, "integer"},
	{INT4OID, KEY_INT4, "integer"},
	{INT8OID, KEY_INT8, "integer"},
	{TEXTOID, KEY_TEXT, "text"},
	{VARCHAROID, KEY_TEXT, "text"},
	{NAMEOID, KEY_NAME, "text"},
	{BPCHAROID, KEY_BPCHAR, "text"},
	{BYTEAOID, KEY_BYTEA, "bytea"},
	{UUIDOID, KEY_UUID, "uuid"},
	{BOOLOID, KEY_BOOL, "boolean"},
	{FLOAT4OID, KEY_FLOAT4, "float"},
	{FLOAT8OID, KEY_FLOAT8, "float"},
	{NUMERICOID, KEY_NUMERIC, "numeric"},
	{DATEOID, KEY_INT32, "date"},
	{TIMESTAMPOID, KEY_INT64, "timestamp"},
	{TIMESTAMPTZOID, KEY_INT64, "timestamptz"},
	{TIMEOID, KEY_INT64, "time"},
};

/* Raise the error, or give false where the caller asked for no errors. */
#define KEY_REFUSE(noerror, ...) \
	do { \
		if (noerror) \
			return false; \
		ereport(ERROR, __VA_ARGS__); \
	} while (0)

/*
 * Record the family name, in UTF-8 whatever the database encoding, so that a
 * filter means the same in every database.
 */
static bool
set_family(BloomKeyType *kt, const char *name, bool noerror)
{
	name = pg_server_to_any(name, strlen(name), PG_UTF8);
	if (strlen(name) >= BLOOM_FAMILY_LEN)
		KEY_REFUSE(noerror,
				   errcode(ERRCODE_NAME_TOO_LONG),
				   errmsg("type name \"%s\" is too long to be recorded as a bloom filter key family",
						  name),
				   errdetail("A key family name has at most %d bytes.",
							 BLOOM_FAMILY_LEN - 1),
				   errhint("Cast the key to text or to a type with a shorter name."));
	strlcpy(kt->family, name, BLOOM_FAMILY_LEN);
	return true;
}

/* Equal strings must be equal bytes: no nondeterministic collation. */
static bool
check_collation(Oid collid, Oid typid, bool noerror)
{
	if (OidIsValid(collid) && !get_collation_isdeterministic(collid))
		KEY_REFUSE(noerror,
				   errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				   errmsg("bloom filter keys of type %s cannot use the nondeterministic collation \"%s\"",
						  format_type_be(typid), get_collation_name(collid)),
				   errhint("Give the key a deterministic collation, for example key COLLATE \"C\" or lower(key) COLLATE \"C\"."));
	return true;
}

/* --- enums: the family (the label guard is in bloom_labels.c) --- */

/*
 * An enum's family is "enum:" and its qualified name: nothing that adding a
 * label changes.  Its labels are read for the guard.
 */
static bool
set_enum_family(BloomKeyType *kt, Oid enumtypid, bool noerror)
{
	kt->enumtypid = enumtypid;
	bloom_labels_read(kt, NULL, false);
	return set_family(kt, psprintf("%s%s", BLOOM_ENUM_PREFIX,
								   format_type_be_qualified(enumtypid)),
					  noerror);
}

/*
 * The enum type of an enum family, looked up by its name (in this database:
 * a filter combined here may have been made elsewhere), into kt; false
 * (kt not set up) if there is no such enum, or its family is another.
 */
static bool
lookup_enum_family(const char *family, BloomKeyType *kt, char **sname)
{
	const char *name = family + strlen(BLOOM_ENUM_PREFIX);
	Oid			typid;
	int32		typmod;
#if PG_VERSION_NUM >= 160000
	ErrorSaveContext escontext = {T_ErrorSaveContext};
#endif

	*sname = pg_any_to_server(name, strlen(name), PG_UTF8);
#if PG_VERSION_NUM >= 160000
	if (!parseTypeString(*sname, &typid, &typmod, (Node *) &escontext))
		typid = InvalidOid;
#else
	parseTypeString(*sname, &typid, &typmod, true);
#endif
	memset(kt, 0, sizeof(*kt));
	if (OidIsValid(typid) && type_is_enum(typid))
		bloom_key_type_init(kt, typid, InvalidOid, TopMemoryContext);
	if (kt->kind != KEY_ENUM || strcmp(kt->family, family) != 0)
	{
		kt->typid = InvalidOid;
		return false;
	}
	return true;
}

/* The same, with an error if there is no such enum. */
static void
family_enum_type(const char *family, BloomKeyType *kt)
{
	char	   *sname;

	if (!lookup_enum_family(family, kt, &sname))
	{
		kt->typid = InvalidOid;
		ereport(ERROR,
				errcode(ERRCODE_UNDEFINED_OBJECT),
				errmsg("cannot combine bloom filters of key family \"%s\" made under different labels",
					   bloom_family_display(family)),
				errdetail("There is no enum type %s in this database to check their labels against.",
						  sname),
				errhint("Combine the filters in the database they were made in."));
	}
}

/*
 * The label guard of the combination of two filters (or aggregate states)
 * of one family: if it is an enum family and their guards differ (a label
 * was added between them), both are checked against the type's labels now,
 * which the combination then records.
 */
void
bloom_combine_labels(const char *family, const BloomLabels *a,
					 const BloomLabels *b, BloomLabels *out)
{
	/* the type of the last family combined, looked up once */
	static BloomKeyType kt;

	if (!bloom_family_is_enum(family) || bloom_labels_equal(a, b))
	{
		*out = *a;
		return;
	}
	if (kt.typid == InvalidOid || strcmp(kt.family, family) != 0 ||
		bloom_labels_stale(&kt))
		family_enum_type(family, &kt);
	(void) bloom_check_labels(&kt, a, NULL);
	(void) bloom_check_labels(&kt, b, NULL);
	*out = kt.labels;
}

/*
 * What a generic key type is made of, looked at through domains, arrays,
 * composites, ranges and multiranges.  Its own hash function hashes its
 * parts with theirs: a part whose hash is an OID (an enum hashes its value's
 * OID, a reg* type is one) gives other bits after a dump and restore; a part
 * of a collatable type other than the built-in strings may hash under the
 * collation's rules (citext lowercases by the locale); and a composite's
 * hash changes when an attribute is added.  The first two are refused, the
 * last is recorded in the family as a digest of the parts' types.
 */
typedef struct KeyTypeParts
{
	Oid			refused;		/* a part whose hash is not canonical */
	Oid			collation;		/* a nondeterministic collation of a part */
	bool		composite;		/* some part is a composite */
	XXH3_state_t shape;			/* the parts' type names, depth first */
} KeyTypeParts;

static bool
oid_valued(Oid typid)
{
	switch (typid)
	{
		case REGCLASSOID:
		case REGTYPEOID:
		case REGPROCOID:
		case REGPROCEDUREOID:
		case REGOPEROID:
		case REGOPERATOROID:
		case REGCONFIGOID:
		case REGDICTIONARYOID:
		case REGNAMESPACEOID:
		case REGROLEOID:
		case REGCOLLATIONOID:
		case ACLITEMOID:
		case RECORDOID:			/* anonymous: its shape is not in the catalog */
			return true;
	}
	return type_is_enum(typid);
}

static bool
builtin_string(Oid typid)
{
	return typid == TEXTOID || typid == VARCHAROID || typid == BPCHAROID ||
		typid == NAMEOID;
}

static void
key_type_parts(Oid typid, Oid collid, KeyTypeParts *parts)
{
	Oid			base = getBaseType(typid);
	char	   *name;
	Oid			elem;

	check_stack_depth();
	if (OidIsValid(collid) && !OidIsValid(parts->collation) &&
		!get_collation_isdeterministic(collid))
		parts->collation = collid;
	name = format_type_be_qualified(base);
	XXH3_64bits_update(&parts->shape, name, strlen(name) + 1);
	if (oid_valued(base) ||
		(type_is_collatable(base) && !builtin_string(base) &&
		 !OidIsValid(get_element_type(base))))
	{
		if (!OidIsValid(parts->refused))
			parts->refused = base;
		return;
	}
	switch (get_typtype(base))
	{
		case TYPTYPE_COMPOSITE:
			{
				TupleDesc	desc = lookup_rowtype_tupdesc(base, -1);

				parts->composite = true;
				for (int i = 0; i < desc->natts; i++)
				{
					Form_pg_attribute att = TupleDescAttr(desc, i);

					if (!att->attisdropped)
						key_type_parts(att->atttypid, att->attcollation, parts);
				}
				ReleaseTupleDesc(desc);
				return;
			}
		case TYPTYPE_RANGE:
			key_type_parts(get_range_subtype(base), get_range_collation(base),
						   parts);
			return;
		case TYPTYPE_MULTIRANGE:
			key_type_parts(get_multirange_range(base), InvalidOid, parts);
			return;
		default:
			break;
	}
	elem = get_element_type(base);
	if (OidIsValid(elem))
		key_type_parts(elem, collid, parts);
}

/*
 * A type hashed by its own extended hash function.  Its family records the
 * PostgreSQL major version and byte order (those hash functions may change
 * with either), the database encoding where that is not UTF-8 (string parts
 * hash the encoding's bytes), and for composites a digest of their shape.
 * The parts are hashed under the C collation: every part is deterministic
 * and a built-in string, for which collations do not change the hash.
 */
static bool
generic_setup(BloomKeyType *kt, Oid typid, Oid base, Oid collid,
			  MemoryContext mcxt, bool noerror)
{
	TypeCacheEntry *tce;
	KeyTypeParts parts = {0};
	char		name[NAMEDATALEN * 4];
	int			len;

	XXH3_64bits_reset(&parts.shape);
	key_type_parts(typid, collid, &parts);
	if (OidIsValid(parts.refused))
		KEY_REFUSE(noerror,
				   errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				   errmsg("type %s cannot be a bloom filter key", format_type_be(typid)),
				   parts.refused == RECORDOID ?
				   errdetail("An anonymous record type has no name to record in the filter.") :
				   oid_valued(parts.refused) ?
				   errdetail("Its hash uses the OIDs of %s values, which differ between databases.",
							 format_type_be(parts.refused)) :
				   errdetail("Its hash follows the rules of the collation of %s.",
							 format_type_be(parts.refused)),
				   parts.refused == RECORDOID ?
				   errhint("Hash a text form of the key, for example concat_ws('|', a, b), or use a composite type.") :
				   errhint("Cast the key to text, for example key::text."));
	if (!check_collation(parts.collation, typid, noerror))
		return false;
	tce = lookup_type_cache(base, TYPECACHE_HASH_EXTENDED_PROC_FINFO);
	if (!OidIsValid(tce->hash_extended_proc))
		KEY_REFUSE(noerror,
				   errcode(ERRCODE_UNDEFINED_FUNCTION),
				   errmsg("type %s cannot be a bloom filter key", format_type_be(typid)),
				   errdetail("The type has no default hash operator class with an extended hash function."),
				   errhint("Cast the key to text or to another hashable type."));
	kt->kind = KEY_GENERIC;
	kt->collid = C_COLLATION_OID;
	fmgr_info_cxt(tce->hash_extended_proc, &kt->hashfn, mcxt);
	len = snprintf(name, sizeof(name), "%s/pg%d%s",
				   format_type_be_qualified(base), PG_VERSION_NUM / 10000,
				   BYTE_ORDER_SUFFIX);
	if (GetDatabaseEncoding() != PG_UTF8)
		len += snprintf(name + len, sizeof(name) - len, "/%s",
						GetDatabaseEncodingName());
	if (parts.composite)
		snprintf(name + len, sizeof(name) - len, "#%08x",
				 (unsigned int) XXH3_64bits_digest(&parts.shape));
	return set_family(kt, name, noerror);
}

/*
 * Work out how keys of type typid (as passed, maybe a domain) are hashed and
 * which family they belong to.  Done once per call site; the FmgrInfo of a
 * generic type's hash function lives in mcxt.  With noerror, a type that
 * cannot be a key gives false instead of an error (the planner's estimates
 * must not fail for a call that may never run).  kt is written only once
 * every check has passed, so a failed setup leaves it not set up.
 */
static bool
key_type_setup(BloomKeyType *kt, Oid typid, Oid collid, MemoryContext mcxt,
			   bool noerror)
{
	BloomKeyType t;
	Oid			base;
	bool		ok;

	if (!OidIsValid(typid))
		KEY_REFUSE(noerror,
				   errcode(ERRCODE_INDETERMINATE_DATATYPE),
				   errmsg("could not determine the type of the bloom filter key"));

	memset(&t, 0, sizeof(t));
	t.collid = collid;
	t.utf8 = GetDatabaseEncoding() == PG_UTF8;
	base = getBaseType(typid);	/* a domain is its base type */
	for (int i = 0; i < lengthof(canonical_types); i++)
	{
		if (canonical_types[i].typid != base)
			continue;
		t.kind = canonical_types[i].kind;
		if (!set_family(&t, canonical_types[i].family, noerror))
			return false;
		if (type_is_collatable(base) && !check_collation(collid, typid, noerror))
			return false;
		break;
	}
	if (t.family[0] != '\0')
		ok = true;
	else if (type_is_enum(base))
	{
		t.kind = KEY_ENUM;
		ok = set_enum_family(&t, base, noerror);
	}
	else
		ok = generic_setup(&t, typid, base, collid, mcxt, noerror);
	if (!ok)
		return false;
	t.typid = typid;
	*kt = t;
	return true;
}

void
bloom_key_type_init(BloomKeyType *kt, Oid typid, Oid collid,
					MemoryContext mcxt)
{
	(void) key_type_setup(kt, typid, collid, mcxt, false);
}

/* The same, but false where bloom_key_type_init would raise an error. */
bool
bloom_key_type_try_init(BloomKeyType *kt, Oid typid, Oid collid,
						MemoryContext mcxt)
{
	return key_type_setup(kt, typid, collid, mcxt, true);
}

/*
 * The type of argument argno as called.  Distributed engines call the
 * aggregate's support functions through wrappers of their own (Citus's
 * worker_partial_agg and coord_combine_agg), without a call expression: then
 * the type is the function's declared one, which is concrete for the
 * overloads that such engines push down (sql/bloomfilter--1.0.sql).
 * InvalidOid if neither says.
 */
Oid
bloom_call_arg_type(FunctionCallInfo fcinfo, int argno)
{
	FmgrInfo   *flinfo = fcinfo->flinfo;
	Oid			typid = get_fn_expr_argtype(flinfo, argno);
	Oid		   *argtypes;
	int			nargs;

	if (OidIsValid(typid))
	{
		Aggref	   *aggref = AggGetAggref(fcinfo);
		Node	   *arg = NULL;

		/*
		 * A key of a type with an implicit binary cast to an overload's type
		 * (citext to text) arrives relabelled: hash it as its own type, which
		 * is what "=" compares it as.
		 */
		if (aggref != NULL)
		{
			if (argno >= 1 && argno <= list_length(aggref->args))
				arg = (Node *) list_nth_node(TargetEntry, aggref->args, argno - 1)->expr;
		}
		else if (flinfo->fn_expr != NULL && IsA(flinfo->fn_expr, FuncExpr))
		{
			List	   *args = ((FuncExpr *) flinfo->fn_expr)->args;

			if (argno < list_length(args))
				arg = (Node *) list_nth(args, argno);
		}
		if (arg != NULL && IsA(arg, RelabelType) &&
			((RelabelType *) arg)->relabelformat == COERCE_IMPLICIT_CAST)
			typid = exprType((Node *) ((RelabelType *) arg)->arg);
		return typid;
	}
	if (flinfo->fn_expr != NULL || !OidIsValid(flinfo->fn_oid))
		return typid;
	(void) get_func_signature(flinfo->fn_oid, &argtypes, &nargs);
	if (argno < nargs && !IsPolymorphicType(argtypes[argno]))
		typid = argtypes[argno];
	pfree(argtypes);
	return typid;
}

/*
 * The number of arguments of the call: the declared number where a wrapper
 * calls without a call expression (Citus's coord_combine_agg passes the
 * final function its own argument count, NULLs after the state).
 */
int
bloom_call_nargs(FunctionCallInfo fcinfo)
{
	FmgrInfo   *flinfo = fcinfo->flinfo;

	if (flinfo->fn_expr != NULL || !OidIsValid(flinfo->fn_oid))
		return PG_NARGS();
	return get_func_nargs(flinfo->fn_oid);
}

/*
 * Set up the key type of argument argno of a call in kt, once per call site
 * (kt->typid stays 0 until then).
 */
BloomKeyType *
bloom_arg_key_type(FunctionCallInfo fcinfo, int argno, BloomKeyType *kt)
{
	if (kt->typid == InvalidOid)
		bloom_key_type_init(kt, bloom_call_arg_type(fcinfo, argno),
							PG_GET_COLLATION(), fcinfo->flinfo->fn_mcxt);
	return kt;
}

/*
 * The key type of argument argno, kept in fn_extra: for the functions whose
 * fn_extra holds nothing else (bloom_add, bloom_add_new, bloom_agg).
 */
BloomKeyType *
bloom_call_key_type(FunctionCallInfo fcinfo, int argno)
{
	if (fcinfo->flinfo->fn_extra == NULL)
		fcinfo->flinfo->fn_extra =
			MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(BloomKeyType));
	return bloom_arg_key_type(fcinfo, argno, (BloomKeyType *) fcinfo->flinfo->fn_extra);
}

/* --- untyped keys: read with the input function of the keys' type --- */

/*
 * A parameter or literal of unknown type (PREPARE ... $1, pgbench -M
 * prepared) arrives as text, where "id = $1" would read it with id's input
 * function.  Is a key of the text family (text, varchar, char(n), name) for
 * keys of another family to be read so, as the keys' type?  Not for text
 * keys, nor for an empty filter (it takes any key).
 */
bool
bloom_key_reads_as(const BloomKeyType *arg, const char *family)
{
	return family[0] != '\0' && strcmp(arg->family, "text") == 0 &&
		strcmp(family, "text") != 0;
}

/*
 * The type a filter's keys of family are read by: integer ones as bigint,
 * an enum's by its label, the others as their one type.  Not float: its keys
 * may be real, and '0.1' read as double precision is not the real 0.1
 * widened, so a real key would be "absent"; such a key is refused.
 * InvalidOid for a generic family (its name is no type name to look up)
 * and for an enum family that names no enum of this database.
 */
Oid
bloom_family_type(const char *family)
{
	static const struct
	{
		const char *family;
		Oid			typid;
	}			types[] = {
		{"integer", INT8OID}, {"bytea", BYTEAOID},
		{"uuid", UUIDOID}, {"boolean", BOOLOID}, {"numeric", NUMERICOID},
		{"date", DATEOID}, {"timestamp", TIMESTAMPOID},
		{"timestamptz", TIMESTAMPTZOID}, {"time", TIMEOID},
	};
	BloomKeyType kt;
	char	   *sname;

	for (int i = 0; i < lengthof(types); i++)
		if (strcmp(types[i].family, family) == 0)
			return types[i].typid;
	if (!bloom_family_is_enum(family) || !lookup_enum_family(family, &kt, &sname))
		return InvalidOid;
	return kt.typid;
}

/* Set up r to read keys of argument type arg with typid's input function. */
void
bloom_key_reader_init(BloomKeyReader *r, const BloomKeyType *arg, Oid typid,
					  MemoryContext mcxt)
{
	Oid			input;

	r->argkind = arg->kind;
	r->typid = getBaseType(typid);	/* a domain's checks do not apply */
	getTypeInputInfo(r->typid, &input, &r->ioparam);
	fmgr_info_cxt(input, &r->input, mcxt);
}

/*
 * The key of the text family read as r's type: a value the type does not
 * accept gets the type's own input error (22P02 for 'abc' as a bigint).
 */
Datum
bloom_key_read(BloomKeyReader *r, Datum key)
{
	char	   *s;

	if (r->argkind == KEY_NAME)
		s = pstrdup(NameStr(*DatumGetName(key)));
	else
	{
		s = TextDatumGetCString(key);
		if (r->argkind == KEY_BPCHAR)	/* its trailing blanks mean nothing */
		{
			size_t		n = strlen(s);

			while (n > 0 && s[n - 1] == ' ')
				s[--n] = '\0';
		}
	}
	return InputFunctionCall(&r->input, s, r->ioparam, -1);
}

/*
 * A family name (UTF-8) fit for a message in the database encoding: as it is
 * where the database is UTF-8 or the name is ASCII, else with its non-ASCII
 * bytes escaped, since a conversion could itself fail.
 */
const char *
bloom_family_display(const char *family)
{
	StringInfoData buf;

	if (GetDatabaseEncoding() == PG_UTF8)
		return family;
	initStringInfo(&buf);
	for (const unsigned char *p = (const unsigned char *) family; *p; p++)
	{
		if (*p < 0x80)
			appendStringInfoChar(&buf, (char) *p);
		else
			appendStringInfo(&buf, "\\x%02x", *p);
	}
	return buf.data;
}
