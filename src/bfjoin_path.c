/*-------------------------------------------------------------------------
 *
 * bfjoin_path.c
 *	  The planner's side of joins that use a bloomfilter index by
 *	  themselves: when the path applies, and what it costs.
 *
 * set_join_pathlist_hook sees every join the planner considers.  For an
 * anti or semi join whose inner side is a table (plain, a partition, or
 * partitioned) with a valid bloomfilter index on the join key, it adds a
 * path that probes the filter for each outer row and sends only the
 * "maybe" rows to an exact check: the inner side's cheapest parameterized
 * path that enforces every clause of the join, so that "the inner scan
 * returns a row" is the whole test.  add_path decides against the plain
 * plans, by cost.
 *
 * When the answer could change, there is no path:
 *	- the clause must be outer_expr = inner_key, where inner_key is the
 *	  index's column (under a binary-compatible cast) or equal to its
 *	  expression, and the operator the equality of the btree (or hash)
 *	  operator family of the key's type: equal values, whose keys then hash
 *	  alike when both types are of the same key family (bloom_keys.c: int2,
 *	  int4 and int8 are one);
 *	- a nondeterministic collation (equal strings of other bytes), or an
 *	  enum key (labels renamed since the index was built hash otherwise: the
 *	  probe would have to check them, and could only fail);
 *	- an invalid or not-ready index, a partial index whose predicate the
 *	  inner's restrictions do not imply, a partitioned table with a
 *	  partition the plan scans that no valid leaf index covers.
 * What planning costs where no path is offered: the cheap checks first (the
 * join's type, an outer side of one row, a bloomfilter index in the
 * planner's list or, for a partitioned table, by its access method in the
 * catalog cache), and of a partitioned table only the partitions pruning
 * left, whose indexes the planner has opened already (bfjoin_match.c).
 * The library is loaded by the time this runs, even in a session with
 * nothing preloaded: the planner opens the inner table's indexes
 * (get_relation_info calls the access method's handler) before it searches
 * for joins.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfjoin_path.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/relation.h"
#include "access/table.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_opfamily.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "access/htup_details.h"
#include "catalog/pg_statistic.h"
#include "common/hashfn.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"

#include "bfindex.h"
#include "bfjoin.h"

static set_join_pathlist_hook_type prev_set_join_pathlist_hook = NULL;

/*
 * Cost of one probe, in cpu_operator_cost: evaluating, hashing and testing
 * the key (about 25 ns with the bits in the CPU's cache, measured as
 * docs/planner.md does; a probe that misses the cache costs more), and of a
 * probe that reads pages (a buffer pinned and locked per layer).
 */
#define BFJ_PROBE_COST			3.0
#define BFJ_PROBE_MISS_COST		6.0
#define BFJ_PAGE_PROBE_COST		25.0
/*
 * Testing a key's block in each further leaf of a partitioned index (the
 * key hashed once where the leaves share a seed): a test, and one that
 * misses the cache.  A key is tested in every leaf the plan scans.
 */
#define BFJ_LEAF_TEST_COST		1.0
#define BFJ_LEAF_MISS_COST		3.0
/* bits a CPU cache holds, about: larger filters miss on most probes */
#define BFJ_CACHED_BYTES		(2 * 1024 * 1024)
/* copying a page of the filter into memory, in seq_page_cost */
#define BFJ_COPY_PAGE_COST		0.25
/*
 * The least share of "maybe" answers assumed without the outer key's
 * statistics: the join's own estimate counts the inner side's other
 * conditions, which the filter (every key of the table) knows nothing of.
 */
#define BFJ_UNKNOWN_SHARE		0.5
/* probes of the statistics' values at most, over every leaf (planning) */
#define BFJ_PROBE_BUDGET		2048
#define BFJ_PROBE_MIN_VALUES	8
/*
 * An outer side estimated at one row gets no path: the most the filter
 * could save is one exact check, less than planning the path costs (the
 * leaves' metapages read, the statistics probed).
 */
#define BFJ_MIN_OUTER_ROWS		2

/*
 * May the node return the join's target list from the outer rows?  Every
 * expression must come from the outer side, but for an anti join the inner
 * side's Vars, which are NULL in every row it returns.
 */
static bool
target_from_outer(RelOptInfo *joinrel, RelOptInfo *outerrel,
				  RelOptInfo *innerrel, JoinType jointype)
{
	ListCell   *lc;

	foreach(lc, joinrel->reltarget->exprs)
	{
		Node	   *e = lfirst(lc);

		if (list_member(outerrel->reltarget->exprs, e))
			continue;
		if (jointype == JOIN_ANTI && IsA(e, Var) &&
			bms_is_member(((Var *) e)->varno, innerrel->relids))
			continue;
		return false;
	}
	return true;
}

