/*-------------------------------------------------------------------------
 *
 * bloom_funcs.c
 *	  bloom_create, bloom_add and bloom_contains, with the per-call-site
 *	  cache that keeps bloom_contains from re-reading a stored filter.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_funcs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <sys/mman.h>

#include "access/detoast.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "nodes/primnodes.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "bloomfilter.h"

/*
 * Make an empty filter sized for "capacity" distinct keys at a false-positive
 * rate of at most "false_positive_rate".
 */
PG_FUNCTION_INFO_V1(bloom_create);
Datum
bloom_create(PG_FUNCTION_ARGS)
{
	int64		capacity = PG_GETARG_INT64(0);
	double		rate = PG_GETARG_FLOAT8(1);
	uint64		nblocks;
	int			k;

	bloom_plan_or_error(capacity, rate, &nblocks, &k);
	PG_RETURN_BLOOM_P(bloom_new((uint64) capacity, rate, nblocks, k, ""));
}

/*
 * The type of argument argno as called.  Distributed engines call the
 * aggregate's support functions through wrappers of their own (Citus's
 * worker_partial_agg and coord_combine_agg), without a call expression: then
 * the type is the function's declared one, which is concrete for the
 * overloads that such engines push down (sql/bloomfilter--1.0.sql).
 * InvalidOid if neither says.
 */
Oid
bloom_call_arg_type(FunctionCallInfo fcinfo, int argno)
{
	FmgrInfo   *flinfo = fcinfo->flinfo;
	Oid			typid = get_fn_expr_argtype(flinfo, argno);
	Oid		   *argtypes;
	int			nargs;

	if (OidIsValid(typid))
	{
		Aggref	   *aggref = AggGetAggref(fcinfo);

		/*
		 * An aggregate's key of a type with an implicit binary cast to an
		 * overload's type (citext to text) arrives relabelled: hash it as its
		 * own type, as the polymorphic form does.
		 */
		if (aggref != NULL && argno >= 1 && argno <= list_length(aggref->args))
		{
			Node	   *arg = (Node *) list_nth_node(TargetEntry, aggref->args, argno - 1)->expr;

			if (IsA(arg, RelabelType) &&
				((RelabelType *) arg)->relabelformat == COERCE_IMPLICIT_CAST)
				typid = exprType((Node *) ((RelabelType *) arg)->arg);
		}
		return typid;
	}
	if (flinfo->fn_expr != NULL || !OidIsValid(flinfo->fn_oid))
		return typid;
	(void) get_func_signature(flinfo->fn_oid, &argtypes, &nargs);
	if (argno < nargs && !IsPolymorphicType(argtypes[argno]))
		typid = argtypes[argno];
	pfree(argtypes);
	return typid;
}

/*
 * The number of arguments of the call: the declared number where a wrapper
 * calls without a call expression (Citus's coord_combine_agg passes the
 * final function its own argument count, NULLs after the state).
 */
int
bloom_call_nargs(FunctionCallInfo fcinfo)
{
	FmgrInfo   *flinfo = fcinfo->flinfo;

	if (flinfo->fn_expr != NULL || !OidIsValid(flinfo->fn_oid))
		return PG_NARGS();
	return get_func_nargs(flinfo->fn_oid);
}

/* Set up the key type of argument argno in kt, once per call site. */
static BloomKeyType *
key_type(FunctionCallInfo fcinfo, int argno, BloomKeyType *kt)
{
	if (kt->typid == InvalidOid)
		bloom_key_type_init(kt, bloom_call_arg_type(fcinfo, argno),
							PG_GET_COLLATION(), fcinfo->flinfo->fn_mcxt);
	return kt;
}

/*
 * The key type of argument argno, kept in fn_extra: for the functions whose
 * fn_extra holds nothing else (bloom_add, bloom_add_new, bloom_agg).
 */
BloomKeyType *
bloom_call_key_type(FunctionCallInfo fcinfo, int argno)
{
	if (fcinfo->flinfo->fn_extra == NULL)
		fcinfo->flinfo->fn_extra =
			MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(BloomKeyType));
	return key_type(fcinfo, argno, (BloomKeyType *) fcinfo->flinfo->fn_extra);
}

/*
 * A copy of the filter in argument 0 with the key in argument 1 (not NULL)
 * added; *added says whether a bit changed, i.e. the key was surely new.
 * The argument itself is never changed: a query may hold the same datum
 * twice.  The first key of an empty filter fixes its family.
 */
