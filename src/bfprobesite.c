/*-------------------------------------------------------------------------
 *
 * bfprobesite.c
 *	  What a call site of bloom_index_contains keeps between rows: the checks
 *	  already passed, the metapages already read, and, once a bulk probe has
 *	  read about as many pages as the index holds, a copy of its bits.
 *
 * A probe of one key must open the index, check the caller's privileges and
 * the key's family, read the metapage and one page per layer.  Done for
 * every row of a join, that costs many times a probe of a stored bloom value
 * of the same keys.  So a call site (fn_extra) does the checks and reads the
 * metapages once, and, once the pages it has read per row add up to the
 * index's size, reads every layer once into memory and probes that, within
 * bloomfilter.cache_budget: at most about twice the better of the two.
 *
 * Why that still finds every key committed before the snapshot.  A key's
 * bits are set, in a layer the metapage already names, before its
 * transaction commits, and bits are never cleared; a layer, once named, is
 * named until the index is rebuilt.  Whatever is read after the snapshot was
 * taken (the metapage, or a page when it is copied) therefore holds every
 * key of a transaction committed before it.  So the call site's metapages and
 * copy serve as long as the snapshot is the same: the same transaction and
 * subtransaction (so that the lock taken when they were read, which keeps
 * other sessions from dropping or rebuilding the index, is still held), the
 * same user (the privilege and row-level security checks), a snapshot that
 * sees the same transactions (the same xmin, xmax, command and list of
 * transactions in progress: a transaction can commit without moving xmin or
 * xmax, and an active snapshot, always a copy, carries no count of completed
 * transactions, nor is its address its own once it is freed), and no
 * relcache invalidation since: the lock does not stop the caller's own
 * transaction from giving the index new storage (REINDEX, TRUNCATE, a
 * rewrite) or the table new policies, and each of those invalidates a
 * relcache entry.  A snapshot that sees other transactions (the next
 * statement of a function in READ COMMITTED, after a commit) reads them
 * again.  Like any query, a probe does not promise to see rows its own
 * statement writes.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfprobesite.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/proc.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "bfindex.h"

#if PG_VERSION_NUM >= 170000
#define MY_LXID		(MyProc->vxid.lxid)
#else
#define MY_LXID		(MyProc->lxid)
#endif

/* One leaf index as the call site knows it. */
typedef struct SiteLeaf
{
	Oid			relid;
	BfMetaPageData meta;
	const uint8 *bits[BF_MAX_LAYERS];	/* the copy of each layer, once read */
	void	   *alloc[BF_MAX_LAYERS];	/* the chunks the copies are in */
} SiteLeaf;

struct BfProbeSite
{
	BloomKeyType kt;			/* the key argument's type, set up once */
	MemoryContext cxt;			/* holds leaves and copies; reset at setup */

	/*
	 * A key of the text family for an index of another family (an untyped
	 * parameter) is read with the input function of the index's column
	 * type (bloom_key_reads_as), and hashed as its keys are.
	 */
	bool		read;
	BloomKeyType colkt;			/* the column's key type, when read */
	BloomKeyReader reader;		/* in cxt */

	/* what the checks, metapages and copies were made for */
	bool		valid;
	Oid			indexoid;
	Oid			userid;
	uint64		inval_epoch;
	LocalTransactionId lxid;
	SubTransactionId subxid;
	TransactionId xmin;
	TransactionId xmax;
	CommandId	curcid;
	bool		suboverflowed;
	bool		recovery;		/* takenDuringRecovery */
	uint32		xcnt;
	int32		subxcnt;
	TransactionId *xip;			/* in cxt */
	TransactionId *subxip;		/* in cxt; NULL when the snapshot has none */

	Oid			distributed;	/* a Citus table: the shards answer */
	int			nleaves;
	SiteLeaf   *leaves;
	bool		copied;			/* every layer of every leaf is in memory */
	uint64		copy_pages;		/* pages a copy reads; 0: over the budget */
	uint64		pages_read;		/* by probes since the metapages were read */
};

/*
 * Relcache invalidations seen by this backend (of any relation: they are
 * rare, and telling which were of an index a call site holds would cost a
 * lookup per call).
 */
static uint64 inval_epoch = 0;
static bool inval_registered = false;

static void
site_relcache_callback(Datum arg, Oid relid)
{
	inval_epoch++;
}

/*
 * Does the snapshot see the same transactions as the one the call site was
 * set up for?  (Compared by content: within one statement the active
 * snapshot is the same, and the lists are short.)
 */
