/*-------------------------------------------------------------------------
 *
 * bloom_funcs.c
 *	  bloom_create, bloom_add and bloom_contains, with the per-call-site
 *	  cache that keeps bloom_contains from re-reading a stored filter.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_funcs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "bloomfilter.h"

/*
 * Make an empty filter sized for "capacity" distinct keys at a false-positive
 * rate of at most "false_positive_rate".
 */
PG_FUNCTION_INFO_V1(bloom_create);
Datum
bloom_create(PG_FUNCTION_ARGS)
{
	int64		capacity = PG_GETARG_INT64(0);
	double		rate = PG_GETARG_FLOAT8(1);
	uint64		nblocks;
	int			k;

	bloom_plan_or_error(capacity, rate, &nblocks, &k);
	PG_RETURN_BLOOM_P(bloom_new((uint64) capacity, rate, nblocks, k, ""));
}

/* The key type of argument argno, worked out once per call site. */
static BloomKeyType *
key_type(FunctionCallInfo fcinfo, int argno, BloomKeyType *kt)
{
	if (kt->typid == InvalidOid)
		bloom_key_type_init(kt, get_fn_expr_argtype(fcinfo->flinfo, argno),
							PG_GET_COLLATION(), fcinfo->flinfo->fn_mcxt);
	return kt;
}

/*
 * Return a copy of the filter with the key added.  The argument itself is
 * never changed: a query may hold the same datum twice.  A NULL key gives
 * back the filter unchanged, so that bloom_add over a nullable column never
 * loses a filter.
 */
PG_FUNCTION_INFO_V1(bloom_add);
Datum
bloom_add(PG_FUNCTION_ARGS)
{
	bytea	   *v;
	BloomFilter f;
	BloomKeyType *kt;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));

	if (fcinfo->flinfo->fn_extra == NULL)
		fcinfo->flinfo->fn_extra =
			MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(BloomKeyType));
	kt = key_type(fcinfo, 1, (BloomKeyType *) fcinfo->flinfo->fn_extra);

	v = PG_GETARG_BLOOM_P_COPY(0);
	bloom_open(v, &f);
	bloom_check_family(&f, kt);
	if (f.family[0] == '\0')
	{
		/* the first key fixes the family */
		strlcpy(f.family, kt->family, BLOOM_FAMILY_LEN);
		bloom_write_header(BLOOM_PAYLOAD(v), &f);
	}
	bloom_set_hash(f.bits, f.nblocks, f.nhashes,
				   bloom_key_hash(kt, PG_GETARG_DATUM(1), f.seed));
	PG_RETURN_BLOOM_P(v);
}

/*
 * The per-call-site cache of bloom_contains.
 *
 * A filter stored in a table arrives as a TOAST pointer on every row, and
 * detoasting it per row would make a probe cost as much as copying the whole
 * filter.  So the detoasted filters are kept in fn_extra, keyed by the
 * identity of the stored value (toast relation and value OID, which a stored
 * value keeps for its whole life and never shares), in a small open-addressing
 * table: a join against a table of per-partition filters hits it as well as a
 * scalar subquery does.  The copies are 64-byte aligned so that each block is
 * one cache line.  When the copies outgrow the budget, the cache is emptied
 * and starts again.
 */
#define CACHE_SLOTS		256		/* power of two; at most half are used */
#define CACHE_BUDGET	((Size) 256 * 1024 * 1024)

typedef struct CachedFilter
{
	Oid			toastrelid;
	Oid			valueid;		/* InvalidOid: empty slot */
	bool		family_ok;		/* checked against the call site's key type */
	BloomFilter f;				/* f.bits points into the cached copy */
} CachedFilter;

typedef struct ContainsCache
{
	BloomKeyType kt;
	MemoryContext cxt;			/* holds the copies */
	Size		used;
	int			nentries;
	CachedFilter *last;			/* the most recent hit, checked first */
	CachedFilter slots[CACHE_SLOTS];
} ContainsCache;

