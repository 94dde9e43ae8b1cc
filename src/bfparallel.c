/*-------------------------------------------------------------------------
 *
 * bfparallel.c
 *	  Parallel CREATE INDEX of a bloomfilter index: the leader and its
 *	  workers scan the table in parallel and set bits in one filter in
 *	  dynamic shared memory; the leader then writes the pages.
 *
 * A Bloom filter is the easy case of a parallel build: setting a key's bits
 * is an OR, so any number of participants can set bits of one bitmap in any
 * order, and the result is the serial build's bitmap exactly.  Each bit is
 * set with an atomic OR of the 32-bit word that holds it; a key counts as
 * added when one of its bits was not set before (as bloom_set_hash_changed
 * counts it serially; two participants adding the same key at once may both
 * count it).  The filter is in shared memory once, not once per worker.
 *
 * Only a build of one layer runs in parallel (the first layer holds at least
 * the rows the planner expects): which keys a later layer gets depends on
 * the order the keys come in.  If the table turns out to hold more keys than
 * the layer's capacity after all, the build is done again serially, in
 * layers.  The shape follows nbtree's (nbtsort.c) and pgvector's
 * (hnswbuild.c): a shared state in a shm_toc, a parallel table scan, the
 * leader taking part, WaitForParallelWorkersToFinish.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfparallel.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "commands/progress.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "storage/spin.h"
#include "tcop/tcopprot.h"
#include "utils/backend_progress.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "bfindex.h"

#define PARALLEL_KEY_BF_SHARED		UINT64CONST(0xB100000000000001)
#define PARALLEL_KEY_BF_BITS		UINT64CONST(0xB100000000000002)
#define PARALLEL_KEY_QUERY_TEXT		UINT64CONST(0xB100000000000003)
#define PARALLEL_KEY_WAL_USAGE		UINT64CONST(0xB100000000000004)
#define PARALLEL_KEY_BUFFER_USAGE	UINT64CONST(0xB100000000000005)

/* rows between two reports of progress */
#define BF_PROGRESS_EVERY	1024

/* the filter is addressed as words of 32 bits, the atomics' own size */
StaticAssertDecl(sizeof(pg_atomic_uint32) == sizeof(uint32),
				 "pg_atomic_uint32 is not a plain 32-bit word");

/* What the participants share (a parallel table scan follows it). */
typedef struct BfShared
{
	/* set by the leader before the workers start */
	Oid			heaprelid;
	Oid			indexrelid;
	bool		isconcurrent;
	uint64		seed;
	uint64		nblocks;
	int			k;

	/* rows and keys of all participants */
	pg_atomic_uint64 tuples;	/* rows with a key, for progress */
	pg_atomic_uint64 added;		/* keys that set a bit */
	slock_t		mutex;
	double		reltuples;		/* rows scanned, summed at the end */
	bool		brokenhotchain; /* a participant met a broken HOT chain */
} BfShared;

#define ParallelTableScanFromBfShared(shared) \
	(ParallelTableScanDesc) ((char *) (shared) + BUFFERALIGN(sizeof(BfShared)))

/* One participant's state. */
typedef struct BfParticipant
{
	BfShared   *shared;
	pg_atomic_uint32 *words;	/* the filter, as 32-bit words */
	BloomKeyType keytype;
	uint64		tuples;			/* rows with a key, here */
	uint64		added;
	bool		leader;
} BfParticipant;

/*
 * Set hash h's bits with atomic ORs; true if one was not set.  Bit j of a
 * block is bit (j & 7) of its byte (j >> 3) (bloom.h): the byte's place in
 * its 32-bit word depends on the host's byte order.
 */
static bool
bf_atomic_set_hash(pg_atomic_uint32 *words, uint64 nblocks, int k, uint64 h)
{
	uint64		byte0 = bloom_block_of(h, nblocks) * BLOOM_BLOCK_BYTES;
	uint16		pos[BLOOM_MAX_K];
	bool		changed = false;

	bloom_bit_positions(h, k, pos);
	for (int i = 0; i < k; i++)
	{
		uint64		byte = byte0 + (pos[i] >> 3);
#ifdef WORDS_BIGENDIAN
		int			shift = (3 - (int) (byte & 3)) * 8;
#else
		int			shift = (int) (byte & 3) * 8;
#endif
		uint32		bit = (uint32) (1u << (pos[i] & 7)) << shift;

		/* a read first: most bits of a busy filter are set already */
		if (pg_atomic_read_u32(&words[byte >> 2]) & bit)
			continue;
		if (!(pg_atomic_fetch_or_u32(&words[byte >> 2], bit) & bit))
			changed = true;
	}
	return changed;
}

static void
bf_parallel_callback(Relation index, ItemPointer tid, Datum *values,
					 bool *isnull, bool tupleIsAlive, void *state)
{
	BfParticipant *p = (BfParticipant *) state;
	BfShared   *shared = p->shared;

	if (isnull[0])
		return;
	if (bf_atomic_set_hash(p->words, shared->nblocks, shared->k,
						   bloom_key_hash(&p->keytype, values[0], shared->seed)))
		p->added++;
	if (++p->tuples % BF_PROGRESS_EVERY == 0)
	{
		uint64		all = pg_atomic_add_fetch_u64(&shared->tuples, BF_PROGRESS_EVERY);

		if (p->leader)
			pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, (int64) all);
	}
}

