/*-------------------------------------------------------------------------
 *
 * bloom_keys.c
 *	  Turn a key of any hashable type into the 64-bit hash that sets and
 *	  tests bits: canonical bytes per type, then XXH3.
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

#include <math.h>

#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "nodes/nodeFuncs.h"
#include "nodes/primnodes.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/typcache.h"
#include "utils/uuid.h"

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
 * Record the family name, in UTF-8 whatever the database encoding, so that a
 * filter means the same in every database.
 */
static bool
set_family(BloomKeyType *kt, const char *name, bool noerror)
{
	name = pg_server_to_any(name, strlen(name), PG_UTF8);
	if (strlen(name) >= BLOOM_FAMILY_LEN)
	{
		if (noerror)
			return false;
		ereport(ERROR,
				errcode(ERRCODE_NAME_TOO_LONG),
				errmsg("type name \"%s\" is too long to be recorded as a bloom filter key family",
					   name),
				errdetail("A key family name has at most %d bytes.",
						  BLOOM_FAMILY_LEN - 1),
				errhint("Cast the key to text or to a type with a shorter name."));
	}
	strlcpy(kt->family, name, BLOOM_FAMILY_LEN);
	return true;
}

/*
 * Work out how keys of type typid (as passed, maybe a domain) are hashed and
 * which family they belong to.  Done once per call site; the FmgrInfo of a
 * generic type's hash function lives in mcxt.  With noerror, a type that
 * cannot be a key gives false instead of an error (the planner's estimates
 * must not fail for a call that may never run).
 */
