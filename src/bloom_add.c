/*-------------------------------------------------------------------------
 *
 * bloom_add.c
 *	  Making and filling filters: bloom_create, bloom_add and bloom_add_new.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_add.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"

#include "bloom_pg.h"

/*
 * Make an empty filter sized for "capacity" distinct keys at a false-positive
 * rate of at most "false_positive_rate".
 */
PG_FUNCTION_INFO_V1(bf_create);
Datum
bf_create(PG_FUNCTION_ARGS)
{
	int64		capacity = PG_GETARG_INT64(0);
	double		rate = PG_GETARG_FLOAT8(1);
	uint64		nblocks;
	int			k;

	bloom_plan_or_error(capacity, rate, &nblocks, &k);
	PG_RETURN_BLOOM_P(bloom_new((uint64) capacity, rate, nblocks, k, "", NULL));
}

/*
 * A copy of the filter in argument 0 with the key in argument 1 (not NULL)
 * added; *added says whether a bit changed, i.e. the key was surely new.
 * The argument itself is never changed: a query may hold the same datum
 * twice.  The first key of an empty filter fixes its family.  An enum
 * filter made before labels were added gets the labels now: the key may be
 * of a new one, and a later rename of it must be seen.
 */
static bytea *
add_key(FunctionCallInfo fcinfo, bool *added)
{
	BloomKeyType *kt = bloom_call_key_type(fcinfo, 1);
	bytea	   *v = PG_GETARG_BLOOM_P_COPY(0);
	BloomFilter f;
	bool		current;

	bloom_open(v, &f);
	current = bloom_check_family(&f, kt);
	*added = bloom_set_hash_changed(f.bits, f.nblocks, f.nhashes,
									bloom_key_hash(kt, PG_GETARG_DATUM(1), f.seed));
	if (f.family[0] == '\0')
		*added = true;			/* the filter held nothing before */
	if (f.family[0] == '\0' || !current)
	{
		strlcpy(f.family, kt->family, BLOOM_FAMILY_LEN);
		f.labels = kt->labels;
		bloom_write_header(BLOOM_PAYLOAD(v), &f);
	}
	return v;
}

/*
 * Return a copy of the filter with the key added.  A NULL key gives back the
 * filter unchanged, so that bloom_add over a nullable column never loses a
 * filter.
 */
PG_FUNCTION_INFO_V1(bf_add);
Datum
bf_add(PG_FUNCTION_ARGS)
{
	bool		added;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	PG_RETURN_BLOOM_P(add_key(fcinfo, &added));
}

/*
 * bloom_add that also says whether the key was new: (filter, added), where
 * added is true exactly when adding the key set a bit, so the key was surely
 * not in the filter before (RedisBloom's BF.ADD and Guava's put report the
 * same).  false means the key was probably there already, or was NULL: a
 * NULL key leaves the filter unchanged, as in bloom_add.
 */
PG_FUNCTION_INFO_V1(bf_add_new);
Datum
bf_add_new(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc = bloom_result_tupdesc(fcinfo);
	Datum		values[2];
	bool		nulls[2] = {0};
	bool		added;
	bytea	   *v;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
	{
		values[0] = PG_GETARG_DATUM(0);
		values[1] = BoolGetDatum(false);
		PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
	}

	v = add_key(fcinfo, &added);
	values[0] = PointerGetDatum(v);
	values[1] = BoolGetDatum(added);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