/* One participant's part of the scan (the leader's with progress). */
static void
bf_parallel_scan(BfShared *shared, pg_atomic_uint32 *words, Relation heap,
				 Relation index, IndexInfo *indexInfo, bool leader)
{
	BfParticipant p;
	TableScanDesc scan;
	double		reltuples;

	memset(&p, 0, sizeof(p));
	p.shared = shared;
	p.words = words;
	p.leader = leader;
	bf_key_type(index, &p.keytype, CurrentMemoryContext);
	indexInfo->ii_Concurrent = shared->isconcurrent;
#if PG_VERSION_NUM >= 190000
	scan = table_beginscan_parallel(heap, ParallelTableScanFromBfShared(shared),
									SO_NONE);
#else
	scan = table_beginscan_parallel(heap, ParallelTableScanFromBfShared(shared));
#endif
	reltuples = table_index_build_scan(heap, index, indexInfo, true, leader,
									   bf_parallel_callback, &p, scan);
	pg_atomic_add_fetch_u64(&shared->tuples, p.tuples % BF_PROGRESS_EVERY);
	pg_atomic_add_fetch_u64(&shared->added, p.added);
	SpinLockAcquire(&shared->mutex);
	shared->reltuples += reltuples;
	/* (the leader's IndexInfo must say so: index_build sets indcheckxmin) */
	if (indexInfo->ii_BrokenHotChain)
		shared->brokenhotchain = true;
	SpinLockRelease(&shared->mutex);
}

/*
 * How many workers to ask for: what PostgreSQL plans for the table (17 and
 * later decide it before calling the access method; before 17 only nbtree
 * was asked, so the plan is made here, as pgvector does).
 */
int
bf_build_workers(Relation heap, Relation index, IndexInfo *indexInfo)
{
#if PG_VERSION_NUM >= 170000
	return indexInfo->ii_ParallelWorkers;
#else
	if (!IsNormalProcessingMode() || IsParallelWorker())
		return 0;
	return plan_create_index_workers(RelationGetRelid(heap), RelationGetRelid(index));
#endif
}

/*
 * Scan the table with nworkers workers and the leader into one layer's bits
 * (bits, nblocks * 64 bytes, zeroed: filled on return).  Returns false, with
 * nothing done, if the parallel context has no shared memory; else the rows
 * scanned, those with a key, and the keys that set bits.
 */
