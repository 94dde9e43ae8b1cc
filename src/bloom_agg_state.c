/*-------------------------------------------------------------------------
 *
 * bloom_agg_state.c
 *	  The state of bloom_agg: hash lists that drop their duplicates, split
 *	  by the top byte when large, and (sized) turn into the filter's bits;
 *	  combining, serializing and finishing states.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_agg_state.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "bloom_pg.h"

#define INITIAL_HASHES	16
#define NBUCKETS		256		/* lists after the split, by the top byte */
#define SPLIT_HASHES	32768	/* split once the single list holds this many */
#define PRESIZE_HASHES	(16.0 * 1024 * 1024) /* see state_split */
#define MIN_BUDGET		(1024 * 1024)	/* bytes of hash lists, at least */

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

struct BloomAggState
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
	/* unsized: hash lists beyond the budget go to temporary files */
	size_t		budget;			/* bytes of hash lists in memory */
	BloomSpill *spill;			/* NULL until the first spill */
	bool		spill_reported; /* bloom_agg_state_spill_started said so */
	MemoryContext owner;		/* deserialized, nobody else holds it */
};

static size_t state_settle(BloomAggState *s, MemoryContext cxt);

/* hashes read from a temporary file at a time */
#define READ_CHUNK	8192

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

BloomAggState *
bloom_agg_state_new(MemoryContext cxt, const char *family, bool sized,
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
	s->budget = Max((size_t) work_mem * 1024, MIN_BUDGET);
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
 * Unsized state over its memory budget: write every list, without its
 * duplicates, to the temporary files, and empty it (keeping its memory).
 */
static void
state_spill(BloomAggState *s, MemoryContext cxt)
{
	if (s->nlists == 1)
		state_split(s, cxt);
	if (s->spill == NULL)
		s->spill = bloom_spill_new(cxt);
	for (int i = 0; i < NBUCKETS; i++)
	{
		HashList   *l = &s->lists[i];

		CHECK_FOR_INTERRUPTS();
		if (l->unique != l->n)
			list_unique(s, l, cxt);
		bloom_spill_write(s->spill, i / (NBUCKETS / BLOOM_SPILL_PARTS),
						  l->h, l->n);
		l->n = l->unique = 0;
	}
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
	if (s->nlists == 1 &&
		(l->n >= SPLIT_HASHES || 2 * l->max * sizeof(uint64) > s->budget))
	{
		state_split(s, cxt);
		return;
	}
	if (!s->sized && (s->allocated + l->max) * sizeof(uint64) > s->budget)
	{
		state_spill(s, cxt);
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

/* Deep copy of a state into cxt. */
static BloomAggState *
state_copy(const BloomAggState *src, MemoryContext cxt)
{
	BloomAggState *s = MemoryContextAlloc(cxt, sizeof(BloomAggState));

	if (src->spill)
		elog(ERROR, "cannot copy a bloom_agg state that spilled to disk");
	memcpy(s, src, sizeof(BloomAggState));
	s->owner = NULL;
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
	else if (!a->sized && a->allocated * sizeof(uint64) > a->budget)
		state_spill(a, cxt);
}

/* Free a state made by bloom_agg_state_deserialize. */
static void
state_free(BloomAggState *s)
{
	if (s->filter)
	{
		pfree(s->filter);
		pfree(s->pending);
	}
	if (s->lists)
		free_lists(s);
	if (s->scratch)
		pfree(s->scratch);
	if (s->spill)
		bloom_spill_close(s->spill);
	pfree(s);
}

/* Add every hash of b, which spilled, to a; b's lists are left empty. */
static void
combine_spilled(BloomAggState *a, BloomAggState *b, MemoryContext cxt)
{
	uint64	   *buf = palloc(READ_CHUNK * sizeof(uint64));

	state_settle(b, cxt);
	for (int part = 0; part < BLOOM_SPILL_PARTS; part++)
	{
		size_t		got;
		bool		first = true;

		while ((got = bloom_spill_read_done(b->spill, part, buf, READ_CHUNK,
											first)) > 0)
		{
			first = false;
			CHECK_FOR_INTERRUPTS();
			for (size_t j = 0; j < got; j++)
				state_add(a, cxt, buf[j]);
		}
	}
	pfree(buf);
}

/*
 * Combine partial state b into a (NULL: none yet), which is returned.
 */
BloomAggState *
bloom_agg_state_combine(BloomAggState *a, BloomAggState *b, MemoryContext cxt)
{
	if (a == NULL)
	{
		/* a state just deserialized into this context is taken over */
		if (b->owner == cxt)
		{
			b->owner = NULL;
			return b;
		}
		return state_copy(b, cxt);
	}

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
	else
	{
		/* b's spilled hashes first: that leaves its lists empty */
		if (b->spill)
			combine_spilled(a, b, cxt);
		if (a->filter == NULL && b->nlists == NBUCKETS && a->spill == NULL)
			state_append_lists(a, b, cxt);
		else
			for (int i = 0; i < b->nlists; i++)
			{
				CHECK_FOR_INTERRUPTS();
				for (size_t j = 0; j < b->lists[i].n; j++)
					state_add(a, cxt, b->lists[i].h[j]);
			}
	}
	if (b->owner == cxt)
		state_free(b);
	return a;
}

/*
 * A state that spilled, before its filter is made or it is serialized:
 * gather each partition (its temporary file and its lists in memory), drop
 * its duplicates, and keep it as the partition's one run in the file.  The
 * lists are left empty.  Returns the number of distinct hashes.
 */
static size_t
state_settle(BloomAggState *s, MemoryContext cxt)
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
		buf = MemoryContextAllocHuge(cxt, n * sizeof(uint64));
		bloom_spill_take(s->spill, p, buf);
		for (int b = p * per; b < (p + 1) * per; b++)
		{
			HashList   *l = &s->lists[b];

			memcpy(buf + at, l->h, l->n * sizeof(uint64));
			at += l->n;
			l->n = l->unique = 0;
		}
		CHECK_FOR_INTERRUPTS();
		scratch = MemoryContextAllocHuge(cxt, bloom_unique_scratch(n) * sizeof(uint64));
		n = bloom_unique(buf, n, scratch);
		pfree(scratch);
		bloom_spill_put_done(s->spill, p, buf, n);
		pfree(buf);
		total += n;
	}
	return total;
}

/* The hashes of a settled state, little-endian, at p. */
static void
serialize_spilled(BloomAggState *s, uint8 *p)
{
	uint64	   *buf = palloc(READ_CHUNK * sizeof(uint64));

	for (int part = 0; part < BLOOM_SPILL_PARTS; part++)
	{
		size_t		got;
		bool		first = true;

		while ((got = bloom_spill_read_done(s->spill, part, buf, READ_CHUNK,
											first)) > 0)
		{
			first = false;
			for (size_t j = 0; j < got; j++, p += 8)
				bloom_put_u64(p, buf[j]);
		}
	}
	pfree(buf);
}

/* Set the bits of every hash of a settled state. */
static void
set_spilled_hashes(BloomAggState *s, uint8 *bits, uint64 nblocks, int k)
{
	uint64	   *buf = palloc(READ_CHUNK * sizeof(uint64));

	for (int part = 0; part < BLOOM_SPILL_PARTS; part++)
	{
		size_t		got;
		bool		first = true;

		while ((got = bloom_spill_read_done(s->spill, part, buf, READ_CHUNK,
											first)) > 0)
		{
			first = false;
			CHECK_FOR_INTERRUPTS();
			for (size_t j = 0; j < got; j++)
				bloom_set_hash(bits, nblocks, k, buf[j]);
		}
	}
	pfree(buf);
}

/*
 * Serialize a state for a parallel worker; the format is in bloom.h.
 */
bytea *
bloom_agg_state_serialize(BloomAggState *s, MemoryContext cxt)
{
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
		h.count = s->spill ? state_settle(s, cxt) : state_unique(s, cxt);
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
	else if (s->spill)
		serialize_spilled(s, p);
	else
		for (int i = 0; i < s->nlists; i++)
			for (size_t j = 0; j < s->lists[i].n; j++, p += 8)
				bloom_put_u64(p, s->lists[i].h[j]);
	return out;
}

/*
 * The hashes of a serialized state into NBUCKETS lists by their top byte,
 * each allocated once at its size.
 */
static void
deserialize_lists(BloomAggState *s, const uint8 *body, size_t count,
				  MemoryContext cxt)
{
	size_t		per[NBUCKETS] = {0};

	/* the top byte of a little-endian hash is its last */
	for (size_t i = 0; i < count; i++)
		per[body[8 * i + 7]]++;
	s->nlists = NBUCKETS;
	s->lists = MemoryContextAlloc(cxt, NBUCKETS * sizeof(HashList));
	s->allocated = 0;
	for (int b = 0; b < NBUCKETS; b++)
	{
		list_init(&s->lists[b], Max(INITIAL_HASHES, per[b]), cxt);
		s->allocated += s->lists[b].max;
	}
	for (size_t i = 0; i < count; i++)
	{
		uint64		v = bloom_get_u64(body + 8 * i);
		HashList   *l = &s->lists[v >> 56];

		l->h[l->n++] = v;
	}
}

/*
 * Rebuild a state from its serialized form, checking every field first.  The
 * state is made in cxt, the aggregate's memory, and marked as owned there:
 * the combine function that gets it next takes it over rather than copying
 * it, or frees it once merged.
 */
BloomAggState *
bloom_agg_state_deserialize(const uint8 *p, size_t len, MemoryContext cxt)
{
	BloomStateHeader h;
	const uint8 *body;
	size_t		bodylen;
	const char *why;
	BloomAggState *s;
	MemoryContext old;

	why = bloom_state_check(p, len, &h, &body, &bodylen);
	if (why)
		ereport(ERROR,
				errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				errmsg("invalid bloom_agg state"),
				errdetail("%s", why));

	old = MemoryContextSwitchTo(cxt);
	s = palloc0(sizeof(BloomAggState));
	strlcpy(s->family, h.family, BLOOM_FAMILY_LEN);
	s->sized = h.sized;
	s->budget = Max((size_t) work_mem * 1024, MIN_BUDGET);
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
	else if (!h.sized && h.count * sizeof(uint64) > s->budget)
	{
		/* more than the budget: spill as the lists fill up */
		s->nlists = 1;
		s->lists = palloc(sizeof(HashList));
		list_init(&s->lists[0], INITIAL_HASHES, cxt);
		s->allocated = INITIAL_HASHES;
		state_split(s, cxt);
		for (size_t i = 0; i < h.count; i++)
			state_add(s, cxt, bloom_get_u64(body + 8 * i));
	}
	else if (h.count >= SPLIT_HASHES)
		deserialize_lists(s, body, h.count, cxt);
	else
	{
		s->nlists = 1;
		s->lists = palloc(sizeof(HashList));
		list_init(&s->lists[0], INITIAL_HASHES, cxt);
		s->allocated = INITIAL_HASHES;
		for (size_t i = 0; i < h.count; i++)
			state_add(s, cxt, bloom_get_u64(body + 8 * i));
	}
	MemoryContextSwitchTo(old);
	s->owner = cxt;
	return s;
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
		state_flush(s);
		v = palloc_extended(VARSIZE(s->filter), MCXT_ALLOC_HUGE);
		memcpy(v, s->filter, VARSIZE(s->filter));
		return v;
	}

	/*
	 * Each list's hashes fall in its own run of blocks, so the bits are set
	 * one small run of the filter at a time, within the cache.
	 */
	if (s->sized)
		v = bloom_new((uint64) s->capacity, s->rate, s->nblocks, s->k, s->family);
	else
	{
		int64		n = (int64) (s->spill ? state_settle(s, cxt) :
								 state_unique(s, cxt));

		n = Max(n, 1);
		bloom_plan_or_error(n, BLOOM_DEFAULT_RATE, &nblocks, &k);
		v = bloom_new((uint64) n, BLOOM_DEFAULT_RATE, nblocks, k, s->family);
	}
	bloom_open(v, &f);
	if (s->spill)
		set_spilled_hashes(s, f.bits, f.nblocks, f.nhashes);
	else
		set_all_hashes(s, f.bits, f.nblocks, f.nhashes);
	return v;
}
