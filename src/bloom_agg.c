/*-------------------------------------------------------------------------
 *
 * bloom_agg.c
 *	  The bloom_agg aggregates: transition, combine, serialize, deserialize
 *	  and final functions over an internal state mutated in place.
 *
 * The state starts as a list of 64-bit key hashes, because a key's bits
 * depend only on its hash and the filter's geometry:
 *
 * - Unsized, bloom_agg(key): duplicates are dropped from time to time, and
 *   the final function sizes the filter for the number of distinct hashes at
 *   the default rate.  Memory: 8 to 16 bytes per distinct key, plus the
 *   final filter.
 * - Sized, bloom_agg(key, capacity, rate): the list turns into the filter's
 *   bits once it would take more room than they do.  So many small groups do
 *   not each allocate a large bit array, and a large group costs the filter's
 *   size.  The result has exactly the bits that bloom_create followed by
 *   bloom_add of every key gives.
 *
 * Dropping duplicates takes a pass over a hash set, and a set holding every
 * hash of a big state would miss the cache on each one.  So once the list is
 * large it is split into 256 lists by the top byte of the hash: each is
 * deduplicated on its own, within the cache, and the hashes of one list all
 * fall in one run of the filter's blocks (the block is chosen by the hash's
 * top bits), so the final function sets the bits one small run at a time.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_agg.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_aggregate.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/datum.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "bloomfilter.h"

#define INITIAL_HASHES	16
#define NBUCKETS		256		/* lists after the split, by the top byte */
#define SPLIT_HASHES	32768	/* split once the single list holds this many */
#define PRESIZE_HASHES	(16.0 * 1024 * 1024) /* see state_split */

/*
 * Once a sized state is bits, each key is a write at a random place in the
 * filter: a cache (and TLB) miss per key for a large filter.  Keys are held
 * back in small batches and set with the blocks of the keys a few places
 * ahead prefetched, so that several misses are in flight at once.
 */
#define PENDING_MAX		256
#define PREFETCH_AHEAD	16

typedef struct HashList
{
	uint64	   *h;
	size_t		n;
	size_t		max;
	size_t		unique;			/* h[0, unique) has no duplicates */
} HashList;

typedef struct BloomAggState
{
	char		family[BLOOM_FAMILY_LEN];
	bool		sized;
	int64		capacity;		/* sized only */
	double		rate;			/* sized only */
	uint64		nblocks;		/* sized only: the geometry */
	int			k;
	/* while collecting hashes: one list, or NBUCKETS by the top byte */
	HashList   *lists;
	int			nlists;
	size_t		allocated;		/* slots in all lists */
	uint64	   *scratch;		/* for bloom_unique, kept for the next time */
	size_t		nscratch;
	double		rows_hint;		/* rows the planner expects, or 0 */
	int64		nrows;			/* keys added, for state_split */
	bytea	   *filter;			/* sized, once turned into bits */
	BloomFilter f;				/* header of filter; f.bits into it */
	uint64	   *pending;		/* with filter: hashes not yet set */
	int			npending;
} BloomAggState;

static void
list_init(HashList *l, size_t max, MemoryContext cxt)
{
	l->h = MemoryContextAllocHuge(cxt, max * sizeof(uint64));
	l->n = 0;
	l->max = max;
	l->unique = 0;
}

/* Give a list room for at least need hashes, doubling its size. */
static void
list_grow(HashList *l, size_t need)
{
	size_t		max = l->max;

	while (max < need)
	{
		if (max * 2 > MaxAllocHugeSize / sizeof(uint64))
			ereport(ERROR,
					errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					errmsg("bloom_agg saw too many distinct keys"),
					errhint("Give bloom_agg a capacity and a false-positive rate."));
		max *= 2;
	}
	if (max != l->max)
	{
		l->h = repalloc_huge(l->h, max * sizeof(uint64));
		l->max = max;
	}
}

/*
 * The planner's estimate of the rows a plain aggregate (one group) gets, or 0.
 */
