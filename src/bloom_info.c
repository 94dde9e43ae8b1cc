/*-------------------------------------------------------------------------
 *
 * bloom_info.c
 *	  Inspecting filters and estimating from their bits: bloom_info,
 *	  bloom_cardinality, bloom_false_positive_rate, the union and
 *	  intersection cardinalities, and bloom_size.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_info.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "bloom_pg.h"

/*
 * Everything about a filter in one row: its header, how full it is, and what
 * that fill says about the keys it holds, the false-positive rate it has now,
 * and whether it is over its design capacity (bloom_over_capacity).
 */
PG_FUNCTION_INFO_V1(bf_info);
Datum
bf_info(PG_FUNCTION_ARGS)
{
	bytea	   *v = PG_GETARG_BLOOM_P(0);
	TupleDesc	tupdesc = bloom_result_tupdesc(fcinfo);
	Datum		values[16];
	bool		nulls[16] = {0};
	BloomFilter f;
	uint64		bits_set;
	double		fpr;
	double		est;
	char		seed[24];

	Assert(tupdesc->natts == 16);
	bloom_open(v, &f);
	bloom_fill_stats(f.bits, f.nblocks, f.nhashes, &bits_set, &fpr);
	est = bloom_estimate_keys(f.nblocks, f.nhashes, bits_set);
	snprintf(seed, sizeof(seed), "%llu", (unsigned long long) f.seed);

	values[0] = Int32GetDatum(f.version);
	values[1] = CStringGetTextDatum(bloom_layout_name(f.layout));
	values[2] = CStringGetTextDatum(bloom_hash_scheme_name(f.hash_scheme));
	values[3] = Int64GetDatum((int64) f.nblocks);
	values[4] = Int64GetDatum((int64) (f.nblocks * BLOOM_BLOCK_BITS));
	values[5] = Int64GetDatum((int64) VARSIZE(v));
	values[6] = Int32GetDatum(f.nhashes);
	values[7] = DirectFunctionCall3(numeric_in, CStringGetDatum(seed),
									ObjectIdGetDatum(InvalidOid),
									Int32GetDatum(-1));
	if (f.family[0] != '\0')
		values[8] = CStringGetTextDatum(f.family);
	else
		nulls[8] = true;
	values[9] = Int64GetDatum((int64) f.capacity);
	values[10] = Float8GetDatum(f.rate);
	values[11] = Int64GetDatum((int64) bits_set);
	values[12] = Float8GetDatum((double) bits_set /
								((double) f.nblocks * BLOOM_BLOCK_BITS));
	values[13] = Float8GetDatum(est);
	values[14] = Float8GetDatum(fpr);
	values[15] = BoolGetDatum(bloom_over_capacity(f.nblocks, f.nhashes,
												  f.capacity, bits_set));

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* estimated number of distinct keys added, from the fill */
static double
filter_estimate(const BloomFilter *f)
{
	return bloom_estimate_keys(f->nblocks, f->nhashes,
							   bloom_popcount(f->bits,
											  f->nblocks * BLOOM_BLOCK_BYTES));
}

/*
 * Estimated number of distinct keys in the filter (infinity when every bit is
 * set).
 */
PG_FUNCTION_INFO_V1(bf_cardinality);
Datum
bf_cardinality(PG_FUNCTION_ARGS)
{
	BloomFilter f;

	bloom_open(PG_GETARG_BLOOM_P(0), &f);
	PG_RETURN_FLOAT8(filter_estimate(&f));
}

/*
 * The false-positive rate the filter has now: the probability that a key
 * never added is reported present.
 */
PG_FUNCTION_INFO_V1(bf_false_positive_rate);
Datum
bf_false_positive_rate(PG_FUNCTION_ARGS)
{
	BloomFilter f;
	uint64		bits_set;
	double		fpr;

	bloom_open(PG_GETARG_BLOOM_P(0), &f);
	bloom_fill_stats(f.bits, f.nblocks, f.nhashes, &bits_set, &fpr);
	PG_RETURN_FLOAT8(fpr);
}

/* estimated size of the union of two combinable filters */
static double
union_estimate(const BloomFilter *a, const BloomFilter *b)
{
	uint64		nblocks = Min(a->nblocks, b->nblocks);

	return bloom_estimate_keys(nblocks, a->nhashes,
							   bloom_popcount_union(a->bits, a->nblocks,
													b->bits, b->nblocks));
}

/*
 * Estimated number of distinct keys in either filter, from the fill of their
 * union (computed without building it).
 */
PG_FUNCTION_INFO_V1(bf_union_cardinality);
Datum
bf_union_cardinality(PG_FUNCTION_ARGS)
{
	BloomFilter fa,
				fb;

	bloom_open(PG_GETARG_BLOOM_P(0), &fa);
	bloom_open(PG_GETARG_BLOOM_P(1), &fb);
	bloom_check_combinable(&fa, &fb, "first filter", "second filter", NULL);
	PG_RETURN_FLOAT8(union_estimate(&fa, &fb));
}

/*
 * Estimated number of distinct keys in both filters: |A| + |B| - |A u B|,
 * each from a fill.  The fill of the AND would overestimate it, by the bits
 * that keys of A and keys of B set in common by chance.  NULL when the union
 * has every bit set and so says nothing.
 */
PG_FUNCTION_INFO_V1(bf_intersect_cardinality);
Datum
bf_intersect_cardinality(PG_FUNCTION_ARGS)
{
	BloomFilter fa,
				fb;
	double		nu;
	double		ni;

	bloom_open(PG_GETARG_BLOOM_P(0), &fa);
	bloom_open(PG_GETARG_BLOOM_P(1), &fb);
	bloom_check_combinable(&fa, &fb, "first filter", "second filter", NULL);
	nu = union_estimate(&fa, &fb);
	if (isinf(nu))
		PG_RETURN_NULL();
	ni = filter_estimate(&fa) + filter_estimate(&fb) - nu;
	PG_RETURN_FLOAT8(ni > 0.0 ? ni : 0.0);
}

/*
 * What bloom_create(capacity, false_positive_rate) would make: its size in
 * bytes (the whole value) and bits, its hash count and blocks, and the rate
 * it is expected to have once it holds capacity keys (at most the one asked
 * for).  For planning storage before building anything.
 */
PG_FUNCTION_INFO_V1(bf_size);
Datum
bf_size(PG_FUNCTION_ARGS)
{
	int64		capacity = PG_GETARG_INT64(0);
	double		rate = PG_GETARG_FLOAT8(1);
	TupleDesc	tupdesc = bloom_result_tupdesc(fcinfo);
	Datum		values[5];
	bool		nulls[5] = {0};
	uint64		nblocks;
	int			k;

	Assert(tupdesc->natts == 5);
	bloom_plan_or_error(capacity, rate, &nblocks, &k);
	values[0] = Int64GetDatum((int64) (VARHDRSZ + BLOOM_PAYLOAD_SIZE(nblocks)));
	values[1] = Int64GetDatum((int64) (nblocks * BLOOM_BLOCK_BITS));
	values[2] = Int32GetDatum(k);
	values[3] = Int64GetDatum((int64) nblocks);
	values[4] = Float8GetDatum(bloom_expected_fpr(nblocks, k, (double) capacity));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
