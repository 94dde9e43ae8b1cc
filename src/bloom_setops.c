/*-------------------------------------------------------------------------
 *
 * bloom_setops.c
 *	  Combining filters: union and intersection as functions, operators and
 *	  aggregates (bloom_union_agg, bloom_intersect_agg), and equality and
 *	  hashing of whole values.
 *
 * The bit work is in the core (bloom_bits.c); this file is the fmgr glue
 * around it.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_setops.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/detoast.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "utils/memutils.h"

#include "bloom_pg.h"

/*
 * The union (OR) or intersection (AND) of two filters, as a new value: the
 * geometry of the smaller (the larger folded to it, when it can be), see
 * bloom_check_combinable for the rest of the header.
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
	shape = bloom_check_combinable(&fa, &fb, "first filter", "second filter",
								   &out);
	base = shape == BLOOM_SHAPE_FOLD_FIRST ? b : a;
	other = shape == BLOOM_SHAPE_FOLD_FIRST ? &fa : &fb;

	r = (bytea *) palloc(VARSIZE(base));
	memcpy(r, base, VARSIZE(base));
	bloom_write_header(BLOOM_PAYLOAD(r), &out);
	bloom_merge_bits(BLOOM_PAYLOAD(r) + BLOOM_HEADER_SIZE, out.nblocks,
					 other->bits, other->nblocks, op);
	return r;
}

/*
 * A filter holding every key of either filter.  The union of filters built
 * over parts of a set is bit for bit the filter built over the whole set.
 */
PG_FUNCTION_INFO_V1(bf_union);
Datum
bf_union(PG_FUNCTION_ARGS)
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
PG_FUNCTION_INFO_V1(bf_intersect);
Datum
bf_intersect(PG_FUNCTION_ARGS)
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

PG_FUNCTION_INFO_V1(bf_eq);
Datum
bf_eq(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(filters_equal(fcinfo));
}

PG_FUNCTION_INFO_V1(bf_ne);
Datum
bf_ne(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(!filters_equal(fcinfo));
}

/*
 * Hash of the whole value, for the hash operator class (hash joins, hashed
 * DISTINCT, GROUP BY and UNION).  Used only in memory and in hash
 * partitioning, like PostgreSQL's own hash functions; the bits of a filter
 * never depend on it.
 */
PG_FUNCTION_INFO_V1(bf_value_hash);
Datum
bf_value_hash(PG_FUNCTION_ARGS)
{
	bytea	   *v = PG_GETARG_BLOOM_P(0);
	Datum		h = hash_any((unsigned char *) VARDATA(v),
							 (int) (VARSIZE(v) - VARHDRSZ));

	PG_FREE_IF_COPY(v, 0);
	return h;
}

PG_FUNCTION_INFO_V1(bf_value_hash_extended);
Datum
bf_value_hash_extended(PG_FUNCTION_ARGS)
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

	shape = bloom_check_combinable(&s->f, in, "filter aggregated so far",
								   "next filter", &out);
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
PG_FUNCTION_INFO_V1(bf_union_agg_trans);
Datum
bf_union_agg_trans(PG_FUNCTION_ARGS)
{
	return setop_trans(fcinfo, BLOOM_MERGE_OR, "bloom_union_agg_trans");
}

/* Transition function of bloom_intersect_agg; NULL filters are skipped. */
PG_FUNCTION_INFO_V1(bf_intersect_agg_trans);
Datum
bf_intersect_agg_trans(PG_FUNCTION_ARGS)
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
PG_FUNCTION_INFO_V1(bf_union_agg_combine);
Datum
bf_union_agg_combine(PG_FUNCTION_ARGS)
{
	return setop_combine(fcinfo, BLOOM_MERGE_OR, "bloom_union_agg_combine");
}

/* Combine two partial states of bloom_intersect_agg. */
PG_FUNCTION_INFO_V1(bf_intersect_agg_combine);
Datum
bf_intersect_agg_combine(PG_FUNCTION_ARGS)
{
	return setop_combine(fcinfo, BLOOM_MERGE_AND,
						 "bloom_intersect_agg_combine");
}

/*
 * Serialize a state of either aggregate: the state is a filter, and its
 * serialized form is the filter's payload (bloom.h), as bloom::bytea gives.
 */
PG_FUNCTION_INFO_V1(bf_setop_agg_serialize);
Datum
bf_setop_agg_serialize(PG_FUNCTION_ARGS)
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
PG_FUNCTION_INFO_V1(bf_setop_agg_deserialize);
Datum
bf_setop_agg_deserialize(PG_FUNCTION_ARGS)
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

PG_FUNCTION_INFO_V1(bf_union_agg_final);
Datum
bf_union_agg_final(PG_FUNCTION_ARGS)
{
	return setop_final(fcinfo, "bloom_union_agg");
}

PG_FUNCTION_INFO_V1(bf_intersect_agg_final);
Datum
bf_intersect_agg_final(PG_FUNCTION_ARGS)
{
	return setop_final(fcinfo, "bloom_intersect_agg");
}