static double
expected_rows(FunctionCallInfo fcinfo)
{
	Agg		   *agg;

	if (fcinfo->context == NULL || !IsA(fcinfo->context, AggState))
		return 0;
	agg = (Agg *) ((AggState *) fcinfo->context)->ss.ps.plan;
	if (agg->aggstrategy != AGG_PLAIN || agg->groupingSets != NIL ||
		outerPlan(agg) == NULL)
		return 0;
	return outerPlan(agg)->plan_rows;
}

static BloomAggState *
state_new(MemoryContext cxt, const char *family, bool sized,
		  int64 capacity, double rate, double rows_hint)
{
	BloomAggState *s = MemoryContextAllocZero(cxt, sizeof(BloomAggState));

	strlcpy(s->family, family, BLOOM_FAMILY_LEN);
	s->sized = sized;
	if (sized)
	{
		bloom_plan_or_error(capacity, rate, &s->nblocks, &s->k);
		s->capacity = capacity;
		s->rate = rate;
	}
	s->rows_hint = rows_hint;
	s->nlists = 1;
	s->lists = MemoryContextAlloc(cxt, sizeof(HashList));
	list_init(&s->lists[0], INITIAL_HASHES, cxt);
	s->allocated = INITIAL_HASHES;
	return s;
}

/*
 * Drop the duplicates of one list.  A split state, which is large, keeps its
 * scratch space for the next time; a small one does not hold on to it.
 */
static void
list_unique(BloomAggState *s, HashList *l, MemoryContext cxt)
{
	size_t		need = bloom_unique_scratch(l->n);
	uint64	   *scratch;

	if (s->nlists == 1)
	{
		scratch = MemoryContextAllocHuge(cxt, need * sizeof(uint64));
		l->n = l->unique = bloom_unique(l->h, l->n, scratch);
		pfree(scratch);
		return;
	}
	if (need > s->nscratch)
	{
		if (s->scratch)
			pfree(s->scratch);
		s->nscratch = Max(need, 2 * s->nscratch);
		s->scratch = MemoryContextAllocHuge(cxt, s->nscratch * sizeof(uint64));
	}
	l->n = l->unique = bloom_unique(l->h, l->n, s->scratch);
}

/* Drop the duplicates of every list; returns the number of hashes left. */
static size_t
state_unique(BloomAggState *s, MemoryContext cxt)
{
	size_t		total = 0;

	for (int i = 0; i < s->nlists; i++)
	{
		HashList   *l = &s->lists[i];

		CHECK_FOR_INTERRUPTS();
		if (l->unique != l->n)
			list_unique(s, l, cxt);
		total += l->n;
	}
	return total;
}

static void
set_all_hashes(BloomAggState *s, uint8 *bits, uint64 nblocks, int k)
{
	for (int i = 0; i < s->nlists; i++)
	{
		CHECK_FOR_INTERRUPTS();
		for (size_t j = 0; j < s->lists[i].n; j++)
			bloom_set_hash(bits, nblocks, k, s->lists[i].h[j]);
	}
}

static void
free_lists(BloomAggState *s)
{
	for (int i = 0; i < s->nlists; i++)
		pfree(s->lists[i].h);
	pfree(s->lists);
	s->lists = NULL;
	s->nlists = 0;
	s->allocated = 0;
}

/* Sized state: replace the hash lists by the filter's bits. */
static void
state_to_bits(BloomAggState *s, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);

	s->filter = bloom_new((uint64) s->capacity, s->rate, s->nblocks, s->k,
						  s->family);
	bloom_open(s->filter, &s->f);
	s->pending = palloc(PENDING_MAX * sizeof(uint64));
	s->npending = 0;
	set_all_hashes(s, s->f.bits, s->nblocks, s->k);
	free_lists(s);
	MemoryContextSwitchTo(old);
}

/*
 * Split the single list into NBUCKETS lists by the top byte.  An unsized
 * state that the planner expects to see many more rows sizes its lists now
 * for the distinct keys those rows should bring (at most PRESIZE_HASHES,
 * with a quarter to spare), rather than growing them by doubling: each
 * doubling copies a list into new memory, and the page faults of that memory
 * cost as much as the copy (the serial bigint build took 15% less time).
 * Only a state with SPLIT_HASHES distinct keys gets here, and memory set
 * aside but not written is not resident.  A sized state turns into bits
 * before its lists get large.
 */
