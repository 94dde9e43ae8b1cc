/*-------------------------------------------------------------------------
 *
 * bloom_agg_state.c
 *	  The state of bloom_agg: hash lists that drop their duplicates, split
 *	  by the top byte when large, spill to temporary files beyond the
 *	  memory budget (unsized) or turn into the filter's bits (sized); and
 *	  the filter made from a state at the end.
 *
 * Its layout is in bloom_agg_state.h; combining states is in
 * bloom_agg_combine.c and their serialized form in bloom_agg_serial.c.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_agg_state.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "miscadmin.h"
#include "utils/memutils.h"

#include "bloom_agg_state.h"

#define PRESIZE_HASHES	(16.0 * 1024 * 1024) /* see bloom_agg_state_split */
#define PREFETCH_AHEAD	16		/* keys ahead whose blocks are prefetched */
#define READ_CHUNK		8192	/* hashes read from a temporary file at a time */
#define HINT_MIN_ROWS	1024	/* rows seen before the planner's estimate is
								 * trusted, see sized_expects_many */
#define BUFFER_MIN_FILTER	(256 * 1024)	/* see bloom_agg_state_to_bits */
#define BUFFER_MAX_PER_LIST 8192

void
bloom_agg_list_init(HashList *l, size_t max, MemoryContext cxt)
{
	l->h = bloom_alloc_big(cxt, max * sizeof(uint64), 0);
	l->n = 0;
	l->max = max;
	l->unique = 0;
}

/* Give a list room for at least need hashes, doubling its size. */
void
bloom_agg_list_grow(HashList *l, size_t need)
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

BloomAggState *
bloom_agg_state_new(MemoryContext cxt, const char *family,
					const BloomLabels *labels, bool sized,
					int64 capacity, double rate, double rows_hint)
{
	BloomAggState *s = MemoryContextAllocZero(cxt, sizeof(BloomAggState));

	strlcpy(s->family, family, BLOOM_FAMILY_LEN);
	s->labels = *labels;
	s->sized = sized;
	if (sized)
	{
		bloom_plan_or_error(capacity, rate, &s->nblocks, &s->k);
		s->capacity = capacity;
		s->rate = rate;
	}
	s->rows_hint = rows_hint;
	s->budget = Max((size_t) work_mem * 1024, MIN_BUDGET);
	s->nlists = 1;
	s->lists = MemoryContextAlloc(cxt, sizeof(HashList));
	bloom_agg_list_init(&s->lists[0], INITIAL_HASHES, cxt);
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
		scratch = bloom_alloc_big(cxt, need * sizeof(uint64), 0);
		l->n = l->unique = bloom_unique(l->h, l->n, scratch);
		pfree(scratch);
		return;
	}
	if (need > s->nscratch)
	{
		if (s->scratch)
			pfree(s->scratch);
		s->nscratch = Max(need, 2 * s->nscratch);
		s->scratch = bloom_alloc_big(cxt, s->nscratch * sizeof(uint64), 0);
	}
	l->n = l->unique = bloom_unique(l->h, l->n, s->scratch);
}

/* Drop the duplicates of every list; returns the number of hashes left. */
size_t
bloom_agg_state_unique(BloomAggState *s, MemoryContext cxt)
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

/*
 * Set the bits of every hash in the lists, list by list: each list's fall in
 * a run of blocks of their own (see PREFETCH_AHEAD for within the run).
 */
static void
set_all_hashes(BloomAggState *s, uint8 *bits, uint64 nblocks, int k)
{
	for (int i = 0; i < s->nlists; i++)
	{
		const uint64 *h = s->lists[i].h;
		size_t		n = s->lists[i].n;

		CHECK_FOR_INTERRUPTS();
		for (size_t j = 0; j < n; j++)
		{
			if (j + PREFETCH_AHEAD < n)
				bloom_prefetch(bits, nblocks, h[j + PREFETCH_AHEAD]);
			bloom_set_hash(bits, nblocks, k, h[j]);
		}
	}
}

void
bloom_agg_free_lists(BloomAggState *s)
{
	for (int i = 0; i < s->nlists; i++)
		pfree(s->lists[i].h);
	pfree(s->lists);
	s->lists = NULL;
	s->nlists = 0;
	s->allocated = 0;
}

/*
 * Sized state: set the hashes of its lists in the filter's bits, made now;
 * the lists, emptied, hold the hashes to come until they are full.
 */
