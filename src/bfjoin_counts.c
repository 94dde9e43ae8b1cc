/*-------------------------------------------------------------------------
 *
 * bfjoin_counts.c
 *	  What the filter's node of a join did, for EXPLAIN ANALYZE: its counts,
 *	  summed over the leader and every worker of a parallel query, and the
 *	  lines that show them.
 *
 * Under a Gather each process runs the node over its share of the outer
 * rows.  As PostgreSQL's own nodes do (a Hash's or a Sort's instrumentation
 * in the parallel query's dynamic shared memory), each worker writes its
 * counts into a slot of its own when it shuts the node down, and the leader
 * adds the slots to its own counts when it shuts down its node (and before
 * a rescan starts the workers again).  A worker shuts its node down before
 * it detaches from its tuple queue, so a Gather that read every row has
 * every worker's counts; a Gather stopped early (a LIMIT above it) has
 * those of the workers done when the leader shut down.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfjoin_counts.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "commands/explain.h"
#include "utils/lsyscache.h"
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#endif

#include "bfjoin.h"

/* The shared state for nworkers workers and bits bytes of bits. */
Size
bf_join_shared_size(int nworkers, Size bits)
{
	Size		size = MAXALIGN(add_size(offsetof(BfJoinShared, workers),
										 mul_size(nworkers, sizeof(BfJoinCounts))));

	return bits > 0 ? add_size(size, bits) : size;
}

void
bf_join_shared_init(BfJoinShared *sh, int nworkers, Size bits)
{
	memset(sh, 0, offsetof(BfJoinShared, workers) +
		   nworkers * sizeof(BfJoinCounts));
	sh->nworkers = nworkers;
	sh->bits_off = bits > 0 ? bf_join_shared_size(nworkers, 0) : 0;
}

/* Add the workers' counts to sum and empty their slots (for the next run). */
void
bf_join_shared_collect(BfJoinShared *sh, BfJoinCounts *sum)
{
	for (int i = 0; i < sh->nworkers; i++)
	{
		bf_join_counts_add(sum, &sh->workers[i]);
		memset(&sh->workers[i], 0, sizeof(BfJoinCounts));
	}
}

/*
 * Add one process's counts to another's: the memory is the most one
 * process's "maybe" rows took (each process's bound is work_mem).
 */
void
bf_join_counts_add(BfJoinCounts *to, const BfJoinCounts *from)
{
	if (!from->opened)
		return;
	to->unavailable = to->opened ? (to->unavailable && from->unavailable) :
		from->unavailable;
	to->opened = true;
	to->rows_in += from->rows_in;
	to->answered += from->answered;
	to->null_keys += from->null_keys;
	to->checks += from->checks;
	to->check_rows += from->check_rows;
	to->pauses += from->pauses;
	to->paused_rows += from->paused_rows;
	to->sorted_runs += from->sorted_runs;
	to->batches += from->batches;
	to->peak_bytes = Max(to->peak_bytes, from->peak_bytes);
	to->shared_bytes = Max(to->shared_bytes, from->shared_bytes);
}

/*
 * The index probed; with ANALYZE, the rows the filter answered alone, the
 * exact checks (the rows the Nested Loop took: under a LIMIT, not those
 * kept and never checked) and how many found no row (false positives, or
 * rows whose keys are in the index but not visible), the batches of checks
 * and the most memory their rows took at once, the copy of the bits the
 * processes of a parallel query share, and the pauses; under a Gather, of
 * the leader and every worker.
 */
void
bf_join_explain_counts(Oid indexoid, JoinType jointype, const BfJoinCounts *c,
					   ExplainState *es)
{
	char	   *name = get_rel_name(indexoid);

	ExplainPropertyText("Bloom Filter", name ? name : "(dropped index)", es);
	if (!es->analyze || !c->opened)
		return;
	if (c->unavailable)
		ExplainPropertyText("Filter Unavailable",
							"every row checked exactly", es);
	ExplainPropertyInteger("Rows Answered by Filter", NULL,
						   (int64) c->answered, es);
	if (c->null_keys > 0 || es->format != EXPLAIN_FORMAT_TEXT)
		ExplainPropertyInteger("Rows with NULL Key", NULL,
							   (int64) c->null_keys, es);
	ExplainPropertyInteger("Exact Checks", NULL, (int64) c->checks, es);
	ExplainPropertyInteger("Exact Checks Finding No Row", NULL,
						   (int64) (jointype == JOIN_ANTI ? c->check_rows :
									c->checks - c->check_rows), es);
	if (c->batches > 0 || es->format != EXPLAIN_FORMAT_TEXT)
	{
		ExplainPropertyInteger("Exact Check Batches", NULL,
							   (int64) c->batches, es);
		ExplainPropertyInteger("Maybe Rows Memory", "kB",
							   (int64) ((c->peak_bytes + 1023) / 1024), es);
	}
	if (c->shared_bytes > 0)
		ExplainPropertyInteger("Filter Shared Memory", "kB",
							   (int64) ((c->shared_bytes + 1023) / 1024), es);
	if (c->pauses > 0 || es->format != EXPLAIN_FORMAT_TEXT)
	{
		ExplainPropertyInteger("Filter Pauses", NULL, (int64) c->pauses, es);
		ExplainPropertyInteger("Rows Not Probed", NULL,
							   (int64) c->paused_rows, es);
	}
}