static void
state_split(BloomAggState *s, MemoryContext cxt)
{
	HashList	flat = s->lists[0];
	size_t		count[NBUCKETS] = {0};
	size_t		presize = 0;

	if (!s->sized && s->rows_hint > flat.n && s->nrows > 0)
	{
		/* as many distinct keys to come as there were among the rows so far */
		double		expect = s->rows_hint * Min(1.0, (double) flat.n / s->nrows);

		presize = (size_t) (Min(expect, PRESIZE_HASHES) / NBUCKETS * 1.25);
	}
	for (size_t j = 0; j < flat.n; j++)
		count[flat.h[j] >> 56]++;
	pfree(s->lists);
	s->lists = MemoryContextAlloc(cxt, NBUCKETS * sizeof(HashList));
	s->nlists = NBUCKETS;
	s->allocated = 0;
	for (int i = 0; i < NBUCKETS; i++)
	{
		list_init(&s->lists[i], Max(Max(INITIAL_HASHES, 2 * count[i]), presize), cxt);
		s->allocated += s->lists[i].max;
	}
	for (size_t j = 0; j < flat.n; j++)
	{
		HashList   *l = &s->lists[flat.h[j] >> 56];

		l->h[l->n++] = flat.h[j];
	}
	/* the parts of a list without duplicates have none either */
	for (int i = 0; i < NBUCKETS; i++)
		s->lists[i].unique = flat.unique == flat.n ? s->lists[i].n : 0;
	pfree(flat.h);
}

/*
 * A hash list is full: drop its duplicates, and grow it if that did not free
 * half of it.  Along the way a sized state turns into bits once its lists
 * would outgrow them, and a large single list is split.
 */
static void
state_make_room(BloomAggState *s, HashList *l, MemoryContext cxt)
{
	list_unique(s, l, cxt);
	if (l->n <= l->max / 2)
		return;
	if (s->sized &&
		(s->allocated + l->max) * sizeof(uint64) > s->nblocks * BLOOM_BLOCK_BYTES)
	{
		state_to_bits(s, cxt);
		return;
	}
	if (s->nlists == 1 && l->n >= SPLIT_HASHES)
	{
		state_split(s, cxt);
		return;
	}
	s->allocated += l->max;
	list_grow(l, 2 * l->max);
}

/* Set the bits of the held-back hashes of a state that is bits. */
static void
state_flush(BloomAggState *s)
{
	for (int i = 0; i < s->npending; i++)
	{
		if (i + PREFETCH_AHEAD < s->npending)
			bloom_prefetch(s->f.bits, s->nblocks, s->pending[i + PREFETCH_AHEAD]);
		bloom_set_hash(s->f.bits, s->nblocks, s->k, s->pending[i]);
	}
	s->npending = 0;
}

/* Add a hash if that takes no memory; false if it was not added. */
static inline bool
state_add_fast(BloomAggState *s, uint64 h)
{
	HashList   *l;

	if (s->filter)
		return false;
	l = &s->lists[s->nlists == 1 ? 0 : h >> 56];
	if (unlikely(l->n == l->max))
		return false;
	l->h[l->n++] = h;
	return true;
}

static void
state_add(BloomAggState *s, MemoryContext cxt, uint64 h)
{
	if (state_add_fast(s, h))
		return;
	if (s->filter)
	{
		s->pending[s->npending++] = h;
		if (s->npending == PENDING_MAX)
			state_flush(s);
		return;
	}

	/*
	 * The hash's list is full.  Afterwards it has room, or the state was
	 * split (each new list has room) or turned into bits: add again.
	 */
	state_make_room(s, &s->lists[s->nlists == 1 ? 0 : h >> 56], cxt);
	state_add(s, cxt, h);
}

/*
 * Transition function of bloom_agg(key) and bloom_agg(key, capacity, rate).
 * NULL keys are skipped.  The aggregate's memory context is looked up only
 * when memory is needed: a state exists only if the first call, which makes
 * it, ran in an aggregate.
 */