/*
 * Probe the outer key's most common values and histogram bounds in the
 * leaves; the share of outer rows whose key the filter answers "maybe" for,
 * or -1 without either statistic.  With many partitions, an even sample of
 * the values is probed in each: about BFJ_PROBE_BUDGET probes in all, but
 * BFJ_PROBE_MIN_VALUES values at least.
 */
static double
probe_statistics(HeapTuple stats, BloomKeyType *kt, List *leaves)
{
	AttStatsSlot mcv;
	AttStatsSlot hist;
	bool		have_mcv;
	bool		have_hist;
	double		share = -1;
	double		nullfrac = ((Form_pg_statistic) GETSTRUCT(stats))->stanullfrac;
	List	   *rels;
	List	   *metas;

	have_mcv = get_attstatsslot(&mcv, stats, STATISTIC_KIND_MCV,
								InvalidOid, ATTSTATSSLOT_VALUES | ATTSTATSSLOT_NUMBERS);
	have_hist = get_attstatsslot(&hist, stats, STATISTIC_KIND_HISTOGRAM,
								 InvalidOid, ATTSTATSSLOT_VALUES);
	rels = (have_mcv || have_hist) ? bf_join_open_leaves(leaves, &metas) : NIL;
	if (rels != NIL)
	{
		double		mcv_total = 0;
		double		mcv_seen = 0;
		double		mcv_maybe = 0;
		double		hist_seen = 0;
		double		hist_maybe = 0;
		int			values = Max(BFJ_PROBE_BUDGET / list_length(leaves),
								 BFJ_PROBE_MIN_VALUES);
		ListCell   *lr;
		ListCell   *lm;

		if (have_mcv)
			for (int i = 0; i < mcv.nnumbers; i++)
				mcv_total += mcv.numbers[i];
		for (int pass = 0; pass < 2; pass++)
		{
			AttStatsSlot *slot = pass == 0 ? &mcv : &hist;
			int			stride;

			if (!(pass == 0 ? have_mcv : have_hist))
				continue;
			stride = Max((slot->nvalues + values - 1) / values, 1);
			for (int i = 0; i < slot->nvalues; i += stride)
			{
				bool		maybe = false;

				forboth(lr, rels, lm, metas)
				{
					BfMetaPageData *meta = lfirst(lm);

					if (strcmp(meta->family, kt->family) != 0 ||
						bf_probe_hash(lfirst(lr), meta,
									  bloom_key_hash(kt, slot->values[i], meta->seed)))
					{
						maybe = true;
						break;
					}
				}
				if (pass == 0)
				{
					mcv_seen += slot->numbers[i];
					if (maybe)
						mcv_maybe += slot->numbers[i];
				}
				else
				{
					hist_seen++;
					if (maybe)
						hist_maybe++;
				}
			}
		}
		/* the values probed stand for the others of their kind */
		mcv_maybe = mcv_seen > 0 ? mcv_total * mcv_maybe / mcv_seen : 0.0;
		if (hist_seen > 0)
			hist_maybe /= hist_seen;
		else
			hist_maybe = mcv_total > 0 ? mcv_maybe / mcv_total : 1.0;
		share = mcv_maybe + Max(1.0 - nullfrac - mcv_total, 0.0) * hist_maybe;
		share = Min(Max(share, 0.0), 1.0);
	}
	if (have_mcv)
		free_attstatsslot(&mcv);
	if (have_hist)
		free_attstatsslot(&hist);
	bf_join_close_leaves(rels);
	return share;
}

/*
 * The shares found so far, for this backend: probing the statistics' values
 * is the costly part of planning a join the filter may serve, and planning a
 * short query again should not pay it again.  Keyed by the index, the
 * leaves probed, what they held (their keys, layers and blocks counted: new
 * keys make a new entry) and the statistics row (table, column, inheritance)
 * with the key's type; emptied when pg_statistic changes (ANALYZE) and
 * entries dropped when the index or the table is invalidated.
 */
typedef struct BfShareKey
{
	Oid			indexoid;
	Oid			statrel;
	int32		attnum;
	bool		inherit;
	Oid			keytype;
	Oid			keycoll;
	int32		nleaves;
	uint32		leaves_hash;
	uint64		content;
} BfShareKey;

typedef struct BfShareEntry
{
	BfShareKey	key;
	double		share;
} BfShareEntry;

static HTAB *share_cache = NULL;

/* entries at most (each about 80 bytes) */
#define BFJ_SHARE_CACHE_MAX		1024

