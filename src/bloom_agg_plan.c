/*-------------------------------------------------------------------------
 *
 * bloom_agg_plan.c
 *	  What bloom_agg learns from the plan it runs in: the rows the planner
 *	  expects (to presize the unsized aggregate's hash lists), and the
 *	  capacity and rate of a sized call that saw no rows (to size the empty
 *	  filter it must still return).  This reaches into executor structures,
 *	  so it is kept apart from the state's logic.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_agg_plan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_aggregate.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/datum.h"
#include "utils/syscache.h"

#include "bloom_pg.h"

/*
 * The planner's estimate of the rows a plain aggregate (one group) gets, or 0.
 */
double
bloom_agg_expected_rows(FunctionCallInfo fcinfo)
{
	Agg		   *agg;

	if (fcinfo->context == NULL || !IsA(fcinfo->context, AggState))
		return 0;
	agg = (Agg *) ((AggState *) fcinfo->context)->ss.ps.plan;
	if (agg->aggstrategy != AGG_PLAIN || agg->groupingSets != NIL ||
		outerPlan(agg) == NULL)
		return 0;
	return outerPlan(agg)->plan_rows;
}

/* Does this argument of an aggregate call not depend on the rows? */
static bool
row_independent(Node *arg)
{
	return !contain_var_clause(arg) && !contain_volatile_functions(arg);
}

typedef struct SizedCallSearch
{
	Oid			finalfn;		/* the final function of our aggregate */
	int			found;			/* calls with constant capacity and rate */
	Const	   *capacity;
	Const	   *rate;
} SizedCallSearch;

static bool
same_const(Const *a, Const *b)
{
	return a->constisnull == b->constisnull &&
		(a->constisnull ||
		 datumIsEqual(a->constvalue, b->constvalue, a->constbyval, a->constlen));
}

/* Expression walker: calls of our aggregate with constant size arguments. */
static bool
find_sized_calls(Node *node, void *context)
{
	SizedCallSearch *cx = (SizedCallSearch *) context;
	Oid			aggoid = InvalidOid;
	List	   *args = NIL;

	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		aggoid = ((Aggref *) node)->aggfnoid;
		args = ((Aggref *) node)->args;
	}
	else if (IsA(node, WindowFunc))
	{
		aggoid = ((WindowFunc *) node)->winfnoid;
		args = ((WindowFunc *) node)->args;
	}
	if (OidIsValid(aggoid) && list_length(args) == 3)
	{
		HeapTuple	tup = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggoid));
		Node	   *c = (Node *) list_nth(args, 1);
		Node	   *r = (Node *) list_nth(args, 2);

		if (IsA(c, TargetEntry))
			c = (Node *) ((TargetEntry *) c)->expr;
		if (IsA(r, TargetEntry))
			r = (Node *) ((TargetEntry *) r)->expr;
		if (HeapTupleIsValid(tup))
		{
			if (((Form_pg_aggregate) GETSTRUCT(tup))->aggfinalfn == cx->finalfn &&
				IsA(c, Const) && IsA(r, Const))
			{
				if (cx->found == 0 ||
					!same_const(cx->capacity, (Const *) c) ||
					!same_const(cx->rate, (Const *) r))
					cx->found++;
				cx->capacity = (Const *) c;
				cx->rate = (Const *) r;
			}
			ReleaseSysCache(tup);
		}
	}
	return expression_tree_walker(node, find_sized_calls, context);
}

static void
find_sized_calls_in_plan(Plan *plan, SizedCallSearch *cx)
{
	ListCell   *lc;

	if (plan == NULL)
		return;
	find_sized_calls((Node *) plan->targetlist, cx);
	find_sized_calls((Node *) plan->qual, cx);
	find_sized_calls_in_plan(plan->lefttree, cx);
	find_sized_calls_in_plan(plan->righttree, cx);
	if (IsA(plan, Append))
		foreach(lc, ((Append *) plan)->appendplans)
			find_sized_calls_in_plan((Plan *) lfirst(lc), cx);
	else if (IsA(plan, MergeAppend))
		foreach(lc, ((MergeAppend *) plan)->mergeplans)
			find_sized_calls_in_plan((Plan *) lfirst(lc), cx);
	else if (IsA(plan, SubqueryScan))
		find_sized_calls_in_plan(((SubqueryScan *) plan)->subplan, cx);
}

/*
 * The capacity and rate of a sized bloom_agg call that saw no rows at all,
 * for the empty filter it must still return.  They come from the call's own
 * arguments when those do not depend on the rows (constants, parameters).
 * Where this node only finalizes partial states (parallel or partitionwise
 * plans), or runs the aggregate over a window frame, the arguments at hand
 * are not the caller's; then the calls of this aggregate in the plan below
 * are searched, and used if they all have the same constant arguments.
 */
bool
bloom_agg_sized_args_without_rows(FunctionCallInfo fcinfo, int64 *capacity,
								  double *rate)
{
	Aggref	   *aggref = AggGetAggref(fcinfo);
	PlanState  *ps = (PlanState *) fcinfo->context;
	Datum		d[2];
	bool		isnull[2];

	/* called through a wrapper (Citus): the Aggref and plan are not ours */
	if (ps == NULL || fcinfo->flinfo->fn_expr == NULL)
		return false;
	if (aggref != NULL && IsA(ps, AggState) && list_length(aggref->args) == 3 &&
		row_independent((Node *) list_nth_node(TargetEntry, aggref->args, 1)->expr) &&
		row_independent((Node *) list_nth_node(TargetEntry, aggref->args, 2)->expr))
	{
		for (int i = 0; i < 2; i++)
		{
			Expr	   *e = list_nth_node(TargetEntry, aggref->args, i + 1)->expr;
			ExprState  *es = ExecInitExpr(e, ps);

			d[i] = ExecEvalExprSwitchContext(es, ps->ps_ExprContext, &isnull[i]);
		}
	}
	else
	{
		SizedCallSearch cx = {fcinfo->flinfo->fn_oid, 0, NULL, NULL};

		find_sized_calls_in_plan(ps->plan, &cx);
		if (cx.found != 1)
			return false;
		d[0] = cx.capacity->constvalue;
		isnull[0] = cx.capacity->constisnull;
		d[1] = cx.rate->constvalue;
		isnull[1] = cx.rate->constisnull;
	}
	if (isnull[0] || isnull[1])
		ereport(ERROR,
				errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				errmsg("bloom_agg capacity and false-positive rate must not be null"));
	*capacity = DatumGetInt64(d[0]);
	*rate = DatumGetFloat8(d[1]);
	return true;
}
