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
#include "catalog/pg_proc.h"
#include "utils/lsyscache.h"

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

	/*
	 * A key of the text family (an untyped parameter) for a filter of
	 * another family is read with the input function of the type that
	 * family's keys are read by (bloom_key_reads_as, bloom_family_type):
	 * set up for the last such family met.
	 */
	bool		arg_text;		/* the key argument is of the text family */
	bool		immutable;		/* the function called is IMMUTABLE */
	char		read_family[BLOOM_FAMILY_LEN];	/* "": none set up */
	BloomKeyType read_kt;
	BloomKeyReader reader;
} ContainsCache;

/*
 * How the key hashes for a filter of family: as the argument's type, or as
 * read by the family's type (with *key read).  A family without a type to
 * read by keeps the argument's, which its check then refuses.
 *
 * The overloads of concrete key types are IMMUTABLE (postgres_fdw ships
 * them to the remote server), so the text one reads a key only with an
 * input function that is IMMUTABLE too: not a date, a time or a timestamp
 * (DateStyle, TimeZone: a key read in another session's time zone is
 * another key, and a remote server's "absent" would be false), nor an enum
 * label (the catalog).  Those are refused as before; a key cast to the type
 * ($1::date) is read where the query is planned.
 */
static pg_noinline BloomKeyType *
contains_read_key(FunctionCallInfo fcinfo, ContainsCache *c,
				  const char *family, Datum *key)
{
	if (!bloom_key_reads_as(&c->kt, family))
		return &c->kt;
	if (strcmp(c->read_family, family) != 0)
	{
		Oid			typid = bloom_family_type(family);
		Oid			input;
		Oid			ioparam;

		c->read_family[0] = '\0';
		if (!OidIsValid(typid))
			return &c->kt;
		getTypeInputInfo(typid, &input, &ioparam);
		if (c->immutable && func_volatile(input) != PROVOLATILE_IMMUTABLE)
			return &c->kt;
		bloom_key_type_init(&c->read_kt, typid, InvalidOid,
							fcinfo->flinfo->fn_mcxt);
		bloom_key_reader_init(&c->reader, &c->kt, typid, fcinfo->flinfo->fn_mcxt);
		strlcpy(c->read_family, family, BLOOM_FAMILY_LEN);
	}
	if (key != NULL)
		*key = bloom_key_read(&c->reader, *key);
	return &c->read_kt;
}

/*
 * The key type for a filter of family, and the key as it hashes: a text key
 * for a text filter costs one comparison more than another key.
 */
#define CONTAINS_KEY(fcinfo, c, family, key) \
	(likely(!(c)->arg_text) || strcmp((family), "text") == 0 ? &(c)->kt : \
	 contains_read_key((fcinfo), (c), (family), (key)))

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
	Datum		key = PG_GETARG_DATUM(1);
	BloomKeyType *kt;

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
		(void) bloom_check_family(f, CONTAINS_KEY(fcinfo, c, f->family, NULL));
		memcpy(c->unstored_header, BLOOM_PAYLOAD(v), BLOOM_HEADER_SIZE);
		c->unstored_size = VARSIZE(v);
	}
	/* a filter that never had a key added holds nothing */
	if (f->family[0] == '\0')
		return false;
	kt = CONTAINS_KEY(fcinfo, c, f->family, &key);
	return bloom_test_hash(BLOOM_PAYLOAD(v) + BLOOM_HEADER_SIZE, f->nblocks,
						   f->nhashes, bloom_key_hash(kt, key, f->seed));
}

/* The first call at a call site sets up its cache. */
static pg_noinline ContainsCache *
contains_setup(FunctionCallInfo fcinfo)
{
	ContainsCache *c;

	c = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(ContainsCache));
	c->cache = bloom_cache_create(fcinfo->flinfo->fn_mcxt);
	bloom_arg_key_type(fcinfo, 1, &c->kt);
	c->arg_text = strcmp(c->kt.family, "text") == 0;
	c->immutable = !OidIsValid(fcinfo->flinfo->fn_oid) ||
		func_volatile(fcinfo->flinfo->fn_oid) == PROVOLATILE_IMMUTABLE;
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
	Datum		key = PG_GETARG_DATUM(1);
	BloomKeyType *kt;
	uint64		h;

	if (unlikely(c == NULL))
		c = contains_setup(fcinfo);

	if (!VARATT_IS_EXTERNAL_ONDISK(raw))
		PG_RETURN_BOOL(contains_unstored(fcinfo, c, raw));

	e = bloom_cache_get(c->cache, raw);
	if (unlikely(!e->family_ok))
	{
		(void) bloom_check_family(&e->f, CONTAINS_KEY(fcinfo, c, e->f.family, NULL));
		e->family_ok = true;
	}
	/* a filter that never had a key added holds nothing */
	if (unlikely(e->f.family[0] == '\0'))
		PG_RETURN_BOOL(false);

	kt = CONTAINS_KEY(fcinfo, c, e->f.family, &key);
	h = bloom_key_hash(kt, key, e->f.seed);
	if (unlikely(!e->loaded))
		PG_RETURN_BOOL(bloom_cache_test_unloaded(c->cache, e, raw, h));
	PG_RETURN_BOOL(bloom_test_hash(e->f.bits, e->f.nblocks, e->f.nhashes, h));
}