PG_FUNCTION_INFO_V1(bloom_agg_trans);
Datum
bloom_agg_trans(PG_FUNCTION_ARGS)
{
	BloomAggState *s = PG_ARGISNULL(0) ? NULL : (BloomAggState *) PG_GETARG_POINTER(0);
	BloomKeyType *kt = (BloomKeyType *) fcinfo->flinfo->fn_extra;
	bool		sized = PG_NARGS() == 4;

	/* set up once per call site; this runs for every row */
	if (unlikely(kt == NULL || kt->typid == InvalidOid))
		kt = bloom_call_key_type(fcinfo, 1);

	if (sized)
	{
		int64		capacity;
		double		rate;

		if (PG_ARGISNULL(2) || PG_ARGISNULL(3))
			ereport(ERROR,
					errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					errmsg("bloom_agg capacity and false-positive rate must not be null"));
		capacity = PG_GETARG_INT64(2);
		rate = PG_GETARG_FLOAT8(3);
		if (s == NULL)
			s = state_new(bloom_agg_context(fcinfo, "bloom_agg_trans"),
						  kt->family, true, capacity, rate, 0);
		else if (capacity != s->capacity || rate != s->rate)
			ereport(ERROR,
					errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					errmsg("bloom_agg capacity and false-positive rate must be the same for all rows"),
					errdetail("The group started with capacity " INT64_FORMAT " and rate %g, then got capacity " INT64_FORMAT " and rate %g.",
							  s->capacity, s->rate, capacity, rate));
	}
	else if (s == NULL)
		s = state_new(bloom_agg_context(fcinfo, "bloom_agg_trans"),
					  kt->family, false, 0, 0.0, expected_rows(fcinfo));

	if (!PG_ARGISNULL(1))
	{
		uint64		h = bloom_key_hash(kt, PG_GETARG_DATUM(1), BLOOM_DEFAULT_SEED);

		s->nrows++;
		if (!state_add_fast(s, h))
			state_add(s, bloom_agg_context(fcinfo, "bloom_agg_trans"), h);
	}
	PG_RETURN_POINTER(s);
}

/* Deep copy of a state into cxt. */
static BloomAggState *
state_copy(const BloomAggState *src, MemoryContext cxt)
{
	BloomAggState *s = MemoryContextAlloc(cxt, sizeof(BloomAggState));

	memcpy(s, src, sizeof(BloomAggState));
	s->scratch = NULL;
	s->nscratch = 0;
	if (src->filter)
	{
		s->filter = MemoryContextAllocHuge(cxt, VARSIZE(src->filter));
		memcpy(s->filter, src->filter, VARSIZE(src->filter));
		bloom_open(s->filter, &s->f);
		s->pending = MemoryContextAlloc(cxt, PENDING_MAX * sizeof(uint64));
		memcpy(s->pending, src->pending, src->npending * sizeof(uint64));
		return s;
	}
	s->lists = MemoryContextAlloc(cxt, src->nlists * sizeof(HashList));
	s->allocated = 0;
	for (int i = 0; i < src->nlists; i++)
	{
		list_init(&s->lists[i], Max(src->lists[i].n, INITIAL_HASHES), cxt);
		memcpy(s->lists[i].h, src->lists[i].h, src->lists[i].n * sizeof(uint64));
		s->lists[i].n = src->lists[i].n;
		s->lists[i].unique = src->lists[i].unique;
		s->allocated += s->lists[i].max;
	}
	return s;
}

/*
 * Append the hash lists of b (split into NBUCKETS lists) to those of a, list
 * by list.  Duplicates between them go later, with the others: when a list
 * fills up, or in the final function.
 */
static void
state_append_lists(BloomAggState *a, BloomAggState *b, MemoryContext cxt)
{
	if (a->nlists == 1)
		state_split(a, cxt);
	a->allocated = 0;
	for (int i = 0; i < NBUCKETS; i++)
	{
		HashList   *x = &a->lists[i];
		HashList   *y = &b->lists[i];

		CHECK_FOR_INTERRUPTS();
		list_grow(x, x->n + y->n);
		memcpy(x->h + x->n, y->h, y->n * sizeof(uint64));
		x->n += y->n;
		a->allocated += x->max;
	}

	/* a sized state turns into bits once its lists outgrow them */
	if (a->sized && a->allocated * sizeof(uint64) > a->nblocks * BLOOM_BLOCK_BYTES)
		state_to_bits(a, cxt);
}

