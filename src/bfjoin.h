/*-------------------------------------------------------------------------
 *
 * bfjoin.h
 *	  Anti and semi joins that use a bloomfilter index by themselves: the
 *	  declarations shared by the files of each phase.
 *
 * A plain NOT EXISTS, LEFT JOIN ... WHERE inner.k IS NULL (both planned as
 * JOIN_ANTI), EXISTS or IN (subquery) (JOIN_SEMI) against a table with a
 * valid bloomfilter index on the join key gets a path (bfjoin_path.c) that
 * probes the filter for each outer row, answers at once the rows it rules
 * out (anti: returned; semi: dropped), and sends only the "maybe" rows to an
 * exact check: the inner side's own parameterized path, run by a plain
 * Nested Loop.  The plan (bfjoin_plan.c) is
 *
 *	Custom Scan (BloomAntiJoin | BloomSemiJoin)	the filter; outer rows out
 *	  -> outer plan
 *	  -> Nested Loop Anti | Semi Join			the exact checks
 *		   -> Custom Scan (BloomMaybeRows)		the "maybe" rows, fed by
 *												the node above, in key order
 *		   -> the inner's parameterized path	(its btree or hash index)
 *
 * The Nested Loop is PostgreSQL's own, so that the parameters of the exact
 * check are set, checked and shown as for any nested loop.  The executor
 * (bfjoin_exec.c) reads the outer rows in batches, probes the index's bits
 * (bfjoin_filter.c), and watches its share of "maybe" answers.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfjoin.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef BFJOIN_H
#define BFJOIN_H

#include "nodes/execnodes.h"
#include "nodes/extensible.h"
#include "nodes/pathnodes.h"
#include "nodes/plannodes.h"

#include "bloom_pg.h"

/* bloomfilter.join_filter */
extern bool bf_join_filter_enabled;

/*
 * What the plan hands the executor in custom_private: a list of integers,
 * by position, and the list of the leaf indexes probed (OIDs).
 */
#define BFJ_PRIVATE_JOINTYPE	0	/* JOIN_ANTI or JOIN_SEMI */
#define BFJ_PRIVATE_INDEX		1	/* the index probed (maybe partitioned) */
#define BFJ_PRIVATE_NOUTER		2	/* scan tuple columns from the outer plan */
#define BFJ_PRIVATE_SORTCOLL	3	/* collation to sort the "maybe" keys by */
#define BFJ_PRIVATE_LAYERS		4	/* layers of every leaf, at planning */

/* custom_exprs: the outer side of the join clause, alone */
/* custom_plans: the outer plan, the Nested Loop of the exact checks */

/*
 * The node's tuning (bfjoin_exec.c), here because the planner's costs lean
 * on it too (the first batch of exact checks is the path's startup cost).
 *
 * Outer rows probed at once when the bits are in memory and larger than
 * BFJ_BATCH_BYTES: smaller bits stay in the CPU's cache, where a probe has
 * no miss to overlap and copying the rows would cost more than it saves.
 */
#define BFJ_BATCH			64
#ifndef BFJ_BATCH_BYTES
#define BFJ_BATCH_BYTES		(1024 * 1024)
#endif
/* "maybe" rows sorted by key before their exact checks when at least */
#define BFJ_SORT_MIN		32
/*
 * "maybe" rows the path's startup cost counts checked first (the node
 * checks one, then two, four ... up to work_mem: no lookahead for a LIMIT)
 */
#define BFJ_FIRST_CHECKS	64
/* a batch of outer rows stops once its rows' and keys' copies pass */
#define BFJ_BATCH_MEM_DIV	4	/* work_mem / this */
/* the share of "maybe" answers is judged over this many probes */
#ifndef BFJ_WINDOW
#define BFJ_WINDOW			8192
#endif
/* past this share of "maybe" answers the filter pauses */
#ifndef BFJ_PAUSE_SHARE
#define BFJ_PAUSE_SHARE		0.9
#endif
/* rows a first pause lasts; each pause in a row twice the last, up to */
#define BFJ_PAUSE_MIN		(4 * BFJ_WINDOW)
#define BFJ_PAUSE_MAX		(1024 * 1024)

/* bfjoin_match.c: which joins an index can pre-check */
/* One candidate: an index of the inner side, and the clause it answers. */
typedef struct BfJoinCandidate
{
	Oid			indexoid;		/* maybe a partitioned index */
	List	   *leaves;
	RestrictInfo *rinfo;
	Expr	   *outer_key;
} BfJoinCandidate;

extern Oid	bf_join_am_oid(void);
extern bool bf_join_plain_candidate(PlannerInfo *root, RelOptInfo *outerrel,
									RelOptInfo *innerrel, List *restrictlist,
									Oid amoid, BfJoinCandidate *c);
extern bool bf_join_partitioned_candidate(PlannerInfo *root,
										  RelOptInfo *outerrel,
										  RelOptInfo *innerrel, Oid relid,
										  List *restrictlist, Oid amoid,
										  BfJoinCandidate *c);
