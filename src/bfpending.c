/*-------------------------------------------------------------------------
 *
 * bfpending.c
 *	  A transaction's pending key hashes: kept, by index, until the
 *	  transaction commits or prepares (bfinsert.c says when), within a memory
 *	  bound for all its indexes together (the rest spilled to a temporary
 *	  file), dropped with a subtransaction that rolls back, and looked up by
 *	  the transaction's own probes.
 *
 * Memory.  The hashes of all indexes together take at most BF_PENDING_MEM
 * bytes in memory, however many indexes (partitions) a transaction writes:
 * past it, every index's hashes are written to one temporary file (a file
 * of the transaction's resource owner, gone at its end) and read back when
 * they are set.  The file is written and read at offsets, unbuffered
 * (fd.c's FileWrite, not a BufFile): a write that fails (temp_file_limit, a
 * full disk) leaves nothing behind that a later read or write must flush,
 * and counts no part of its hashes, which stay in memory.  The bound is on
 * the memory really allocated (MemoryContextMemAllocated), not on the
 * arrays' sizes: the arrays live in their own context, "bloomfilter
 * pending hash arrays", emptied (MemoryContextReset) at each spill, so
 * that the chunks and blocks freed
 * by their doubling do not stay allocated beside them (issue 37).  The rest
 * (each index's entry, its list of chunks in the file and marks, and the
 * summary, 1 MB) lives beside them in their parent, "bloomfilter pending
 * hashes", a child of TopTransactionContext.
 *
 * Subtransactions.  Each index's hashes are kept in the order of the
 * inserts, with a mark where each open subtransaction's first hash went:
 * a subtransaction that rolls back cuts its indexes' hashes back to its
 * mark (a rolled-back savepoint's keys are never set), and the file's
 * logical end back to the end of the last hashes kept in it, truncating
 * the file there (which gives its bytes back to temp_file_limit); one that
 * commits hands its mark to its parent.  So a transaction whose spill
 * failed goes on after ROLLBACK TO SAVEPOINT, and commits the keys it
 * kept.
 *
 * Own probes.  A probe of the transaction's own index must find the keys
 * of its rows not yet set: the probes (bfprobe.c, bfprobesite.c,
 * bfjoin_filter.c) ask bf_pending_contains where the index says "no".  It
 * answers from a summary, a Bloom filter of BF_SUMMARY_BITS bits over the
 * hashes and their index's OID, made at the first such question (from the
 * hashes kept, in memory and spilled) and kept current from then on.  The
 * summary also keeps the hashes set early (bf_flush_pending before it sets
 * them makes it first), so that a probe that copied an index's bits before
 * they were set still finds them; and the hashes of a subtransaction rolled
 * back, a false positive for this transaction's own probes only.  Its false
 * positive rate is 0.02% at 250,000 keys, 2% at a million, 14% at two.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfpending.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "commands/tablespace.h"
#include "storage/fd.h"
#include "storage/predicate.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/wait_event.h"

#include "bfindex.h"

/* the hashes a transaction keeps in memory, all indexes together (4 MB) */
#define BF_PENDING_MEM		(4 * 1024 * 1024)
/* the largest block of the arrays' context */
#define BF_HASHES_BLOCK		(64 * 1024)
/* hashes set (or read back from the file) at a time */
#define BF_SET_SLICE		65536
/* the summary for own probes: 2^23 bits (1 MB), 4 bits a key */
#define BF_SUMMARY_BITS		(UINT64CONST(1) << 23)
#define BF_SUMMARY_K		4

/* hashes of one index written to the file */
typedef struct BfChunk
{
	off_t		offset;
	uint32		count;
	uint64		start;			/* the index's hashes before it */
} BfChunk;

/* where an open subtransaction's first hash of an index went */
typedef struct BfMark
{
	SubTransactionId subid;
	uint64		pos;
} BfMark;

typedef struct BfPending
{
	Oid			indexoid;		/* hash key */
	uint64		nspilled;		/* hashes in the file, then */
	uint32		n;				/* hashes in memory */
	uint32		size;
	uint64	   *hashes;
	BfChunk    *chunks;
	uint32		nchunks;
	uint32		maxchunks;
	BfMark	   *marks;
	uint32		nmarks;
	uint32		maxmarks;
} BfPending;

