/*-------------------------------------------------------------------------
 *
 * bfinsert.c
 *	  Insert into a bloomfilter index: a transaction's keys are kept as
 *	  hashes, and set in the index (bfbatch.c) in batches, at the latest
 *	  before the transaction commits.
 *
 * When the hashes are set.  An insert only hashes its key and keeps the
 * hash, in memory of its transaction.  They are set when a batch is full,
 * at the end of the statement (aminsertcleanup, PostgreSQL 17 and later),
 * before this backend probes the index, before any utility command (which
 * may give the index a new OID on its old file, or new storage), before a
 * query that starts parallel workers (which probe the index themselves,
 * from a statement's AFTER trigger too), and in any case before its
 * transaction commits or prepares (a pre-commit callback): so every key of
 * a committed row is in the index before the commit is, and every probe, in
 * any process, finds every key of a row its snapshot sees.  A batch sets
 * many keys of a page under one lock and one WAL record, in the order of the
 * pages: a bulk load does a fraction of the buffer lookups, locks and WAL of
 * one key at a time.  A transaction that aborts drops its hashes, which no
 * row needs.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfinsert.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "executor/executor.h"
#include "storage/predicate.h"
#include "tcop/utility.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "bfindex.h"

/* hashes a backend keeps per index before it sets them (512 kB) */
#define BF_PENDING_MAX		65536

typedef struct BfPending
{
	Oid			indexoid;		/* hash key */
	uint32		n;
	uint32		size;
	uint64	   *hashes;
} BfPending;

/* the transaction's pending hashes, by index (in TopTransactionContext) */
static HTAB *bf_pending = NULL;
static bool bf_xact_registered = false;

static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ProcessUtility_hook_type prev_ProcessUtility = NULL;

static void bf_xact_callback(XactEvent event, void *arg);

/*
 * Set an index's pending hashes, if any.  Then, under SERIALIZABLE, check
 * the table for readers' SIREAD locks again (heap_insert checked them when
 * the rows went in): a probe made meanwhile answered "no row" for these
 * keys without meeting the uncommitted rows, as a plain query's index scan
 * would have, so its lock is where the read/write conflict is found.  A
 * probe after this point finds the bits set and checks the rows.
 */
static void
bf_flush_entry(Relation index, BfPending *p)
{
	Relation	heap;

	if (p->n == 0)
		return;
	bf_set_hashes(index, p->hashes, p->n);
	p->n = 0;
	if (IsolationIsSerializable())
	{
		heap = table_open(index->rd_index->indrelid, RowExclusiveLock);
		CheckForSerializableConflictIn(heap, NULL, InvalidBlockNumber);
		table_close(heap, NoLock);
	}
}

/*
 * Set this backend's pending hashes of an index before it is probed (the
 * caller holds a lock on it), so that a transaction finds its own keys.
 */
void
bf_flush_pending(Relation index)
{
	BfPending  *p;

	if (bf_pending == NULL)
		return;
	p = hash_search(bf_pending, &index->rd_id, HASH_FIND, NULL);
	if (p)
		bf_flush_entry(index, p);
}

/* Keep a key's hash, to be set with the others of the transaction. */
bool
bfinsert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
		 Relation heapRel, IndexUniqueCheck checkUnique,
		 bool indexUnchanged, IndexInfo *indexInfo)
{
	BfState    *state;
	BfPending  *p;
	bool		found;

	if (isnull[0])
		return false;
	state = bf_get_state(index);

	if (bf_pending == NULL)
	{
		HASHCTL		ctl;

		if (!bf_xact_registered)
		{
			RegisterXactCallback(bf_xact_callback, NULL);
			bf_xact_registered = true;
		}
		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(BfPending);
		ctl.hcxt = TopTransactionContext;
		bf_pending = hash_create("bloomfilter pending hashes", 8, &ctl,
								 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	p = hash_search(bf_pending, &index->rd_id, HASH_ENTER, &found);
	if (!found)
	{
		p->n = 0;
		p->size = 64;
		p->hashes = MemoryContextAlloc(TopTransactionContext, p->size * sizeof(uint64));
	}
	else if (p->n == p->size)
	{
		p->size *= 2;
		p->hashes = repalloc(p->hashes, p->size * sizeof(uint64));
	}
	p->hashes[p->n++] = bloom_key_hash(&state->keytype, values[0], state->meta.seed);
	if (p->n >= BF_PENDING_MAX)
		bf_flush_entry(index, p);
	return false;
}

#if PG_VERSION_NUM >= 170000
/* At the end of a statement's inserts: set their keys. */
void
bfinsertcleanup(Relation index, IndexInfo *indexInfo)
{
	bf_flush_pending(index);
}
#endif

/*
 * Set every pending hash of the transaction, in every index it inserted
 * into.  (An index dropped since the insert needs nothing.)
 */
void
bf_flush_all_pending(void)
{
	HASH_SEQ_STATUS seq;
	BfPending  *p;

	if (bf_pending == NULL)
		return;
	hash_seq_init(&seq, bf_pending);
	while ((p = hash_seq_search(&seq)) != NULL)
	{
		Relation	index = p->n > 0 ?
			try_relation_open(p->indexoid, RowExclusiveLock) : NULL;

		if (index)
		{
			bf_flush_entry(index, p);
			relation_close(index, NoLock);
		}
	}
}

/*
 * Before a query that starts parallel workers: a worker probes the index
 * itself, and must find every key of the rows its snapshot shares with this
 * backend, including those this backend still holds (a statement's AFTER
 * trigger runs its queries before the statement's end sets them).  A query
 * of this backend probes its own keys through bf_flush_pending.
 */
static void
bf_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	if (bf_pending != NULL && queryDesc->plannedstmt->parallelModeNeeded &&
		!IsInParallelMode())
		bf_flush_all_pending();
	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

/*
 * Before any utility command but transaction control: a command may give an
 * index a new OID and keep its file (an ALTER TABLE that changes a column's
 * type without a rewrite does), after which hashes kept under the old OID
 * would find no index to go into; it may drop, rebuild or move the index.
 * Set them while the index is still the one they were hashed for.
 */
static void
bf_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
				  bool readOnlyTree, ProcessUtilityContext context,
				  ParamListInfo params, QueryEnvironment *queryEnv,
				  DestReceiver *dest, QueryCompletion *qc)
{
	if (bf_pending != NULL && !IsA(pstmt->utilityStmt, TransactionStmt))
		bf_flush_all_pending();
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
 * transaction); after its end, the memory is gone with the transaction's.
 */
static void
bf_xact_callback(XactEvent event, void *arg)
{
	if (bf_pending == NULL)
		return;
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			bf_flush_all_pending();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
			bf_pending = NULL;
			break;
		default:
			break;
	}
}