static void
share_cache_forget(Oid relid)
{
	HASH_SEQ_STATUS seq;
	BfShareEntry *e;

	if (share_cache == NULL)
		return;
	hash_seq_init(&seq, share_cache);
	while ((e = hash_seq_search(&seq)) != NULL)
		if (!OidIsValid(relid) || e->key.indexoid == relid ||
			e->key.statrel == relid)
			hash_search(share_cache, &e->key, HASH_REMOVE, NULL);
}

static void
share_relcache_changed(Datum arg, Oid relid)
{
	share_cache_forget(relid);
}

static void
share_stats_changed(Datum arg, int cacheid, uint32 hashvalue)
{
	share_cache_forget(InvalidOid);
}

/*
 * The share of outer rows whose key the filter answers "maybe" for, from the
 * outer key's statistics: its most common values and histogram bounds,
 * probed in the index (false positives included), weighed as
 * bloom_contains' estimate weighs them (docs/planner.md).  PostgreSQL's own
 * estimate of a semi or anti join assumes that every outer key is found
 * when the inner side has more distinct keys, which is the case the filter
 * is for; the filter knows better.  -1 where there are no statistics the
 * user may read, where the inner table's row-level security applies (the
 * estimate, shown by EXPLAIN, would tell of rows the policies hide).  From
 * the backend's cache where the same statistics were probed in the same
 * leaves holding the same keys.
 */
static double
filter_maybe_share(PlannerInfo *root, Expr *outer_key, Oid indexoid,
				   Oid inner_table, List *leaves, uint64 content)
{
	VariableStatData vardata;
	BloomKeyType kt;
	BfShareKey	key;
	BfShareEntry *e = NULL;
	double		share;

	if (check_enable_rls(inner_table, InvalidOid, true) == RLS_ENABLED)
		return -1;
	examine_variable(root, (Node *) outer_key, 0, &vardata);
	if (!HeapTupleIsValid(vardata.statsTuple) || !vardata.acl_ok)
	{
		ReleaseVariableStats(vardata);
		return -1;
	}
	memset(&kt, 0, sizeof(kt));
	if (!bloom_key_type_try_init(&kt, vardata.atttype, exprCollation((Node *) outer_key),
								 CurrentMemoryContext) || kt.kind == KEY_ENUM)
	{
		ReleaseVariableStats(vardata);
		return -1;
	}

	/* a row of pg_statistic itself (not extended statistics) is cached */
	if (vardata.freefunc == ReleaseSysCache)
	{
		Form_pg_statistic st = (Form_pg_statistic) GETSTRUCT(vardata.statsTuple);
		ListCell   *lc;
		int			i = 0;
		Oid		   *oids = palloc(Max(list_length(leaves), 1) * sizeof(Oid));

		if (share_cache == NULL)
		{
			HASHCTL		ctl;

			ctl.keysize = sizeof(BfShareKey);
			ctl.entrysize = sizeof(BfShareEntry);
			share_cache = hash_create("bloomfilter join shares", 64, &ctl,
									  HASH_ELEM | HASH_BLOBS);
		}
		foreach(lc, leaves)
			oids[i++] = lfirst_oid(lc);
		memset(&key, 0, sizeof(key));
		key.indexoid = indexoid;
		key.statrel = st->starelid;
		key.attnum = st->staattnum;
		key.inherit = st->stainherit;
		key.keytype = vardata.atttype;
		key.keycoll = exprCollation((Node *) outer_key);
		key.nleaves = i;
		key.leaves_hash = hash_bytes((const unsigned char *) oids, i * sizeof(Oid));
		key.content = content;
		pfree(oids);
		e = hash_search(share_cache, &key, HASH_FIND, NULL);
		if (e != NULL)
		{
			ReleaseVariableStats(vardata);
			return e->share;
		}
	}
	share = probe_statistics(vardata.statsTuple, &kt, leaves);
	if (vardata.freefunc == ReleaseSysCache)
	{
		/* entries for keys since added stay until an invalidation: a bound */
		if (hash_get_num_entries(share_cache) >= BFJ_SHARE_CACHE_MAX)
			share_cache_forget(InvalidOid);
		e = hash_search(share_cache, &key, HASH_ENTER, NULL);
		e->share = share;
	}
	ReleaseVariableStats(vardata);
	return share;
}