bytea *
bloom_add_key(FunctionCallInfo fcinfo, bool *added)
{
	BloomKeyType *kt = bloom_call_key_type(fcinfo, 1);
	bytea	   *v = PG_GETARG_BLOOM_P_COPY(0);
	BloomFilter f;

	bloom_open(v, &f);
	bloom_check_family(&f, kt);
	*added = bloom_set_hash_changed(f.bits, f.nblocks, f.nhashes,
									bloom_key_hash(kt, PG_GETARG_DATUM(1), f.seed));
	if (f.family[0] == '\0')
	{
		strlcpy(f.family, kt->family, BLOOM_FAMILY_LEN);
		bloom_write_header(BLOOM_PAYLOAD(v), &f);
		*added = true;			/* the filter held nothing before */
	}
	return v;
}

/*
 * Return a copy of the filter with the key added.  A NULL key gives back the
 * filter unchanged, so that bloom_add over a nullable column never loses a
 * filter.
 */
PG_FUNCTION_INFO_V1(bloom_add);
Datum
bloom_add(PG_FUNCTION_ARGS)
{
	bool		added;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	PG_RETURN_BLOOM_P(bloom_add_key(fcinfo, &added));
}

/*
 * The per-call-site cache of bloom_contains.
 *
 * A filter stored in a table arrives as a TOAST pointer on every row, and
 * detoasting it per row would make a probe cost as much as copying the whole
 * filter.  So the detoasted filters are kept in fn_extra, keyed by the
 * identity of the stored value (toast relation and value OID, which a stored
 * value keeps for its whole life and never shares), in a small open-addressing
 * table: a join against a table of per-partition filters hits it as well as a
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
 */
#define CACHE_MIN_SLOTS	64		/* power of two; at most half are used */
#define CACHE_MAX_SLOTS	65536	/* so at most 32768 filters at once */
#define CACHE_BUDGET	((Size) 256 * 1024 * 1024)
#define SLICE_MIN_SIZE	(64 * 1024) /* smaller values are read whole */
#define SLICE_BYTES_PER_PROBE	(16 * 1024) /* a slice costs a read of this */

typedef struct CachedFilter
{
	Oid			toastrelid;
	Oid			valueid;		/* InvalidOid: empty slot */
	bool		family_ok;		/* checked against the call site's key type */
	bool		loaded;			/* f.bits points into the cached copy */
	uint64		slices_left;	/* sliced probes before reading it whole */
	BloomFilter f;
} CachedFilter;

typedef struct ContainsCache
{
	BloomKeyType kt;
	MemoryContext cxt;			/* holds the copies */
	Size		used;
	int			nentries;
	CachedFilter *last;			/* the most recent hit, checked first */
	CachedFilter *slots;		/* nslots entries, in fn_mcxt */
	int			nslots;

	/* the last filter that was not a stored value: its header, checked */
	Size		unstored_size;	/* 0: none yet */
	uint8		unstored_header[BLOOM_HEADER_SIZE];
	BloomFilter unstored;
} ContainsCache;

static CachedFilter *
cache_slot(CachedFilter *slots, int nslots, Oid toastrelid, Oid valueid)
{
	uint32		i = (valueid * 0x9E3779B1U ^ toastrelid) & (nslots - 1);

	for (;;)
	{
		CachedFilter *e = &slots[i];

		if (e->valueid == InvalidOid ||
			(e->valueid == valueid && e->toastrelid == toastrelid))
			return e;
		i = (i + 1) & (nslots - 1);
	}
}

/*
 * Make room for one more entry: double the table while it may grow, else
 * (or when the copies would outgrow the budget) empty the cache.
 */
static void
cache_make_room(ContainsCache *c, Size size, MemoryContext mcxt)
{
	if (c->nentries + 1 > c->nslots / 2 && c->nslots < CACHE_MAX_SLOTS)
	{
		int			nslots = c->nslots * 2;
		CachedFilter *slots = MemoryContextAllocZero(mcxt, nslots * sizeof(CachedFilter));

		for (int i = 0; i < c->nslots; i++)
			if (c->slots[i].valueid != InvalidOid)
				*cache_slot(slots, nslots, c->slots[i].toastrelid,
							c->slots[i].valueid) = c->slots[i];
		pfree(c->slots);
		c->slots = slots;
		c->nslots = nslots;
	}
	if (c->nentries + 1 > c->nslots / 2 || c->used + size > CACHE_BUDGET)
	{
		MemoryContextReset(c->cxt);
		memset(c->slots, 0, c->nslots * sizeof(CachedFilter));
		c->used = 0;
		c->nentries = 0;
	}
	c->last = NULL;
}

#ifdef MADV_HUGEPAGE
/*
 * A large filter is probed at random places, one cache line each; on 4 kB
 * pages nearly every probe of a filter of many megabytes also misses the
 * TLB, which costs as much again (measured: 210 against 150 ns a probe of a
 * 120 MB filter).  So large copies get memory of their own, aligned to 2 MB
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

/* Read a stored filter whole into the cache entry. */
static void
cache_load(ContainsCache *c, CachedFilter *e, struct varlena *ptr)
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
	c->used += size + BLOOM_BLOCK_BYTES;
}

