/*-------------------------------------------------------------------------
 *
 * bloom_support.c
 *	  Planner support for bloom_contains: how many rows it lets through,
 *	  read from the filter and the key column's statistics, and what a call
 *	  costs.
 *
 * Without this the planner guesses that a boolean function passes a third
 * of the rows, whatever the filter holds, and so cannot tell an almost empty
 * filter (bloom_contains rejects nearly every row) from a saturated one (it
 * passes them all) when it sizes the joins around an anti-join pre-check.
 *
 * Selectivity model
 * -----------------
 * It applies when the filter argument is a constant, or something the
 * planner can reduce to one for estimation (estimate_expression_value: a
 * bound parameter of a custom plan, a STABLE function).  From the filter:
 *
 *	E	the estimated number of distinct keys it holds (bloom_estimate_keys)
 *	q	its current false-positive rate (bloom_fill_stats)
 *
 * Two bounds hold whatever the column: every row passes with probability at
 * least q (a key that is in the filter always passes, any other with
 * probability q), and, with nd distinct values in the column, at most E of
 * them can be in the filter, so among rows of equally frequent values at
 * most c = min(1, E / nd) can be true members:
 *
 *		q  <=  sel  <=  U = c + (1 - c) q
 *
 * U is the containment assumption PostgreSQL makes for joins (the smaller
 * set of values lies within the larger) and is the answer for
 * "col = ANY (the filter's E keys)", plus the false positives.
 *
 * Within the bounds the column's statistics decide, when the key is a column
 * (or an indexed expression) with statistics the user may read, and keys of
 * its type hash into the filter's key family:
 *
 *	- each most common value is probed against the filter, and its frequency
 *	  counts if the filter answers "maybe": exact, false positives included,
 *	  since that is what bloom_contains will answer for those rows;
 *	- the histogram bounds are a sample of the other values, spread evenly
 *	  over their distribution: the share h of them that the filter answers
 *	  "maybe" for estimates the share of the other rows that pass.  With no
 *	  bound answered "maybe", the sample only says the share is below
 *	  1/nbounds: half that is taken, capped by U.  h is then clamped to
 *	  [q, U] (E and nd counted without the most common values).
 *	- without a histogram, the other rows pass at U.
 *
 * Rows whose key is NULL never pass (bloom_contains is strict).  Without
 * statistics (nd is then PostgreSQL's default of 200) the estimate is
 * PostgreSQL's default for a boolean function, 1/3, clamped to [q, U]: an
 * empty or almost empty filter still gives few rows, a saturated one nearly
 * all.  A filter that never had a key added holds nothing, and passes no
 * row.
 *
 * NOT bloom_contains(f, key) needs nothing here: clause_selectivity takes
 * 1 - sel for NOT over any clause.  Rows with a NULL key count there as
 * passing, as for any boolean function (an overestimate by the null
 * fraction).
 *
 * When the filter is not known at planning time (a column of a table of
 * filters, a scalar subquery, a parameter of a generic plan), no estimate is
 * made and the planner's default of 1/3 applies.
 *
 * Large filters are sampled: the fill of 64 evenly spaced runs of 128 blocks
 * (512 kB) gives E and q to within a fraction of a percent once the filter
 * holds a few thousand keys (keys are spread over the blocks by their hash),
 * so planning does not scan a big filter whole.  (A filter returned by a
 * STABLE function is still read whole, by the function, at every planning.)
 *
 * Cost
 * ----
 * A call hashes the key and tests one 64-byte block.  Its cost was measured
 * in the planner's own unit: the CPU time per row of a sequential scan,
 * which the planner costs at cpu_tuple_cost + cpu_operator_cost, gives the
 * time of one cpu_operator_cost, and the time bloom_contains adds is so many
 * of those (docs/planner.md, "Cost", has the figures).  That gives the
 * constants below: a call with an integer key and a filter that fits the
 * CPU cache; a varlena key and a numeric key (printed before it is hashed)
 * cost more; a filter larger than the caches misses them, more with each
 * doubling of its size.  The size is known only for a constant filter; any
 * other is costed as one that fits the cache.
 *
 * There is no startup cost: a constant filter is already in memory, and a
 * stored filter is read once per filter by the probe cache, a cost per
 * distinct filter that the planner cannot count (statistics record the width
 * of its TOAST pointer, not of the filter).
 *
 * Only interfaces that are the same in every PostgreSQL we build and test
 * (15, 16 and 18) are used (nodes/supportnodes.h, utils/selfuncs.h,
 * get_attstatsslot), so there are no version guards.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_support.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/detoast.h"
#include "access/htup_details.h"
#include "catalog/pg_statistic.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "nodes/nodeFuncs.h"
#include "nodes/primnodes.h"
#include "nodes/supportnodes.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/typcache.h"

#include "bloom_pg.h"

/*
 * Per-call cost, in multiples of cpu_operator_cost (measured, see above):
 * the call with an integer key and a filter in the CPU cache, what keys of
 * other types add, and what each doubling of a filter beyond 1 MB adds (the
 * probe misses the CPU caches and then the TLB), up to a limit.
 */