/*
 * Combine two partial states (parallel workers, partitionwise aggregation,
 * or engines built on partial aggregation).
 */
PG_FUNCTION_INFO_V1(bloom_agg_combine);
Datum
bloom_agg_combine(PG_FUNCTION_ARGS)
{
	MemoryContext cxt = bloom_agg_context(fcinfo, "bloom_agg_combine");
	BloomAggState *a = PG_ARGISNULL(0) ? NULL : (BloomAggState *) PG_GETARG_POINTER(0);
	BloomAggState *b = PG_ARGISNULL(1) ? NULL : (BloomAggState *) PG_GETARG_POINTER(1);

	if (b == NULL)
		PG_RETURN_POINTER(a);
	if (a == NULL)
		PG_RETURN_POINTER(state_copy(b, cxt));

	if (a->sized != b->sized || strcmp(a->family, b->family) != 0 ||
		(a->sized && (a->capacity != b->capacity || a->rate != b->rate)))
		ereport(ERROR,
				errcode(ERRCODE_DATA_EXCEPTION),
				errmsg("cannot combine bloom_agg states of different shapes"),
				errdetail("One has family \"%s\", capacity " INT64_FORMAT " and rate %g; the other family \"%s\", capacity " INT64_FORMAT " and rate %g.",
						  a->family, a->capacity, a->rate,
						  b->family, b->capacity, b->rate));

	if (b->filter)
	{
		uint64		nbytes = a->nblocks * BLOOM_BLOCK_BYTES;

		if (a->filter == NULL)
			state_to_bits(a, cxt);
		state_flush(b);
		for (uint64 i = 0; i < nbytes; i++)
			a->f.bits[i] |= b->f.bits[i];
	}
	else if (a->filter == NULL && b->nlists == NBUCKETS)
		state_append_lists(a, b, cxt);
	else
	{
		for (int i = 0; i < b->nlists; i++)
		{
			CHECK_FOR_INTERRUPTS();
			for (size_t j = 0; j < b->lists[i].n; j++)
				state_add(a, cxt, b->lists[i].h[j]);
		}
	}
	PG_RETURN_POINTER(a);
}

/*
 * Serialize a state for a parallel worker; the format is in bloom.h.
 */
PG_FUNCTION_INFO_V1(bloom_agg_serialize);
Datum
bloom_agg_serialize(PG_FUNCTION_ARGS)
{
	MemoryContext cxt = bloom_agg_context(fcinfo, "bloom_agg_serialize");
	BloomAggState *s = (BloomAggState *) PG_GETARG_POINTER(0);
	BloomStateHeader h;
	size_t		bodylen;
	bytea	   *out;
	uint8	   *p;

	memset(&h, 0, sizeof(h));
	strlcpy(h.family, s->family, BLOOM_FAMILY_LEN);
	h.sized = s->sized;
	if (s->sized)
	{
		h.capacity = (uint64) s->capacity;
		h.rate = s->rate;
	}
	if (s->filter)
	{
		state_flush(s);
		h.mode = BLOOM_STATE_BITS;
		bodylen = VARSIZE(s->filter) - VARHDRSZ;
	}
	else
	{
		/* the state means the same set of hashes without the duplicates */
		h.mode = BLOOM_STATE_HASHES;
		h.count = state_unique(s, cxt);
		bodylen = h.count * sizeof(uint64);
	}
	if (BLOOM_STATE_HEADER_SIZE + bodylen > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				errmsg("bloom_agg state is too large to pass to a parallel worker"),
				errhint("Give bloom_agg a capacity and a false-positive rate, or disable parallel aggregation."));

	out = palloc(VARHDRSZ + BLOOM_STATE_HEADER_SIZE + bodylen);
	SET_VARSIZE(out, VARHDRSZ + BLOOM_STATE_HEADER_SIZE + bodylen);
	p = (uint8 *) VARDATA(out);
	bloom_state_write_header(p, &h);
	p += BLOOM_STATE_HEADER_SIZE;
	if (s->filter)
		memcpy(p, BLOOM_PAYLOAD(s->filter), bodylen);
	else
		for (int i = 0; i < s->nlists; i++)
			for (size_t j = 0; j < s->lists[i].n; j++, p += 8)
				bloom_put_u64(p, s->lists[i].h[j]);
	PG_RETURN_BYTEA_P(out);
}

