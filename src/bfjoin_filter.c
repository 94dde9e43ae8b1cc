/*-------------------------------------------------------------------------
 *
 * bfjoin_filter.c
 *	  The bits of a bloomfilter index's leaves, as a join node probes them:
 *	  in batches, from a copy in memory when that pays, else page by page.
 *
 * Built only on what bfindex.h exports: the planner and the executor find
 * the leaves and check them here without raising errors (a join must give
 * the plain plan's rows, never fail, where the index cannot answer: it then
 * checks every row exactly), read the metapages, look the transaction's
 * own keys not set yet up where the index says "no" (bfpending.c), and
 * copy the layers as bfprobesite.c does, within bloomfilter.cache_budget.
 *
 * Why a copy made at the first row serves the whole execution: the
 * executor's snapshot was taken before it, and every key of a row committed
 * before a snapshot is in a layer the metapage read afterwards names (see
 * bfprobesite.c).  Rows committed later are not visible to the snapshot.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bfjoin_filter.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "catalog/index.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "executor/executor.h"
#include "pgstat.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "access/htup_details.h"
#include "catalog/pg_index.h"

#include "bfindex.h"
#include "bfjoin.h"

/* keys whose blocks are asked for ahead of their test */
#define BFJ_PREFETCH_DISTANCE	8

typedef struct BfJoinLeaf
{
	Relation	rel;
	BfMetaPageData meta;
	const uint8 *bits[BF_MAX_LAYERS];	/* the copy of each layer, once read */
	void	   *alloc[BF_MAX_LAYERS];
} BfJoinLeaf;

struct BfJoinFilter
{
	MemoryContext cxt;
	BloomKeyType kt;
	int			nleaves;
	BfJoinLeaf *leaves;
	bool		same_seed;		/* every leaf hashes with leaves[0]'s seed */
	bool		copied;			/* every layer of every leaf is in memory */
	uint64		copy_pages;		/* pages a copy reads; 0: over the budget */
	Size		bytes;			/* bits of every layer of every leaf */
	uint64		pages_read;		/* by page probes so far */
	MemoryContext hash_cxt;		/* what hashing a key allocates (numeric) */
	uint64	   *h;				/* a batch's hashes */
	bool	   *found;
	int			batch;			/* room in h and found */
};

/*
 * bloomfilter.join_filter: read by the planner (whether to offer the path)
 * and by the executor (a plan made with it on checks every row when it is
 * off), so it lives below both.
 */
bool		bf_join_filter_enabled = true;

/*
 * Does PostgreSQL trust the index for this transaction (bf_index_trust: as
 * the planner requires of any index)?  *too_new is set where it is only
 * too new for this transaction's snapshots: a later one may use it.
 */
static bool
index_usable(Oid indexoid, bool *too_new)
{
	BfTrust		trust = bf_index_trust(indexoid);

	if (trust == BF_TRUST_TOO_NEW && too_new)
		*too_new = true;
	return trust == BF_TRUSTED;
}

/*
 * Open a leaf for the planner or the join node and read its metapage: NULL,
 * without an error, where it is not a bloomfilter index this code can read
 * (gone, its OID reused, corrupted, of another format version).
 */
static Relation
leaf_open(Oid leafoid, BfMetaPageData *meta)
{
	Relation	rel = try_relation_open(leafoid, AccessShareLock);

	if (rel == NULL)
		return NULL;
	if (rel->rd_rel->relkind != RELKIND_INDEX ||
		rel->rd_indam == NULL || rel->rd_indam->ambuild != bfbuild ||
		!bf_try_read_meta(rel, meta))
	{
		relation_close(rel, AccessShareLock);
		return NULL;
	}
	return rel;
}

/*
 * For the planner: the share of absent keys that some leaf answers "maybe"
 * for (from each layer's blocks, hashes and keys counted so far, so that a
 * filter filled past its rate is seen), the leaves' bitmap pages, and their
 * layers (pages a probe reads); *content changes with the keys, layers and
 * blocks the leaves hold (the planner's cache of what it probed is keyed by
 * it).  false if a leaf cannot be read.
 */
