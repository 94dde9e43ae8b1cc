/*-------------------------------------------------------------------------
 *
 * bloom_ops.c
 *	  Combining and inspecting filters: union and intersection (functions,
 *	  operators and aggregates), equality and hashing, bloom_info and the
 *	  estimates, bloom_size, and bloom_add_new.
 *
 * The bit work and the estimators are in the core (bloom.c); this file is
 * the fmgr glue around them.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_ops.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/detoast.h"
#include "access/htup_details.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "bloomfilter.h"

/* --- shapes --- */

static const char *
layout_name(uint8 layout)
{
	return layout == BLOOM_LAYOUT_BLOCK512 ? "block512" : "unknown";
}

static const char *
hash_scheme_name(uint8 scheme)
{
	return scheme == BLOOM_HASH_XXH3 ? "xxh3" : "unknown";
}

/* "block512 with 19 blocks, 5 hashes, seed 0 and key family "integer"" */
static char *
shape_string(const BloomFilter *f)
{
	return psprintf("%s with %llu blocks, %d hashes, seed %llu and %s%s%s",
					layout_name(f->layout),
					(unsigned long long) f->nblocks, (int) f->nhashes,
					(unsigned long long) f->seed,
					f->family[0] ? "key family \"" : "no key family yet",
					f->family, f->family[0] ? "\"" : "");
}

/*
 * How two filters combine, or the error that says why they do not, showing
 * both shapes.  first and second name them in the message.
 */
static BloomShape
check_combinable(const BloomFilter *a, const BloomFilter *b,
				 const char *first, const char *second)
{
	BloomShape	shape = bloom_shape_compare(a, b);
	const char *hint;

	switch (shape)
	{
		case BLOOM_SHAPE_SAME:
		case BLOOM_SHAPE_FOLD_FIRST:
		case BLOOM_SHAPE_FOLD_SECOND:
			return shape;
		case BLOOM_SHAPE_FAMILY:
			hint = "A filter holds keys of one family; cast the keys to one type before building the filters.";
			break;
		case BLOOM_SHAPE_NHASHES:
		case BLOOM_SHAPE_SIZE:
			hint = "Build the filters with the same capacity and false-positive rate (bloom_size shows the blocks and hashes they give). Filters whose block counts differ by a whole factor, all else equal, are folded to the smaller.";
			break;
		default:
			hint = "Only filters made with the same layout, hash scheme and seed can be combined.";
			break;
	}
	ereport(ERROR,
			errcode(ERRCODE_DATA_EXCEPTION),
			errmsg("cannot combine bloom filters of different shapes"),
			errdetail("The %s is %s; the %s is %s.",
					  first, shape_string(a), second, shape_string(b)),
			errhint("%s", hint));
	return shape;				/* keep the compiler quiet */
}

/*
 * The union (OR) or intersection (AND) of two filters, as a new value: the
 * geometry of the smaller (the larger folded to it, when it can be), see
 * bloom_combine_header for the rest of the header.
 */
static bytea *
combine_filters(bytea *a, bytea *b, BloomMergeOp op)
{
	BloomFilter fa,
				fb,
				out;
	BloomShape	shape;
	bytea	   *base;
	const BloomFilter *other;
	bytea	   *r;

	bloom_open(a, &fa);
	bloom_open(b, &fb);
	shape = check_combinable(&fa, &fb, "first filter", "second filter");
	base = shape == BLOOM_SHAPE_FOLD_FIRST ? b : a;
	other = shape == BLOOM_SHAPE_FOLD_FIRST ? &fa : &fb;

	r = (bytea *) palloc(VARSIZE(base));
	memcpy(r, base, VARSIZE(base));
	bloom_combine_header(&out, &fa, &fb);
	bloom_write_header(BLOOM_PAYLOAD(r), &out);
	bloom_merge_bits(BLOOM_PAYLOAD(r) + BLOOM_HEADER_SIZE, out.nblocks,
					 other->bits, other->nblocks, op);
	return r;
}