#define COST_BASE			3.0
#define COST_KEY_VARLENA	1.0
#define COST_KEY_NUMERIC	6.0
#define COST_PER_DOUBLING	5.0
#define COST_CACHED_BYTES	(1024.0 * 1024.0)
#define COST_SIZE_MAX		40.0

/* the planner's default for a boolean function it knows nothing about */
#define BLOOM_DEFAULT_SEL			(1.0 / 3.0)

/* filters larger than SAMPLE_RUNS * SAMPLE_RUN_BLOCKS blocks are sampled */
#define SAMPLE_RUNS			64
#define SAMPLE_RUN_BLOCKS	128

/*
 * Estimated distinct keys (E) and current false-positive rate (q) of a
 * filter, from its fill: whole, or from evenly spaced runs of blocks.
 */
static void
filter_fill(const BloomFilter *f, double *keys, double *fpr)
{
	uint64		bits_set;
	uint64		total = 0;
	double		rate;
	double		sum = 0.0;
	uint64		sampled = (uint64) SAMPLE_RUNS * SAMPLE_RUN_BLOCKS;

	if (f->nblocks <= sampled)
	{
		bloom_fill_stats(f->bits, f->nblocks, f->nhashes, &bits_set, fpr);
		*keys = bloom_estimate_keys(f->nblocks, f->nhashes, bits_set);
		return;
	}
	for (int r = 0; r < SAMPLE_RUNS; r++)
	{
		uint64		start = (f->nblocks - SAMPLE_RUN_BLOCKS) * r / (SAMPLE_RUNS - 1);

		bloom_fill_stats(f->bits + start * BLOOM_BLOCK_BYTES, SAMPLE_RUN_BLOCKS,
						 f->nhashes, &bits_set, &rate);
		total += bits_set;
		sum += rate;
	}
	*fpr = sum / SAMPLE_RUNS;
	*keys = bloom_estimate_keys(sampled, f->nhashes, total) *
		((double) f->nblocks / (double) sampled);
}

/* Does the filter answer "maybe" for this value? */
static bool
probe(const BloomFilter *f, BloomKeyType *kt, Datum value)
{
	return bloom_test_hash(f->bits, f->nblocks, f->nhashes,
						   bloom_key_hash(kt, value, f->seed));
}

/* x, clamped into [lo, hi] */
static double
clamp(double x, double lo, double hi)
{
	return x < lo ? lo : (x > hi ? hi : x);
}

/*
 * Selectivity of bloom_contains(f, key) for a known filter f: see the model
 * at the top of the file.
 */