void
bloom_agg_state_to_bits(BloomAggState *s, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);

	s->filter = bloom_new((uint64) s->capacity, s->rate, s->nblocks, s->k,
						  s->family, &s->labels);
	bloom_open(s->filter, &s->f);
	MemoryContextSwitchTo(old);
	bloom_agg_state_flush(s);

	/*
	 * A filter beyond the cache gets NBUCKETS lists with room enough for a
	 * sweep to set many hashes per run of blocks.  A small one is set from
	 * its lists as they are: it stays in the cache, and a state of a GROUP
	 * BY with many groups stays small.
	 */
	if (s->nblocks * BLOOM_BLOCK_BYTES >= BUFFER_MIN_FILTER)
	{
		size_t		bytes = s->nblocks * BLOOM_BLOCK_BYTES;
		size_t		per = Min(bytes / sizeof(uint64) / NBUCKETS / 2,
							  BUFFER_MAX_PER_LIST);

		if (s->nlists == 1)
			bloom_agg_state_split(s, cxt);
		s->allocated = 0;
		for (int i = 0; i < NBUCKETS; i++)
		{
			bloom_agg_list_grow(&s->lists[i], per);
			s->allocated += s->lists[i].max;
		}
	}
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
void
bloom_agg_state_split(BloomAggState *s, MemoryContext cxt)
{
	HashList	flat = s->lists[0];
	size_t		count[NBUCKETS] = {0};
	size_t		presize = 0;

	if (!s->sized && s->rows_hint > flat.n && s->nrows > 0)
	{
		/* as many distinct keys to come as there were among the rows so far */
		double		expect = s->rows_hint * Min(1.0, (double) flat.n / s->nrows);

		presize = (size_t) (Min(expect, PRESIZE_HASHES) / NBUCKETS * 1.25);
		/* within the memory budget: what does not fit is spilled */
		presize = Min(presize, s->budget / sizeof(uint64) / NBUCKETS);
	}
	for (size_t j = 0; j < flat.n; j++)
		count[flat.h[j] >> 56]++;
	pfree(s->lists);
	s->lists = MemoryContextAlloc(cxt, NBUCKETS * sizeof(HashList));
	s->nlists = NBUCKETS;
	s->allocated = 0;
	for (int i = 0; i < NBUCKETS; i++)
	{
		bloom_agg_list_init(&s->lists[i], Max(Max(INITIAL_HASHES, 2 * count[i]), presize), cxt);
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
 * Unsized state over its memory budget: write every list, without its
 * duplicates if unique_first, to the temporary files, and empty it (keeping
 * its memory).  Duplicates left in the files go when the state settles.
 */
void
bloom_agg_state_spill(BloomAggState *s, MemoryContext cxt, bool unique_first)
{
	if (s->nlists == 1)
		bloom_agg_state_split(s, cxt);
	if (s->spill == NULL)
		s->spill = bloom_spill_new(cxt);
	for (int i = 0; i < NBUCKETS; i++)
	{
		HashList   *l = &s->lists[i];

		CHECK_FOR_INTERRUPTS();
		if (unique_first && l->unique != l->n)
			list_unique(s, l, cxt);
		bloom_spill_write(s->spill, i / (NBUCKETS / BLOOM_SPILL_PARTS),
						  l->h, l->n);
		l->n = l->unique = 0;
	}
}

/*
 * Will a sized state's lists outgrow its bits, by the rows the planner
 * expects and the share of distinct keys among the rows so far?  Then it
 * turns into bits now: filling the lists up to the filter's size first
 * (dropping duplicates, growing them by doubling) took as long as the bits
 * of all the keys that came after, and in a parallel plan every participant
 * did it (the 10M-row build, 2 workers: each did the lists phase for about
 * half of its rows).  Only a guess: the bits are the same either way.
 */
static bool
sized_expects_many(const BloomAggState *s, const HashList *l)
{
	if (s->rows_hint <= 0 || s->nlists != 1 || s->nrows < HINT_MIN_ROWS)
		return false;
	return s->rows_hint * ((double) l->n / s->nrows) * sizeof(uint64) >
		(double) s->nblocks * BLOOM_BLOCK_BYTES;
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
		((s->allocated + l->max) * sizeof(uint64) > s->nblocks * BLOOM_BLOCK_BYTES ||
		 sized_expects_many(s, l)))
	{
		bloom_agg_state_to_bits(s, cxt);
		return;
	}
	if (s->nlists == 1 &&
		(l->n >= SPLIT_HASHES || 2 * l->max * sizeof(uint64) > s->budget))
	{
		bloom_agg_state_split(s, cxt);
		return;
	}
	if (!s->sized && (s->allocated + l->max) * sizeof(uint64) > s->budget)
	{
		bloom_agg_state_spill(s, cxt, true);
		return;
	}
	s->allocated += l->max;
	bloom_agg_list_grow(l, 2 * l->max);
}

/* Set the bits of the held-back hashes of a state that is bits. */
void
bloom_agg_state_flush(BloomAggState *s)
{
	set_all_hashes(s, s->f.bits, s->nblocks, s->k);
	for (int i = 0; i < s->nlists; i++)
		s->lists[i].n = s->lists[i].unique = 0;
}

/* Add a hash if that takes no memory; false if it was not added. */
static inline bool
state_add_fast(BloomAggState *s, uint64 h)
{
	HashList   *l;

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
		/* a list is full: set them all, which empties them */
		bloom_agg_state_flush(s);
		state_add_fast(s, h);
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
 * Give back the memory of list l, emptied, keeping a small one should more
 * hashes come (a window aggregate goes on after its final function).  The
 * lists can hold up to work_mem: freed before the filter is made, they and
 * the filter are not held at once.
 */
static void
list_shrink(HashList *l)
{
	Assert(l->n == 0);
	if (l->max > INITIAL_HASHES)
	{
		MemoryContext cxt = GetMemoryChunkContext(l->h);

		pfree(l->h);
		bloom_agg_list_init(l, INITIAL_HASHES, cxt);
	}
}

static void
state_shrink_lists(BloomAggState *s)
{
	s->allocated = 0;
	for (int i = 0; i < s->nlists; i++)
	{
		list_shrink(&s->lists[i]);
		s->allocated += s->lists[i].max;
	}
}

/*
 * A state that spilled, before its filter is made or it is serialized:
 * gather each partition (its temporary file and its lists in memory), drop
 * its duplicates, and keep it as the partition's one run in the file.  The
 * lists are left empty, and small.  Returns the number of distinct hashes.
 */
size_t
bloom_agg_state_settle(BloomAggState *s, MemoryContext cxt)
{
	const int	per = NBUCKETS / BLOOM_SPILL_PARTS;
	size_t		total = 0;

	for (int p = 0; p < BLOOM_SPILL_PARTS; p++)
	{
		size_t		n = bloom_spill_count(s->spill, p);
		size_t		at = n;
		uint64	   *buf;
		uint64	   *scratch;

		for (int b = p * per; b < (p + 1) * per; b++)
			n += s->lists[b].n;
		if (n == 0)
			continue;
		buf = bloom_alloc_big(cxt, n * sizeof(uint64), 0);
		bloom_spill_take(s->spill, p, buf);
		for (int b = p * per; b < (p + 1) * per; b++)
		{
			HashList   *l = &s->lists[b];

			memcpy(buf + at, l->h, l->n * sizeof(uint64));
			at += l->n;
			l->n = l->unique = 0;
			list_shrink(l);
		}
		CHECK_FOR_INTERRUPTS();
		scratch = bloom_alloc_big(cxt, bloom_unique_scratch(n) * sizeof(uint64), 0);
		n = bloom_unique(buf, n, scratch);
		pfree(scratch);
		bloom_spill_put_done(s->spill, p, buf, n);
		pfree(buf);
		total += n;
	}
	state_shrink_lists(s);
#ifdef __GLIBC__

	/*
	 * glibc keeps the lists and partition buffers just freed in its heap (its
	 * threshold for giving large chunks their own mapping rises with each
	 * one freed), where the filter, larger, cannot reuse them: give them
	 * back to the system before the filter is made.
	 */
	malloc_trim(0);
#endif
	return total;
}

/* Start reading the hashes of a settled state, partition after partition. */
void
bloom_agg_spilled_begin(BloomAggState *s, SpilledReader *r)
{
	r->spill = s->spill;
	r->part = 0;
	r->first = true;
	r->buf = palloc(READ_CHUNK * sizeof(uint64));
}

/*
 * The number of hashes read into r->buf, the next chunk of the state's; 0
 * once all are read (r->buf is then freed).
 */
size_t
bloom_agg_spilled_next(SpilledReader *r)
{
	for (; r->part < BLOOM_SPILL_PARTS; r->part++, r->first = true)
	{
		size_t		got = bloom_spill_read_done(r->spill, r->part, r->buf,
												READ_CHUNK, r->first);

		if (got > 0)
		{
			r->first = false;
			CHECK_FOR_INTERRUPTS();
			return got;
		}
	}
	pfree(r->buf);
	r->buf = NULL;
	return 0;
}

/* Set the bits of every hash of a settled state. */
static void
set_spilled_hashes(BloomAggState *s, uint8 *bits, uint64 nblocks, int k)
{
	SpilledReader r;
	size_t		got;

	bloom_agg_spilled_begin(s, &r);
	while ((got = bloom_agg_spilled_next(&r)) > 0)
		for (size_t j = 0; j < got; j++)
			bloom_set_hash(bits, nblocks, k, r.buf[j]);
}

/*
 * A sized state's size arguments must be the same on every row: the filter
 * was planned from the first.
 */
void
bloom_agg_state_check_size(const BloomAggState *s, int64 capacity, double rate)
{
	if (capacity != s->capacity || rate != s->rate)
		ereport(ERROR,
				errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				errmsg("bloom_agg capacity and false-positive rate must be the same for all rows"),
				errdetail("The group started with capacity " INT64_FORMAT " and rate %g, then got capacity " INT64_FORMAT " and rate %g.",
						  s->capacity, s->rate, capacity, rate));
}

/*
 * Count a row's key and add its hash if that takes no memory; false if it was
 * not added, and bloom_agg_state_add must do it.
 */
bool
bloom_agg_state_try_add(BloomAggState *s, uint64 h)
{
	s->nrows++;
	return state_add_fast(s, h);
}

/* Add a hash, with memory from cxt (the aggregate's) where needed. */
void
bloom_agg_state_add(BloomAggState *s, MemoryContext cxt, uint64 h)
{
	state_add(s, cxt, h);
}

/*
 * True once, when the state first spilled to temporary files: the caller
 * then registers bloom_agg_state_shutdown to close them.
 */
bool
bloom_agg_state_spill_started(BloomAggState *s)
{
	if (s->spill == NULL || s->spill_reported)
		return false;
	s->spill_reported = true;
	return true;
}

/* Never spill this state (a window aggregate's). */
void
bloom_agg_state_keep_in_memory(BloomAggState *s)
{
	s->budget = SIZE_MAX;
}

/* Close the temporary files of a state whose aggregate is done with it. */
void
bloom_agg_state_shutdown(Datum arg)
{
	BloomAggState *s = (BloomAggState *) DatumGetPointer(arg);

	if (s->spill)
		bloom_spill_close(s->spill);
	s->spill = NULL;
}

/* The filter of a state that saw rows. */
bytea *
bloom_agg_state_final(BloomAggState *s, MemoryContext cxt)
{
	uint64		nblocks;
	int			k;
	bytea	   *v;
	BloomFilter f;

	if (s->filter)
	{
		bloom_agg_state_flush(s);
		state_shrink_lists(s);
		v = bloom_alloc_big(CurrentMemoryContext, VARSIZE(s->filter), 0);
		memcpy(v, s->filter, VARSIZE(s->filter));
		return v;
	}

	/*
	 * Each list's hashes fall in its own run of blocks, so the bits are set
	 * one small run of the filter at a time, within the cache.
	 */
	if (s->sized)
		v = bloom_new((uint64) s->capacity, s->rate, s->nblocks, s->k,
					  s->family, &s->labels);
	else
	{
		int64		n = (int64) (s->spill ? bloom_agg_state_settle(s, cxt) :
								 bloom_agg_state_unique(s, cxt));

		n = Max(n, 1);
		bloom_plan_or_error(n, BLOOM_DEFAULT_RATE, &nblocks, &k);
		v = bloom_new((uint64) n, BLOOM_DEFAULT_RATE, nblocks, k, s->family,
					  &s->labels);
	}
	bloom_open(v, &f);
	if (s->spill)
		set_spilled_hashes(s, f.bits, f.nblocks, f.nhashes);
	else
		set_all_hashes(s, f.bits, f.nblocks, f.nhashes);
	return v;
}