bool
bf_join_index_shape(List *leaves, double *fpr, double *pages, int *layers,
					uint64 *content)
{
	double		none = 1.0;
	ListCell   *lc;

	*pages = 0;
	*layers = 0;
	*content = 0;
	foreach(lc, leaves)
	{
		BfMetaPageData meta;
		Relation	rel = leaf_open(lfirst_oid(lc), &meta);

		if (rel == NULL)
			return false;
		relation_close(rel, NoLock);
		for (uint32 i = 0; i < meta.nlayers; i++)
		{
			const BfLayer *l = &meta.layers[i];

			none *= 1.0 - bloom_expected_fpr(l->nblocks, (int) l->k,
											 (double) l->nkeys);
			*pages += l->npages;
			*content += l->nkeys + (l->nblocks << 20) + ((uint64) l->id << 40);
		}
		*layers += (int) meta.nlayers;
	}
	*fpr = Min(Max(1.0 - none, 0.0), 1.0);
	return true;
}

/*
 * For the planner's estimate: open the leaves and read their metapages;
 * NIL where one cannot be read.  Closed by bf_join_close_leaves.
 */
List *
bf_join_open_leaves(List *leaves, List **metas)
{
	List	   *rels = NIL;
	ListCell   *lc;

	*metas = NIL;
	foreach(lc, leaves)
	{
		BfMetaPageData *meta = palloc(sizeof(BfMetaPageData));
		Relation	rel = leaf_open(lfirst_oid(lc), meta);

		if (rel == NULL)
		{
			bf_join_close_leaves(rels);
			*metas = NIL;
			return NIL;
		}
		rels = lappend(rels, rel);
		*metas = lappend(*metas, meta);
	}
	return rels;
}

void
bf_join_close_leaves(List *rels)
{
	ListCell   *lc;

	foreach(lc, rels)
		relation_close(lfirst(lc), NoLock);
	list_free(rels);
}

/*
 * The tables the exact checks' inner side (ps, initialized) scans: an
 * Append or MergeAppend holds only the subplans its initial pruning kept
 * (ExecInitAppend initializes no other), and its pruning at each rescan
 * (on the Nested Loop's PARAM_EXEC parameters) picks among those, so the
 * tables found here are every table the exact checks may read for this
 * execution.  false where a node is not one this walk knows (a scan of no
 * table, a foreign or custom scan, a subquery): the caller keeps every leaf.
 */
typedef struct ScannedRels
{
	List	   *relids;
	bool		unsure;
} ScannedRels;

static bool
scanned_walker(PlanState *ps, void *context)
{
	ScannedRels *sr = (ScannedRels *) context;

	if (ps == NULL || sr->unsure)
		return false;
	switch (nodeTag(ps->plan))
	{
		case T_SeqScan:
		case T_SampleScan:
		case T_IndexScan:
		case T_IndexOnlyScan:
		case T_BitmapIndexScan:
		case T_BitmapHeapScan:
		case T_TidScan:
#if PG_VERSION_NUM >= 140000
		case T_TidRangeScan:
#endif
			{
				Index		scanrelid = ((Scan *) ps->plan)->scanrelid;

				if (scanrelid == 0)
				{
					sr->unsure = true;
					return false;
				}
				sr->relids = list_append_unique_oid(sr->relids,
													exec_rt_fetch(scanrelid,
																  ps->state)->relid);
				break;
			}
		case T_Append:
		case T_MergeAppend:
		case T_BitmapAnd:
		case T_BitmapOr:
		case T_Result:
		case T_Material:
		case T_Memoize:
		case T_Sort:
		case T_IncrementalSort:
		case T_Unique:
			break;
		default:
			sr->unsure = true;
			return false;
	}
	return planstate_tree_walker(ps, scanned_walker, context);
}

/*
 * The leaves (OIDs) whose tables the exact checks' inner side ps scans, of
 * those the plan recorded, or every one where unsure: a partition pruned at
 * the executor's startup (a generic plan's parameter on the partition key)
 * is then neither opened, locked nor probed.  Why the rows stay the plain
 * plan's: a key whose rows all lie in partitions the exact checks' plan
 * pruned is found by no exact check either (their restrictions exclude
 * every row of those partitions), so leaving their leaves out changes no
 * answer; keeping more leaves than needed is always safe, and a leaf whose
 * partition the exact checks do scan is always kept, since the leaves are
 * matched by the tables scanned, never guessed.  Each process of a parallel
 * query prunes with the same parameters, and a worker probing the leader's
 * shared bits probes the leader's leaves.
 */