static double
contains_selectivity(PlannerInfo *root, SupportRequestSelectivity *req,
					 const BloomFilter *f, Node *key)
{
	VariableStatData vardata;
	bool		nd_default;
	double		nd;
	double		keys;
	double		q;
	double		nullfrac = 0.0;
	double		mcv_freq = 0.0; /* frequency of all most common values */
	double		mcv_sel = 0.0;	/* ... of those answered "maybe" */
	int			nmcv = 0;
	int			mcv_hits = 0;
	int			nhist = 0;
	int			hist_hits = 0;
	double		rest;
	double		rest_keys;
	double		rest_nd;
	double		c;
	double		upper;
	double		rest_sel;

	/* a filter that never had a key added holds nothing */
	if (f->family[0] == '\0')
		return 0.0;
	filter_fill(f, &keys, &q);

	examine_variable(root, key, req->varRelid, &vardata);
	nd = get_variable_numdistinct(&vardata, &nd_default);
	if (HeapTupleIsValid(vardata.statsTuple))
	{
		BloomKeyType kt;

		nullfrac = ((Form_pg_statistic) GETSTRUCT(vardata.statsTuple))->stanullfrac;

		/* values of the column go into our hash only if the user may see them */
		if (statistic_proc_security_check(&vardata, req->funcid) &&
			bloom_key_type_try_init(&kt, vardata.atttype, req->inputcollid, CurrentMemoryContext) &&
			strcmp(kt.family, f->family) == 0)
		{
			AttStatsSlot sslot;

			if (get_attstatsslot(&sslot, vardata.statsTuple,
								 STATISTIC_KIND_MCV, InvalidOid,
								 ATTSTATSSLOT_VALUES | ATTSTATSSLOT_NUMBERS))
			{
				nmcv = sslot.nvalues;
				for (int i = 0; i < sslot.nvalues && i < sslot.nnumbers; i++)
				{
					mcv_freq += sslot.numbers[i];
					if (probe(f, &kt, sslot.values[i]))
					{
						mcv_sel += sslot.numbers[i];
						mcv_hits++;
					}
				}
				free_attstatsslot(&sslot);
			}
			if (get_attstatsslot(&sslot, vardata.statsTuple,
								 STATISTIC_KIND_HISTOGRAM, InvalidOid,
								 ATTSTATSSLOT_VALUES))
			{
				nhist = sslot.nvalues;
				for (int i = 0; i < sslot.nvalues; i++)
					if (probe(f, &kt, sslot.values[i]))
						hist_hits++;
				free_attstatsslot(&sslot);
			}
		}
	}
	ReleaseVariableStats(vardata);

	/* the rows of values other than the most common, and their bounds */
	rest = clamp(1.0 - nullfrac - mcv_freq, 0.0, 1.0);
	rest_nd = Max(nd - nmcv, 1.0);
	rest_keys = Max(keys - mcv_hits, 0.0);
	c = isinf(rest_keys) ? 1.0 : Min(1.0, rest_keys / rest_nd);
	upper = c + (1.0 - c) * q;

	if (nhist >= 2)
	{
		double		h = hist_hits > 0 ? (double) hist_hits / nhist :
			Min(upper, 0.5 / nhist);

		rest_sel = clamp(h, q, upper);
	}
	else if (nd_default && nmcv == 0)
		rest_sel = clamp(BLOOM_DEFAULT_SEL, q, upper);
	else
		rest_sel = upper;

	return clamp(mcv_sel + rest * rest_sel, 0.0, 1.0);
}

/*
 * Cost of one call of bloom_contains, in multiples of cpu_operator_cost: by
 * the key's type and, for a constant filter, by the filter's size.
 */
static double
contains_cost(Node *node)
{
	double		units = COST_BASE;
	List	   *args;
	Oid			keytype;
	Node	   *filter;

	if (node == NULL || !IsA(node, FuncExpr))
		return units;
	args = ((FuncExpr *) node)->args;
	if (list_length(args) != 2)
		return units;

	keytype = getBaseType(exprType((Node *) lsecond(args)));
	if (keytype == NUMERICOID)
		units += COST_KEY_NUMERIC;
	else if (get_typlen(keytype) == -1)
		units += COST_KEY_VARLENA;

	filter = (Node *) linitial(args);
	if (IsA(filter, Const) && !((Const *) filter)->constisnull)
	{
		double		size = (double) toast_raw_datum_size(((Const *) filter)->constvalue);

		if (size > COST_CACHED_BYTES)
			units += Min(COST_SIZE_MAX,
						 COST_PER_DOUBLING * log2(size / COST_CACHED_BYTES));
	}
	return units;
}

/*
 * The filter argument as a constant, if the planner can reduce it to one for
 * estimation; NULL otherwise.
 */
static Const *
filter_const(PlannerInfo *root, Node *arg)
{
	if (!IsA(arg, Const) && root != NULL)
		arg = estimate_expression_value(root, arg);
	return IsA(arg, Const) ? (Const *) arg : NULL;
}

/*
 * Planner support function of bloom_contains: SupportRequestSelectivity and
 * SupportRequestCost.
 */
PG_FUNCTION_INFO_V1(bf_contains_support);
Datum
bf_contains_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);

	if (IsA(rawreq, SupportRequestSelectivity))
	{
		SupportRequestSelectivity *req = (SupportRequestSelectivity *) rawreq;
		Const	   *fc;
		BloomFilter f;
		bytea	   *v;

		if (list_length(req->args) != 2)
			PG_RETURN_POINTER(NULL);
		fc = filter_const(req->root, (Node *) linitial(req->args));
		if (fc == NULL)
			PG_RETURN_POINTER(NULL);
		if (fc->constisnull)
		{
			/* strict: a NULL filter passes no row */
			req->selectivity = 0.0;
			PG_RETURN_POINTER(req);
		}
		v = DatumGetBloomP(fc->constvalue);
		bloom_open(v, &f);
		req->selectivity = contains_selectivity(req->root, req, &f,
												(Node *) lsecond(req->args));
		PG_RETURN_POINTER(req);
	}

	if (IsA(rawreq, SupportRequestCost))
	{
		SupportRequestCost *req = (SupportRequestCost *) rawreq;

		req->startup = 0.0;
		req->per_tuple = contains_cost(req->node) * cpu_operator_cost;
		PG_RETURN_POINTER(req);
	}

	PG_RETURN_POINTER(NULL);
}
