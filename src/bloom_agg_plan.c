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
#include "miscadmin.h"
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

/* An argument of an Aggref or WindowFunc, without its TargetEntry. */
static Node *
call_arg(List *args, int i)
{
	Node	   *n = (Node *) list_nth(args, i);

	return IsA(n, TargetEntry) ? (Node *) ((TargetEntry *) n)->expr : n;
}

/*
 * The sizes the calls of one aggregate found so far agree on: set when
 * exactly one (capacity, rate) pair was seen, and no call's sizes depended
 * on the rows.
 */
typedef struct SizedArgs
{
	PlanState  *ps;				/* where the arguments are evaluated */
	int			found;			/* distinct pairs seen */
	bool		unknown;		/* a call's sizes depend on the rows */
	Datum		d[2];
	bool		isnull[2];
} SizedArgs;

/*
 * Add the capacity and rate of one sized call (its argument list of three)
 * to what is known: evaluated where they do not depend on the rows
 * (constants, parameters of a generic plan, initplans), else marked unknown.
 */
static void
add_sized_call(SizedArgs *sa, List *args)
{
	Datum		d[2];
	bool		isnull[2];

	for (int i = 0; i < 2; i++)
	{
		Node	   *arg = call_arg(args, i + 1);
		ExprState  *es;

		if (!row_independent(arg))
		{
			sa->unknown = true;
			return;
		}
		es = ExecInitExpr((Expr *) arg, sa->ps);
		d[i] = ExecEvalExprSwitchContext(es, sa->ps->ps_ExprContext, &isnull[i]);
	}
	/* capacity is a bigint and rate a float8, both passed by value */
	if (sa->found == 0 ||
		sa->isnull[0] != isnull[0] || sa->isnull[1] != isnull[1] ||
		(!isnull[0] && DatumGetInt64(sa->d[0]) != DatumGetInt64(d[0])) ||
		(!isnull[1] && DatumGetFloat8(sa->d[1]) != DatumGetFloat8(d[1])))
		sa->found++;
	memcpy(sa->d, d, sizeof(d));
	memcpy(sa->isnull, isnull, sizeof(isnull));
}

/*
 * Follow output column attno of a plan node down to the partial Aggrefs of
 * aggregate aggfnoid that compute it, through nodes that pass columns up
 * (Gather, Sort, Append: one per partition, SubqueryScan, ...), and add
 * their sizes.  Returns false where the column does not lead to such calls.
 */
static bool
add_partial_calls(SizedArgs *sa, Plan *plan, AttrNumber attno, Oid aggfnoid)
{
	Node	   *expr;
	Var		   *var;
	ListCell   *lc;

	check_stack_depth();
	if (plan == NULL || attno < 1 || attno > list_length(plan->targetlist))
		return false;
	expr = (Node *) list_nth_node(TargetEntry, plan->targetlist, attno - 1)->expr;
	if (IsA(expr, Aggref))
	{
		Aggref	   *partial = (Aggref *) expr;

		if (partial->aggfnoid != aggfnoid || list_length(partial->args) != 3)
			return false;
		add_sized_call(sa, partial->args);
		return true;
	}
	if (!IsA(expr, Var))
		return false;
	var = (Var *) expr;
	if (IsA(plan, Append) || IsA(plan, MergeAppend))
	{
		List	   *children = IsA(plan, Append) ?
			((Append *) plan)->appendplans : ((MergeAppend *) plan)->mergeplans;

		if (var->varno != OUTER_VAR || children == NIL)
			return false;
		foreach(lc, children)
			if (!add_partial_calls(sa, (Plan *) lfirst(lc), var->varattno, aggfnoid))
				return false;
		return true;
	}
	if (IsA(plan, SubqueryScan) &&
		var->varno == ((SubqueryScan *) plan)->scan.scanrelid)
		return add_partial_calls(sa, ((SubqueryScan *) plan)->subplan,
								 var->varattno, aggfnoid);
	if (var->varno == OUTER_VAR)
		return add_partial_calls(sa, outerPlan(plan), var->varattno, aggfnoid);
	return false;
}

/*
 * Expression walker: the sized calls of the aggregate whose final function is
 * finalfn, with sizes that do not depend on the rows.
 */
typedef struct SizedCallSearch
{
	Oid			finalfn;
	SizedArgs  *sa;
} SizedCallSearch;

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

		if (HeapTupleIsValid(tup))
		{
			/* (calls whose sizes depend on the rows are not this one) */
			if (((Form_pg_aggregate) GETSTRUCT(tup))->aggfinalfn == cx->finalfn &&
				row_independent(call_arg(args, 1)) &&
				row_independent(call_arg(args, 2)))
				add_sized_call(cx->sa, args);
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
	check_stack_depth();
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
 * for the empty filter it must still return, as the serial plan returns it.
 * They come from the call's own arguments when those do not depend on the
 * rows (constants, parameters, initplans).  Where this node only finalizes
 * partial states (parallel or partitionwise plans), its Aggref has a single
 * argument, the partial states' column: that column is followed down to the
 * partial Aggrefs of the same call, whose arguments are used if they agree.
 * Over a window frame, the calls of this aggregate in the plan are used if
 * they all agree.  false: the size depends on the rows, or cannot be found.
 */
bool
bloom_agg_sized_args_without_rows(FunctionCallInfo fcinfo, int64 *capacity,
								  double *rate)
{
	Aggref	   *aggref = AggGetAggref(fcinfo);
	PlanState  *ps = (PlanState *) fcinfo->context;
	SizedArgs	sa = {0};

	/* called through a wrapper (Citus): the Aggref and plan are not ours */
	if (ps == NULL || fcinfo->flinfo->fn_expr == NULL)
		return false;
	sa.ps = ps;
	if (aggref != NULL && IsA(ps, AggState) && list_length(aggref->args) == 3)
		add_sized_call(&sa, aggref->args);
	else if (aggref != NULL && IsA(ps, AggState) &&
			 DO_AGGSPLIT_COMBINE(aggref->aggsplit) &&
			 list_length(aggref->args) == 1)
	{
		Node	   *arg = call_arg(aggref->args, 0);

		if (!IsA(arg, Var) || ((Var *) arg)->varno != OUTER_VAR ||
			!add_partial_calls(&sa, outerPlan(ps->plan), ((Var *) arg)->varattno,
							   aggref->aggfnoid))
			return false;
	}
	else
	{
		SizedCallSearch cx = {fcinfo->flinfo->fn_oid, &sa};

		find_sized_calls_in_plan(ps->plan, &cx);
	}
	if (sa.unknown || sa.found != 1)
		return false;
	if (sa.isnull[0] || sa.isnull[1])
		ereport(ERROR,
				errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				errmsg("bloom_agg capacity and false-positive rate must not be null"));
	*capacity = DatumGetInt64(sa.d[0]);
	*rate = DatumGetFloat8(sa.d[1]);
	return true;
}