List *
bf_join_scanned_leaves(List *leaves, PlanState *ps)
{
	ScannedRels sr = {NIL, false};
	List	   *kept = NIL;
	ListCell   *lc;

	if (list_length(leaves) <= 1)
		return leaves;
	scanned_walker(ps, &sr);
	if (sr.unsure)
		return leaves;
	foreach(lc, leaves)
	{
		Oid			heap = IndexGetRelation(lfirst_oid(lc), true);

		/* an index gone since the plan: kept, the filter refuses it */
		if (!OidIsValid(heap) || list_member_oid(sr.relids, heap))
			kept = lappend_oid(kept, lfirst_oid(lc));
	}
	list_free(sr.relids);
	return kept;
}

/* Read every layer of every leaf into memory. */
static void
filter_copy(BfJoinFilter *f)
{
	for (int n = 0; n < f->nleaves; n++)
	{
		BfJoinLeaf *l = &f->leaves[n];

		while (!bf_copy_layers(l->rel, &l->meta, f->cxt, l->alloc, l->bits))
			bf_read_meta(l->rel, &l->meta);
	}
	f->copied = true;
}

/*
 * Open the filter of an index for keys of type keytype (collation keycoll),
 * for about "rows" probes, or NULL where it cannot answer.  The leaves are
 * those the plan was made for, whose partitions its exact checks scan
 * (partitions found now may differ: a DETACH CONCURRENTLY since); NULL where
 * one is gone, is not a bloomfilter index (an OID reused), is not trusted
 * for this transaction or cannot be read, or where its keys are of another
 * family.  The transaction's own keys not set yet are looked up by each
 * probe (bfpending.c).  The leaves stay open (and locked)
 * until bf_join_filter_close.
 */
BfJoinFilter *
bf_join_filter_open(List *leaves, Oid keytype, Oid keycoll, double rows,
					MemoryContext cxt)
{
	MemoryContext old;
	BfJoinFilter *f;
	ListCell   *lc;
	int			n = 0;
	Size		bytes = 0;
	uint32		layers = 0;

	foreach(lc, leaves)
		if (!index_usable(lfirst_oid(lc), NULL))
			return NULL;

	old = MemoryContextSwitchTo(cxt);
	f = palloc0(sizeof(BfJoinFilter));
	f->cxt = cxt;
	f->hash_cxt = AllocSetContextCreate(cxt, "bloom join key hashes",
										ALLOCSET_SMALL_SIZES);
	if (leaves == NIL ||
		!bloom_key_type_try_init(&f->kt, keytype, keycoll, cxt) ||
		f->kt.kind == KEY_ENUM)
	{
		MemoryContextSwitchTo(old);
		return NULL;
	}
	f->leaves = palloc0(list_length(leaves) * sizeof(BfJoinLeaf));
	f->same_seed = true;
	foreach(lc, leaves)
	{
		BfJoinLeaf *l = &f->leaves[n];

		l->rel = try_relation_open(lfirst_oid(lc), AccessShareLock);
		if (l->rel == NULL)
		{
			bf_join_filter_close(f);
			MemoryContextSwitchTo(old);
			return NULL;
		}
		f->nleaves = ++n;
		if (l->rel->rd_rel->relkind != RELKIND_INDEX ||
			l->rel->rd_indam == NULL || l->rel->rd_indam->ambuild != bfbuild ||
			RelationGetNumberOfBlocks(l->rel) == 0)
		{
			bf_join_filter_close(f);
			MemoryContextSwitchTo(old);
			return NULL;
		}
		bf_predicate_lock_table(l->rel);
		if (!bf_try_read_meta(l->rel, &l->meta) ||
			strcmp(l->meta.family, f->kt.family) != 0 ||
			bloom_family_is_enum(l->meta.family))
		{
			bf_join_filter_close(f);
			MemoryContextSwitchTo(old);
			return NULL;
		}
		if (l->meta.seed != f->leaves[0].meta.seed)
			f->same_seed = false;
		/* an index scan of each leaf, for pg_stat_user_indexes */
		pgstat_count_index_scan(l->rel);
		for (uint32 i = 0; i < l->meta.nlayers; i++)
		{
			f->copy_pages += l->meta.layers[i].npages;
			bytes += l->meta.layers[i].nblocks * BLOOM_BLOCK_BYTES;
		}
		layers += l->meta.nlayers;
	}
	f->bytes = bytes;
	if (bytes > (Size) bloom_cache_budget_kb * 1024)
		f->copy_pages = 0;

	/* copy at once where the probes would read as many pages */
	if (f->copy_pages > 0 && rows * Max(layers, 1) >= (double) f->copy_pages)
		filter_copy(f);
	MemoryContextSwitchTo(old);
	return f;
}