/*
 * A filter holding every key of either filter.  The union of filters built
 * over parts of a set is bit for bit the filter built over the whole set.
 */
PG_FUNCTION_INFO_V1(bloom_union);
Datum
bloom_union(PG_FUNCTION_ARGS)
{
	PG_RETURN_BLOOM_P(combine_filters(PG_GETARG_BLOOM_P(0),
									  PG_GETARG_BLOOM_P(1),
									  BLOOM_MERGE_OR));
}

/*
 * A filter holding every key of both filters.  It is the AND of the bits, so
 * it may also answer "maybe" for keys in only one of them (a bit set by one
 * key of A and another of B survives): it is never smaller, and may be
 * fuller, than the filter built from the common keys alone.
 */
PG_FUNCTION_INFO_V1(bloom_intersect);
Datum
bloom_intersect(PG_FUNCTION_ARGS)
{
	PG_RETURN_BLOOM_P(combine_filters(PG_GETARG_BLOOM_P(0),
									  PG_GETARG_BLOOM_P(1),
									  BLOOM_MERGE_AND));
}

/* --- equality and hashing --- */

/*
 * Same header and same bits.  Headers are canonical (every input path
 * rewrites them from the fields read), so this is a comparison of bytes;
 * values of different sizes are told apart without detoasting them.
 */
static bool
filters_equal(FunctionCallInfo fcinfo)
{
	bytea	   *a,
				*b;
	bool		eq;

	if (toast_raw_datum_size(PG_GETARG_DATUM(0)) !=
		toast_raw_datum_size(PG_GETARG_DATUM(1)))
		return false;
	a = PG_GETARG_BLOOM_P(0);
	b = PG_GETARG_BLOOM_P(1);
	eq = VARSIZE(a) == VARSIZE(b) &&
		memcmp(VARDATA(a), VARDATA(b), VARSIZE(a) - VARHDRSZ) == 0;
	PG_FREE_IF_COPY(a, 0);
	PG_FREE_IF_COPY(b, 1);
	return eq;
}

PG_FUNCTION_INFO_V1(bloom_eq);
Datum
bloom_eq(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(filters_equal(fcinfo));
}

PG_FUNCTION_INFO_V1(bloom_ne);
Datum
bloom_ne(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(!filters_equal(fcinfo));
}

/*
 * Hash of the whole value, for the hash operator class (hash joins, hashed
 * DISTINCT, GROUP BY and UNION).  Used only in memory and in hash
 * partitioning, like PostgreSQL's own hash functions; the bits of a filter
 * never depend on it.
 */
PG_FUNCTION_INFO_V1(bloom_value_hash);
Datum
bloom_value_hash(PG_FUNCTION_ARGS)
{
	bytea	   *v = PG_GETARG_BLOOM_P(0);
	Datum		h = hash_any((unsigned char *) VARDATA(v),
							 (int) (VARSIZE(v) - VARHDRSZ));

	PG_FREE_IF_COPY(v, 0);
	return h;
}

PG_FUNCTION_INFO_V1(bloom_value_hash_extended);
Datum
bloom_value_hash_extended(PG_FUNCTION_ARGS)
{
	bytea	   *v = PG_GETARG_BLOOM_P(0);
	Datum		h = hash_any_extended((unsigned char *) VARDATA(v),
									  (int) (VARSIZE(v) - VARHDRSZ),
									  (uint64) PG_GETARG_INT64(1));

	PG_FREE_IF_COPY(v, 0);
	return h;
}

/* --- bloom_union_agg and bloom_intersect_agg --- */

/*
 * The state is the filter combined so far, in the aggregate's memory, OR-ed
 * or AND-ed into in place.  Folding to a smaller input only shrinks it.
 */
typedef struct BloomSetOpState
{
	bytea	   *filter;
	BloomFilter f;				/* its header; f.bits into it */
} BloomSetOpState;