/* Build one path (partial or not) over an outer path. */
static CustomPath *
make_path(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
		  JoinType jointype, Path *outer, Path *inner,
		  BfJoinCandidate *c, double fpr, double share, double pages,
		  int layers)
{
	int			nleaves = Max(list_length(c->leaves), 1);
	CustomPath *cp = makeNode(CustomPath);
	CustomPath *mp = makeNode(CustomPath);
	double		outer_rows = outer->rows;
	double		frac = outerrel->rows > 0 ? outer_rows / outerrel->rows : 1.0;
	double		match;
	double		maybes;
	double		out_rows;
	double		probe;
	double		copy = 0;
	QualCost	keycost;
	Cost		check;
	List	   *relids = NIL;
	int			x = -1;

	/*
	 * The "maybe" rows: as the outer key's statistics probed in the filter
	 * tell, else from the join's own estimate of the rows with a match and
	 * the filter's false-positive rate for the others, but no fewer than
	 * BFJ_UNKNOWN_SHARE of them.
	 */
	if (share < 0)
	{
		match = outerrel->rows > 0 ? joinrel->rows / outerrel->rows : 0.0;
		if (jointype == JOIN_ANTI)
			match = 1.0 - match;
		match = Min(Max(match, 0.0), 1.0);
		share = Max(match + (1.0 - match) * fpr, BFJ_UNKNOWN_SHARE);
	}
	maybes = clamp_row_est(outer_rows * share);
	out_rows = clamp_row_est(joinrel->rows * frac);

	/*
	 * A probe, and reading the bits into memory where that pays.  A key is
	 * tested in every leaf (a partitioned index): one test per leaf.
	 */
	cost_qual_eval_node(&keycost, (Node *) c->outer_key, root);
	if (outer_rows * Max(layers, 1) >= pages &&
		pages * BLCKSZ <= (double) bloom_cache_budget_kb * 1024)
	{
		bool		cached = pages * BLCKSZ <= BFJ_CACHED_BYTES;

		copy = pages * seq_page_cost * BFJ_COPY_PAGE_COST;
		probe = cpu_operator_cost *
			((cached ? BFJ_PROBE_COST : BFJ_PROBE_MISS_COST) +
			 (nleaves - 1) * (cached ? BFJ_LEAF_TEST_COST : BFJ_LEAF_MISS_COST));
	}
	else
		probe = cpu_operator_cost * BFJ_PAGE_PROBE_COST * Max(layers, 1);

	/* an exact check: the inner path's rescan, the row stored and sorted */
	check = inner->total_cost + 2 * cpu_tuple_cost +
		cpu_operator_cost * log2(Max(maybes, 2.0));

	cp->path.type = T_CustomPath;
	cp->path.pathtype = T_CustomScan;
	cp->path.parent = joinrel;
	cp->path.pathtarget = joinrel->reltarget;
	cp->path.param_info = NULL;
	/* under a Gather: its counts and bits shared (bfjoin_exec.c) */
	cp->path.parallel_aware = outer->parallel_aware || outer->parallel_workers > 0;
	cp->path.parallel_safe = joinrel->consider_parallel &&
		outer->parallel_safe && inner->parallel_safe;
	cp->path.parallel_workers = outer->parallel_workers;
	cp->path.rows = out_rows;

	/*
	 * Before the first row: the first exact checks, and the outer rows read
	 * to find their "maybe" rows (an anti join's first row may come sooner).
	 */
	cp->path.startup_cost = outer->startup_cost + copy +
		Min(outer_rows, BFJ_FIRST_CHECKS / Max(share, 1e-6)) *
		(cpu_tuple_cost + keycost.per_tuple + probe) +
		Min(maybes, BFJ_FIRST_CHECKS) * check;
	cp->path.total_cost = outer->total_cost + copy +
		outer_rows * (cpu_tuple_cost + keycost.per_tuple + probe) +
		maybes * check;
#if PG_VERSION_NUM >= 180000
	cp->path.disabled_nodes = outer->disabled_nodes + inner->disabled_nodes;
#endif
	cp->path.pathkeys = NIL;
	cp->flags = 0;
	cp->methods = &bf_join_path_methods;

	/* the "maybe" rows, fed to the exact checks */
	while ((x = bms_next_member(outer->parent->relids, x)) >= 0)
		relids = lappend_int(relids, x);
	mp->path.type = T_CustomPath;
	mp->path.pathtype = T_CustomScan;
	mp->path.parent = joinrel;
	mp->path.pathtarget = outer->pathtarget;
	/* (makeNode zeroed the rest: no param_info, not parallel aware) */
	mp->path.parallel_safe = cp->path.parallel_safe;
	mp->path.parallel_workers = 0;
	mp->path.rows = maybes;
	mp->path.startup_cost = 0;
	mp->path.total_cost = maybes * cpu_tuple_cost;
	mp->path.pathkeys = NIL;
	mp->flags = 0;
	mp->custom_private = relids;
	mp->methods = &bf_join_maybe_path_methods;

	cp->custom_paths = list_make3(outer, mp, inner);
	cp->custom_private = list_make3(c->outer_key,
									list_make4_int(jointype, (int) c->indexoid,
												   layers, (int) Min(pages, INT_MAX)),
									c->leaves);
	return cp;
}