static inline bool
site_same_snapshot(const BfProbeSite *s, Snapshot snap)
{
	return snap->xmin == s->xmin && snap->xmax == s->xmax &&
		snap->curcid == s->curcid && snap->xcnt == s->xcnt &&
		snap->subxcnt == s->subxcnt && snap->suboverflowed == s->suboverflowed &&
		snap->takenDuringRecovery == s->recovery &&
		(snap->subxip == NULL) == (s->subxip == NULL) &&
		(s->xcnt == 0 ||
		 memcmp(snap->xip, s->xip, s->xcnt * sizeof(TransactionId)) == 0) &&
		(s->subxip == NULL || s->subxcnt <= 0 ||
		 memcmp(snap->subxip, s->subxip, s->subxcnt * sizeof(TransactionId)) == 0);
}

/* How the call site's keys hash: as the argument's type, or as read. */
static inline BloomKeyType *
site_kt(BfProbeSite *s)
{
	return s->read ? &s->colkt : &s->kt;
}

/*
 * Set up the key type for the index rel: the argument's, or the column's
 * when a key of the text family is read as the column's type.
 */
static void
site_key_setup(BfProbeSite *s, Relation rel, FunctionCallInfo fcinfo)
{
	bloom_arg_key_type(fcinfo, 1, &s->kt);
	s->read = false;
	if (strcmp(s->kt.family, "text") != 0)
		return;
	bf_key_type(rel, &s->colkt, s->cxt);
	/*
	 * A char(n) column's keys hash without their trailing blanks: a text key
	 * ('ab  ' passed untyped, where "ch = 'ab  '" reads it as char(n)) is
	 * read as the column's type too.  For a key that really is text this
	 * can only add a "maybe", never lose one.
	 */
	if (!bloom_key_reads_as(&s->kt, s->colkt.family) &&
		!(s->colkt.kind == KEY_BPCHAR && s->kt.kind != KEY_BPCHAR))
		return;
	bloom_key_reader_init(&s->reader, &s->kt, s->colkt.typid, s->cxt);
	s->read = true;
}

/* Is what the call site holds still good for this call? */
static inline bool
site_current(BfProbeSite *s, Oid indexoid)
{
	if (!s->valid || s->indexoid != indexoid || s->lxid != MY_LXID ||
		s->subxid != GetCurrentSubTransactionId() || s->userid != GetUserId() ||
		s->inval_epoch != inval_epoch || bloom_labels_stale(site_kt(s)) ||
		!ActiveSnapshotSet())
		return false;
	return site_same_snapshot(s, GetActiveSnapshot());
}

/*
 * Check the index and the caller, and read the metapage of every leaf
 * index, for the snapshot at hand.  The locks taken are kept to the end of
 * the transaction.  Left invalid if anything fails.
 */
static void
site_setup(BfProbeSite *s, Oid indexoid, FunctionCallInfo fcinfo)
{
	Relation	rel;
	List	   *leaves;
	ListCell   *lc;
	int			n = 0;
	Size		bytes = 0;
	Snapshot	snap;

	s->valid = false;
	MemoryContextReset(s->cxt);
	/* (before anything is read: an invalidation from here on counts) */
	s->inval_epoch = inval_epoch;
	s->nleaves = 0;
	s->leaves = NULL;
	s->copied = false;
	s->copy_pages = s->pages_read = 0;

	rel = bf_open_index_ext(indexoid, true, &s->distributed);
	site_key_setup(s, rel, fcinfo);
	if (!OidIsValid(s->distributed))
	{
		leaves = bf_leaf_indexes(rel);
		s->leaves = MemoryContextAllocZero(s->cxt,
										   Max(list_length(leaves), 1) * sizeof(SiteLeaf));
		foreach(lc, leaves)
		{
			SiteLeaf   *l = &s->leaves[n++];
			/* a partition's index is read through its parent's privileges */
			Relation	leaf = lfirst_oid(lc) == indexoid ? rel :
				relation_open(lfirst_oid(lc), AccessShareLock);

			l->relid = lfirst_oid(lc);
			bf_predicate_lock_table(leaf);
			bf_read_meta(leaf, &l->meta);
			bf_check_promise(rel, leaf, &l->meta);
			bf_check_family(leaf, &l->meta, site_kt(s));
			/* an index scan, for pg_stat_user_indexes: once per setup */
			pgstat_count_index_scan(leaf);
			for (uint32 i = 0; i < l->meta.nlayers; i++)
			{
				s->copy_pages += l->meta.layers[i].npages;
				bytes += l->meta.layers[i].nblocks * BLOOM_BLOCK_BYTES;
			}
			if (leaf != rel)
				relation_close(leaf, NoLock);
		}
		s->nleaves = n;
		if (bytes > (Size) bloom_cache_budget_kb * 1024)
			s->copy_pages = 0;
	}
	relation_close(rel, NoLock);

	/* without a snapshot, nothing is kept: every call checks and reads anew */
	if (!ActiveSnapshotSet())
		return;
	snap = GetActiveSnapshot();
	s->indexoid = indexoid;
	s->userid = GetUserId();
	s->lxid = MY_LXID;
	s->subxid = GetCurrentSubTransactionId();
	s->xmin = snap->xmin;
	s->xmax = snap->xmax;
	s->curcid = snap->curcid;
	s->suboverflowed = snap->suboverflowed;
	s->recovery = snap->takenDuringRecovery;
	s->xcnt = snap->xcnt;
	s->subxcnt = snap->subxcnt;
	s->xip = s->xcnt == 0 ? NULL :
		MemoryContextAlloc(s->cxt, s->xcnt * sizeof(TransactionId));
	if (s->xcnt > 0)
		memcpy(s->xip, snap->xip, s->xcnt * sizeof(TransactionId));
	s->subxip = NULL;
	if (snap->subxip != NULL)
	{
		s->subxip = MemoryContextAlloc(s->cxt,
									   Max(s->subxcnt, 1) * sizeof(TransactionId));
		if (s->subxcnt > 0)
			memcpy(s->subxip, snap->subxip, s->subxcnt * sizeof(TransactionId));
	}
	s->valid = true;
}

