/*-------------------------------------------------------------------------
 *
 * bfinsert.c
 *	  Insert into a bloomfilter index: a transaction's keys are kept as
 *	  hashes (bfpending.c), and set in the index (bfbatch.c) when it commits
 *	  or prepares; a transaction that rolls back, or a savepoint rolled back
 *	  to, leaves no bits.
 *
 * When the hashes are set.  An insert only hashes its key and keeps the
 * hash, in memory of its transaction (past a bound for all its indexes
 * together, in a temporary file).  They are set before its transaction
 * commits or prepares (a pre-commit callback: the bits' WAL precedes the
 * commit record, so no standby and no crash recovery sees a committed row
 * without its keys; a prepared transaction may commit from another
 * session).  Until then the transaction's own probes look them up where
 * the index says "no" (bf_pending_contains), and other sessions see none
 * of its rows.  They are set early only where that cannot serve: before a
 * query that starts parallel workers (a worker probes the index itself,
 * from a statement's AFTER trigger too), before a utility command that may
 * change an index (one may give an index a new OID on its old file, or new
 * storage, and hashes kept for the old one would find no index), and
 * before bloom_index_info, bloom_index_filters and bloom_index_verify read
 * the index.  Keys set early stay if the transaction rolls back (an extra
 * false positive, which the next compaction drops).  A batch sets many keys
 * of a page under one lock and one WAL record, in the order of the pages.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfinsert.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/executor.h"
#include "tcop/utility.h"
#include "utils/rel.h"

#include "bfindex.h"

static bool bf_xact_registered = false;

static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ProcessUtility_hook_type prev_ProcessUtility = NULL;

static void bf_xact_callback(XactEvent event, void *arg);
static void bf_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
								SubTransactionId parentSubid, void *arg);

/* Keep a key's hash, to be set with the others of the transaction. */
bool
bfinsert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
		 Relation heapRel, IndexUniqueCheck checkUnique,
		 bool indexUnchanged, IndexInfo *indexInfo)
{
	BfState    *state;

	if (isnull[0])
		return false;
	state = bf_get_state(index);
	if (!bf_xact_registered)
	{
		RegisterXactCallback(bf_xact_callback, NULL);
		RegisterSubXactCallback(bf_subxact_callback, NULL);
		bf_xact_registered = true;
	}
	bf_pending_add(index, bloom_key_hash(&state->keytype, values[0], state->meta.seed));
	return false;
}

/*
 * Before a query that starts parallel workers: a worker probes the index
 * itself, and must find every key of the rows its snapshot shares with this
 * backend, including those this backend still keeps (a statement's AFTER
 * trigger runs its queries within the transaction).  A query of this
 * backend looks its own keys up (bf_pending_contains).  An EXPLAIN without
 * ANALYZE starts no worker and runs nothing: it sets nothing (issue 37).
 */
static void
bf_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	if (bf_pending_any() && queryDesc->plannedstmt->parallelModeNeeded &&
		(eflags & EXEC_FLAG_EXPLAIN_ONLY) == 0 && !IsInParallelMode())
		bf_flush_all_pending(false);
	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

/*
 * Is this a utility command that changes no index, nor what an index's OID
 * names?  Transaction control, settings, cursors, prepared statements,
 * LISTEN/NOTIFY, LOCK, SET CONSTRAINTS, CHECKPOINT, EXPLAIN and COPY (whose
 * queries and inserts go through the executor), CALL and DO (whose own
 * statements come back here one by one).
 */
static bool
bf_utility_harmless(Node *stmt)
{
	switch (nodeTag(stmt))
	{
		case T_TransactionStmt:
		case T_VariableSetStmt:
		case T_VariableShowStmt:
		case T_DeclareCursorStmt:
		case T_FetchStmt:
		case T_ClosePortalStmt:
		case T_PrepareStmt:
		case T_ExecuteStmt:
		case T_DeallocateStmt:
		case T_NotifyStmt:
		case T_ListenStmt:
		case T_UnlistenStmt:
		case T_LockStmt:
		case T_ConstraintsSetStmt:
		case T_CheckPointStmt:
		case T_ExplainStmt:
		case T_CopyStmt:
		case T_CallStmt:
		case T_DoStmt:
			return true;
		default:
			return false;
	}
}

/*
 * Before any other utility command: a command may give an index a new OID
 * and keep its file (an ALTER TABLE that changes a column's type without a
 * rewrite does), after which hashes kept under the old OID would find no
 * index to go into; it may drop, rebuild or move the index.  Set them while
 * the index is still the one they were hashed for.
 */
static void
bf_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
				  bool readOnlyTree, ProcessUtilityContext context,
				  ParamListInfo params, QueryEnvironment *queryEnv,
				  DestReceiver *dest, QueryCompletion *qc)
{
	if (bf_pending_any() && !bf_utility_harmless(pstmt->utilityStmt))
		bf_flush_all_pending(false);
	if (prev_ProcessUtility)
		prev_ProcessUtility(pstmt, queryString, readOnlyTree, context,
							params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
}

/* Called once, from _PG_init. */
void
bf_insert_init(void)
{
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = bf_ExecutorStart;
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = bf_ProcessUtility;
}

/*
 * Before commit or prepare, set every pending hash (an error here aborts the
 * transaction); an abort drops them.  After its end, the memory is gone
 * with the transaction's.
 */
static void
bf_xact_callback(XactEvent event, void *arg)
{
	if (!bf_pending_any())
		return;
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			bf_flush_all_pending(true);
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
			bf_pending_end();
			break;
		default:
			break;
	}
}

/* A subtransaction's end: a rollback drops the keys it kept. */
static void
bf_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					SubTransactionId parentSubid, void *arg)
{
	bf_pending_subxact(event, mySubid, parentSubid);
}