static CachedFilter *
cache_slot(ContainsCache *c, Oid toastrelid, Oid valueid)
{
	uint32		i = (valueid * 0x9E3779B1U ^ toastrelid) & (CACHE_SLOTS - 1);

	for (;;)
	{
		CachedFilter *e = &c->slots[i];

		if (e->valueid == InvalidOid ||
			(e->valueid == valueid && e->toastrelid == toastrelid))
			return e;
		i = (i + 1) & (CACHE_SLOTS - 1);
	}
}

/*
 * Find or load the stored filter behind an on-disk TOAST pointer.
 */
static CachedFilter *
cache_get(ContainsCache *c, struct varlena *ptr)
{
	struct varatt_external toast;
	CachedFilter *e;
	struct varlena *detoasted;
	Size		size;
	char	   *mem;
	bytea	   *copy;

	VARATT_EXTERNAL_GET_POINTER(toast, ptr);
	if (c->last && c->last->valueid == toast.va_valueid &&
		c->last->toastrelid == toast.va_toastrelid)
		return c->last;

	e = cache_slot(c, toast.va_toastrelid, toast.va_valueid);
	if (e->valueid != InvalidOid)
		return c->last = e;

	detoasted = detoast_attr(ptr);
	size = VARSIZE(detoasted);
	if (c->nentries >= CACHE_SLOTS / 2 || c->used + size > CACHE_BUDGET)
	{
		MemoryContextReset(c->cxt);
		memset(c->slots, 0, sizeof(c->slots));
		c->used = 0;
		c->nentries = 0;
		e = cache_slot(c, toast.va_toastrelid, toast.va_valueid);
	}

	/* place the copy so that its bits start on a 64-byte boundary */
	mem = MemoryContextAllocHuge(c->cxt, size + BLOOM_BLOCK_BYTES);
	copy = (bytea *) (mem + ((BLOOM_BLOCK_BYTES -
							  ((uintptr_t) mem + VARHDRSZ + BLOOM_HEADER_SIZE) %
							  BLOOM_BLOCK_BYTES) % BLOOM_BLOCK_BYTES));
	memcpy(copy, detoasted, size);
	pfree(detoasted);
	bloom_open(copy, &e->f);

	e->toastrelid = toast.va_toastrelid;
	e->valueid = toast.va_valueid;
	e->family_ok = false;
	c->used += size + BLOOM_BLOCK_BYTES;
	c->nentries++;
	return c->last = e;
}

/*
 * Is the key possibly in the filter?  false means surely absent.
 */
PG_FUNCTION_INFO_V1(bloom_contains);
Datum
bloom_contains(PG_FUNCTION_ARGS)
{
	struct varlena *raw = (struct varlena *) PG_GETARG_POINTER(0);
	ContainsCache *c = (ContainsCache *) fcinfo->flinfo->fn_extra;
	BloomKeyType *kt;
	BloomFilter local;
	const BloomFilter *f;

	if (c == NULL)
	{
		c = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(ContainsCache));
		c->cxt = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt,
									   "bloom_contains cache",
									   ALLOCSET_DEFAULT_SIZES);
		fcinfo->flinfo->fn_extra = c;
	}
	kt = key_type(fcinfo, 1, &c->kt);

	if (VARATT_IS_EXTERNAL_ONDISK(raw))
	{
		CachedFilter *e = cache_get(c, raw);

		if (!e->family_ok)
		{
			bloom_check_family(&e->f, kt);
			e->family_ok = true;
		}
		f = &e->f;
	}
	else
	{
		/* inline, in memory, or compressed in line: small, or already here */
		bloom_open(DatumGetBloomP(PointerGetDatum(raw)), &local);
		bloom_check_family(&local, kt);
		f = &local;
	}

	/* a filter that never had a key added holds nothing */
	if (f->family[0] == '\0')
		PG_RETURN_BOOL(false);

	PG_RETURN_BOOL(bloom_test_hash(f->bits, f->nblocks, f->nhashes,
								   bloom_key_hash(kt, PG_GETARG_DATUM(1), f->seed)));
}