/*
 * Rebuild a state from its serialized form, checking every field first.
 */
PG_FUNCTION_INFO_V1(bloom_agg_deserialize);
Datum
bloom_agg_deserialize(PG_FUNCTION_ARGS)
{
	bytea	   *in = PG_GETARG_BYTEA_PP(0);
	const uint8 *p = (const uint8 *) VARDATA_ANY(in);
	size_t		len = VARSIZE_ANY_EXHDR(in);
	BloomStateHeader h;
	const uint8 *body;
	size_t		bodylen;
	const char *why;
	BloomAggState *s;

	bloom_agg_context(fcinfo, "bloom_agg_deserialize");
	why = bloom_state_check(p, len, &h, &body, &bodylen);
	if (why)
		ereport(ERROR,
				errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				errmsg("invalid bloom_agg state"),
				errdetail("%s", why));

	s = palloc0(sizeof(BloomAggState));
	strlcpy(s->family, h.family, BLOOM_FAMILY_LEN);
	s->sized = h.sized;
	if (h.sized)
	{
		s->capacity = (int64) h.capacity;
		s->rate = h.rate;
		bloom_plan_or_error(s->capacity, s->rate, &s->nblocks, &s->k);
	}

	if (h.mode == BLOOM_STATE_BITS)
	{
		BloomFilter f;
		BloomError	err = bloom_check(body, bodylen, &f);

		if (err == BLOOM_OK &&
			(f.nblocks != s->nblocks || f.nhashes != s->k ||
			 f.capacity != h.capacity || f.rate != h.rate ||
			 strcmp(f.family, h.family) != 0))
			err = BLOOM_ERR_LENGTH;
		if (err != BLOOM_OK)
			ereport(ERROR,
					errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
					errmsg("invalid bloom_agg state"),
					errdetail("The filter in the state does not match its shape: %s",
							  bloom_error_message(err)));
		s->filter = palloc_extended(VARHDRSZ + bodylen, MCXT_ALLOC_HUGE);
		SET_VARSIZE(s->filter, VARHDRSZ + bodylen);
		memcpy(BLOOM_PAYLOAD(s->filter), body, bodylen);
		bloom_open(s->filter, &s->f);
		s->pending = palloc(PENDING_MAX * sizeof(uint64));
		s->npending = 0;
	}
	else if (h.count >= SPLIT_HASHES)
	{
		/*
		 * A large state arrives list by list (serialize writes it so): cut
		 * it into the NBUCKETS lists by the top byte directly.
		 */
		size_t		i = 0;

		s->nlists = NBUCKETS;
		s->lists = palloc(NBUCKETS * sizeof(HashList));
		s->allocated = 0;
		for (int b = 0; b < NBUCKETS; b++)
		{
			size_t		start = i;
			HashList   *l = &s->lists[b];

			CHECK_FOR_INTERRUPTS();
			while (i < h.count && (int) (bloom_get_u64(body + 8 * i) >> 56) == b)
				i++;
			list_init(l, Max(INITIAL_HASHES, i - start), CurrentMemoryContext);
			for (size_t j = start; j < i; j++)
				l->h[l->n++] = bloom_get_u64(body + 8 * j);
			s->allocated += l->max;
		}
		/* hashes out of order (a damaged state) go where they belong */
		for (; i < h.count; i++)
			state_add(s, CurrentMemoryContext, bloom_get_u64(body + 8 * i));
	}
	else
	{
		s->nlists = 1;
		s->lists = palloc(sizeof(HashList));
		list_init(&s->lists[0], INITIAL_HASHES, CurrentMemoryContext);
		s->allocated = INITIAL_HASHES;
		for (size_t i = 0; i < h.count; i++)
			state_add(s, CurrentMemoryContext, bloom_get_u64(body + 8 * i));
	}
	PG_RETURN_POINTER(s);
}

/* Does this argument of an aggregate call not depend on the rows? */
static bool
row_independent(Node *arg)
{
	return !contain_var_clause(arg) && !contain_volatile_functions(arg);
}