/* A state holding a copy of filter v (a whole varlena), in cxt. */
static BloomSetOpState *
state_from(MemoryContext cxt, const bytea *v)
{
	BloomSetOpState *s = MemoryContextAlloc(cxt, sizeof(BloomSetOpState));

	s->filter = MemoryContextAlloc(cxt, VARSIZE(v));
	memcpy(s->filter, v, VARSIZE(v));
	bloom_open(s->filter, &s->f);
	return s;
}

/* Combine filter in into the state, in place. */
static void
state_merge(BloomSetOpState *s, const BloomFilter *in, BloomMergeOp op)
{
	BloomShape	shape;
	BloomFilter out;

	shape = check_combinable(&s->f, in, "filter aggregated so far",
							 "next filter");
	bloom_combine_header(&out, &s->f, in);
	if (shape == BLOOM_SHAPE_FOLD_FIRST)
	{
		bloom_fold(s->f.bits, s->f.nblocks, in->nblocks);
		SET_VARSIZE(s->filter, VARHDRSZ + BLOOM_PAYLOAD_SIZE(in->nblocks));
	}
	bloom_merge_bits(s->f.bits, out.nblocks, in->bits, in->nblocks, op);
	bloom_write_header(BLOOM_PAYLOAD(s->filter), &out);
	bloom_open(s->filter, &s->f);
}