/* Are the bits in memory (probes in batches, with prefetching)? */
bool
bf_join_filter_in_memory(const BfJoinFilter *f)
{
	return f->copied;
}

/* The size of the bits, every layer of every leaf. */
Size
bf_join_filter_bytes(const BfJoinFilter *f)
{
	return f->bytes;
}

/* Make room for a batch of n keys. */
static void
filter_room(BfJoinFilter *f, int n)
{
	if (n <= f->batch)
		return;
	if (f->h)
	{
		pfree(f->h);
		pfree(f->found);
	}
	f->h = MemoryContextAlloc(f->cxt, n * sizeof(uint64));
	f->found = MemoryContextAlloc(f->cxt, n * sizeof(bool));
	f->batch = n;
}

/*
 * Probe a batch of keys (none NULL): maybe[i] is false where no row of the
 * table holds keys[i], true where one may.  From the copy, each layer is
 * probed over the whole batch, the blocks of the keys a few places ahead
 * asked for before the key at hand is tested, so that the cache misses of
 * a large filter overlap.
 */
void
bf_join_filter_probe(BfJoinFilter *f, const Datum *keys, int n, bool *maybe)
{
	uint64	   *h;
	bool	   *found;

	if (!f->copied && f->copy_pages > 0 && f->pages_read >= f->copy_pages)
		filter_copy(f);
	filter_room(f, n);
	h = f->h;
	found = f->found;
	memset(found, 0, n * sizeof(bool));

	for (int leaf = 0; leaf < f->nleaves; leaf++)
	{
		BfJoinLeaf *l = &f->leaves[leaf];

		if (leaf == 0 || !f->same_seed)
		{
			MemoryContext old = MemoryContextSwitchTo(f->hash_cxt);

			/* reset at each key: a detoasted 1 MB key is freed at once */
			for (int i = 0; i < n; i++)
			{
				h[i] = bloom_key_hash(&f->kt, keys[i], l->meta.seed);
				MemoryContextReset(f->hash_cxt);
			}
			MemoryContextSwitchTo(old);
		}

		if (f->copied)
		{
			for (uint32 j = 0; j < l->meta.nlayers; j++)
			{
				const uint8 *bits = l->bits[j];
				uint64		nblocks = l->meta.layers[j].nblocks;
				int			k = (int) l->meta.layers[j].k;

				for (int i = 0; i < n + BFJ_PREFETCH_DISTANCE; i++)
				{
					int			t = i - BFJ_PREFETCH_DISTANCE;

					if (i < n && !found[i])
						__builtin_prefetch(bits + bloom_block_of(h[i], nblocks) *
										   BLOOM_BLOCK_BYTES, 0);
					if (t >= 0 && !found[t])
						found[t] = bloom_block_test(bits +
													bloom_block_of(h[t], nblocks) *
													BLOOM_BLOCK_BYTES, k, h[t]);
				}
			}
		}
		else
		{
			for (int i = 0; i < n; i++)
				if (!found[i])
					found[i] = bf_probe_hash(l->rel, &l->meta, h[i]);
			f->pages_read += (uint64) n * l->meta.nlayers;
		}
		/* the transaction's own keys not set yet (bfpending.c) */
		if (bf_pending_any())
			for (int i = 0; i < n; i++)
				if (!found[i])
					found[i] = bf_pending_contains(RelationGetRelid(l->rel), h[i]);
	}
	memcpy(maybe, found, n * sizeof(bool));
}

/* Close the leaves; the memory goes with the caller's context. */
void
bf_join_filter_close(BfJoinFilter *f)
{
	for (int n = 0; n < f->nleaves; n++)
	{
		bf_free_layers(f->leaves[n].alloc, f->leaves[n].bits);
		if (f->leaves[n].rel)
			relation_close(f->leaves[n].rel, NoLock);
		f->leaves[n].rel = NULL;
	}
	f->nleaves = 0;
}

/*
 * For a parallel query: copy the bits now where the rows of every process
 * together read about as many pages as they hold (each process would
 * otherwise read them page by page, or copy them, on its own).
 */