/*
 * The call site of bloom_index_contains(fcinfo), checked and current for
 * this call: the index is a bloomfilter index (or a partitioned index of
 * them) that the user may read, the key's family is the index's, and the
 * metapages are as of this snapshot.
 */
BfProbeSite *
bf_probe_site(FunctionCallInfo fcinfo)
{
	BfProbeSite *s = (BfProbeSite *) fcinfo->flinfo->fn_extra;
	Oid			indexoid = PG_GETARG_OID(0);

	if (unlikely(s == NULL))
	{
		if (!inval_registered)
		{
			CacheRegisterRelcacheCallback(site_relcache_callback, (Datum) 0);
			inval_registered = true;
		}
		s = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(BfProbeSite));
		s->cxt = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt,
									   "bloom_index_contains call site",
									   ALLOCSET_DEFAULT_SIZES);
		fcinfo->flinfo->fn_extra = s;
	}
	if (!site_current(s, indexoid))
		site_setup(s, indexoid, fcinfo);
	return s;
}

/* A Citus distributed table whose shards must answer, or InvalidOid. */
Oid
bf_probe_site_distributed(BfProbeSite *s)
{
	return s->distributed;
}

/* Read every layer of every leaf into memory. */
static void
site_copy(BfProbeSite *s)
{
	for (int n = 0; n < s->nleaves; n++)
	{
		SiteLeaf   *l = &s->leaves[n];
		Relation	rel = relation_open(l->relid, NoLock);

		while (!bf_copy_layers(rel, &l->meta, s->cxt, l->alloc, l->bits))
			bf_read_meta(rel, &l->meta);
		relation_close(rel, NoLock);
	}
	s->copied = true;
}

/* Is the key possibly in some leaf index of the call site? */
bool
bf_probe_site_test(BfProbeSite *s, Datum key)
{
	uint64		seed = 0;
	uint64		h = 0;
	bool		hashed = false;

	if (!s->copied && s->copy_pages > 0 && s->pages_read >= s->copy_pages)
		site_copy(s);
	if (s->read)
		key = bloom_key_read(&s->reader, key);

	for (int n = 0; n < s->nleaves; n++)
	{
		SiteLeaf   *l = &s->leaves[n];
		bool		found;

		if (!hashed || l->meta.seed != seed)
		{
			seed = l->meta.seed;
			h = bloom_key_hash(site_kt(s), key, seed);
			hashed = true;
		}
		if (s->copied)
		{
			found = false;
			for (uint32 i = 0; i < l->meta.nlayers && !found; i++)
				found = bloom_test_hash(l->bits[i], l->meta.layers[i].nblocks,
										(int) l->meta.layers[i].k, h);
		}
		else
		{
			Relation	rel = relation_open(l->relid, NoLock);

			found = bf_probe_hash(rel, &l->meta, h);
			relation_close(rel, NoLock);
			s->pages_read += l->meta.nlayers;
		}
		/* (the transaction's own keys not set yet: bfpending.c) */
		if (found || bf_pending_contains(l->relid, h))
			return true;
	}
	return false;
}
