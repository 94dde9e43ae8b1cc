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
#include "catalog/pg_inherits.h"
#include "miscadmin.h"
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

/* a leaf index and its table */
typedef struct BfLeafPair
{
	Oid			table;
	Oid			index;
} BfLeafPair;

static int
leaf_pair_cmp(const void *a, const void *b)
{
	Oid			x = ((const BfLeafPair *) a)->table;
	Oid			y = ((const BfLeafPair *) b)->table;

	return (x > y) - (x < y);
}

/*
 * The leaf indexes whose keys together are every key of the index's table
 * (the index itself, or under a partitioned index one valid index for each
 * leaf partition), as bf_leaf_indexes finds them, but false instead of an
 * error where they are not: a partition that no leaf index covers, or a
 * leaf PostgreSQL does not trust (*too_new set where a later transaction
 * may).  The partitions and their indexes are locked as they would be by a
 * scan.
 */
bool
bf_join_leaves(Oid indexoid, List **leaves, bool *too_new)
{
	char		kind = get_rel_relkind(indexoid);
	Oid			heapoid;
	List	   *tables;
	List	   *indexes;
	BfLeafPair *pairs;
	int			npairs = 0;
	ListCell   *lc;

	*leaves = NIL;
	if (kind == RELKIND_INDEX)
	{
		if (!index_usable(indexoid, too_new))
			return false;
		*leaves = list_make1_oid(indexoid);
		return true;
	}
	if (kind != RELKIND_PARTITIONED_INDEX)
		return false;
	heapoid = IndexGetRelation(indexoid, true);
	if (!OidIsValid(heapoid))
		return false;

	tables = find_all_inheritors(heapoid, AccessShareLock, NULL);
	indexes = find_all_inheritors(indexoid, AccessShareLock, NULL);

	/* each leaf index by its table, sorted: one look-up per partition */
	pairs = palloc(Max(list_length(indexes), 1) * sizeof(BfLeafPair));
	foreach(lc, indexes)
	{
		Oid			index = lfirst_oid(lc);

		if (get_rel_relkind(index) != RELKIND_INDEX)
			continue;
		pairs[npairs].table = IndexGetRelation(index, true);
		pairs[npairs].index = index;
		npairs++;
	}
	qsort(pairs, npairs, sizeof(BfLeafPair), leaf_pair_cmp);

	foreach(lc, tables)
	{
		BfLeafPair	key;
		BfLeafPair *found;

		key.table = lfirst_oid(lc);
		if (get_rel_relkind(key.table) == RELKIND_PARTITIONED_TABLE)
			continue;
		found = bsearch(&key, pairs, npairs, sizeof(BfLeafPair), leaf_pair_cmp);
		if (found == NULL || !index_usable(found->index, too_new))
		{
			list_free(*leaves);
			*leaves = NIL;
			break;
		}
		*leaves = lappend_oid(*leaves, found->index);
	}
	pfree(pairs);
	list_free(tables);
	list_free(indexes);
	return *leaves != NIL;
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
 * layers (pages a probe reads).  false if a leaf cannot be read.
 */
bool
bf_join_index_shape(List *leaves, double *fpr, double *pages, int *layers)
{
	double		none = 1.0;
	ListCell   *lc;

	*pages = 0;
	*layers = 0;
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

			for (int i = 0; i < n; i++)
				h[i] = bloom_key_hash(&f->kt, keys[i], l->meta.seed);
			MemoryContextSwitchTo(old);
			MemoryContextReset(f->hash_cxt);
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
