/*-------------------------------------------------------------------------
 *
 * bloomfilter.c
 *	  Module magic, and the helpers the SQL functions share: making a new
 *	  filter, opening a stored one, sizing with errors, decoding bytes.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloomfilter.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "fmgr.h"
#include "utils/guc.h"

#include "bloomfilter.h"

#if PG_VERSION_NUM >= 180000
PG_MODULE_MAGIC_EXT(.name = "bloomfilter",.version = "1.0");
#else
PG_MODULE_MAGIC;
#endif

#if PG_VERSION_NUM < 160000
void		_PG_init(void);		/* fmgr.h declares it from 16 on */
#endif

/*
 * bloomfilter.cache_budget: the memory that one call site of bloom_contains
 * may keep of the stored filters it has read (bloom_funcs.c).
 */
void
_PG_init(void)
{
	DefineCustomIntVariable("bloomfilter.cache_budget",
							"Memory one bloom_contains call site keeps of stored filters it has read.",
							"When the copies would outgrow it, the call site drops them and starts again.",
							&bloom_cache_budget_kb,
							256 * 1024, 0, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);
	MarkGUCPrefixReserved("bloomfilter");
}

/* Allocate an empty filter (all bits zero) with the given geometry. */
bytea *
bloom_new(uint64 capacity, double rate, uint64 nblocks, int k,
		  const char *family)
{
	BloomFilter f;
	size_t		len = BLOOM_PAYLOAD_SIZE(nblocks);
	bytea	   *v;

	Assert(nblocks >= 1 && nblocks <= BLOOM_MAX_NBLOCKS);
	v = (bytea *) palloc0(VARHDRSZ + len);
	SET_VARSIZE(v, VARHDRSZ + len);
	bloom_init_header(&f, capacity, rate, nblocks, k, family);
	bloom_write_header(BLOOM_PAYLOAD(v), &f);
	return v;
}

/*
 * Decode the header of a detoasted filter.  Values reach here only through
 * the validating input paths, so a bad header means corrupt storage; the
 * check is O(1) and keeps a damaged page from turning into a wild read.
 */
void
bloom_open(bytea *v, BloomFilter *f)
{
	BloomError	err = bloom_read_header(BLOOM_PAYLOAD(v),
										VARSIZE(v) - VARHDRSZ, f);

	if (err != BLOOM_OK)
		ereport(ERROR,
				errcode(ERRCODE_DATA_CORRUPTED),
				errmsg("bloom filter is corrupt"),
				errdetail("%s", bloom_error_message(err)));
}

/*
 * Check the arguments of bloom_create (and of the sized bloom_agg) and size
 * the filter, or raise the error a user can act on.
 */
void
bloom_plan_or_error(int64 capacity, double rate, uint64 *nblocks, int *k)
{
	if (capacity < 1)
		ereport(ERROR,
				errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				errmsg("bloom filter capacity must be at least 1, not " INT64_FORMAT,
					   capacity),
				errhint("The capacity is the number of distinct keys the filter is sized for."));
	if (!(rate > 0.0 && rate < 1.0))
		ereport(ERROR,
				errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				errmsg("bloom filter false-positive rate must be between 0 and 1, not %g",
					   rate),
				errhint("Pass a rate such as 0.01 for one false positive in a hundred probes."));
	if (!bloom_plan((uint64) capacity, rate, nblocks, k))
	{
		uint64		most = bloom_max_capacity(rate);

		ereport(ERROR,
				errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				errmsg_plural("bloom filter for " INT64_FORMAT " key at false-positive rate %g would be too large",
							  "bloom filter for " INT64_FORMAT " keys at false-positive rate %g would be too large",
							  capacity, capacity, rate),
				errdetail("A filter holds at most %llu bytes of bits, so that its text form (used by pg_dump and COPY) fits in the 1 GB limit of a value.",
						  (unsigned long long) BLOOM_MAX_BITS_BYTES),
				most > 0 ?
				errhint("At this rate the capacity can be at most %llu; raise the rate or split the keys across several filters.",
						(unsigned long long) most) :
				errhint("No filter reaches this rate; raise the rate."));
	}
}

/*
 * Validate a value made from untrusted bytes (text input, binary receive,
 * the cast from bytea), in place, and rewrite its header from the fields
 * read.  Errors are soft where the caller passes an escontext (text input on
 * PostgreSQL 16 and later): then false is returned instead of throwing.
 */
bool
bloom_validate(bytea *v, int sqlstate, Node *escontext)
{
	BloomFilter f;
	BloomError	err = bloom_check(BLOOM_PAYLOAD(v), VARSIZE(v) - VARHDRSZ, &f);

	if (err != BLOOM_OK)
		bloom_ereturn(escontext, false,
					  errcode(sqlstate),
					  errmsg("invalid bloom filter"),
					  errdetail("%s", bloom_error_message(err)));
	bloom_write_header(BLOOM_PAYLOAD(v), &f);
	return true;
}

/*
 * The aggregate memory context of an aggregate support function; anywhere
 * else they must not be called, as they keep state there.
 */
MemoryContext
bloom_agg_context(FunctionCallInfo fcinfo, const char *fname)
{
	MemoryContext cxt;

	if (!AggCheckCallContext(fcinfo, &cxt))
		elog(ERROR, "%s called in non-aggregate context", fname);
	return cxt;
}
