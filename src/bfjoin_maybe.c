/*-------------------------------------------------------------------------
 *
 * bfjoin_maybe.c
 *	  The BloomMaybeRows node: the outer rows a bloomfilter index could not rule
 *	  out, given to the Nested Loop of their exact checks in the order the
 *	  filter's node chose (by key when there are many).
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfjoin_maybe.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "nodes/extensible.h"

#include "bfjoin.h"

static void bf_maybe_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *bf_maybe_exec(CustomScanState *node);
static void bf_maybe_end(CustomScanState *node);
static void bf_maybe_rescan(CustomScanState *node);

static const CustomExecMethods bf_maybe_exec_methods = {
	.CustomName = "BloomMaybeRows",
	.BeginCustomScan = bf_maybe_begin,
	.ExecCustomScan = bf_maybe_exec,
	.EndCustomScan = bf_maybe_end,
	.ReScanCustomScan = bf_maybe_rescan,
};

const CustomScanMethods bf_join_maybe_scan_methods = {
	.CustomName = "BloomMaybeRows",
	.CreateCustomScanState = bf_join_maybe_create_state,
};

Node *
bf_join_maybe_create_state(CustomScan *cscan)
{
	BfMaybeState *s = (BfMaybeState *) newNode(sizeof(BfMaybeState),
											   T_CustomScanState);

	s->css.methods = &bf_maybe_exec_methods;
	return (Node *) s;
}

/*
 * The node returns the slots of the filter's node as they are (of any
 * kind): the Nested Loop must not take them for its virtual slots.
 */
static void
bf_maybe_begin(CustomScanState *node, EState *estate, int eflags)
{
	node->ss.ps.resultopsfixed = false;
}

static TupleTableSlot *
bf_maybe_exec(CustomScanState *node)
{
	BfMaybeState *s = (BfMaybeState *) node;

	if (s->pos >= s->n)
		return NULL;
	return s->slots[s->order ? s->order[s->pos++] : s->pos++];
}

static void
bf_maybe_end(CustomScanState *node)
{
}

/*
 * Its rows are the filter's node's to give: a rescan (the Nested Loop's,
 * which may come after they were given) changes nothing.
 */
static void
bf_maybe_rescan(CustomScanState *node)
{
}

/* Is the node a BloomMaybeRows node's state? */
bool
bf_join_is_maybe_state(PlanState *ps)
{
	return IsA(ps, CustomScanState) &&
		((CustomScanState *) ps)->methods == &bf_maybe_exec_methods;
}
