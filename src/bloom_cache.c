/*-------------------------------------------------------------------------
 *
 * bloom_cache.c
 *	  The per-call-site cache of stored filters behind bloom_contains: the
 *	  detoasted copies keyed by their TOAST identity, the sliced probes of a
 *	  large filter before it is read whole, and the decompressed copies of
 *	  filters compressed in their rows, keyed by their compressed bytes.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_cache.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/mman.h>

#include "access/detoast.h"
#include "utils/memutils.h"

#include "bloom_pg.h"

/*
 * The per-call-site cache of bloom_contains.
 *
 * A filter stored in a table arrives as a TOAST pointer on every row, and
 * detoasting it per row would make a probe cost as much as copying the whole
 * filter.  So the detoasted filters are kept with the call site (fn_extra),
 * keyed by the identity of the stored value (toast relation and value OID,
 * which a stored value keeps for its whole life and never shares), in a small
 * open-addressing table: a join against a table of per-partition filters hits it as well as a
 * scalar subquery does.  The copies are 64-byte aligned so that each block is
 * one cache line.  The table grows with the number of filters (a table of
 * one filter per day holds hundreds); when the copies outgrow the memory
 * budget, or the table its largest size, the cache is emptied and starts
 * again.
 *
 * Reading a large filter whole for a handful of probes would be a waste (a
 * prepared single-key lookup probes once per execution), so a large,
 * uncompressed stored filter is first probed in slices: its header once, then
 * one 64-byte block per probe, each a TOAST index lookup.  Once the slices
 * have cost about as much as reading the whole value would have, the value
 * is read and kept.  The total is at most about twice the better of the two.
 * A sliced entry counts for nothing against the budget until it is read
 * whole, and is read only within the budget: a filter larger than the whole
 * budget stays sliced.
 */
#define CACHE_MIN_SLOTS	64		/* power of two; at most half are used */
#define CACHE_MAX_SLOTS	65536	/* so at most 32768 filters at once */
#define CACHE_BUDGET	((Size) bloom_cache_budget_kb * 1024)

/* bloomfilter.cache_budget, in kB (defined in _PG_init) */
int			bloom_cache_budget_kb = 256 * 1024;
#define SLICE_MIN_SIZE	(64 * 1024) /* smaller values are read whole */
#define SLICE_BYTES_PER_PROBE	(16 * 1024) /* a slice costs a read of this */

/*
 * A filter stored compressed in its row (storage main) has no TOAST
 * identity, and its datum's address is no identity either: the same address
 * holds another row's value after the next page is read.  What identifies it
 * is its compressed bytes, so a few of them are kept beside their
 * decompressed copies, and a value is looked up by comparing its bytes whole
 * (a compressed filter in a row is at most a few kB, far cheaper to compare
 * than to decompress; no hash, so no collision can answer with another
 * filter's bits).
 */
#define CACHE_INLINE_SLOTS	8

typedef struct InlineCopy
{
	struct varlena *packed;		/* the compressed value, NULL: free */
	bytea	   *filter;			/* its decompressed copy */
} InlineCopy;

struct BloomCache
{
	MemoryContext mcxt;			/* holds this and the table (fn_mcxt) */
	MemoryContext cxt;			/* holds the copies */
	Size		used;
	int			nentries;
	BloomCachedFilter *last;	/* the most recent hit, checked first */
	BloomCachedFilter *slots;	/* nslots entries, in mcxt */
	int			nslots;
	InlineCopy	inl[CACHE_INLINE_SLOTS];	/* copies in cxt */
	int			inl_last;		/* the most recent hit, checked first */
	int			inl_next;		/* the slot to fill next */
};

static BloomCachedFilter *
cache_slot(BloomCachedFilter *slots, int nslots, Oid toastrelid, Oid valueid)
{
	uint32		i = (valueid * 0x9E3779B1U ^ toastrelid) & (nslots - 1);

	for (;;)
	{
		BloomCachedFilter *e = &slots[i];

		if (e->valueid == InvalidOid ||
			(e->valueid == valueid && e->toastrelid == toastrelid))
			return e;
		i = (i + 1) & (nslots - 1);
	}
}