extern Path *bf_join_exact_check_path(PlannerInfo *root, RelOptInfo *outerrel,
									  RelOptInfo *innerrel, List *restrictlist,
									  bool parallel_safe);

/* bfjoin_path.c */
extern void bf_join_register(void);
extern const CustomPathMethods bf_join_path_methods;
extern const CustomPathMethods bf_join_maybe_path_methods;

/* bfjoin_plan.c */
extern Plan *bf_join_plan(PlannerInfo *root, RelOptInfo *rel,
						  CustomPath *best_path, List *tlist,
						  List *clauses, List *custom_plans);
extern Plan *bf_join_maybe_plan(PlannerInfo *root, RelOptInfo *rel,
								CustomPath *best_path, List *tlist,
								List *clauses, List *custom_plans);

/* bfjoin_maybe.c: the BloomMaybeRows node */
/* The BloomMaybeRows node: the rows it is given, in the order given. */
typedef struct BfMaybeState
{
	CustomScanState css;
	TupleTableSlot **slots;
	int		   *order;
	int			n;
	int			pos;
} BfMaybeState;

extern const CustomScanMethods bf_join_maybe_scan_methods;
extern Node *bf_join_maybe_create_state(CustomScan *cscan);
extern bool bf_join_is_maybe_state(PlanState *ps);

/* bfjoin_exec.c */
typedef struct BfJoinState BfJoinState;
extern const CustomScanMethods bf_join_anti_scan_methods;
extern const CustomScanMethods bf_join_semi_scan_methods;
extern Node *bf_join_create_state(CustomScan *cscan);

/*
 * bfjoin_counts.c: what the filter's node did, for EXPLAIN ANALYZE: one
 * process's counts, and under a Gather every worker's, summed through the
 * parallel query's dynamic shared memory (BfJoinShared).
 */
typedef struct BfJoinCounts
{
	bool		opened;			/* the node looked for its filter */
	bool		unavailable;	/* and had none: every row checked exactly */
	uint64		rows_in;
	uint64		answered;		/* by the filter alone */
	uint64		null_keys;
	uint64		checks;			/* rows given to the exact check */
	uint64		check_rows;		/* rows the Nested Loop returned */
	uint64		pauses;
	uint64		paused_rows;	/* rows not probed during pauses */
	uint64		sorted_runs;
	uint64		batches;		/* of exact checks */
	uint64		peak_bytes;		/* the most "maybe" rows kept at once */
	uint64		shared_bytes;	/* the bits in shared memory (leader) */
} BfJoinCounts;

/*
 * A parallel query's shared state of one filter node: a slot of counts per
 * worker (each writes its own when it shuts the node down), then the copy
 * of the filter's bits that every process probes, at bits_off from the
 * start (0: none; each process reads the index itself).
 */
typedef struct BfJoinShared
{
	Size		bits_off;
	int			nworkers;
	BfJoinCounts workers[FLEXIBLE_ARRAY_MEMBER];
} BfJoinShared;

extern Size bf_join_shared_size(int nworkers, Size bits);
extern void bf_join_shared_init(BfJoinShared *sh, int nworkers, Size bits);
extern void bf_join_shared_collect(BfJoinShared *sh, BfJoinCounts *sum);
extern void bf_join_counts_add(BfJoinCounts *to, const BfJoinCounts *from);
extern void bf_join_explain_counts(Oid indexoid, JoinType jointype,
								   const BfJoinCounts *c,
								   struct ExplainState *es);

/*
 * bfjoin_filter.c: the bits of an index's leaves, for a join node.  A filter
 * that cannot be had (the index is gone, invalid, or does not cover every
 * partition, or its keys hash otherwise) is NULL: every row is then checked
 * exactly.
 */
typedef struct BfJoinFilter BfJoinFilter;

extern bool bf_join_index_shape(List *leaves, double *fpr, double *pages,
								int *layers, uint64 *content);
extern List *bf_join_open_leaves(List *leaves, List **metas);
extern List *bf_join_scanned_leaves(List *leaves, PlanState *ps);
extern void bf_join_close_leaves(List *rels);
extern BfJoinFilter *bf_join_filter_open(List *leaves, Oid keytype,
										 Oid keycoll, double rows,
										 MemoryContext cxt);
extern void bf_join_filter_probe(BfJoinFilter *f, const Datum *keys, int n,
								 bool *maybe);
extern bool bf_join_filter_in_memory(const BfJoinFilter *f);
extern Size bf_join_filter_bytes(const BfJoinFilter *f);
extern void bf_join_filter_close(BfJoinFilter *f);
extern void bf_join_filter_copy_for(BfJoinFilter *f, double rows);
extern Size bf_join_filter_share_size(const BfJoinFilter *f);
extern void bf_join_filter_share(BfJoinFilter *f, char *dst);
extern BfJoinFilter *bf_join_filter_attach(const char *src, Oid keytype,
										   Oid keycoll, MemoryContext cxt);

#endif							/* BFJOIN_H */