typedef struct SizedCallSearch
{
	Oid			finalfn;		/* the final function of our aggregate */
	int			found;			/* calls with constant capacity and rate */
	Const	   *capacity;
	Const	   *rate;
} SizedCallSearch;

static bool
same_const(Const *a, Const *b)
{
	return a->constisnull == b->constisnull &&
		(a->constisnull ||
		 datumIsEqual(a->constvalue, b->constvalue, a->constbyval, a->constlen));
}

/* Expression walker: calls of our aggregate with constant size arguments. */
static bool
find_sized_calls(Node *node, void *context)
{
	SizedCallSearch *cx = (SizedCallSearch *) context;
	Oid			aggoid = InvalidOid;
	List	   *args = NIL;

	if (node == NULL)
		return false;
	if (IsA(node, Aggref))
	{
		aggoid = ((Aggref *) node)->aggfnoid;
		args = ((Aggref *) node)->args;
	}
	else if (IsA(node, WindowFunc))
	{
		aggoid = ((WindowFunc *) node)->winfnoid;
		args = ((WindowFunc *) node)->args;
	}
	if (OidIsValid(aggoid) && list_length(args) == 3)
	{
		HeapTuple	tup = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggoid));
		Node	   *c = (Node *) list_nth(args, 1);
		Node	   *r = (Node *) list_nth(args, 2);

		if (IsA(c, TargetEntry))
			c = (Node *) ((TargetEntry *) c)->expr;
		if (IsA(r, TargetEntry))
			r = (Node *) ((TargetEntry *) r)->expr;
		if (HeapTupleIsValid(tup))
		{
			if (((Form_pg_aggregate) GETSTRUCT(tup))->aggfinalfn == cx->finalfn &&
				IsA(c, Const) && IsA(r, Const))
			{
				if (cx->found == 0 ||
					!same_const(cx->capacity, (Const *) c) ||
					!same_const(cx->rate, (Const *) r))
					cx->found++;
				cx->capacity = (Const *) c;
				cx->rate = (Const *) r;
			}
			ReleaseSysCache(tup);
		}
	}
	return expression_tree_walker(node, find_sized_calls, context);
}

static void
find_sized_calls_in_plan(Plan *plan, SizedCallSearch *cx)
{
	ListCell   *lc;

	if (plan == NULL)
		return;
	find_sized_calls((Node *) plan->targetlist, cx);
	find_sized_calls((Node *) plan->qual, cx);
	find_sized_calls_in_plan(plan->lefttree, cx);
	find_sized_calls_in_plan(plan->righttree, cx);
	if (IsA(plan, Append))
		foreach(lc, ((Append *) plan)->appendplans)
			find_sized_calls_in_plan((Plan *) lfirst(lc), cx);
	else if (IsA(plan, MergeAppend))
		foreach(lc, ((MergeAppend *) plan)->mergeplans)
			find_sized_calls_in_plan((Plan *) lfirst(lc), cx);
	else if (IsA(plan, SubqueryScan))
		find_sized_calls_in_plan(((SubqueryScan *) plan)->subplan, cx);
}

/*
 * The capacity and rate of a sized bloom_agg call that saw no rows at all,
 * for the empty filter it must still return.  They come from the call's own
 * arguments when those do not depend on the rows (constants, parameters).
 * Where this node only finalizes partial states (parallel or partitionwise
 * plans), or runs the aggregate over a window frame, the arguments at hand
 * are not the caller's; then the calls of this aggregate in the plan below
 * are searched, and used if they all have the same constant arguments.
 */