/* Drop every filter of the cache: their copies and their entries. */
static void
cache_reset(BloomCache *c)
{
	ereport(DEBUG1,
			errmsg_internal("bloom_contains cache dropped %d stored filters (%zu kB of copies)",
							c->nentries, c->used / 1024));
	MemoryContextReset(c->cxt);
	memset(c->slots, 0, c->nslots * sizeof(BloomCachedFilter));
	memset(c->inl, 0, sizeof(c->inl));
	c->used = 0;
	c->nentries = 0;
	c->last = NULL;
}

/*
 * Make room for one more entry that will hold size bytes: double the table
 * while it may grow, else (or when the copies would outgrow the budget)
 * empty the cache.
 */
static void
cache_make_room(BloomCache *c, Size size)
{
	if (c->nentries + 1 > c->nslots / 2 && c->nslots < CACHE_MAX_SLOTS)
	{
		int			nslots = c->nslots * 2;
		BloomCachedFilter *slots = MemoryContextAllocZero(c->mcxt, nslots * sizeof(BloomCachedFilter));

		for (int i = 0; i < c->nslots; i++)
			if (c->slots[i].valueid != InvalidOid)
				*cache_slot(slots, nslots, c->slots[i].toastrelid,
							c->slots[i].valueid) = c->slots[i];
		pfree(c->slots);
		c->slots = slots;
		c->nslots = nslots;
	}
	if (c->nentries + 1 > c->nslots / 2 || c->used + size > CACHE_BUDGET)
		cache_reset(c);
	c->last = NULL;
}

#ifdef MADV_HUGEPAGE
/*
 * A large filter is probed at random places, one cache line each; on 4 kB
 * pages nearly every probe of a filter of many megabytes also misses the
 * TLB, which adds about half again to the probe.  So large copies get memory of their own, aligned to 2 MB
 * and marked for transparent huge pages (advice: nothing changes where the
 * kernel refuses).  The mapping is released with the cache's memory context.
 */
#define HUGE_PAGE		((Size) 2 * 1024 * 1024)
#define HUGE_MIN_SIZE	((Size) 4 * 1024 * 1024)

typedef struct MappedCopy
{
	void	   *addr;
	Size		len;
	MemoryContextCallback cb;
} MappedCopy;

static void
unmap_copy(void *arg)
{
	MappedCopy *m = (MappedCopy *) arg;

	munmap(m->addr, m->len);
}

static bytea *
alloc_mapped(MemoryContext cxt, Size size)
{
	MappedCopy *m = MemoryContextAlloc(cxt, sizeof(MappedCopy));
	Size		len = TYPEALIGN(HUGE_PAGE, size) + HUGE_PAGE;
	void	   *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
						 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t	start;

	if (p == MAP_FAILED)
	{
		pfree(m);
		return NULL;
	}
	m->addr = p;
	m->len = len;
	m->cb.func = unmap_copy;
	m->cb.arg = m;
	MemoryContextRegisterResetCallback(cxt, &m->cb);

	start = TYPEALIGN(HUGE_PAGE, (uintptr_t) p);
	(void) madvise((void *) start, (uintptr_t) p + len - start, MADV_HUGEPAGE);
	/* VARHDRSZ + BLOOM_HEADER_SIZE is 128: the bits start 64-byte aligned */
	return (bytea *) start;
}
#endif

/* The memory a copy of a filter of size bytes takes, as cache_load places it. */
static Size
copy_charge(Size size)
{
#ifdef MADV_HUGEPAGE
	if (size >= HUGE_MIN_SIZE)
		return TYPEALIGN(HUGE_PAGE, size) + HUGE_PAGE;
#endif
	return size + BLOOM_BLOCK_BYTES;
}

