/*-------------------------------------------------------------------------
 *
 * bloom_contains.c
 *	  bloom_contains: is a key possibly in a filter?  Stored filters go
 *	  through the per-call-site cache (bloom_cache.c), others are probed in
 *	  place.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_contains.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

#include "bloom_pg.h"

/* What a call site of bloom_contains keeps in fn_extra. */
typedef struct ContainsCache
{
	BloomKeyType kt;
	BloomCache *cache;			/* the stored filters seen */

	/* the last filter that was not a stored value: its header, checked */
	Size		unstored_size;	/* 0: none yet */
	uint8		unstored_header[BLOOM_HEADER_SIZE];
	BloomFilter unstored;
} ContainsCache;

/*
 * bloom_contains for a filter that is not a stored TOAST value: in line in
 * its row, or already in memory.  A value compressed in its row is
 * decompressed once, through the cache.  Kept out of bloom_contains so that
 * the hot path stays small.
 */
static pg_noinline bool
contains_unstored(FunctionCallInfo fcinfo, ContainsCache *c,
				  struct varlena *raw)
{
	bytea	   *v = VARATT_IS_COMPRESSED(raw) ?
		bloom_cache_get_inline(c->cache, raw) : PG_GETARG_BLOOM_P(0);
	BloomFilter *f = &c->unstored;

	/*
	 * The same small filter usually comes again (a constant, a parameter, a
	 * row of a small table): decoding and checking its header again is
	 * skipped when the header bytes and the length are the same as last
	 * time.  The bits are always read from the value at hand.
	 */
	if (c->unstored_size != VARSIZE(v) ||
		memcmp(c->unstored_header, BLOOM_PAYLOAD(v), BLOOM_HEADER_SIZE) != 0)
	{
		c->unstored_size = 0;
		bloom_open(v, f);
		(void) bloom_check_family(f, &c->kt);
		memcpy(c->unstored_header, BLOOM_PAYLOAD(v), BLOOM_HEADER_SIZE);
		c->unstored_size = VARSIZE(v);
	}
	/* a filter that never had a key added holds nothing */
	if (f->family[0] == '\0')
		return false;
	return bloom_test_hash(BLOOM_PAYLOAD(v) + BLOOM_HEADER_SIZE, f->nblocks,
						   f->nhashes,
						   bloom_key_hash(&c->kt, PG_GETARG_DATUM(1), f->seed));
}

/* The first call at a call site sets up its cache. */
static pg_noinline ContainsCache *
contains_setup(FunctionCallInfo fcinfo)
{
	ContainsCache *c;

	c = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(ContainsCache));
	c->cache = bloom_cache_create(fcinfo->flinfo->fn_mcxt);
	bloom_arg_key_type(fcinfo, 1, &c->kt);
	fcinfo->flinfo->fn_extra = c;
	return c;
}

/*
 * Is the key possibly in the filter?  false means surely absent.
 */
PG_FUNCTION_INFO_V1(bf_contains);
Datum
bf_contains(PG_FUNCTION_ARGS)
{
	struct varlena *raw = (struct varlena *) PG_GETARG_POINTER(0);
	ContainsCache *c = (ContainsCache *) fcinfo->flinfo->fn_extra;
	BloomCachedFilter *e;
	uint64		h;

	if (unlikely(c == NULL))
		c = contains_setup(fcinfo);

	if (!VARATT_IS_EXTERNAL_ONDISK(raw))
		PG_RETURN_BOOL(contains_unstored(fcinfo, c, raw));

	e = bloom_cache_get(c->cache, raw);
	if (unlikely(!e->family_ok))
	{
		(void) bloom_check_family(&e->f, &c->kt);
		e->family_ok = true;
	}
	/* a filter that never had a key added holds nothing */
	if (unlikely(e->f.family[0] == '\0'))
		PG_RETURN_BOOL(false);

	h = bloom_key_hash(&c->kt, PG_GETARG_DATUM(1), e->f.seed);
	if (unlikely(!e->loaded))
		PG_RETURN_BOOL(bloom_cache_test_unloaded(c->cache, e, raw, h));
	PG_RETURN_BOOL(bloom_test_hash(e->f.bits, e->f.nblocks, e->f.nhashes, h));
}