static Datum
setop_trans(FunctionCallInfo fcinfo, BloomMergeOp op, const char *fname)
{
	MemoryContext cxt = bloom_agg_context(fcinfo, fname);
	BloomSetOpState *s = PG_ARGISNULL(0) ? NULL : (BloomSetOpState *) PG_GETARG_POINTER(0);
	bytea	   *v;

	if (PG_ARGISNULL(1))
	{
		if (s == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(s);
	}
	v = PG_GETARG_BLOOM_P(1);
	if (s == NULL)
		s = state_from(cxt, v);
	else
	{
		BloomFilter f;

		bloom_open(v, &f);
		state_merge(s, &f, op);
	}
	PG_FREE_IF_COPY(v, 1);
	PG_RETURN_POINTER(s);
}

/* Transition function of bloom_union_agg; NULL filters are skipped. */
PG_FUNCTION_INFO_V1(bloom_union_agg_trans);
Datum
bloom_union_agg_trans(PG_FUNCTION_ARGS)
{
	return setop_trans(fcinfo, BLOOM_MERGE_OR, "bloom_union_agg_trans");
}

/* Transition function of bloom_intersect_agg; NULL filters are skipped. */
PG_FUNCTION_INFO_V1(bloom_intersect_agg_trans);
Datum
bloom_intersect_agg_trans(PG_FUNCTION_ARGS)
{
	return setop_trans(fcinfo, BLOOM_MERGE_AND, "bloom_intersect_agg_trans");
}

static Datum
setop_combine(FunctionCallInfo fcinfo, BloomMergeOp op, const char *fname)
{
	MemoryContext cxt = bloom_agg_context(fcinfo, fname);
	BloomSetOpState *a = PG_ARGISNULL(0) ? NULL : (BloomSetOpState *) PG_GETARG_POINTER(0);
	BloomSetOpState *b = PG_ARGISNULL(1) ? NULL : (BloomSetOpState *) PG_GETARG_POINTER(1);

	if (b == NULL)
	{
		if (a == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(a);
	}
	if (a == NULL)
		PG_RETURN_POINTER(state_from(cxt, b->filter));
	state_merge(a, &b->f, op);
	PG_RETURN_POINTER(a);
}

/* Combine two partial states of bloom_union_agg. */
PG_FUNCTION_INFO_V1(bloom_union_agg_combine);
Datum
bloom_union_agg_combine(PG_FUNCTION_ARGS)
{
	return setop_combine(fcinfo, BLOOM_MERGE_OR, "bloom_union_agg_combine");
}

/* Combine two partial states of bloom_intersect_agg. */
PG_FUNCTION_INFO_V1(bloom_intersect_agg_combine);
Datum
bloom_intersect_agg_combine(PG_FUNCTION_ARGS)
{
	return setop_combine(fcinfo, BLOOM_MERGE_AND,
						 "bloom_intersect_agg_combine");
}

/*
 * Serialize a state of either aggregate: the state is a filter, and its
 * serialized form is the filter's payload (bloom.h), as bloom::bytea gives.
 */
PG_FUNCTION_INFO_V1(bloom_setop_agg_serialize);
Datum
bloom_setop_agg_serialize(PG_FUNCTION_ARGS)
{
	BloomSetOpState *s = (BloomSetOpState *) PG_GETARG_POINTER(0);
	bytea	   *out;

	bloom_agg_context(fcinfo, "bloom_setop_agg_serialize");
	out = (bytea *) palloc(VARSIZE(s->filter));
	memcpy(out, s->filter, VARSIZE(s->filter));
	PG_RETURN_BYTEA_P(out);
}

/*
 * Rebuild a state from a serialized filter, checked by the validator that
 * guards every other way in.
 */
PG_FUNCTION_INFO_V1(bloom_setop_agg_deserialize);
Datum
bloom_setop_agg_deserialize(PG_FUNCTION_ARGS)
{
	bytea	   *in = PG_GETARG_BYTEA_PP(0);
	size_t		len = VARSIZE_ANY_EXHDR(in);
	BloomSetOpState *s;

	bloom_agg_context(fcinfo, "bloom_setop_agg_deserialize");
	s = palloc(sizeof(BloomSetOpState));
	s->filter = (bytea *) palloc(VARHDRSZ + len);
	SET_VARSIZE(s->filter, VARHDRSZ + len);
	memcpy(VARDATA(s->filter), VARDATA_ANY(in), len);
	bloom_validate(s->filter, ERRCODE_INVALID_BINARY_REPRESENTATION, NULL);
	bloom_open(s->filter, &s->f);
	PG_RETURN_POINTER(s);
}

/*
 * Final function of either aggregate: a copy of the combined filter, or NULL
 * when no filter was seen.  A result that holds more keys than it was sized
 * for (bloom_over_capacity: more bits set than its capacity plausibly
 * explains) gets a NOTICE with the estimated count and the rate it now has.
 */
static Datum
setop_final(FunctionCallInfo fcinfo, const char *aggname)
{
	BloomSetOpState *s = PG_ARGISNULL(0) ? NULL : (BloomSetOpState *) PG_GETARG_POINTER(0);
	uint64		bits_set;
	double		fpr;
	double		est;
	bytea	   *v;

	bloom_agg_context(fcinfo, aggname);
	if (s == NULL)
		PG_RETURN_NULL();

	bloom_fill_stats(s->f.bits, s->f.nblocks, s->f.nhashes, &bits_set, &fpr);
	est = bloom_estimate_keys(s->f.nblocks, s->f.nhashes, bits_set);
	if (bloom_over_capacity(s->f.nblocks, s->f.nhashes, s->f.capacity,
							bits_set))
		ereport(NOTICE,
				errmsg("%s result holds more keys than its design capacity", aggname),
				isinf(est) ?
				errdetail("Every bit is set, so it answers \"maybe\" to every key; it was sized for %llu keys at a false-positive rate of %g.",
						  (unsigned long long) s->f.capacity, s->f.rate) :
				errdetail("It holds an estimated %.0f distinct keys, and was sized for %llu; its false-positive rate is now about %.2g, against a design rate of %g.",
						  est, (unsigned long long) s->f.capacity, fpr, s->f.rate),
				errhint("Build the filters with a larger capacity, or split the keys across more filters."));

	v = (bytea *) palloc(VARSIZE(s->filter));
	memcpy(v, s->filter, VARSIZE(s->filter));
	PG_RETURN_BLOOM_P(v);
}

PG_FUNCTION_INFO_V1(bloom_union_agg_final);
Datum
bloom_union_agg_final(PG_FUNCTION_ARGS)
{
	return setop_final(fcinfo, "bloom_union_agg");
}

PG_FUNCTION_INFO_V1(bloom_intersect_agg_final);
Datum
bloom_intersect_agg_final(PG_FUNCTION_ARGS)
{
	return setop_final(fcinfo, "bloom_intersect_agg");
}

/* --- inspecting and estimating --- */

static TupleDesc
result_tupdesc(FunctionCallInfo fcinfo)
{
	TupleDesc	tupdesc;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	return BlessTupleDesc(tupdesc);
}

/*
 * Everything about a filter in one row: its header, how full it is, and what
 * that fill says about the keys it holds, the false-positive rate it has now,
 * and whether it is over its design capacity (bloom_over_capacity).
 */
PG_FUNCTION_INFO_V1(bloom_info);
Datum
bloom_info(PG_FUNCTION_ARGS)
{
	bytea	   *v = PG_GETARG_BLOOM_P(0);
	TupleDesc	tupdesc = result_tupdesc(fcinfo);
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
	values[1] = CStringGetTextDatum(layout_name(f.layout));
	values[2] = CStringGetTextDatum(hash_scheme_name(f.hash_scheme));
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
PG_FUNCTION_INFO_V1(bloom_cardinality);
Datum
bloom_cardinality(PG_FUNCTION_ARGS)
{
	BloomFilter f;

	bloom_open(PG_GETARG_BLOOM_P(0), &f);
	PG_RETURN_FLOAT8(filter_estimate(&f));
}

/*
 * The false-positive rate the filter has now: the probability that a key
 * never added is reported present.
 */
PG_FUNCTION_INFO_V1(bloom_false_positive_rate);
Datum
bloom_false_positive_rate(PG_FUNCTION_ARGS)
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
PG_FUNCTION_INFO_V1(bloom_union_cardinality);
Datum
bloom_union_cardinality(PG_FUNCTION_ARGS)
{
	BloomFilter fa,
				fb;

	bloom_open(PG_GETARG_BLOOM_P(0), &fa);
	bloom_open(PG_GETARG_BLOOM_P(1), &fb);
	check_combinable(&fa, &fb, "first filter", "second filter");
	PG_RETURN_FLOAT8(union_estimate(&fa, &fb));
}

/*
 * Estimated number of distinct keys in both filters: |A| + |B| - |A u B|,
 * each from a fill.  The fill of the AND would overestimate it, by the bits
 * that keys of A and keys of B set in common by chance.  NULL when the union
 * has every bit set and so says nothing.
 */
PG_FUNCTION_INFO_V1(bloom_intersect_cardinality);
Datum
bloom_intersect_cardinality(PG_FUNCTION_ARGS)
{
	BloomFilter fa,
				fb;
	double		nu;
	double		ni;

	bloom_open(PG_GETARG_BLOOM_P(0), &fa);
	bloom_open(PG_GETARG_BLOOM_P(1), &fb);
	check_combinable(&fa, &fb, "first filter", "second filter");
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
PG_FUNCTION_INFO_V1(bloom_size);
Datum
bloom_size(PG_FUNCTION_ARGS)
{
	int64		capacity = PG_GETARG_INT64(0);
	double		rate = PG_GETARG_FLOAT8(1);
	TupleDesc	tupdesc = result_tupdesc(fcinfo);
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

/* --- bloom_add_new --- */

/*
 * bloom_add that also says whether the key was new: (filter, added), where
 * added is true exactly when adding the key set a bit, so the key was surely
 * not in the filter before (RedisBloom's BF.ADD and Guava's put report the
 * same).  false means the key was probably there already, or was NULL: a
 * NULL key leaves the filter unchanged, as in bloom_add.
 */
PG_FUNCTION_INFO_V1(bloom_add_new);
Datum
bloom_add_new(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc = result_tupdesc(fcinfo);
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

	v = bloom_add_key(fcinfo, &added);
	values[0] = PointerGetDatum(v);
	values[1] = BoolGetDatum(added);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