static MemoryContext pending_cxt = NULL;
static MemoryContext hashes_cxt = NULL; /* the hashes[] arrays, reset at a spill */
static HTAB *pending = NULL;	/* BfPending by index OID */
static File spill = -1;			/* the temporary file, or -1 */
static off_t spill_end = 0;		/* the end of the hashes it holds */
static off_t spill_size = 0;	/* what it may hold past that */
static uint64 *summary = NULL;

/* Does the transaction keep hashes of any index? */
bool
bf_pending_any(void)
{
	return pending != NULL;
}

/* Double an array of n elements of width bytes, in pending_cxt. */
static void *
grow_array(void *a, uint32 *max, Size width)
{
	uint32		newmax = *max ? *max * 2 : 4;

	a = a ? repalloc(a, newmax * width) :
		MemoryContextAlloc(pending_cxt, newmax * width);
	*max = newmax;
	return a;
}

static inline uint64
summary_mix(Oid indexoid, uint64 h)
{
	uint64		x = h ^ ((uint64) indexoid * UINT64CONST(0x9E3779B97F4A7C15));

	x ^= x >> 30;
	x *= UINT64CONST(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64CONST(0x94d049bb133111eb);
	x ^= x >> 31;
	return x;
}

static void
summary_add(Oid indexoid, uint64 h)
{
	uint64		x = summary_mix(indexoid, h);
	uint64		a = x & (BF_SUMMARY_BITS - 1);
	uint64		b = (x >> 32) | 1;

	for (int i = 0; i < BF_SUMMARY_K; i++)
	{
		uint64		bit = (a + i * b) & (BF_SUMMARY_BITS - 1);

		summary[bit / 64] |= UINT64CONST(1) << (bit % 64);
	}
}

static bool
summary_test(Oid indexoid, uint64 h)
{
	uint64		x = summary_mix(indexoid, h);
	uint64		a = x & (BF_SUMMARY_BITS - 1);
	uint64		b = (x >> 32) | 1;

	for (int i = 0; i < BF_SUMMARY_K; i++)
	{
		uint64		bit = (a + i * b) & (BF_SUMMARY_BITS - 1);

		if ((summary[bit / 64] & (UINT64CONST(1) << (bit % 64))) == 0)
			return false;
	}
	return true;
}

/* Read count hashes of the file from offset into buf. */
static void
spill_read(off_t offset, uint64 *buf, uint32 count)
{
	int			want = (int) (count * sizeof(uint64));
	int			got = (int) FileRead(spill, (void *) buf, want, offset,
									 WAIT_EVENT_BUFFILE_READ);

	if (got != want)
		ereport(ERROR,
				errcode_for_file_access(),
				got < 0 ?
				errmsg("could not read a temporary file of bloomfilter pending hashes: %m") :
				errmsg("could not read a temporary file of bloomfilter pending hashes: read only %d of %d bytes",
					   got, want));
}

/*
 * Write n hashes at the file's logical end, and move it past them.  A write
 * that fails moves nothing: the hashes are counted in no chunk.
 */
static void
spill_write(const uint64 *h, uint32 n)
{
	int			want = (int) (n * sizeof(uint64));
	int			put;

	spill_size = Max(spill_size, spill_end + want);
	errno = 0;
	put = (int) FileWrite(spill, (void *) h, want, spill_end,
						  WAIT_EVENT_BUFFILE_WRITE);
	if (put != want)
	{
		/* a short write that set no errno: assume no space, as md.c does */
		if (put >= 0 && errno == 0)
			errno = ENOSPC;
		ereport(ERROR,
				errcode_for_file_access(),
				errmsg("could not write a temporary file of bloomfilter pending hashes: %m"));
	}
	spill_end += want;
}

/*
 * After a rollback: the file's logical end back to the end of the last
 * hashes that every index keeps in it, and the file truncated there.  (A
 * truncation that fails keeps the bytes, which later writes overwrite.)
 */
static void
spill_rewind(void)
{
	HASH_SEQ_STATUS seq;
	BfPending  *p;
	off_t		end = 0;

	if (spill < 0)
		return;
	hash_seq_init(&seq, pending);
	while ((p = hash_seq_search(&seq)) != NULL)
	{
		if (p->nchunks > 0)
		{
			BfChunk    *ch = &p->chunks[p->nchunks - 1];

			end = Max(end, ch->offset + (off_t) ch->count * sizeof(uint64));
		}
	}
	spill_end = end;
	if (spill_size > end && FileTruncate(spill, end, WAIT_EVENT_BUFFILE_TRUNCATE) == 0)
		spill_size = end;
}

/*
 * Call fn on every hash of p, the file's first (in slices read into one
 * buffer), then those in memory.
 */
static void
pending_walk(BfPending *p, void (*fn) (BfPending *p, const uint64 *h, uint32 n, void *arg),
			 void *arg)
{
	uint64	   *buf = NULL;

	for (uint32 c = 0; c < p->nchunks; c++)
	{
		BfChunk    *ch = &p->chunks[c];

		if (buf == NULL)
			buf = palloc(BF_SET_SLICE * sizeof(uint64));
		for (uint32 off = 0; off < ch->count; off += BF_SET_SLICE)
		{
			uint32		m = Min(ch->count - off, BF_SET_SLICE);

			spill_read(ch->offset + (off_t) off * sizeof(uint64), buf, m);
			fn(p, buf, m, arg);
		}
	}
	if (buf)
		pfree(buf);
	for (uint32 off = 0; off < p->n; off += BF_SET_SLICE)
		fn(p, p->hashes + off, Min(p->n - off, BF_SET_SLICE), arg);
}

static void
summary_add_slice(BfPending *p, const uint64 *h, uint32 n, void *arg)
{
	for (uint32 i = 0; i < n; i++)
		summary_add(p->indexoid, h[i]);
}

/* Make the summary of every hash kept, if not made yet. */
static void
summary_make(void)
{
	HASH_SEQ_STATUS seq;
	BfPending  *p;

	if (summary != NULL || pending == NULL)
		return;
	summary = MemoryContextAllocZero(pending_cxt, BF_SUMMARY_BITS / 8);
	hash_seq_init(&seq, pending);
	while ((p = hash_seq_search(&seq)) != NULL)
		pending_walk(p, summary_add_slice, NULL);
}

/*
 * Write every index's hashes in memory to the file, and free their memory.
 * The file is the transaction's, whatever subtransaction writes first.
 */
static void
pending_spill_all(void)
{
	HASH_SEQ_STATUS seq;
	BfPending  *p;

	if (spill < 0)
	{
		ResourceOwner owner = CurrentResourceOwner;

		/* (in temp_tablespaces, as a BufFile's) */
		PrepareTempTablespaces();
		CurrentResourceOwner = TopTransactionResourceOwner;
		PG_TRY();
		{
			spill = OpenTemporaryFile(false);
		}
		PG_FINALLY();
		{
			CurrentResourceOwner = owner;
		}
		PG_END_TRY();
		spill_end = 0;
		spill_size = 0;
	}
	hash_seq_init(&seq, pending);
	while ((p = hash_seq_search(&seq)) != NULL)
	{
		BfChunk    *ch;

		if (p->n > 0)
		{
			off_t		offset = spill_end;

			/* (written first: an error leaves the hashes in memory) */
			if (p->nchunks == p->maxchunks)
				p->chunks = grow_array(p->chunks, &p->maxchunks, sizeof(BfChunk));
			spill_write(p->hashes, p->n);
			ch = &p->chunks[p->nchunks++];
			ch->offset = offset;
			ch->count = p->n;
			ch->start = p->nspilled;
			p->nspilled += p->n;
			p->n = 0;
		}
	}
	/* every array is written: free them all, and their context's blocks */
	hash_seq_init(&seq, pending);
	while ((p = hash_seq_search(&seq)) != NULL)
	{
		p->hashes = NULL;
		p->size = 0;
	}
	MemoryContextReset(hashes_cxt);
}

/* Room in memory for one more hash of p. */
static void
pending_room(BfPending *p)
{
	uint32		newsize;

	if (p->n < p->size)
		return;
	newsize = p->size ? p->size * 2 : 64;

	/*
	 * The context's real allocation, with the whole new array and a new
	 * block's worth (BF_HASHES_BLOCK) beside it: a repalloc may copy.
	 */
	if (MemoryContextMemAllocated(hashes_cxt, false) +
		(Size) newsize * sizeof(uint64) + BF_HASHES_BLOCK > BF_PENDING_MEM)
	{
		pending_spill_all();
		newsize = 64;
	}
	p->hashes = p->hashes ? repalloc(p->hashes, newsize * sizeof(uint64)) :
		MemoryContextAlloc(hashes_cxt, newsize * sizeof(uint64));
	p->size = newsize;
}

/* Keep a hash of a key inserted into index, until the transaction commits. */
void
bf_pending_add(Relation index, uint64 h)
{
	BfPending  *p;
	bool		found;
	SubTransactionId sub = GetCurrentSubTransactionId();

	if (pending == NULL)
	{
		HASHCTL		ctl;

		pending_cxt = AllocSetContextCreate(TopTransactionContext,
											"bloomfilter pending hashes",
											ALLOCSET_DEFAULT_SIZES);
		hashes_cxt = AllocSetContextCreate(pending_cxt,
										   "bloomfilter pending hash arrays",
										   0, 8 * 1024, BF_HASHES_BLOCK);
		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(BfPending);
		ctl.hcxt = pending_cxt;
		pending = hash_create("bloomfilter pending hashes", 8, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	p = hash_search(pending, &index->rd_id, HASH_ENTER, &found);
	if (!found)
		memset((char *) p + sizeof(Oid), 0, sizeof(BfPending) - sizeof(Oid));
	if (sub != TopSubTransactionId &&
		(p->nmarks == 0 || p->marks[p->nmarks - 1].subid != sub))
	{
		if (p->nmarks == p->maxmarks)
			p->marks = grow_array(p->marks, &p->maxmarks, sizeof(BfMark));
		p->marks[p->nmarks].subid = sub;
		p->marks[p->nmarks].pos = p->nspilled + p->n;
		p->nmarks++;
	}
	pending_room(p);
	p->hashes[p->n++] = h;
	if (summary)
		summary_add(p->indexoid, h);
}

/*
 * May a key of hash h be among the keys this transaction inserted into the
 * index and has not set (or set early)?  Asked by a probe that did not find
 * it in the index.
 */
bool
bf_pending_contains(Oid indexoid, uint64 h)
{
	BfPending  *p;

	if (pending == NULL)
		return false;
	p = hash_search(pending, &indexoid, HASH_FIND, NULL);
	if (p == NULL)
		return false;
	if (summary == NULL)
	{
		if (p->nspilled + p->n == 0)
			return false;
		summary_make();
	}
	return summary_test(indexoid, h);
}

static void
set_slice(BfPending *p, const uint64 *h, uint32 n, void *arg)
{
	bf_set_hashes((Relation) arg, h, n);
}

/*
 * Set the hashes of p in index, and forget them.  Then, under SERIALIZABLE,
 * check the table for readers' SIREAD locks again (heap_insert checked them
 * when the rows went in): a probe made meanwhile answered "no row" for
 * these keys without meeting the uncommitted rows, as a plain query's index
 * scan would have, so its lock is where the read/write conflict is found.
 */
static void
pending_set(Relation index, BfPending *p)
{
	Relation	heap;

	if (p->nspilled + p->n == 0)
		return;
	pending_walk(p, set_slice, index);
	p->nspilled = 0;
	p->nchunks = 0;
	p->n = 0;
	for (uint32 i = 0; i < p->nmarks; i++)
		p->marks[i].pos = 0;
	if (IsolationIsSerializable())
	{
		heap = table_open(index->rd_index->indrelid, RowExclusiveLock);
		CheckForSerializableConflictIn(heap, NULL, InvalidBlockNumber);
		table_close(heap, NoLock);
	}
}

/*
 * Set this transaction's pending hashes of an index before it commits, for
 * a reader that must find them in the index itself (the caller holds a
 * lock on it).  They then stay if the transaction rolls back.
 */
void
bf_flush_pending(Relation index)
{
	BfPending  *p;

	if (pending == NULL)
		return;
	p = hash_search(pending, &index->rd_id, HASH_FIND, NULL);
	if (p == NULL || p->nspilled + p->n == 0)
		return;
	summary_make();
	pending_set(index, p);
	spill_rewind();				/* the file holds only what is still kept */
}

/*
 * Set every pending hash of the transaction, in every index it inserted
 * into: at its commit or prepare (commit true), or early, before what must
 * find them in the index.  (An index dropped since the insert needs
 * nothing.)  At commit, the file is closed.
 */
void
bf_flush_all_pending(bool commit)
{
	HASH_SEQ_STATUS seq;
	BfPending  *p;

	if (pending == NULL)
		return;
	if (!commit)
		summary_make();
	hash_seq_init(&seq, pending);
	while ((p = hash_seq_search(&seq)) != NULL)
	{
		Relation	index = p->nspilled + p->n > 0 ?
			try_relation_open(p->indexoid, RowExclusiveLock) : NULL;

		if (index)
		{
			pending_set(index, p);
			relation_close(index, NoLock);
		}
	}
	if (commit && spill >= 0)
	{
		FileClose(spill);
		spill = -1;
	}
	else
		spill_rewind();			/* nothing is kept: the file is emptied */
}

/* Cut p's hashes back to the first pos (a subtransaction rolled back). */
static void
pending_cut(BfPending *p, uint64 pos)
{
	if (pos >= p->nspilled)
	{
		p->n = Min(p->n, (uint32) (pos - p->nspilled));
		return;
	}
	p->n = 0;
	while (p->nchunks > 0 && p->chunks[p->nchunks - 1].start >= pos)
		p->nchunks--;
	if (p->nchunks > 0)
	{
		BfChunk    *ch = &p->chunks[p->nchunks - 1];

		ch->count = Min(ch->count, (uint32) (pos - ch->start));
	}
	p->nspilled = pos;
}

/*
 * A subtransaction ends: one rolled back drops the hashes its inserts (and
 * its committed children's) kept; one committed hands them to its parent.
 */
void
bf_pending_subxact(SubXactEvent event, SubTransactionId mySubid,
				   SubTransactionId parentSubid)
{
	HASH_SEQ_STATUS seq;
	BfPending  *p;
	bool		cut = false;

	if (pending == NULL ||
		(event != SUBXACT_EVENT_ABORT_SUB && event != SUBXACT_EVENT_COMMIT_SUB))
		return;
	hash_seq_init(&seq, pending);
	while ((p = hash_seq_search(&seq)) != NULL)
	{
		BfMark	   *top;

		if (p->nmarks == 0 || p->marks[p->nmarks - 1].subid < mySubid)
			continue;
		top = &p->marks[p->nmarks - 1];
		if (event == SUBXACT_EVENT_ABORT_SUB)
		{
			uint64		pos = top->pos;

			/* (a child's mark is handed up or dropped before this) */
			while (p->nmarks > 0 && p->marks[p->nmarks - 1].subid >= mySubid)
				pos = p->marks[--p->nmarks].pos;
			pending_cut(p, pos);
			cut = true;
		}
		else if (parentSubid == TopSubTransactionId ||
				 (p->nmarks > 1 && p->marks[p->nmarks - 2].subid == parentSubid))
			p->nmarks--;
		else
			top->subid = parentSubid;
	}
	if (cut)
		spill_rewind();
}

/*
 * The transaction ended: its memory and file are gone with it (the file
 * with its resource owner, at an abort).
 */
void
bf_pending_end(void)
{
	pending = NULL;
	pending_cxt = NULL;
	hashes_cxt = NULL;
	spill = -1;
	spill_end = 0;
	spill_size = 0;
	summary = NULL;
}
