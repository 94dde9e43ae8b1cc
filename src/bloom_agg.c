/*-------------------------------------------------------------------------
 *
 * bloom_agg.c
 *	  The fmgr functions of the bloom_agg aggregates: transition, combine,
 *	  serialize, deserialize and final, over the state of bloom_agg_state.c.
 *
 * bloom_agg(key) sizes its filter for the distinct keys it saw, at the
 * default rate; bloom_agg(key, capacity, rate) gives exactly the bits of
 * bloom_create(capacity, rate) followed by bloom_add of every key.  How the
 * state gets there cheaply is told in bloom_agg_state.c.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_agg.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

#include "bloom_pg.h"

/*
 * The aggregate memory context of an aggregate support function; anywhere
 * else they must not be called, as they keep state there.  Shared with the
 * aggregates of bloom_setops.c.
 */
MemoryContext
bloom_agg_context(FunctionCallInfo fcinfo, const char *fname)
{
	MemoryContext cxt;

	if (!AggCheckCallContext(fcinfo, &cxt))
		elog(ERROR, "%s called in non-aggregate context", fname);
	return cxt;
}

/*
 * Transition function of bloom_agg(key) and bloom_agg(key, capacity, rate).
 * NULL keys are skipped.  The aggregate's memory context is looked up only
 * when memory is needed: a state exists only if the first call, which makes
 * it, ran in an aggregate.
 */
PG_FUNCTION_INFO_V1(bf_agg_trans);
Datum
bf_agg_trans(PG_FUNCTION_ARGS)
{
	BloomAggState *s = PG_ARGISNULL(0) ? NULL : (BloomAggState *) PG_GETARG_POINTER(0);
	BloomKeyType *kt = (BloomKeyType *) fcinfo->flinfo->fn_extra;
	bool		sized = PG_NARGS() == 4;

	/* set up once per call site; this runs for every row */
	if (unlikely(kt == NULL || kt->typid == InvalidOid))
		kt = bloom_call_key_type(fcinfo, 1);
	if (s == NULL)
		bloom_labels_refresh(kt);	/* the state records them */

	if (sized)
	{
		int64		capacity;
		double		rate;

		if (PG_ARGISNULL(2) || PG_ARGISNULL(3))
			ereport(ERROR,
					errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					errmsg("bloom_agg capacity and false-positive rate must not be null"));
		capacity = PG_GETARG_INT64(2);
		rate = PG_GETARG_FLOAT8(3);
		if (s == NULL)
			s = bloom_agg_state_new(bloom_agg_context(fcinfo, "bloom_agg_trans"),
									kt->family, &kt->labels, true,
									capacity, rate,
									bloom_agg_expected_rows(fcinfo));
		else
			bloom_agg_state_check_size(s, capacity, rate);
	}
	else if (s == NULL)
		s = bloom_agg_state_new(bloom_agg_context(fcinfo, "bloom_agg_trans"),
								kt->family, &kt->labels, false, 0, 0.0,
								bloom_agg_expected_rows(fcinfo));

	/*
	 * A window aggregate cannot have the temporary files closed at the end
	 * of its partition: its unsized state stays in memory, as before.
	 */
	if (PG_ARGISNULL(0) && !IsA(fcinfo->context, AggState))
		bloom_agg_state_keep_in_memory(s);

	if (!PG_ARGISNULL(1))
	{
		uint64		h = bloom_key_hash(kt, PG_GETARG_DATUM(1), BLOOM_DEFAULT_SEED);

		if (!bloom_agg_state_try_add(s, h))
		{
			bloom_agg_state_add(s, bloom_agg_context(fcinfo, "bloom_agg_trans"), h);
			/* close the temporary files, if any, when the group is done */
			if (bloom_agg_state_spill_started(s))
				AggRegisterCallback(fcinfo, bloom_agg_state_shutdown,
									PointerGetDatum(s));
		}
	}
	PG_RETURN_POINTER(s);
}

/*
 * Combine two partial states (parallel workers, partitionwise aggregation,
 * or engines built on partial aggregation).
 */
