/*-------------------------------------------------------------------------
 *
 * bloomfilter.h
 *	  PostgreSQL glue of the bloom type: fetch macros, key hashing and the
 *	  helpers shared by the SQL-callable functions.
 *
 * The format itself is described in bloom.h.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloomfilter.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOMFILTER_H
#define BLOOMFILTER_H

#include "postgres.h"

#include "fmgr.h"
#include "nodes/nodes.h"
#if PG_VERSION_NUM >= 160000
#include "nodes/miscnodes.h"
#include "varatt.h"			/* split out of postgres.h in 16 */
#endif

#include "bloom.h"

/*
 * A bloom value is a plain varlena; bloom.h describes its payload.  The fetch
 * macro detoasts: only bloom_contains avoids it, through its cache.
 */
#define DatumGetBloomP(X)		((bytea *) PG_DETOAST_DATUM(X))
#define PG_GETARG_BLOOM_P(n)	DatumGetBloomP(PG_GETARG_DATUM(n))
#define PG_GETARG_BLOOM_P_COPY(n) ((bytea *) PG_DETOAST_DATUM_COPY(PG_GETARG_DATUM(n)))
#define PG_RETURN_BLOOM_P(x)	PG_RETURN_POINTER(x)

/*
 * Report an input error softly where the caller allows it (PostgreSQL 16 and
 * later: pg_input_is_valid, COPY ... ON_ERROR), else throw.
 */
#if PG_VERSION_NUM >= 160000
#define bloom_ereturn(ctx, ret, ...) ereturn(ctx, ret, __VA_ARGS__)
#else
#define bloom_ereturn(ctx, ret, ...) \
	do { (void) (ctx); ereport(ERROR, __VA_ARGS__); return ret; } while (0)
#endif

#define BLOOM_PAYLOAD(v)		((uint8_t *) VARDATA(v))

/* How a key type is turned into the bytes that are hashed. */
typedef enum BloomKeyKind
{
	KEY_INT2,
	KEY_INT4,
	KEY_INT8,
	KEY_TEXT,					/* text, varchar: the bytes */
	KEY_NAME,					/* name: the bytes up to the NUL */
	KEY_BPCHAR,					/* bytes without trailing blanks */
	KEY_BYTEA,
	KEY_UUID,
	KEY_BOOL,
	KEY_FLOAT4,
	KEY_FLOAT8,
	KEY_NUMERIC,				/* normalized decimal text */
	KEY_INT32,					/* date */
	KEY_INT64,					/* timestamp, timestamptz, time */
	KEY_ENUM,					/* the label, not the OID */
	KEY_GENERIC					/* the type's extended hash function */
} BloomKeyKind;

typedef struct BloomKeyType
{
	Oid			typid;			/* the type as passed, 0 = not set up */
	Oid			collid;
	BloomKeyKind kind;
	char		family[BLOOM_FAMILY_LEN];
	FmgrInfo	hashfn;			/* KEY_GENERIC only */
} BloomKeyType;

/* bloom_keys.c */
extern void bloom_key_type_init(BloomKeyType *kt, Oid typid, Oid collid,
								MemoryContext mcxt);
extern bool bloom_key_type_try_init(BloomKeyType *kt, Oid typid, Oid collid,
									MemoryContext mcxt);
extern uint64 bloom_key_hash(BloomKeyType *kt, Datum key, uint64 seed);
extern void bloom_check_family(const BloomFilter *f, const BloomKeyType *kt);
extern const char *bloom_family_display(const char *family);

/* bloom_funcs.c */
extern Oid	bloom_call_arg_type(FunctionCallInfo fcinfo, int argno);
extern int	bloom_call_nargs(FunctionCallInfo fcinfo);
extern BloomKeyType *bloom_call_key_type(FunctionCallInfo fcinfo, int argno);
extern bytea *bloom_add_key(FunctionCallInfo fcinfo, bool *added);

/* bloomfilter.c */
extern bytea *bloom_new(uint64 capacity, double rate, uint64 nblocks, int k,
						const char *family);
extern void bloom_open(bytea *v, BloomFilter *f);
extern void bloom_plan_or_error(int64 capacity, double rate,
								uint64 *nblocks, int *k);
extern bool bloom_validate(bytea *v, int sqlstate, Node *escontext);
extern MemoryContext bloom_agg_context(FunctionCallInfo fcinfo,
									   const char *fname);

#endif							/* BLOOMFILTER_H */