/* Read a stored filter whole into the cache entry. */
static void
cache_load(BloomCache *c, BloomCachedFilter *e, struct varlena *ptr)
{
	struct varlena *detoasted = detoast_attr(ptr);
	Size		size = VARSIZE(detoasted);
	bytea	   *copy = NULL;

#ifdef MADV_HUGEPAGE
	if (size >= HUGE_MIN_SIZE)
		copy = alloc_mapped(c->cxt, size);
#endif
	if (copy == NULL)
	{
		/* place the copy so that its bits start on a 64-byte boundary */
		char	   *mem = MemoryContextAllocHuge(c->cxt, size + BLOOM_BLOCK_BYTES);

		copy = (bytea *) (mem + ((BLOOM_BLOCK_BYTES -
								  ((uintptr_t) mem + VARHDRSZ + BLOOM_HEADER_SIZE) %
								  BLOOM_BLOCK_BYTES) % BLOOM_BLOCK_BYTES));
	}
	memcpy(copy, detoasted, size);
	pfree(detoasted);
	bloom_open(copy, &e->f);
	e->loaded = true;
	c->used += copy_charge(size);
}

/*
 * Find or start the cache entry of the stored filter behind an on-disk TOAST
 * pointer.  A new entry is either loaded or, for a large uncompressed value,
 * has just its header read, for sliced probes.
 */
BloomCachedFilter *
bloom_cache_get(BloomCache *c, struct varlena *ptr)
{
	struct varatt_external toast;
	BloomCachedFilter *e;
	Size		rawsize,
				extsize,
				charge;
	bool		sliced;

	VARATT_EXTERNAL_GET_POINTER(toast, ptr);
	if (c->last && c->last->valueid == toast.va_valueid &&
		c->last->toastrelid == toast.va_toastrelid)
		return c->last;

	e = cache_slot(c->slots, c->nslots, toast.va_toastrelid, toast.va_valueid);
	if (e->valueid != InvalidOid)
		return c->last = e;

	rawsize = toast.va_rawsize;
#if PG_VERSION_NUM >= 140000
	extsize = VARATT_EXTERNAL_GET_EXTSIZE(toast);
#else
	extsize = toast.va_extsize;
#endif
	sliced = rawsize >= SLICE_MIN_SIZE && extsize == rawsize - VARHDRSZ;
	/* a sliced entry holds no copy until it is loaded (and budgeted then) */
	charge = sliced ? 0 : copy_charge(rawsize);
	if (c->nentries + 1 > c->nslots / 2 || c->used + charge > CACHE_BUDGET)
	{
		cache_make_room(c, charge);
		e = cache_slot(c->slots, c->nslots, toast.va_toastrelid, toast.va_valueid);
	}
	memset(e, 0, sizeof(*e));

	if (sliced)
	{
		struct varlena *hdr = detoast_attr_slice(ptr, 0, BLOOM_HEADER_SIZE);
		BloomError	err = BLOOM_ERR_TRUNCATED;

		if (VARSIZE_ANY_EXHDR(hdr) == BLOOM_HEADER_SIZE)
			err = bloom_read_header_only((uint8 *) VARDATA_ANY(hdr),
										 rawsize - VARHDRSZ, &e->f);
		if (err != BLOOM_OK)
			ereport(ERROR,
					errcode(ERRCODE_DATA_CORRUPTED),
					errmsg("bloom filter is corrupt"),
					errdetail("%s", bloom_error_message(err)));
		pfree(hdr);
		e->slices_left = rawsize / SLICE_BYTES_PER_PROBE;
	}
	else
		cache_load(c, e, ptr);

	e->toastrelid = toast.va_toastrelid;
	e->valueid = toast.va_valueid;
	c->nentries++;
	return c->last = e;
}

/* Test a hash against one block of a stored filter, read as a slice. */
static bool
sliced_test(const BloomFilter *f, struct varlena *ptr, uint64 h)
{
	uint64		block = bloom_block_of(h, f->nblocks);
	struct varlena *slice;
	bool		found;

	slice = detoast_attr_slice(ptr, BLOOM_HEADER_SIZE + block * BLOOM_BLOCK_BYTES,
							   BLOOM_BLOCK_BYTES);
	if (VARSIZE_ANY_EXHDR(slice) != BLOOM_BLOCK_BYTES)
		ereport(ERROR,
				errcode(ERRCODE_DATA_CORRUPTED),
				errmsg("bloom filter is corrupt"),
				errdetail("A block of the stored filter could not be read whole."));
	found = bloom_block_test((uint8 *) VARDATA_ANY(slice), f->nhashes, h);
	pfree(slice);
	return found;
}