bool
bf_parallel_build(Relation heap, Relation index, IndexInfo *indexInfo,
				  const BfMetaPageData *meta, const BfLayer *layer,
				  int nworkers, uint8 *bits, double *reltuples,
				  double *indtuples, uint64 *added)
{
	ParallelContext *pcxt;
	Snapshot	snapshot;
	Size		estshared;
	Size		bitsize = layer->nblocks * BLOOM_BLOCK_BYTES;
	BfShared   *shared;
	char	   *rawbits;
	pg_atomic_uint32 *words;
	WalUsage   *walusage;
	BufferUsage *bufferusage;
	int			querylen = 0;
	bool		isconcurrent = indexInfo->ii_Concurrent;

	EnterParallelMode();
	pcxt = CreateParallelContext("bloomfilter", "bf_parallel_build_main", nworkers);

	/* a non-concurrent build sees every tuple, as the serial one does */
	snapshot = isconcurrent ? RegisterSnapshot(GetTransactionSnapshot()) : SnapshotAny;

	estshared = add_size(BUFFERALIGN(sizeof(BfShared)),
						 table_parallelscan_estimate(heap, snapshot));
	shm_toc_estimate_chunk(&pcxt->estimator, estshared);
	shm_toc_estimate_chunk(&pcxt->estimator, add_size(bitsize, BLOOM_BLOCK_BYTES));
	shm_toc_estimate_chunk(&pcxt->estimator, mul_size(sizeof(WalUsage), pcxt->nworkers));
	shm_toc_estimate_chunk(&pcxt->estimator, mul_size(sizeof(BufferUsage), pcxt->nworkers));
	shm_toc_estimate_keys(&pcxt->estimator, 4);
	if (debug_query_string)
	{
		querylen = strlen(debug_query_string);
		shm_toc_estimate_chunk(&pcxt->estimator, querylen + 1);
		shm_toc_estimate_keys(&pcxt->estimator, 1);
	}

	InitializeParallelDSM(pcxt);
	if (pcxt->seg == NULL)
	{
		if (IsMVCCSnapshot(snapshot))
			UnregisterSnapshot(snapshot);
		DestroyParallelContext(pcxt);
		ExitParallelMode();
		return false;
	}

	shared = shm_toc_allocate(pcxt->toc, estshared);
	memset(shared, 0, sizeof(BfShared));
	shared->heaprelid = RelationGetRelid(heap);
	shared->indexrelid = RelationGetRelid(index);
	shared->isconcurrent = isconcurrent;
	shared->seed = meta->seed;
	shared->nblocks = layer->nblocks;
	shared->k = (int) layer->k;
	pg_atomic_init_u64(&shared->tuples, 0);
	pg_atomic_init_u64(&shared->added, 0);
	SpinLockInit(&shared->mutex);
	table_parallelscan_initialize(heap, ParallelTableScanFromBfShared(shared), snapshot);

	/* the filter, cache-line aligned, zeroed */
	rawbits = shm_toc_allocate(pcxt->toc, add_size(bitsize, BLOOM_BLOCK_BYTES));
	words = (pg_atomic_uint32 *) TYPEALIGN(BLOOM_BLOCK_BYTES, rawbits);
	memset(words, 0, bitsize);

	walusage = shm_toc_allocate(pcxt->toc, mul_size(sizeof(WalUsage), pcxt->nworkers));
	bufferusage = shm_toc_allocate(pcxt->toc, mul_size(sizeof(BufferUsage), pcxt->nworkers));
	shm_toc_insert(pcxt->toc, PARALLEL_KEY_BF_SHARED, shared);
	shm_toc_insert(pcxt->toc, PARALLEL_KEY_BF_BITS, rawbits);
	shm_toc_insert(pcxt->toc, PARALLEL_KEY_WAL_USAGE, walusage);
	shm_toc_insert(pcxt->toc, PARALLEL_KEY_BUFFER_USAGE, bufferusage);
	if (debug_query_string)
	{
		char	   *sharedquery = shm_toc_allocate(pcxt->toc, querylen + 1);

		memcpy(sharedquery, debug_query_string, querylen + 1);
		shm_toc_insert(pcxt->toc, PARALLEL_KEY_QUERY_TEXT, sharedquery);
	}

	LaunchParallelWorkers(pcxt);
	ereport(DEBUG1,
			errmsg_internal("bloomfilter index \"%s\": %d parallel workers launched of %d planned",
							RelationGetRelationName(index), pcxt->nworkers_launched,
							nworkers));

	/* the leader takes part (and reports the progress) */
	bf_parallel_scan(shared, words, heap, index, indexInfo, true);

	WaitForParallelWorkersToFinish(pcxt);
	for (int i = 0; i < pcxt->nworkers_launched; i++)
		InstrAccumParallelQuery(&bufferusage[i], &walusage[i]);

	memcpy(bits, words, bitsize);
	*reltuples = shared->reltuples;
	if (shared->brokenhotchain)
		indexInfo->ii_BrokenHotChain = true;
	*indtuples = (double) pg_atomic_read_u64(&shared->tuples);
	*added = pg_atomic_read_u64(&shared->added);
	pgstat_progress_update_param(PROGRESS_CREATEIDX_TUPLES_DONE, (int64) *indtuples);

	if (IsMVCCSnapshot(snapshot))
		UnregisterSnapshot(snapshot);
	DestroyParallelContext(pcxt);
	ExitParallelMode();
	return true;
}

/* A parallel worker's part of the build. */
PGDLLEXPORT void bf_parallel_build_main(dsm_segment *seg, shm_toc *toc);

void
bf_parallel_build_main(dsm_segment *seg, shm_toc *toc)
{
	BfShared   *shared;
	pg_atomic_uint32 *words;
	char	   *sharedquery;
	Relation	heap;
	Relation	index;
	LOCKMODE	heaplock;
	LOCKMODE	indexlock;
	WalUsage   *walusage;
	BufferUsage *bufferusage;

	sharedquery = shm_toc_lookup(toc, PARALLEL_KEY_QUERY_TEXT, true);
	debug_query_string = sharedquery;
	pgstat_report_activity(STATE_RUNNING, debug_query_string);

	shared = shm_toc_lookup(toc, PARALLEL_KEY_BF_SHARED, false);
	words = (pg_atomic_uint32 *)
		TYPEALIGN(BLOOM_BLOCK_BYTES, shm_toc_lookup(toc, PARALLEL_KEY_BF_BITS, false));

	/* the locks index.c holds in the leader */
	heaplock = shared->isconcurrent ? ShareUpdateExclusiveLock : ShareLock;
	indexlock = shared->isconcurrent ? RowExclusiveLock : AccessExclusiveLock;
	heap = table_open(shared->heaprelid, heaplock);
	index = index_open(shared->indexrelid, indexlock);

	InstrStartParallelQuery();
	bf_parallel_scan(shared, words, heap, index, BuildIndexInfo(index), false);
	walusage = shm_toc_lookup(toc, PARALLEL_KEY_WAL_USAGE, false);
	bufferusage = shm_toc_lookup(toc, PARALLEL_KEY_BUFFER_USAGE, false);
	InstrEndParallelQuery(&bufferusage[ParallelWorkerNumber],
						  &walusage[ParallelWorkerNumber]);

	index_close(index, indexlock);
	table_close(heap, heaplock);
}