static bool
sized_args_without_rows(FunctionCallInfo fcinfo, int64 *capacity, double *rate)
{
	Aggref	   *aggref = AggGetAggref(fcinfo);
	PlanState  *ps = (PlanState *) fcinfo->context;
	Datum		d[2];
	bool		isnull[2];

	/* called through a wrapper (Citus): the Aggref and plan are not ours */
	if (ps == NULL || fcinfo->flinfo->fn_expr == NULL)
		return false;
	if (aggref != NULL && IsA(ps, AggState) && list_length(aggref->args) == 3 &&
		row_independent((Node *) list_nth_node(TargetEntry, aggref->args, 1)->expr) &&
		row_independent((Node *) list_nth_node(TargetEntry, aggref->args, 2)->expr))
	{
		for (int i = 0; i < 2; i++)
		{
			Expr	   *e = list_nth_node(TargetEntry, aggref->args, i + 1)->expr;
			ExprState  *es = ExecInitExpr(e, ps);

			d[i] = ExecEvalExprSwitchContext(es, ps->ps_ExprContext, &isnull[i]);
		}
	}
	else
	{
		SizedCallSearch cx = {fcinfo->flinfo->fn_oid, 0, NULL, NULL};

		find_sized_calls_in_plan(ps->plan, &cx);
		if (cx.found != 1)
			return false;
		d[0] = cx.capacity->constvalue;
		isnull[0] = cx.capacity->constisnull;
		d[1] = cx.rate->constvalue;
		isnull[1] = cx.rate->constisnull;
	}
	if (isnull[0] || isnull[1])
		ereport(ERROR,
				errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				errmsg("bloom_agg capacity and false-positive rate must not be null"));
	*capacity = DatumGetInt64(d[0]);
	*rate = DatumGetFloat8(d[1]);
	return true;
}

/*
 * Final function of both forms: the filter.  No rows at all give an empty
 * filter, never NULL, so that an anti-join pre-check over an empty table
 * stays right.
 */
PG_FUNCTION_INFO_V1(bloom_agg_final);
Datum
bloom_agg_final(PG_FUNCTION_ARGS)
{
	MemoryContext cxt = bloom_agg_context(fcinfo, "bloom_agg_final");
	BloomAggState *s = PG_ARGISNULL(0) ? NULL : (BloomAggState *) PG_GETARG_POINTER(0);
	bool		sized = bloom_call_nargs(fcinfo) == 4;
	uint64		nblocks;
	int			k;
	bytea	   *v;
	BloomFilter f;

	if (s == NULL)
	{
		BloomKeyType kt;
		int64		capacity = 1;
		double		rate = BLOOM_DEFAULT_RATE;

		bloom_key_type_init(&kt, bloom_call_arg_type(fcinfo, 1),
							PG_GET_COLLATION(), CurrentMemoryContext);
		if (sized && !sized_args_without_rows(fcinfo, &capacity, &rate))
			ereport(ERROR,
					errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					errmsg("bloom_agg over no rows cannot size its filter"),
					fcinfo->flinfo->fn_expr == NULL ?
					errdetail("The aggregate ran on the nodes of a distributed table, none of which had a row, so the capacity and false-positive rate never reached this node.") :
					errdetail("The capacity and false-positive rate come from the rows, and there are none."),
					fcinfo->flinfo->fn_expr == NULL ?
					errhint("On Citus, SET citus.allow_aggregate_worker_combine_on_internal_types = off to have the coordinator build the filter.") :
					errhint("Pass the capacity and rate as constants or parameters."));
		bloom_plan_or_error(capacity, rate, &nblocks, &k);
		PG_RETURN_BLOOM_P(bloom_new((uint64) capacity, rate, nblocks, k,
									kt.family));
	}

	if (s->filter)
	{
		state_flush(s);
		v = palloc_extended(VARSIZE(s->filter), MCXT_ALLOC_HUGE);
		memcpy(v, s->filter, VARSIZE(s->filter));
		PG_RETURN_BLOOM_P(v);
	}

	/*
	 * Each list's hashes fall in its own run of blocks, so the bits are set
	 * one small run of the filter at a time, within the cache.
	 */
	if (s->sized)
		v = bloom_new((uint64) s->capacity, s->rate, s->nblocks, s->k, s->family);
	else
	{
		int64		n = Max((int64) state_unique(s, cxt), 1);

		bloom_plan_or_error(n, BLOOM_DEFAULT_RATE, &nblocks, &k);
		v = bloom_new((uint64) n, BLOOM_DEFAULT_RATE, nblocks, k, s->family);
	}
	bloom_open(v, &f);
	set_all_hashes(s, f.bits, f.nblocks, f.nhashes);
	PG_RETURN_BLOOM_P(v);
}
