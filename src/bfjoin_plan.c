/*-------------------------------------------------------------------------
 *
 * bfjoin_plan.c
 *	  From the filter's join path to its plan: a CustomScan over the outer
 *	  plan and a Nested Loop that runs the exact checks.
 *
 * The exact check is the inner side's parameterized path, whose parameters
 * the planner turns into PARAM_EXEC Params that some node must set before
 * each rescan.  Only a Nested Loop may (SS_finalize_plan refuses a plan in
 * which another node's child uses a Param no ancestor provides), so the
 * "maybe" rows go through one: its outer side is a small CustomScan
 * (BloomMaybeRows) that the filter's node feeds.  The planner builds the
 * children of a CustomPath before calling PlanCustomPath, and replaces the
 * outer Vars of a parameterized path by Params only for the rels in
 * root->curOuterRels (as create_nestloop_plan sets them around its inner
 * side): the BloomMaybeRows path comes between the outer and the inner path
 * among the children, and its PlanCustomPath adds the outer rels there;
 * bf_join_plan takes them out again and collects the Params for the Nested
 * Loop, as create_nestloop_plan does.
 *
 * A plan that used an index depends on it: its OID (and its leaves') go to
 * root->glob->relationOids, so that DROP INDEX, REINDEX and ALTER INDEX
 * invalidate a cached plan.  The executor still copes with an index that is
 * gone or no longer covers the table by checking every row exactly.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfjoin_plan.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/paramassign.h"
#include "optimizer/pathnode.h"
#include "optimizer/restrictinfo.h"
#include "optimizer/tlist.h"

#include "bfjoin.h"

/* A copy of a target list's expressions as a new, numbered target list. */
static List *
tlist_copy(List *tlist)
{
	List	   *result = NIL;
	ListCell   *lc;

	foreach(lc, tlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);

		result = lappend(result,
						 makeTargetEntry(copyObject(tle->expr),
										 list_length(result) + 1, NULL, false));
	}
	return result;
}

/*
 * PlanCustomPath of BloomMaybeRows: a scan of the rows the filter's node
 * gives it, in the outer rows' layout.  Its plan is made between those of
 * the outer and inner paths: from here on, the outer rels' Vars in the inner
 * path become nestloop Params.
 */
Plan *
bf_join_maybe_plan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
				   List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	ListCell   *lc;

	foreach(lc, best_path->custom_private)
		root->curOuterRels = bms_add_member(root->curOuterRels, lfirst_int(lc));

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = NIL;
	cscan->scan.scanrelid = 0;
	cscan->flags = 0;
	cscan->custom_plans = NIL;
	cscan->custom_exprs = NIL;
	cscan->custom_private = NIL;
	cscan->custom_scan_tlist = tlist_copy(tlist);
	cscan->methods = &bf_join_maybe_scan_methods;
	return (Plan *) cscan;
}

/*
 * PlanCustomPath of the filter's node.  custom_plans holds the plans of the
 * outer path, of BloomMaybeRows and of the inner (parameterized) path.
 */
Plan *
bf_join_plan(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
			 List *tlist, List *clauses, List *custom_plans)
{
	Path	   *outer_path = linitial(best_path->custom_paths);
	Path	   *maybe_path = lsecond(best_path->custom_paths);
	Plan	   *outer_plan = linitial(custom_plans);
	Plan	   *maybe_plan = lsecond(custom_plans);
	Plan	   *inner_plan = lthird(custom_plans);
	Expr	   *outer_key = linitial(best_path->custom_private);
	List	   *info = lsecond(best_path->custom_private);
	List	   *leaves = lthird(best_path->custom_private);
	JoinType	jointype = (JoinType) linitial_int(info);
	Oid			indexoid = (Oid) lsecond_int(info);
	Relids		outer_relids = outer_path->parent->relids;
	NestLoop   *nl = makeNode(NestLoop);
	CustomScan *cscan = makeNode(CustomScan);
	List	   *scan_tlist;
	List	   *vars;
	int			nouter;
	ListCell   *lc;

	/* the outer rels' Vars of the inner plan are Params set by the loop */
	root->curOuterRels = bms_del_members(root->curOuterRels, outer_relids);
#if PG_VERSION_NUM >= 180000
	nl->nestParams = identify_current_nestloop_params(root, outer_relids,
													  PATH_REQ_OUTER(&best_path->path));
#else
	nl->nestParams = identify_current_nestloop_params(root, outer_relids);
#endif

	/* the exact checks: a nested loop over the "maybe" rows */
	nl->join.plan.targetlist = tlist_copy(maybe_plan->targetlist);
	nl->join.plan.qual = NIL;
	nl->join.plan.lefttree = maybe_plan;
	nl->join.plan.righttree = inner_plan;
	nl->join.jointype = jointype;
	nl->join.inner_unique = false;
	nl->join.joinqual = NIL;
	nl->join.plan.startup_cost = inner_plan->startup_cost;
	nl->join.plan.total_cost = maybe_plan->total_cost +
		maybe_path->rows * inner_plan->total_cost;
	nl->join.plan.plan_rows = jointype == JOIN_ANTI ?
		clamp_row_est(maybe_path->rows - (outer_path->rows - best_path->path.rows)) :
		clamp_row_est(best_path->path.rows);
	nl->join.plan.plan_width = maybe_plan->plan_width;
	nl->join.plan.parallel_aware = false;
	nl->join.plan.parallel_safe = best_path->path.parallel_safe;

	/*
	 * The scan tuple: the outer plan's columns, then any inner Var the target
	 * list asks for (an anti join's, NULL in every row it returns).
	 */
	scan_tlist = tlist_copy(outer_plan->targetlist);
	nouter = list_length(scan_tlist);
	vars = pull_var_clause((Node *) tlist, PVC_RECURSE_AGGREGATES |
						   PVC_RECURSE_WINDOWFUNCS | PVC_INCLUDE_PLACEHOLDERS);
	foreach(lc, vars)
	{
		Node	   *v = lfirst(lc);

		if (!tlist_member((Expr *) v, scan_tlist))
			scan_tlist = lappend(scan_tlist,
								 makeTargetEntry((Expr *) copyObject(v),
												 list_length(scan_tlist) + 1,
												 NULL, false));
	}

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = extract_actual_clauses(clauses, false);
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = list_make2(outer_plan, nl);
	cscan->custom_exprs = list_make1(copyObject(outer_key));
	cscan->custom_private = list_make2(list_make5_int(jointype, (int) indexoid, nouter,
													  (int) exprCollation((Node *) outer_key),
													  lthird_int(info)),
									   list_copy(leaves));
	cscan->custom_scan_tlist = scan_tlist;
	cscan->methods = jointype == JOIN_ANTI ?
		&bf_join_anti_scan_methods : &bf_join_semi_scan_methods;

	/* the plan depends on the index it probes, and on its leaves */
	root->glob->relationOids = lappend_oid(root->glob->relationOids, indexoid);
	foreach(lc, leaves)
		if (lfirst_oid(lc) != indexoid)
			root->glob->relationOids = lappend_oid(root->glob->relationOids,
												   lfirst_oid(lc));
	return (Plan *) cscan;
}