/*
 * set_join_pathlist_hook: offer the filter's path for an anti or semi join
 * into a table with a bloomfilter index on the join key.
 */
static void
bf_join_pathlist(PlannerInfo *root, RelOptInfo *joinrel,
				 RelOptInfo *outerrel, RelOptInfo *innerrel,
				 JoinType jointype, JoinPathExtraData *extra)
{
	RangeTblEntry *rte;
	Oid			amoid;
	BfJoinCandidate c;
	Path	   *outer;
	Path	   *inner;
	double		fpr;
	double		share;
	double		pages;
	int			layers;
	uint64		content;

	if (prev_set_join_pathlist_hook)
		prev_set_join_pathlist_hook(root, joinrel, outerrel, innerrel,
									jointype, extra);

	if (!bf_join_filter_enabled ||
		(jointype != JOIN_ANTI && jointype != JOIN_SEMI) ||
		(innerrel->reloptkind != RELOPT_BASEREL &&
		 innerrel->reloptkind != RELOPT_OTHER_MEMBER_REL) ||
		innerrel->rtekind != RTE_RELATION ||
		extra->restrictlist == NIL ||
		outerrel->cheapest_total_path == NULL ||
		outerrel->rows < BFJ_MIN_OUTER_ROWS ||
		!target_from_outer(joinrel, outerrel, innerrel, jointype))
		return;
	amoid = bf_join_am_oid();
	if (!OidIsValid(amoid))
		return;

	memset(&c, 0, sizeof(c));
	rte = planner_rt_fetch(innerrel->relid, root);
	if (rte->relkind == RELKIND_PARTITIONED_TABLE)
	{
		if (!bf_join_partitioned_candidate(root, outerrel, innerrel, rte->relid,
										   extra->restrictlist, amoid, &c))
			return;
	}
	else if (!bf_join_plain_candidate(root, outerrel, innerrel, extra->restrictlist,
							  amoid, &c))
		return;

	inner = bf_join_exact_check_path(root, outerrel, innerrel, extra->restrictlist, false);
	if (inner == NULL)
		return;
	if (!bf_join_index_shape(c.leaves, &fpr, &pages, &layers, &content))
		return;
	share = filter_maybe_share(root, c.outer_key, c.indexoid, rte->relid,
							   c.leaves, content);

	outer = outerrel->cheapest_total_path;
	if (outer->param_info == NULL)
		add_path(joinrel, (Path *) make_path(root, joinrel, outerrel, jointype,
											 outer, inner, &c, fpr, share,
											 pages, layers));

	/* under a Gather, each worker runs the node over its share of the rows */
	if (joinrel->consider_parallel && outerrel->partial_pathlist != NIL)
	{
		Path	   *pouter = linitial(outerrel->partial_pathlist);
		Path	   *pinner = inner->parallel_safe ? inner :
			bf_join_exact_check_path(root, outerrel, innerrel, extra->restrictlist, true);

		if (pinner != NULL && pouter->param_info == NULL &&
			pouter->parallel_safe)
			add_partial_path(joinrel,
							 (Path *) make_path(root, joinrel, outerrel, jointype,
												pouter, pinner, &c, fpr, share,
												pages, layers));
	}
}

const CustomPathMethods bf_join_path_methods = {
	.CustomName = "BloomFilterJoin",
	.PlanCustomPath = bf_join_plan,
};

const CustomPathMethods bf_join_maybe_path_methods = {
	.CustomName = "BloomMaybeRows",
	.PlanCustomPath = bf_join_maybe_plan,
};

/*
 * Install the planner hook and make the plan nodes known by name (a
 * parallel worker reads the plan back from text).  From _PG_init.
 */
void
bf_join_register(void)
{
	prev_set_join_pathlist_hook = set_join_pathlist_hook;
	set_join_pathlist_hook = bf_join_pathlist;
	CacheRegisterRelcacheCallback(share_relcache_changed, (Datum) 0);
	CacheRegisterSyscacheCallback(STATRELATTINH, share_stats_changed, (Datum) 0);
	RegisterCustomScanMethods(&bf_join_anti_scan_methods);
	RegisterCustomScanMethods(&bf_join_semi_scan_methods);
	RegisterCustomScanMethods(&bf_join_maybe_scan_methods);
}