static bool
key_type_setup(BloomKeyType *kt, Oid typid, Oid collid, MemoryContext mcxt,
			   bool noerror)
{
	Oid			base;

	if (!OidIsValid(typid))
	{
		if (noerror)
			return false;
		ereport(ERROR,
				errcode(ERRCODE_INDETERMINATE_DATATYPE),
				errmsg("could not determine the type of the bloom filter key"));
	}

	memset(kt, 0, sizeof(*kt));
	kt->typid = typid;
	kt->collid = collid;
	base = getBaseType(typid);	/* a domain is its base type */

	switch (base)
	{
		case INT2OID:
			kt->kind = KEY_INT2;
			if (!set_family(kt, "integer", noerror))
				return false;
			break;
		case INT4OID:
			kt->kind = KEY_INT4;
			if (!set_family(kt, "integer", noerror))
				return false;
			break;
		case INT8OID:
			kt->kind = KEY_INT8;
			if (!set_family(kt, "integer", noerror))
				return false;
			break;
		case TEXTOID:
		case VARCHAROID:
		case NAMEOID:
		case BPCHAROID:
			kt->kind = base == BPCHAROID ? KEY_BPCHAR :
				base == NAMEOID ? KEY_NAME : KEY_TEXT;
			if (!set_family(kt, "text", noerror))
				return false;
			/* equal strings must be equal bytes */
			if (OidIsValid(collid) && !get_collation_isdeterministic(collid))
			{
				if (noerror)
					return false;
				ereport(ERROR,
						errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						errmsg("bloom filter keys cannot use the nondeterministic collation \"%s\"",
							   get_collation_name(collid)),
						errhint("Give the key a deterministic collation, for example key COLLATE \"C\" or lower(key) COLLATE \"C\"."));
			}
			break;
		case BYTEAOID:
			kt->kind = KEY_BYTEA;
			if (!set_family(kt, "bytea", noerror))
				return false;
			break;
		case UUIDOID:
			kt->kind = KEY_UUID;
			if (!set_family(kt, "uuid", noerror))
				return false;
			break;
		case BOOLOID:
			kt->kind = KEY_BOOL;
			if (!set_family(kt, "boolean", noerror))
				return false;
			break;
		case FLOAT4OID:
			kt->kind = KEY_FLOAT4;
			if (!set_family(kt, "float", noerror))
				return false;
			break;
		case FLOAT8OID:
			kt->kind = KEY_FLOAT8;
			if (!set_family(kt, "float", noerror))
				return false;
			break;
		case NUMERICOID:
			kt->kind = KEY_NUMERIC;
			if (!set_family(kt, "numeric", noerror))
				return false;
			break;
		case DATEOID:
			kt->kind = KEY_INT32;
			if (!set_family(kt, "date", noerror))
				return false;
			break;
		case TIMESTAMPOID:
			kt->kind = KEY_INT64;
			if (!set_family(kt, "timestamp", noerror))
				return false;
			break;
		case TIMESTAMPTZOID:
			kt->kind = KEY_INT64;
			if (!set_family(kt, "timestamptz", noerror))
				return false;
			break;
		case TIMEOID:
			kt->kind = KEY_INT64;
			if (!set_family(kt, "time", noerror))
				return false;
			break;
		default:
			if (type_is_enum(base))
			{
				/* the label survives dump and restore; the OID does not */
				kt->kind = KEY_ENUM;
				if (!set_family(kt, format_type_be_qualified(base), noerror))
					return false;
			}
			else
			{
				TypeCacheEntry *tce;
				char		name[NAMEDATALEN * 3];

				tce = lookup_type_cache(base, TYPECACHE_HASH_EXTENDED_PROC_FINFO);
				if (!OidIsValid(tce->hash_extended_proc))
				{
					if (noerror)
						return false;
					ereport(ERROR,
							errcode(ERRCODE_UNDEFINED_FUNCTION),
							errmsg("type %s cannot be a bloom filter key",
								   format_type_be(typid)),
							errdetail("The type has no default hash operator class with an extended hash function."),
							errhint("Cast the key to text or to another hashable type."));
				}
				kt->kind = KEY_GENERIC;
				fmgr_info_cxt(tce->hash_extended_proc, &kt->hashfn, mcxt);
				snprintf(name, sizeof(name), "%s/pg%d%s",
						 format_type_be_qualified(base), PG_VERSION_NUM / 10000,
						 BYTE_ORDER_SUFFIX);
				if (!set_family(kt, name, noerror))
					return false;
			}
			break;
	}
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

		/*
		 * An aggregate's key of a type with an implicit binary cast to an
		 * overload's type (citext to text) arrives relabelled: hash it as its
		 * own type, as the polymorphic form does.
		 */
		if (aggref != NULL && argno >= 1 && argno <= list_length(aggref->args))
		{
			Node	   *arg = (Node *) list_nth_node(TargetEntry, aggref->args, argno - 1)->expr;

			if (IsA(arg, RelabelType) &&
				((RelabelType *) arg)->relabelformat == COERCE_IMPLICIT_CAST)
				typid = exprType((Node *) ((RelabelType *) arg)->arg);
		}
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

/* XXH3 of the 8 little-endian bytes of v */
static inline uint64
hash_u64(uint64 v, uint64 seed)
{
	uint64		le = bloom_to_le64(v);

	return XXH3_64bits_withSeed(&le, 8, seed);
}

static inline uint64
hash_varlena(Datum key, bool strip_blanks, uint64 seed)
{
	struct varlena *p = PG_DETOAST_DATUM_PACKED(key);
	const char *s = VARDATA_ANY(p);
	size_t		len = VARSIZE_ANY_EXHDR(p);
	uint64		h;

	/* char(n) compares without trailing blanks, so hash without them */
	if (strip_blanks)
		while (len > 0 && s[len - 1] == ' ')
			len--;
	h = XXH3_64bits_withSeed(s, len, seed);
	if ((Pointer) p != DatumGetPointer(key))
		pfree(p);
	return h;
}

/*
 * The 64-bit hash of a key; see the README's "Hashing" section for the
 * canonical bytes of each type.
 */
uint64
bloom_key_hash(BloomKeyType *kt, Datum key, uint64 seed)
{
	switch (kt->kind)
	{
		case KEY_INT2:
			return hash_u64((uint64) (int64) DatumGetInt16(key), seed);
		case KEY_INT4:
			return hash_u64((uint64) (int64) DatumGetInt32(key), seed);
		case KEY_INT8:
			return hash_u64((uint64) DatumGetInt64(key), seed);
		case KEY_TEXT:
		case KEY_BYTEA:
			return hash_varlena(key, false, seed);
		case KEY_NAME:
			{
				const char *s = NameStr(*DatumGetName(key));

				return XXH3_64bits_withSeed(s, strlen(s), seed);
			}
		case KEY_BPCHAR:
			return hash_varlena(key, true, seed);
		case KEY_UUID:
			return XXH3_64bits_withSeed(DatumGetUUIDP(key)->data,
										UUID_LEN, seed);
		case KEY_BOOL:
			{
				uint8		b = DatumGetBool(key) ? 1 : 0;

				return XXH3_64bits_withSeed(&b, 1, seed);
			}
		case KEY_FLOAT4:
		case KEY_FLOAT8:
			{
				double		d = kt->kind == KEY_FLOAT4 ?
					(double) DatumGetFloat4(key) : DatumGetFloat8(key);
				uint64		u;

				/* -0 = +0 and all NaNs are equal under float "=" */
				if (d == 0.0)
					d = 0.0;
				if (isnan(d))
					u = UINT64CONST(0x7ff8000000000000);
				else
					memcpy(&u, &d, sizeof(u));
				return hash_u64(u, seed);
			}
		case KEY_NUMERIC:
			{
				/* 1.0 = 1.00: hash the value with trailing zeros removed */
				char	   *s = numeric_normalize(DatumGetNumeric(key));
				uint64		h = XXH3_64bits_withSeed(s, strlen(s), seed);

				pfree(s);
				return h;
			}
		case KEY_INT32:
			{
				uint8		buf[4];
				uint32		v = (uint32) DatumGetInt32(key);

				for (int i = 0; i < 4; i++)
					buf[i] = (uint8) (v >> (8 * i));
				return XXH3_64bits_withSeed(buf, 4, seed);
			}
		case KEY_INT64:
			return hash_u64((uint64) DatumGetInt64(key), seed);
		case KEY_ENUM:
			{
				char	   *label = DatumGetCString(DirectFunctionCall1(enum_out, key));
				uint64		h = XXH3_64bits_withSeed(label, strlen(label), seed);

				pfree(label);
				return h;
			}
		case KEY_GENERIC:
			return hash_u64(DatumGetUInt64(FunctionCall2Coll(&kt->hashfn,
															 kt->collid, key,
															 UInt64GetDatum(0))),
							seed);
	}
	elog(ERROR, "unknown bloom key kind %d", (int) kt->kind);
	return 0;					/* keep compiler quiet */
}

/*
 * A filter remembers the family of its keys; a key of another family would
 * hash differently from the "same" value added before, so it is an error,
 * never a silent false.  A filter without keys yet accepts any family.
 */
void
bloom_check_family(const BloomFilter *f, const BloomKeyType *kt)
{
	if (f->family[0] != '\0' && strcmp(f->family, kt->family) != 0)
	{
		const char *have = bloom_family_display(f->family);

		ereport(ERROR,
				errcode(ERRCODE_DATATYPE_MISMATCH),
				errmsg("bloom filter key of type %s does not match the filter's key family",
					   format_type_be(kt->typid)),
				errdetail("The filter holds keys of family \"%s\"; the key is of family \"%s\".",
						  have, bloom_family_display(kt->family)),
				errhint("Cast the key to a type of family \"%s\".", have));
	}
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