void
bf_join_filter_copy_for(BfJoinFilter *f, double rows)
{
	uint32		layers = 0;

	if (f->copied || f->copy_pages == 0)
		return;
	for (int n = 0; n < f->nleaves; n++)
		layers += f->leaves[n].meta.nlayers;
	if (rows * Max(layers, 1) >= (double) f->copy_pages)
		filter_copy(f);
}

/*
 * A copy of the bits in a parallel query's shared memory, which the leader
 * and its workers probe (one copy for the query, not one per process):
 * the number of leaves, then each leaf's metapage and its layers' bits,
 * each layer aligned to a block.  Its size, or 0 where the bits are not in
 * memory (each process then reads the index's pages itself).
 */
Size
bf_join_filter_share_size(const BfJoinFilter *f)
{
	Size		size = MAXALIGN(sizeof(int32));

	if (!f->copied)
		return 0;
	for (int n = 0; n < f->nleaves; n++)
	{
		const BfMetaPageData *meta = &f->leaves[n].meta;

		size = add_size(size, MAXALIGN(sizeof(BfMetaPageData)));
		for (uint32 i = 0; i < meta->nlayers; i++)
			size = add_size(size, add_size(mul_size(meta->layers[i].nblocks,
													BLOOM_BLOCK_BYTES),
										   BLOOM_BLOCK_BYTES));
	}
	return size;
}

/*
 * Move the copy into dst (bf_join_filter_share_size bytes): the filter
 * probes it there from now on, its own copy freed.
 */
void
bf_join_filter_share(BfJoinFilter *f, char *dst)
{
	*(int32 *) dst = f->nleaves;
	dst += MAXALIGN(sizeof(int32));
	for (int n = 0; n < f->nleaves; n++)
	{
		BfJoinLeaf *l = &f->leaves[n];
		const uint8 *bits[BF_MAX_LAYERS] = {0};

		memcpy(dst, &l->meta, sizeof(BfMetaPageData));
		dst += MAXALIGN(sizeof(BfMetaPageData));
		for (uint32 i = 0; i < l->meta.nlayers; i++)
		{
			Size		len = l->meta.layers[i].nblocks * BLOOM_BLOCK_BYTES;
			uint8	   *b = (uint8 *) TYPEALIGN(BLOOM_BLOCK_BYTES, dst);

			memcpy(b, l->bits[i], len);
			bits[i] = b;
			dst = (char *) b + len;
		}
		bf_free_layers(l->alloc, l->bits);
		memcpy(l->bits, bits, sizeof(bits));
	}
}

/*
 * In a parallel worker: the filter of the leader's shared copy (src), for
 * keys of type keytype (collation keycoll), with no relation opened (the
 * leader holds the leaves' locks for the query), or NULL where the key
 * type cannot be hashed (it could for the leader).
 */
BfJoinFilter *
bf_join_filter_attach(const char *src, Oid keytype, Oid keycoll,
					  MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	BfJoinFilter *f = palloc0(sizeof(BfJoinFilter));
	int			nleaves = *(const int32 *) src;

	f->cxt = cxt;
	f->hash_cxt = AllocSetContextCreate(cxt, "bloom join key hashes",
										ALLOCSET_SMALL_SIZES);
	if (nleaves <= 0 ||
		!bloom_key_type_try_init(&f->kt, keytype, keycoll, cxt) ||
		f->kt.kind == KEY_ENUM)
	{
		MemoryContextSwitchTo(old);
		return NULL;
	}
	src += MAXALIGN(sizeof(int32));
	f->leaves = palloc0(nleaves * sizeof(BfJoinLeaf));
	f->same_seed = true;
	for (int n = 0; n < nleaves; n++)
	{
		BfJoinLeaf *l = &f->leaves[n];

		memcpy(&l->meta, src, sizeof(BfMetaPageData));
		src += MAXALIGN(sizeof(BfMetaPageData));
		for (uint32 i = 0; i < l->meta.nlayers; i++)
		{
			Size		len = l->meta.layers[i].nblocks * BLOOM_BLOCK_BYTES;

			l->bits[i] = (const uint8 *) TYPEALIGN(BLOOM_BLOCK_BYTES, src);
			src = (const char *) l->bits[i] + len;
			f->bytes += len;
		}
		if (l->meta.seed != f->leaves[0].meta.seed)
			f->same_seed = false;
	}
	f->nleaves = nleaves;
	f->copied = true;
	MemoryContextSwitchTo(old);
	return f;
}