/*
 * Test a hash against a stored filter that is not loaded yet: by a slice
 * while slices are cheaper than reading it whole, else after loading it.
 * Loading goes through the budget like any other copy: a filter that would
 * take the copies over it empties the cache first (and keeps its own entry),
 * and one larger than the whole budget is never loaded, only sliced.
 */
bool
bloom_cache_test_unloaded(BloomCache *c, BloomCachedFilter *e,
						  struct varlena *ptr, uint64 h)
{
	struct varatt_external toast;
	Size		size;

	Assert(!e->loaded);
	if (e->slices_left > 0)
	{
		e->slices_left--;
		return sliced_test(&e->f, ptr, h);
	}
	VARATT_EXTERNAL_GET_POINTER(toast, ptr);
	size = copy_charge(toast.va_rawsize);
	if (size > CACHE_BUDGET)
		return sliced_test(&e->f, ptr, h);
	if (c->used + size > CACHE_BUDGET)
	{
		BloomCachedFilter keep = *e;

		cache_reset(c);
		e = cache_slot(c->slots, c->nslots, keep.toastrelid, keep.valueid);
		*e = keep;
		c->nentries = 1;
		c->last = e;
	}
	cache_load(c, e, ptr);
	return bloom_test_hash(e->f.bits, e->f.nblocks, e->f.nhashes, h);
}

/*
 * The decompressed filter of a value compressed in its row, from the cache
 * when the same compressed bytes came before.  Within the budget like the
 * other copies; one larger than the whole budget is decompressed and not kept.
 */
bytea *
bloom_cache_get_inline(BloomCache *c, struct varlena *packed)
{
	Size		len = VARSIZE_ANY(packed);
	struct varlena *detoasted;
	Size		charge;
	InlineCopy *slot;

	for (int n = 0; n < CACHE_INLINE_SLOTS; n++)
	{
		int			i = (c->inl_last + n) % CACHE_INLINE_SLOTS;
		InlineCopy *ic = &c->inl[i];

		if (ic->packed != NULL && VARSIZE_ANY(ic->packed) == len &&
			memcmp(ic->packed, packed, len) == 0)
		{
			c->inl_last = i;
			return ic->filter;
		}
	}

	detoasted = detoast_attr(packed);
	charge = len + VARSIZE(detoasted);
	if (charge > CACHE_BUDGET)
		return (bytea *) detoasted;
	if (c->used + charge > CACHE_BUDGET)
		cache_reset(c);
	slot = &c->inl[c->inl_next];
	if (slot->packed != NULL)
	{
		/* the slot's old copies are freed, not left until the next reset */
		c->used -= VARSIZE_ANY(slot->packed) + VARSIZE(slot->filter);
		pfree(slot->packed);
		pfree(slot->filter);
	}
	slot->packed = MemoryContextAlloc(c->cxt, len);
	memcpy(slot->packed, packed, len);
	slot->filter = MemoryContextAllocHuge(c->cxt, VARSIZE(detoasted));
	memcpy(slot->filter, detoasted, VARSIZE(detoasted));
	pfree(detoasted);
	c->used += charge;
	c->inl_last = c->inl_next;
	c->inl_next = (c->inl_next + 1) % CACHE_INLINE_SLOTS;
	return slot->filter;
}

/* An empty cache in mcxt (the call site's fn_mcxt), for bloom_cache_get. */
BloomCache *
bloom_cache_create(MemoryContext mcxt)
{
	BloomCache *c = MemoryContextAllocZero(mcxt, sizeof(BloomCache));

	c->mcxt = mcxt;
	c->cxt = AllocSetContextCreate(mcxt, "bloom_contains cache",
								   ALLOCSET_DEFAULT_SIZES);
	c->nslots = CACHE_MIN_SLOTS;
	c->slots = MemoryContextAllocZero(mcxt,
									  c->nslots * sizeof(BloomCachedFilter));
	return c;
}
