/*-------------------------------------------------------------------------
 *
 * bloom_agg_serial.c
 *	  The serialized form of bloom_agg's state, which a parallel worker
 *	  sends to the leader: serialize, and deserialize with every field
 *	  checked first.  The format itself is described in bloom.h.
 *
 * It is kept apart from the state's building because it is the one place
 * where the state's bytes come from outside: whatever arrives is checked by
 * bloom_state_check (and a filter by bloom_check) before any of it is used.
 *
 * Copyright (c) 2026, the bloomfilter developers
 *
 * IDENTIFICATION
 *	  src/bloom_agg_serial.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "bloom_agg_state.h"

#define SPILL_CHUNK		8192	/* hashes written to a temporary file at a time */

/* The hashes of a settled state, little-endian, at p. */
static void
serialize_spilled(BloomAggState *s, uint8 *p)
{
	SpilledReader r;
	size_t		got;

	bloom_agg_spilled_begin(s, &r);
	while ((got = bloom_agg_spilled_next(&r)) > 0)
		for (size_t j = 0; j < got; j++, p += 8)
			bloom_put_u64(p, r.buf[j]);
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
	h.labels = s->labels;
	h.sized = s->sized;
	if (s->sized)
	{
		h.capacity = (uint64) s->capacity;
		h.rate = s->rate;
	}
	if (s->filter)
	{
		bloom_agg_state_flush(s);
		h.mode = BLOOM_STATE_BITS;
		bodylen = VARSIZE(s->filter) - VARHDRSZ;
	}
	else
	{
		/* the state means the same set of hashes without the duplicates */
		h.mode = BLOOM_STATE_HASHES;
		h.count = s->spill ? bloom_agg_state_settle(s, cxt) : bloom_agg_state_unique(s, cxt);
		bodylen = h.count * sizeof(uint64);
	}
	if (BLOOM_STATE_HEADER_SIZE + bodylen > MaxAllocSize - VARHDRSZ)
		ereport(ERROR,
				errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				errmsg("bloom_agg state is too large to pass to a parallel worker"),
				errhint("Give bloom_agg a capacity and a false-positive rate, or disable parallel aggregation."));

	out = bloom_alloc_big(CurrentMemoryContext,
						  VARHDRSZ + BLOOM_STATE_HEADER_SIZE + bodylen, 0);
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
		bloom_agg_list_init(&s->lists[b], Max(INITIAL_HASHES, per[b]), cxt);
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
 * The hashes of a serialized state beyond the memory budget straight into
 * the temporary files, a run of hashes of one partition at a time, without
 * adding them one by one: adding would drop their duplicates at every
 * spill, which the leader of a parallel plan then did for every hash of
 * every worker (the 10M-row unsized build took 4 times as long as a serial
 * one).  Duplicates go when the state settles; a worker sends none.
 */
static void
deserialize_spilled(BloomAggState *s, const uint8 *body, size_t count,
					MemoryContext cxt)
{
	const int	per = NBUCKETS / BLOOM_SPILL_PARTS;
	uint64	   *buf = palloc(SPILL_CHUNK * sizeof(uint64));
	size_t		n = 0;
	int			part = 0;

	s->nlists = 1;
	s->lists = palloc(sizeof(HashList));
	bloom_agg_list_init(&s->lists[0], INITIAL_HASHES, cxt);
	s->allocated = INITIAL_HASHES;
	bloom_agg_state_split(s, cxt);
	s->spill = bloom_spill_new(cxt);
	for (size_t i = 0; i < count; i++)
	{
		uint64		v = bloom_get_u64(body + 8 * i);
		int			p = (int) (v >> 56) / per;

		if (n == SPILL_CHUNK || (n > 0 && p != part))
		{
			CHECK_FOR_INTERRUPTS();
			bloom_spill_write(s->spill, part, buf, n);
			n = 0;
		}
		part = p;
		buf[n++] = v;
	}
	bloom_spill_write(s->spill, part, buf, n);
	pfree(buf);
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
	s->labels = h.labels;
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

		if (err != BLOOM_OK)
			ereport(ERROR,
					errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
					errmsg("invalid bloom_agg state"),
					errdetail("The filter in the state is invalid: %s",
							  bloom_error_message(err)));
		if (f.nblocks != s->nblocks || f.nhashes != s->k ||
			f.capacity != h.capacity || f.rate != h.rate ||
			strcmp(f.family, h.family) != 0 ||
			!bloom_labels_equal(&f.labels, &h.labels))
			ereport(ERROR,
					errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
					errmsg("invalid bloom_agg state"),
					errdetail("The filter in the state was not made with the state's capacity, false-positive rate, key family and enum labels."));
		s->filter = bloom_alloc_big(cxt, VARHDRSZ + bodylen, 0);
		SET_VARSIZE(s->filter, VARHDRSZ + bodylen);
		memcpy(BLOOM_PAYLOAD(s->filter), body, bodylen);
		bloom_open(s->filter, &s->f);
		/* room for the hashes not yet set: a combine seldom adds any */
		s->nlists = 1;
		s->lists = palloc(sizeof(HashList));
		bloom_agg_list_init(&s->lists[0], INITIAL_HASHES, cxt);
		s->allocated = INITIAL_HASHES;
	}
	else if (!h.sized && h.count * sizeof(uint64) > s->budget)
		deserialize_spilled(s, body, h.count, cxt);
	else if (h.count >= SPLIT_HASHES)
		deserialize_lists(s, body, h.count, cxt);
	else
	{
		s->nlists = 1;
		s->lists = palloc(sizeof(HashList));
		bloom_agg_list_init(&s->lists[0], INITIAL_HASHES, cxt);
		s->allocated = INITIAL_HASHES;
		for (size_t i = 0; i < h.count; i++)
			bloom_agg_state_add(s, cxt, bloom_get_u64(body + 8 * i));
	}
	MemoryContextSwitchTo(old);
	s->owner = cxt;
	return s;
}