/*
 * Find or start the cache entry of the stored filter behind an on-disk TOAST
 * pointer.  A new entry is either loaded or, for a large uncompressed value,
 * has just its header read, for sliced probes.
 */
static CachedFilter *
cache_get(ContainsCache *c, struct varlena *ptr, MemoryContext fn_mcxt)
{
	struct varatt_external toast;
	CachedFilter *e;
	Size		rawsize,
				extsize;

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
	if (c->nentries + 1 > c->nslots / 2 || c->used + rawsize > CACHE_BUDGET)
	{
		cache_make_room(c, rawsize, fn_mcxt);
		e = cache_slot(c->slots, c->nslots, toast.va_toastrelid, toast.va_valueid);
	}
	memset(e, 0, sizeof(*e));

	if (rawsize >= SLICE_MIN_SIZE && extsize == rawsize - VARHDRSZ)
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
 * bloom_contains for a filter that is not a stored TOAST value: in line in
 * its row (small), or already in memory.  Kept out of bloom_contains so that
 * the hot path stays small.
 */
static pg_noinline bool
contains_unstored(FunctionCallInfo fcinfo, ContainsCache *c)
{
	bytea	   *v = PG_GETARG_BLOOM_P(0);
	BloomFilter *f = &c->unstored;

	/*
	 * The same small filter usually comes again (a constant, a parameter, a
	 * row of a small table): decoding and checking its header again is
	 * skipped when the header bytes and the length are the same as last
	 * time.  The bits are always read from the value at hand.
	 */
	if (c->unstored_size != VARSIZE(v) ||
		memcmp(c->unstored_header, BLOOM_PAYLOAD(v), BLOOM_HEADER_SIZE) != 0)
	{
		c->unstored_size = 0;
		bloom_open(v, f);
		bloom_check_family(f, &c->kt);
		memcpy(c->unstored_header, BLOOM_PAYLOAD(v), BLOOM_HEADER_SIZE);
		c->unstored_size = VARSIZE(v);
	}
	/* a filter that never had a key added holds nothing */
	if (f->family[0] == '\0')
		return false;
	return bloom_test_hash(BLOOM_PAYLOAD(v) + BLOOM_HEADER_SIZE, f->nblocks,
						   f->nhashes,
						   bloom_key_hash(&c->kt, PG_GETARG_DATUM(1), f->seed));
}

/* The first call at a call site sets up its cache. */
static pg_noinline ContainsCache *
contains_setup(FunctionCallInfo fcinfo)
{
	ContainsCache *c;

	c = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(ContainsCache));
	c->cxt = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt,
								   "bloom_contains cache",
								   ALLOCSET_DEFAULT_SIZES);
	c->nslots = CACHE_MIN_SLOTS;
	c->slots = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt,
									  c->nslots * sizeof(CachedFilter));
	key_type(fcinfo, 1, &c->kt);
	fcinfo->flinfo->fn_extra = c;
	return c;
}

/*
 * Is the key possibly in the filter?  false means surely absent.
 */
PG_FUNCTION_INFO_V1(bloom_contains);
Datum
bloom_contains(PG_FUNCTION_ARGS)
{
	struct varlena *raw = (struct varlena *) PG_GETARG_POINTER(0);
	ContainsCache *c = (ContainsCache *) fcinfo->flinfo->fn_extra;
	CachedFilter *e;
	uint64		h;

	if (unlikely(c == NULL))
		c = contains_setup(fcinfo);

	if (!VARATT_IS_EXTERNAL_ONDISK(raw))
		PG_RETURN_BOOL(contains_unstored(fcinfo, c));

	e = cache_get(c, raw, fcinfo->flinfo->fn_mcxt);
	if (unlikely(!e->family_ok))
	{
		bloom_check_family(&e->f, &c->kt);
		e->family_ok = true;
	}
	/* a filter that never had a key added holds nothing */
	if (unlikely(e->f.family[0] == '\0'))
		PG_RETURN_BOOL(false);

	h = bloom_key_hash(&c->kt, PG_GETARG_DATUM(1), e->f.seed);
	if (unlikely(!e->loaded))
	{
		if (e->slices_left > 0)
		{
			e->slices_left--;
			PG_RETURN_BOOL(sliced_test(&e->f, raw, h));
		}
		cache_load(c, e, raw);
	}
	PG_RETURN_BOOL(bloom_test_hash(e->f.bits, e->f.nblocks, e->f.nhashes, h));
}