PG_FUNCTION_INFO_V1(bf_agg_combine);
Datum
bf_agg_combine(PG_FUNCTION_ARGS)
{
	MemoryContext cxt = bloom_agg_context(fcinfo, "bloom_agg_combine");
	BloomAggState *a = PG_ARGISNULL(0) ? NULL : (BloomAggState *) PG_GETARG_POINTER(0);
	BloomAggState *b = PG_ARGISNULL(1) ? NULL : (BloomAggState *) PG_GETARG_POINTER(1);

	if (b == NULL)
		PG_RETURN_POINTER(a);
	a = bloom_agg_state_combine(a, b, cxt);
	if (bloom_agg_state_spill_started(a) && IsA(fcinfo->context, AggState))
		AggRegisterCallback(fcinfo, bloom_agg_state_shutdown, PointerGetDatum(a));
	PG_RETURN_POINTER(a);
}

/*
 * Serialize a state for a parallel worker; the format is in bloom.h.
 */
PG_FUNCTION_INFO_V1(bf_agg_serialize);
Datum
bf_agg_serialize(PG_FUNCTION_ARGS)
{
	MemoryContext cxt = bloom_agg_context(fcinfo, "bloom_agg_serialize");

	PG_RETURN_BYTEA_P(bloom_agg_state_serialize((BloomAggState *) PG_GETARG_POINTER(0),
												cxt));
}

/*
 * Rebuild a state from its serialized form, checking every field first.
 */
PG_FUNCTION_INFO_V1(bf_agg_deserialize);
Datum
bf_agg_deserialize(PG_FUNCTION_ARGS)
{
	bytea	   *in = PG_GETARG_BYTEA_PP(0);
	MemoryContext cxt = bloom_agg_context(fcinfo, "bloom_agg_deserialize");

	PG_RETURN_POINTER(bloom_agg_state_deserialize((const uint8 *) VARDATA_ANY(in),
												  VARSIZE_ANY_EXHDR(in), cxt));
}

/*
 * Final function of both forms: the filter.  No rows at all give an empty
 * filter, never NULL, so that an anti-join pre-check over an empty table
 * stays right.
 */
PG_FUNCTION_INFO_V1(bf_agg_final);
Datum
bf_agg_final(PG_FUNCTION_ARGS)
{
	MemoryContext cxt = bloom_agg_context(fcinfo, "bloom_agg_final");
	BloomAggState *s = PG_ARGISNULL(0) ? NULL : (BloomAggState *) PG_GETARG_POINTER(0);
	bool		sized = bloom_call_nargs(fcinfo) == 4;
	bool		wrapped = fcinfo->flinfo->fn_expr == NULL;
	BloomKeyType kt;
	int64		capacity = 1;
	double		rate = BLOOM_DEFAULT_RATE;
	uint64		nblocks;
	int			k;

	if (s != NULL)
		PG_RETURN_BLOOM_P(bloom_agg_state_final(s, cxt));

	bloom_key_type_init(&kt, bloom_call_arg_type(fcinfo, 1),
						PG_GET_COLLATION(), CurrentMemoryContext);
	if (sized && !bloom_agg_sized_args_without_rows(fcinfo, &capacity, &rate))
		ereport(ERROR,
				errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				errmsg("bloom_agg over no rows cannot size its filter"),
				wrapped ?
				errdetail("The aggregate ran on the nodes of a distributed table, none of which had a row, so the capacity and false-positive rate never reached this node.") :
				errdetail("The capacity and false-positive rate come from the rows, and there are none."),
				wrapped ?
				errhint("On Citus, SET citus.allow_aggregate_worker_combine_on_internal_types = off to have the coordinator build the filter.") :
				errhint("Pass the capacity and rate as constants or parameters."));
	bloom_plan_or_error(capacity, rate, &nblocks, &k);
	PG_RETURN_BLOOM_P(bloom_new((uint64) capacity, rate, nblocks, k,
								kt.family, &kt.labels));
}
